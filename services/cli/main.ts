// The `tandem` command line. Each sub-command lives in its own file beside this one.
import { configCommand } from './config.js';
import { sandboxCommand } from './sandbox.js';
import { stackCommand } from './stack.js';
import { statusCommand } from './status.js';
import { trainCommand } from './train.js';

const USAGE = `usage: tandem <command>
  stack up|down|status [service ...]   the local stack (Temporal, Kafka, Postgres, workers, projector)
  config check FILE [key=value ...] [--json]
                                       validate a run config and print it normalised
                                       (--json: as trainingRun workflow input)
  train FILE [key=value ...] [--wait]  start a training run; prints its run id
  status RUN_ID                        iteration, episodes done, mean reward per agent
  sandbox run FILE [--stdin FILE] [--timeout S] [--memory MB]
                                       run a Python file in the code sandbox; prints JSON`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'stack':
      return stackCommand(args);
    case 'config':
      return configCommand(args);
    case 'train':
      return trainCommand(args);
    case 'status':
      return statusCommand(args);
    case 'sandbox':
      return sandboxCommand(args);
    default:
      console.error(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`tandem: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
