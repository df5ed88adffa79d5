// The `tandem` command line (`npx tandem ...`, bin/tandem.js). The commands are declared with
// commander (program.ts, and each command's file beside it): it is kept up to date, has no
// dependencies of its own, ships its own types, and does sub-commands, help, and errors that name
// the option or argument at fault, so the usage text exists in one place: the declarations.
// Exit codes: 0 done (and --help), 1 failed, 2 a command line that does not fit the command.
import { exitWhenFlushed } from './exit.js';
import { runCli } from './program.js';

runCli(process.argv.slice(2)).then(
  (code) => exitWhenFlushed(code),
  (err: unknown) => {
    console.error(`tandem: ${err instanceof Error ? err.message : String(err)}`);
    return exitWhenFlushed(1);
  },
);
