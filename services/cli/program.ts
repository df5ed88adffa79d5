// The `tandem` command tree. Each command file beside this one declares its commands once, with
// commander: arguments, options and one-line descriptions. Commander writes the usage text from
// those declarations (--help, -h on every command: exit 0) and turns away a command line that
// does not fit (unknown option, missing or extra argument, bad value: exit 2, naming it) before
// the command connects to anything.
import { Command, CommanderError, type Option, type OutputConfiguration } from 'commander';
import { USAGE_EXIT, type Act } from './args.js';

type Register = (program: Command, act: Act) => void;

/**
 * Each command file, by the top-level commands it declares, in the order of the root help. A
 * command line loads only its command's file (and what that imports: the report's charts, the
 * stack's clients, ...); help, `tandem` alone and an unknown command load them all.
 */
const COMMAND_FILES: [names: string[], load: () => Promise<Register>][] = [
  [['stack'], async () => (await import('./stack.js')).registerStack],
  [['config'], async () => (await import('./config.js')).registerConfig],
  [['train'], async () => (await import('./train.js')).registerTrain],
  [['eval'], async () => (await import('./eval.js')).registerEval],
  [['runs'], async () => (await import('./runs.js')).registerRuns],
  [['status'], async () => (await import('./status.js')).registerStatus],
  [['pause', 'resume', 'stop'], async () => (await import('./lifecycle.js')).registerLifecycle],
  [['sandbox'], async () => (await import('./sandbox.js')).registerSandbox],
  [['replay'], async () => (await import('./replay.js')).registerReplay],
  [['report'], async () => (await import('./report.js')).registerReport],
  [['dashboard'], async () => (await import('./dashboard.js')).registerDashboard],
  [['episodes'], async () => (await import('./episodes.js')).registerEpisodes],
  [['projector'], async () => (await import('./projector.js')).registerProjector],
  [['kafka'], async () => (await import('./kafka.js')).registerKafka],
];

/** The command files a command line needs: its command's, or all (no command word, help, or a word no file declares). */
function filesFor(argv: readonly string[] | undefined): (typeof COMMAND_FILES)[number][] {
  const word = argv?.find((a) => !a.startsWith('-'));
  const own = COMMAND_FILES.find(([names]) => word !== undefined && names.includes(word));
  return own ? [own] : COMMAND_FILES;
}

export interface Cli {
  program: Command;
  /** The exit code the command's action returned (0 until one has run). */
  exitCode(): number;
}

/**
 * The command tree, ready to parse one command line: with ARGV, only the commands that line can
 * name (COMMAND_FILES); without, all. OUTPUT: where help and errors go (default: stdout, stderr).
 */
export async function buildProgram(output?: Omit<OutputConfiguration, 'outputError'>, argv?: readonly string[]): Promise<Cli> {
  let code = 0;
  const act: Act = (handler) => async (...args) => {
    code = await handler(...args);
  };
  const program = new Command('tandem')
    .description('Multi-agent RL (AT-GRPO) for LLM teams, on Temporal, Kafka and Postgres.')
    .usage('<command> [options]')
    .exitOverride(); // errors and help come back to runCli as CommanderErrors, for its exit codes
  if (output) program.configureOutput(output);
  const registers = await Promise.all(filesFor(argv).map(([, load]) => load()));
  for (const register of registers) register(program, act);
  for (const cmd of allCommands(program)) {
    const name = commandPath(cmd);
    // `tandem pause: missing required argument 'RUN_ID'`, then the command's usage line.
    cmd.configureOutput({ outputError: (text, write) => write(`${name}: ${text.replace(/^error: /, '')}`) });
    cmd.showHelpAfterError(`usage: ${synopsis(cmd)}\n(${name} --help: what each argument and option does)`);
  }
  // The root's help lists every command with its arguments and options, instead of the top level only.
  program.configureHelp({ visibleCommands: () => [] });
  program.addHelpText('after', `\n${commandList(program)}`);
  return { program, exitCode: () => code };
}

/** Runs one command line (without `node tandem`); resolves with the exit code. Runtime failures reject. */
export async function runCli(argv: string[], built?: Cli): Promise<number> {
  const cli = built ?? (await buildProgram(undefined, argv));
  try {
    await cli.program.parseAsync(argv, { from: 'user' });
    return cli.exitCode();
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return exitCodeOf(err, argv);
  }
}

/** 0 for help asked for (`tandem` alone included); 2 for a command line that does not fit. */
function exitCodeOf(err: CommanderError, argv: string[]): number {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
  // commander.help with exit code 1: a command group without its sub-command (`tandem episodes`).
  if (err.code === 'commander.help') return err.exitCode === 0 || argv.length === 0 ? 0 : USAGE_EXIT;
  return USAGE_EXIT;
}

/** The program and every command under it, depth first in declaration order. */
export function allCommands(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(allCommands)];
}

/** `tandem episodes list`. */
export function commandPath(cmd: Command): string {
  return cmd.parent ? `${commandPath(cmd.parent)} ${cmd.name()}` : cmd.name();
}

function optionTerm(o: Option): string {
  const term = o.flags.replace(/^-\w, /, ''); // `--run <RUN_ID>`: the long form
  return o.mandatory ? term : `[${term}]`;
}

/** `tandem episodes list --run <RUN_ID> [--filter <KEY=VALUE,...>] [--json]`; a group: `tandem stack up|down|status`. */
export function synopsis(cmd: Command): string {
  if (cmd.commands.length > 0) return `${commandPath(cmd)} ${cmd.commands.map((c) => c.name()).join('|')}`;
  const args = cmd.registeredArguments.map((a) => {
    const name = `${a.name()}${a.variadic ? '...' : ''}`;
    return a.required ? `<${name}>` : `[${name}]`;
  });
  return [commandPath(cmd), ...args, ...cmd.options.map(optionTerm)].join(' ');
}

/** The root help's list of commands: each command's synopsis, then its description. */
export function commandList(program: Command): string {
  const leaves = allCommands(program).filter((c) => c !== program && c.commands.length === 0);
  const lines = leaves.flatMap((c) => [`  ${synopsis(c).replace(/^tandem /, '')}`, `      ${c.description()}`]);
  return ['Commands (tandem COMMAND --help: its arguments and options):', ...lines, '  help [COMMAND]', '      the help of a command'].join('\n');
}
