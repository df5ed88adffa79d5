// Does a warm-started model read its prompt? Plan-Path's roles, sampled on held-out demonstrations.
//   node --import tsx bench/learning/reads.ts --model DIR [--helper [--helper-grid named]] [--problems 100]
//        [--temperature 1.0] [--seed 7] [--roles tool,after,alone] [--answers FILE]
// The prompts are the warm start's own kind (envs/puzzle/demos.ts: Plan-Path's demonstrations,
// with the miniature's tool helper under --helper, its grid passed as `rows` under --helper-grid
// named) from --seed, which the warm start did not see
// (infra/setup.sh builds from seed 1), in their order: for each of the first --problems turns, the
// tool agent's prompt, the plan agent's after the tool agent (showing the demonstrated program's
// output) and the plan agent's alone. The model (served by the engine as configs/planpath's L1
// config would serve it, at --temperature, one answer per prompt) answers each, and the env scores
// the answers as a run would (the tool agent's programs run in the sandbox), under
// env.invalid_move end, so that a move list solves only if it reaches the goal with no invalid move:
// - tool agent: the share of programs that call shortest_path (the miniature's helper), that call
//   it with the prompt's exact grid rows, position and goal, and that solve;
// - plan agent after the tool agent: the share of answers that repeat the move list its prompt
//   shows (of the prompts that show one), and that solve;
// - plan agent alone: the share of answers that solve.
// A model that reads its prompt copies what the prompt hands it; one that only learned the
// answers' format solves about as often as random move lists (bench/learning/chance.ts). The first
// line the bench prints is the demonstrations' own answers to the same prompts, scored the same way.
// --answers FILE writes each prompt's role, the demonstration's answer and the model's, as JSON lines.
// Needs what the CPU worker needs (root and bubblewrap, for the sandbox); no stack.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvActivities } from '../../activities/env.js';
import { ensurePolicy } from '../../activities/policy.js';
import { loadRunConfig } from '../../configs/load.js';
import { demoSource, helperCallText } from '../../envs/planpath/demoTranscripts.js';
import type { HelperGrid, PlanPathState } from '../../envs/planpath/grid.js';
import { planPathPuzzle } from '../../envs/planpath/roles.js';
import { literalToolDemo, moveListDemos, type MoveListDemoSource, type ToolDemo } from '../../envs/puzzle/demos.js';
import { parsePuzzleAnswer } from '../../envs/puzzle/roles.js';
import { mulberry32 } from '../../envs/shared/rng.js';
import type { ChatMessage } from '../../envs/types.js';
import { EngineClient, type GenerateRequest, type GenerateResult } from '../../infra/engine/client.js';
import { engineKey, policyRef } from '../../policy/ref.js';
import { policiesOf } from '../../policy/spec.js';

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}
const model = arg('model', '');
if (!model) throw new Error('--model DIR: the model folder to probe');
const helper = process.argv.includes('--helper');
const helperGrid = arg('helper-grid', 'literal') as HelperGrid;
if (helperGrid !== 'literal' && helperGrid !== 'named') throw new Error(`--helper-grid: literal or named, not '${String(helperGrid)}'`);
if (helperGrid === 'named' && !helper) throw new Error('--helper-grid named: with --helper');
const problems = Number(arg('problems', '100'));
const temperature = Number(arg('temperature', '1.0'));
const seed = Number(arg('seed', '7'));
const roles = arg('roles', 'tool,after,alone').split(',');
const answersFile = arg('answers', '');
const ROLES = ['tool', 'after', 'alone'] as const;
type Role = (typeof ROLES)[number];
if (!(problems > 0) || !(temperature >= 0) || roles.some((r) => !ROLES.includes(r as Role))) {
  throw new Error(`--problems > 0, --temperature >= 0, --roles among ${ROLES.join(',')}`);
}

/** One held-out prompt: its role, the state it was built from, the demonstration's answer, and (after the tool agent) the list it shows. */
interface Probe {
  role: Role;
  state: PlanPathState;
  prompt: ChatMessage[];
  demo: string;
  shown: string[] | null;
}

/** The first `problems` turns' three prompts, in the demonstrations' order, with the state and tool output of each turn. */
function probes(): Probe[] {
  const base = demoSource(seed, helper, helperGrid);
  let turn: { state: PlanPathState; tool: ToolDemo } | null = null;
  // The source's tool answer is taken once per turn, before the turn's transcripts: capture its state there.
  const source: MoveListDemoSource<PlanPathState> = {
    ...base,
    tool: (state, moves, rng) => (turn = { state, tool: base.tool ? base.tool(state, moves, rng) : literalToolDemo(moves) }).tool,
  };
  const out: Probe[] = [];
  let index = 0;
  for (const messages of moveListDemos(source, 10 * problems, mulberry32(seed))) {
    const role = ROLES[index++ % 3];
    if (role === 'tool' && out.length >= 3 * problems) break;
    const { state, tool } = turn!;
    const shown = role === 'after' ? parsePuzzleAnswer(planPathPuzzle, tool.stdout) : null;
    out.push({ role, state: { ...state, invalidMove: 'end' }, prompt: messages.slice(0, -1), demo: messages.at(-1)!.content, shown: shown && shown.length ? shown : null });
  }
  return out.filter((p) => roles.includes(p.role));
}

