// V8 flags for Tandem's short-lived Node processes: the CLI (bin/tandem.js), the test runner with
// its test processes (infra/test.sh), and a process a test starts to watch it end on its own
// (test/integration/pool.integration.test.ts). Import it before anything else.
//
// Node 22 and later can deadlock at exit (nodejs/node#54918, open): the main thread, shutting the
// platform down, joins its worker threads while a compile job on one of them waits for a garbage
// collection that only the main thread could run. A CI run on Node 24 hung that way in `tandem
// stack status`, after its output: gdb showed the main thread in NodePlatform::Shutdown and three
// V8 workers in CollectionBarrier::AwaitCollectionBackground, two compiling with Maglev and one
// with concurrent Sparkplug. So these processes do without Maglev (V8's mid tier; TurboFan still
// optimises hot code) and compile Sparkplug code on the main thread; a process that runs for
// seconds loses nothing worth that. The stack's services keep V8's defaults, on which their CPU
// was measured: they end on SIGTERM, and `stack down` kills one that has not ended in 30 s.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-maglev');
setFlagsFromString('--no-concurrent-sparkplug');
