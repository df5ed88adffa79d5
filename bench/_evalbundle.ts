import vm from 'node:vm';
import { bundleWorkflowCode } from '@temporalio/worker';
const P = (p: string) => new URL('../' + p, import.meta.url).pathname;
for (const preload of [[], ['zod', P('configs/schema.ts'), P('envs/index.ts'), P('configs/check.ts')]]) {
  const { code } = await bundleWorkflowCode({
    workflowsPath: new URL('../workflows/index.ts', import.meta.url).pathname, preloadModules: preload,
    webpackConfigHook: (config) => { config.resolve = { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } }; return config; },
  });
  const script = new vm.Script(code);
  const times: number[] = [];
  for (let i = 0; i < 81; i++) {
    const ctx: any = vm.createContext({ console, TextEncoder, TextDecoder, URL, setTimeout, clearTimeout, queueMicrotask });
    const cache: any = {};
    Object.defineProperty(ctx, '__webpack_module_cache__', { value: cache });
    script.runInContext(ctx);
    vm.runInContext('__TEMPORAL__.preloadModules()', ctx);
    const shared = new Set(Object.keys(cache));
    // a fresh cache per "workflow" that keeps the shared entries
    for (const k of Object.keys(cache)) if (!shared.has(k)) delete cache[k];
    const t = performance.now();
    vm.runInContext('__TEMPORAL__.importWorkflows()', ctx);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`preload ${JSON.stringify(preload)}: median ${times[40].toFixed(1)} ms, min ${times[0].toFixed(1)} ms`);
}
