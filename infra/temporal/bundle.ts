// The workflow bundle, made one way for the CPU worker, the unit tier's workflow harness and
// `tandem replay`: webpack over workflows/index.ts, with the pure schema modules preloaded and
// Tandem's payload converter (payloadConverter.ts).
//
// The SDK evaluates every module of the bundle again for each workflow it creates (each workflow
// gets its own module cache inside the reused V8 context). Tandem's config and environment modules
// build zod schemas at module scope: measured on a 2-core Xeon, 13-23 ms of CPU per workflow, every
// episode paying it. Preloaded modules are evaluated once, before any workflow exists, and shared
// (deep-frozen) by all workflows: 0.5 ms per workflow after. This is safe only for modules that keep
// no per-workflow state and call no workflow API at module scope; the modules below hold schemas,
// constant tables and pure functions (test/unit/bundle.unit.test.ts checks that their module scope
// declares nothing mutable and imports nothing from @temporalio/workflow).
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { projectPath } from '../settings.js';

/** The workflows the CPU worker registers. */
export const WORKFLOWS_PATH = projectPath('workflows/index.ts');

/** The workflows' payload converter (a local activity's arguments marked to stay out of the payload store). */
export const PAYLOAD_CONVERTER_PATH = projectPath('infra/temporal/payloadConverter.ts');

/** Modules evaluated once per worker and shared by every workflow (with what they import). */
export const PRELOADED_MODULES = ['zod', projectPath('configs/schema.ts'), projectPath('configs/check.ts'), projectPath('envs/index.ts')];

const bundlerLogger = new DefaultLogger('WARN');

/** Bundles a workflows module (by default Tandem's) the way every worker runs it (`preloadModules`: for bench/workflow-bundle.ts). */
export async function bundleWorkflows(workflowsPath: string = WORKFLOWS_PATH, preloadModules: string[] = PRELOADED_MODULES): Promise<{ code: string }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: bundlerLogger,
    preloadModules,
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    // Source files import each other as `./x.js`; webpack must find the `.ts` behind them.
    webpackConfigHook: (config) => {
      config.resolve = { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } };
      return config;
    },
  });
  return { code };
}
