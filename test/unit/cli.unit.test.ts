// The command line's argument handling, for every command and sub-command of the program object
// (services/cli/program.ts), so a new command is covered without a change here: --help and -h
// (exit 0, its usage); an unknown option, a missing argument or option, an option without its
// value, an extra argument (exit 2, naming it, with the usage line); --json on the commands that
// print data; README's CLI reference is the root --help. No server: each case stops before a
// command's action, and a preAction hook fails the test if one would run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Command } from 'commander';
import { projectPath, projectRoot } from '../../infra/settings.js';
import { allCommands, buildProgram, commandPath, runCli, synopsis } from '../../services/cli/program.js';

/** Runs a command line in-process; output captured, 80 columns as in a pipe. */
async function cli(argv: string[], opts: { actionsRun?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const built = await buildProgram({ writeOut: (s) => (out += s), writeErr: (s) => (err += s), getOutHelpWidth: () => 80, getErrHelpWidth: () => 80 });
  if (!opts.actionsRun) {
    built.program.hook('preAction', (_root, action) => {
      throw new Error(`\`${commandPath(action)}\` would run its action: ${argv.join(' ')}`);
    });
  }
  const code = await runCli(argv, built);
  return { code, out, err };
}

const commands = allCommands((await buildProgram()).program);
const leaves = commands.filter((c) => c.commands.length === 0);
const words = (c: Command) => commandPath(c).split(' ').slice(1);
const label = (c: Command) => commandPath(c);
/** The least a command needs: a value for each required argument and each mandatory option. */
const minimal = (c: Command) => [
  ...c.registeredArguments.filter((a) => a.required).map(() => 'x'),
  ...c.options.filter((o) => o.mandatory).flatMap((o) => [o.long!, 'x']),
];

test('a command line loads only the file of its command: each top-level command, alone, is declared as in the whole program', async () => {
  const top = commands.filter((c) => c.parent?.parent === null);
  for (const c of top) {
    const alone = (await buildProgram(undefined, ['--some-option', c.name(), 'x'])).program;
    assert.ok(alone.commands.length < top.length, `\`tandem ${c.name()} ...\` loads its own file only (${alone.commands.length} commands)`);
    const own = alone.commands.find((o) => o.name() === c.name());
    assert.ok(own, `\`tandem ${c.name()} ...\` declares ${c.name()}`);
    assert.deepEqual(allCommands(own).map(synopsis), allCommands(c).map(synopsis));
  }
});

test('the program has the commands the README and the project know', () => {
  const paths = leaves.map(label);
  for (const p of ['tandem stack up', 'tandem config check', 'tandem train', 'tandem eval', 'tandem status', 'tandem pause', 'tandem resume', 'tandem stop', 'tandem sandbox run', 'tandem replay', 'tandem report', 'tandem dashboard', 'tandem episodes list', 'tandem episodes show', 'tandem episodes verify', 'tandem projector rebuild', 'tandem kafka groups', 'tandem kafka release']) {
    assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
  }
});

test('--help and -h on every command and sub-command print its usage on stdout and exit 0', async () => {
  for (const c of commands) {
    for (const flag of ['--help', '-h']) {
      const r = await cli([...words(c), flag]);
      assert.equal(r.code, 0, `${label(c)} ${flag}: ${r.err}`);
      assert.match(r.out, new RegExp(`^Usage: ${label(c)} `), `${label(c)} ${flag}`);
      assert.equal(r.err, '');
    }
    if (c.description()) assert.ok((await cli([...words(c), '--help'])).out.replace(/\s+/g, ' ').includes(c.description()), `${label(c)}: its description`);
  }
  // `tandem help COMMAND ...` too; `tandem` alone prints the help (stderr, as before) and exits 0.
  const viaHelp = await cli(['help', 'episodes']);
  assert.equal(viaHelp.code, 0);
  assert.match(viaHelp.out, /^Usage: tandem episodes /);
  const bare = await cli([]);
  assert.equal(bare.code, 0);
  assert.match(bare.err, /^Usage: tandem /);
});

test('--help wins over what is missing: `pause --help`, `episodes list --help` (the bug reports)', async () => {
  for (const argv of [['pause', '--help'], ['episodes', 'list', '--help'], ['status', '--watch', '--json', '--help'], ['replay', '--help']]) {
    const r = await cli(argv);
    assert.equal(r.code, 0, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.out, new RegExp(`^Usage: tandem ${argv.filter((a) => !a.startsWith('-')).join(' ')} `));
  }
});

test('an unknown option exits 2 naming it, with the usage line, on every command and sub-command', async () => {
  for (const c of commands) {
    const r = await cli([...words(c), ...minimal(c), '--no-such-option']);
    assert.equal(r.code, 2, `${label(c)}: ${r.err}`);
    assert.equal(r.out, '');
    assert.match(r.err, new RegExp(`^${label(c)}: unknown option '--no-such-option'`), label(c));
    assert.ok(r.err.includes(`usage: ${synopsis(c)}\n`), `${label(c)}: ${r.err}`);
  }
});

test('a missing required argument or option exits 2 naming it, on every command that has one', async () => {
  let cases = 0;
  for (const c of leaves) {
    const required = c.registeredArguments.filter((a) => a.required);
    const mandatory = c.options.filter((o) => o.mandatory);
    const options = mandatory.flatMap((o) => [o.long!, 'x']);
    // Each required argument, its predecessors given.
    for (let i = 0; i < required.length; i++) {
      const r = await cli([...words(c), ...required.slice(0, i).map(() => 'x'), ...options]);
      assert.equal(r.code, 2, `${label(c)}: ${r.err}`);
      assert.match(r.err, new RegExp(`^${label(c)}: missing required argument '${required[i].name()}'`), r.err);
      assert.ok(r.err.includes(`usage: ${synopsis(c)}\n`), r.err);
      cases++;
    }
    // Each mandatory option, everything else given.
    for (const o of mandatory) {
      const others = mandatory.filter((m) => m !== o).flatMap((m) => [m.long!, 'x']);
      const r = await cli([...words(c), ...required.map(() => 'x'), ...others]);
      assert.equal(r.code, 2, `${label(c)}: ${r.err}`);
      assert.match(r.err, new RegExp(`^${label(c)}: required option '${o.flags}' not specified`), r.err);
      cases++;
    }
  }
  assert.ok(cases >= 10, `${cases} cases`);
});

test('an option without its value exits 2 naming the option, on every command', async () => {
  for (const c of leaves) {
    for (const o of c.options.filter((x) => x.required && !x.mandatory)) {
      const r = await cli([...words(c), ...minimal(c), o.long!]);
      assert.equal(r.code, 2, `${label(c)} ${o.long}: ${r.err}`);
      assert.match(r.err, new RegExp(`^${label(c)}: option '${o.flags.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}' argument missing`), r.err);
    }
  }
});

test('an extra argument exits 2; a command group names an unknown sub-command, or wants one (exit 2)', async () => {
  for (const c of leaves.filter((x) => !x.registeredArguments.some((a) => a.variadic))) {
    const all = [...c.registeredArguments.map(() => 'x'), ...c.options.filter((o) => o.mandatory).flatMap((o) => [o.long!, 'x'])];
    const r = await cli([...words(c), ...all, 'extra']);
    assert.equal(r.code, 2, `${label(c)}: ${r.err}`);
    assert.match(r.err, new RegExp(`^${label(c)}: too many arguments`), r.err);
  }
  for (const c of commands.filter((x) => x.commands.length > 0)) {
    const r = await cli([...words(c), 'no-such-command']);
    assert.equal(r.code, 2, `${label(c)}: ${r.err}`);
    assert.match(r.err, new RegExp(`^${label(c)}: unknown command 'no-such-command'`), r.err);
    if (c.parent) {
      const bare = await cli(words(c));
      assert.equal(bare.code, 2, label(c));
      assert.match(bare.err, new RegExp(`^Usage: ${label(c)} `));
    }
  }
});

test('bad values and combinations are usage errors (exit 2) naming what is wrong', async () => {
  const cases: [string[], RegExp][] = [
    [['sandbox', 'run', 'p.py', '--timeout', 'soon'], /option '--timeout <S>' argument 'soon' is invalid/],
    [['sandbox', 'run', 'p.py', '--memory', '1.5'], /option '--memory <MB>' argument '1.5' is invalid. expected a whole number/],
    [['sandbox', 'run', 'p.py', '--timeout', '-1'], /option '--timeout <S>' argument '-1' is invalid/],
    [['dashboard', '--port', '70000'], /option '--port <N>' argument '70000' is invalid. expected a TCP port, 1 to 65535/],
    [['status', 'r', '--watch', '--json'], /option '--watch' cannot be used with option '--json'/],
    [['episodes', 'list', '--run', 'r', '--filter', 'sucess=true'], /sucess: unknown key \(success, iteration/],
    [['episodes', 'list', '--run', 'r', '--filter', 'iteration=0,phase=test'], /phase=test: expected train or eval/],
    [['episodes', 'list', '--run', 'r', '--filter', 'turns=two'], /turns=two: not an integer/],
    [['nosuch'], /^tandem: unknown command 'nosuch'/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, message);
  }
});

test('one-of arguments are checked before anything connects: replay, episodes verify, sandbox run FILE', async () => {
  // These checks are in the actions (after parsing): they fail before any connection or file use.
  const cases: [string[], RegExp][] = [
    [['replay'], /^tandem replay: give exactly one of WORKFLOW_ID, --run RUN_ID or --file HISTORY.json/],
    [['replay', 'w', '--run', 'r'], /give exactly one of/],
    [['replay', '--run', 'r', '--run-id', 'x'], /--run-id goes with a WORKFLOW_ID/],
    [['replay', '--file', 'a.json', 'b.json', '--workflow-id', 'w'], /--workflow-id goes with one --file/],
    [['episodes', 'verify'], /^tandem episodes verify: give EPISODE_ID or --run RUN_ID/],
    [['episodes', 'verify', 'e', '--run', 'r'], /give EPISODE_ID or --run RUN_ID/],
    [['sandbox', 'run', projectPath('no/such/program.py')], /^tandem sandbox run: cannot read /],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv, { actionsRun: true });
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, message);
    assert.match(r.err, /\nusage: tandem /);
  }
});

