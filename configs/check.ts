// The whole check of a run config: its schema, cross-references and the environment's roles
// (schema.ts), and what its policies need (policy/spec.ts). Every caller validates with this.
// Pure: workflows validate their input with it.
import { policyIssues } from '../policy/spec.js';
import { parseRunConfig, type ParseResult } from './schema.js';

export const checkRunConfig = (raw: unknown): ParseResult => parseRunConfig(raw, [policyIssues]);
