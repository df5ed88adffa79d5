#!/usr/bin/env node
// `npx tandem ...`: runs the TypeScript CLI through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/main.ts');
