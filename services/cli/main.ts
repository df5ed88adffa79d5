// The `tandem` command line. Each sub-command lives in its own file beside this one.
import { configCommand } from './config.js';
import { episodesCommand } from './episodes.js';
import { evalCommand } from './eval.js';
import { exitWhenFlushed } from './exit.js';
import { lifecycleCommand } from './lifecycle.js';
import { replayCommand } from './replay.js';
import { projectorCommand } from './projector.js';
import { reportCommand } from './report.js';
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
  eval FILE [key=value ...] [--checkpoint DIR]
                                       evaluate on held-out problems (from DIR, a run's
                                       checkpoints folder; without it, the base models)
  status RUN_ID [--watch | --json]     iteration, episodes done, reward and success, versions,
                                       checkpoint, ETA (--watch: a live progress bar until the run ends)
  pause|resume|stop RUN_ID             pause a run (episodes in flight finish), resume it, or stop
                                       it after the current iteration's update and checkpoint
  sandbox run FILE [--stdin FILE] [--timeout S] [--memory MB]
                                       run a Python file in the code sandbox; prints JSON
  replay WORKFLOW_ID [--run-id R] | --run RUN_ID | --file HISTORY.json [...] [--workflow-id ID]
                                       replay recorded histories against the current workflow
                                       code; exit 1 with the determinism error if one fails
  report RUN_ID [--out DIR]            PNG plots and an HTML page of a run, with episode pages
                                       (default DIR: <data>/reports/RUN_ID)
  episodes list --run RUN_ID [--filter success=true,iteration=N ...]
                                       a run's episodes from the record
  episodes show EPISODE_ID [--json]    the transcript: prompts, responses, rewards, advantages, updates
  episodes verify EPISODE_ID | --run RUN_ID
                                       re-execute episodes from the record and check its hash chains
  projector rebuild                    rebuild the read models from the events table alone`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'stack':
      return stackCommand(args);
    case 'config':
      return configCommand(args);
    case 'train':
      return trainCommand(args);
    case 'eval':
      return evalCommand(args);
    case 'status':
      return statusCommand(args);
    case 'sandbox':
      return sandboxCommand(args);
    case 'episodes':
      return episodesCommand(args);
    case 'projector':
      return projectorCommand(args);
    case 'pause':
    case 'resume':
    case 'stop':
      return lifecycleCommand(command, args);
    case 'replay':
      return replayCommand(args);
    case 'report':
      return reportCommand(args);
    default:
      console.error(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => exitWhenFlushed(code),
  (err: unknown) => {
    console.error(`tandem: ${err instanceof Error ? err.message : String(err)}`);
    return exitWhenFlushed(1);
  },
);
