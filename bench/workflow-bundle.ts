// What each new workflow costs the CPU worker before its code runs: the SDK evaluates every module
// of the workflow bundle again per workflow (a module cache per workflow in the reused V8 context),
// except the preloaded ones (infra/temporal/bundle.ts PRELOADED_MODULES), evaluated once and shared.
// Bundles workflows/index.ts with and without the preloads and times `importWorkflows()` in fresh
// contexts, the way the SDK starts a workflow.
//   node --import tsx bench/workflow-bundle.ts [runs]
import { cpus } from 'node:os';
import vm from 'node:vm';
import { bundleWorkflows, PRELOADED_MODULES, WORKFLOWS_PATH } from '../infra/temporal/bundle.js';

const runs = Number(process.argv[2] ?? 41);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function perWorkflowMs(preloadModules: string[]): Promise<number[]> {
  const { code } = await bundleWorkflows(WORKFLOWS_PATH, preloadModules);
  const script = new vm.Script(code);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const context = vm.createContext({ console, TextEncoder, TextDecoder, URL, setTimeout, clearTimeout, queueMicrotask });
    // The preloads land in this cache first and stay; the rest is evaluated per workflow.
    Object.defineProperty(context, '__webpack_module_cache__', { value: {} });
    script.runInContext(context);
    vm.runInContext('__TEMPORAL__.preloadModules()', context);
    const t = performance.now();
    vm.runInContext('__TEMPORAL__.importWorkflows()', context);
    times.push(performance.now() - t);
  }
  return times;
}

console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}; ${runs} workflows each`);
const without = await perWorkflowMs([]);
const withPreload = await perWorkflowMs(PRELOADED_MODULES);
console.log(`modules evaluated per workflow, nothing preloaded: median ${median(without).toFixed(1)} ms, min ${Math.min(...without).toFixed(1)} ms`);
console.log(`modules evaluated per workflow, PRELOADED_MODULES shared: median ${median(withPreload).toFixed(1)} ms, min ${Math.min(...withPreload).toFixed(1)} ms`);