test('--json on every command that prints data', () => {
  // These print no data to take as JSON: an id, a confirmation, or JSON already (sandbox run).
  const noData = new Set(['tandem stack up', 'tandem stack down', 'tandem train', 'tandem pause', 'tandem resume', 'tandem stop', 'tandem sandbox run', 'tandem sandbox check', 'tandem dashboard']);
  for (const c of leaves) {
    const json = c.options.some((o) => o.long === '--json');
    assert.equal(json, !noData.has(label(c)), `${label(c)}: --json ${json ? 'present' : 'missing'}`);
  }
});

test("README's CLI reference is the root --help, every command in it", async () => {
  const help = (await cli(['--help'])).out;
  const readme = readFileSync(projectPath('README.md'), 'utf8');
  assert.ok(readme.includes(`$ npx tandem --help\n${help}`), 'README.md shows `npx tandem --help` as it prints (update README from its output)');
  for (const c of leaves) assert.ok(help.includes(`\n  ${synopsis(c).replace(/^tandem /, '')}\n`), label(c));
});

test('bin/tandem.js: `pause --help` and `episodes list --help` exit 0; an unknown option exits 2, before connecting', () => {
  // Nothing listens on this address: a command that connected would fail with exit 1, not 2.
  const env = { ...process.env, TANDEM_TEMPORAL_ADDRESS: '127.0.0.1:9' };
  const run = (...argv: string[]) => spawnSync(process.execPath, ['bin/tandem.js', ...argv], { cwd: projectRoot, encoding: 'utf8', env, timeout: 60_000 });
  const pause = run('pause', '--help');
  assert.equal(pause.status, 0, pause.stderr);
  assert.match(pause.stdout, /^Usage: tandem pause \[options\] <RUN_ID>/);
  const list = run('episodes', 'list', '--help');
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /--filter <KEY=VALUE,...>/);
  const bad = run('status', 'some-run', '--frob');
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /^tandem status: unknown option '--frob'\nusage: tandem status <RUN_ID> \[--watch\] \[--json\]\n/);
});