const same = (a: string[] | null, b: string[] | null) => a !== null && b !== null && a.length === b.length && a.every((m, i) => m === b[i]);

/** The shares a set of answers scores, per role. */
async function measure(items: Probe[], answers: string[], env: ReturnType<typeof createEnvActivities>, cfg: ReturnType<typeof config>): Promise<string> {
  const counts: Record<Role, { n: number; calls: number; right: number; solves: number; shown: number; repeats: number }> = {
    tool: { n: 0, calls: 0, right: 0, solves: 0, shown: 0, repeats: 0 },
    after: { n: 0, calls: 0, right: 0, solves: 0, shown: 0, repeats: 0 },
    alone: { n: 0, calls: 0, right: 0, solves: 0, shown: 0, repeats: 0 },
  };
  await Promise.all(
    items.map(async (p, i) => {
      const text = answers[i];
      const agent = p.role === 'tool' ? 'tool_call_agent' : 'plan_agent';
      const [scored] = await env.scoreCandidates({ env: cfg.env, agent, state: p.state, texts: [text], alpha: cfg.alpha });
      const c = counts[p.role];
      c.n++;
      c.solves += Number(p.role === 'tool' ? scored.global === 1 : scored.solved);
      if (p.role === 'tool') {
        c.calls += Number(text.includes('shortest_path('));
        c.right += Number(text.includes(helperCallText(p.state)));
      }
      if (p.shown !== null) {
        c.shown++;
        c.repeats += Number(same(parsePuzzleAnswer(planPathPuzzle, text), p.shown));
      }
    }),
  );
  const pct = (k: number, n: number) => `${Math.round((100 * k) / Math.max(n, 1))}%`;
  const parts: string[] = [];
  for (const role of ROLES.filter((r) => roles.includes(r))) {
    const c = counts[role];
    if (role === 'tool') parts.push(`tool (${c.n}): calls the helper ${pct(c.calls, c.n)}, the right call ${pct(c.right, c.n)}, solves ${pct(c.solves, c.n)}`);
    if (role === 'after') parts.push(`plan after tool (${c.n}): repeats the shown list ${pct(c.repeats, c.shown)} (of ${c.shown}), solves ${pct(c.solves, c.n)}`);
    if (role === 'alone') parts.push(`plan alone (${c.n}): solves ${pct(c.solves, c.n)}`);
  }
  return parts.join('; ');
}

function config() {
  const file = `configs/planpath/${helper ? 'planpath_helper' : 'planpath'}_L1_prompt.yaml`;
  const loaded = loadRunConfig(file, [`base_models.policy_0.path=${model}`, 'env.invalid_move=end', ...(helper ? [`env.helper_grid=${helperGrid}`] : [])]);
  if (!loaded.ok) throw new Error(`${file}: ${JSON.stringify(loaded.issues)}`);
  return loaded.config;
}

async function main(): Promise<void> {
  const cfg = config();
  const items = probes();
  const env = createEnvActivities();
  console.log(`${helper ? `Plan-Path with the tool helper (grid ${helperGrid})` : 'Plan-Path'}, ${problems} held-out turns (demonstrations of seed ${seed}), env.invalid_move end`);
  console.log(`  the demonstrations: ${await measure(items, items.map((p) => p.demo), env, cfg)}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-reads-'));
  const engine = new EngineClient('cpu', () => {});
  try {
    const [spec] = policiesOf(cfg).filter((p) => p.kind !== 'scripted');
    const policy = policyRef('reads', spec, cfg);
    await ensurePolicy({ engine, device: 'cpu', dataDir }, policy);
    const requests: GenerateRequest[] = items.map((p, i) => ({
      policy: engineKey(policy),
      version: 0,
      newer_within: 0,
      messages: p.prompt,
      n: 1,
      temperature,
      top_p: 1,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      max_new_tokens: cfg.training.max_response_length,
      max_prompt_tokens: cfg.training.max_prompt_length,
      truncation: cfg.training.truncation,
      stop: [],
      ignore_eos: false,
      seed: seed * 1_000_003 + i,
      enable_thinking: null,
    }));
    const { results } = await engine.request<{ results: GenerateResult[] }>('generate', { requests });
    const answers = results.map((r) => r.samples[0].text);
    console.log(`  ${model} at temperature ${temperature}: ${await measure(items, answers, env, cfg)}`);
    if (answersFile) writeFileSync(answersFile, items.map((p, i) => `${JSON.stringify({ role: p.role, demo: p.demo, answer: answers[i] })}\n`).join(''));
  } finally {
    await engine.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
