#!/usr/bin/env node
// `npx tandem ...`: runs the TypeScript CLI through tsx (no build step).
import '../infra/node/v8Flags.js'; // first: before anything is compiled
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/main.ts');
