// The sandbox: every execution of model-written code goes through runSandboxed.
export { DEFAULT_LIMITS, type SandboxOptions } from './limits.js';
export { activeSandboxes, sandboxConcurrency, sandboxUidRange, setSandboxConcurrency } from './slots.js';
export { checkSandbox, HOST_DIR_PREFIX, type KillReason, runSandboxed, SandboxUnavailableError, type SandboxResult } from './run.js';
