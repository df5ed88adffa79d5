// An episode's transcript, turn by turn, loaded from the read models: for every (turn, agent)
// group, what the agent was shown (state, handoff, prompt), every candidate's response and
// scores, the advantage each got and the update that consumed it, and the candidate the
// episode continued from. `loadTranscript` gives the structured form (a stable shape that
// other views, e.g. the HTML report, render); `formatTranscript` the text `tandem episodes show` prints.
import { and, asc, eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { SampleScore } from '../../domain/events.js';
import type { ChatMessage } from '../../envs/types.js';
import { episodes, runs, samples, turnGroups } from '../../infra/db/schema.js';

export interface TranscriptCandidate {
  sampleId: string;
  /** Index within the group, 0..K-1. */
  candidate: number;
  /** The response text; null when the event predates audit content. */
  text: string | null;
  outcome: string;
  local: number;
  global: number;
  /** The mixed reward, local + alpha * global. */
  reward: number;
  /** Whether the episode would end / be solved had it continued from this candidate (null: not recorded). */
  done: boolean | null;
  solved: boolean | null;
  /** The candidate the episode continued from. */
  chosen: boolean;
  /** Null until an update consumed the sample (never, for scripted players), or when the update dropped its zero-variance group. */
  advantage: number | null;
  /** The update that consumed the sample: the policy's step fromVersion -> toVersion. */
  update: { policy: string; fromVersion: number; toVersion: number } | null;
}

export interface TranscriptStep {
  turn: number;
  agent: string;
  groupKey: string;
  policy: string;
  /** The policy version that produced the candidates. */
  policyVersion: number;
  /** The env state the candidates acted from (null when not recorded). */
  observation: unknown;
  /** What the agents before this one handed over in the same turn (null: none, or not recorded). */
  handoff: unknown;
  /** The messages the agent was shown (null when not recorded). */
  prompt: ChatMessage[] | null;
  /** Index of the candidate the episode continued from. */
  chosen: number;
  candidates: TranscriptCandidate[];
}

export interface Transcript {
  episodeId: string;
  runId: string;
  iteration: number;
  problemSeed: number;
  /** train, or eval: an evaluation episode (never trained on). */
  phase: string;
  /** env.name of the run's config, when the run is recorded. */
  env: string | null;
  status: string;
  success: boolean | null;
  turns: number | null;
  rewardByAgent: Record<string, number> | null;
  steps: TranscriptStep[];
}

export class EpisodeNotFoundError extends Error {
  constructor(episodeId: string) {
    super(`episode ${episodeId} is not in the record (see \`tandem episodes list --run RUN_ID\`)`);
  }
}

export async function loadTranscript(db: NodePgDatabase, episodeId: string): Promise<Transcript> {
  const [ep] = await db.select().from(episodes).where(eq(episodes.episodeId, episodeId));
  if (!ep) throw new EpisodeNotFoundError(episodeId);
  const [run] = await db.select({ config: runs.config }).from(runs).where(eq(runs.runId, ep.runId));
  const groups = await db
    .select()
    .from(turnGroups)
    .where(eq(turnGroups.episodeId, episodeId))
    .orderBy(asc(turnGroups.turn), asc(turnGroups.position), asc(turnGroups.agent));
  const rows = await db.select().from(samples).where(and(eq(samples.episodeId, episodeId), eq(samples.runId, ep.runId)));
  const bySample = new Map(rows.map((r) => [r.sampleId, r]));

  return {
    episodeId,
    runId: ep.runId,
    iteration: ep.iteration,
    problemSeed: ep.problemSeed,
    phase: ep.phase,
    env: envName(run?.config),
    status: ep.status,
    success: ep.success,
    turns: ep.turns,
    rewardByAgent: (ep.rewardByAgent as Record<string, number> | null) ?? null,
    steps: groups.map((g) => ({
      turn: g.turn,
      agent: g.agent,
      groupKey: g.groupKey,
      policy: g.policy,
      policyVersion: g.policyVersion,
      observation: g.state ?? null,
      handoff: g.handoff ?? null,
      prompt: (g.prompt as ChatMessage[] | null) ?? null,
      chosen: g.chosen,
      candidates: (g.samples as SampleScore[]).map((s) => {
        const row = bySample.get(s.sampleId);
        const consumed = row && row.consumedFromVersion !== null && row.consumedToVersion !== null;
        return {
          sampleId: s.sampleId,
          candidate: s.candidate,
          text: s.text ?? null,
          outcome: s.outcome,
          local: s.local,
          global: s.global,
          reward: s.reward,
          done: s.done ?? null,
          solved: s.solved ?? null,
          chosen: s.candidate === g.chosen,
          advantage: row?.advantage ?? null,
          update: consumed ? { policy: g.policy, fromVersion: row.consumedFromVersion!, toVersion: row.consumedToVersion! } : null,
        };
      }),
    })),
  };
}

function envName(config: unknown): string | null {
  const env = (config as { env?: { name?: unknown } } | undefined)?.env;
  return typeof env?.name === 'string' ? env.name : null;
}

const num = (x: number | null) => (x === null ? '-' : Number.isInteger(x) ? String(x) : x.toFixed(4));
const json = (x: unknown) => JSON.stringify(x, null, 2);
const indent = (text: string, by: string) => text.split('\n').map((l) => by + l).join('\n');

/** The transcript as text: a header, then each step with its observation, prompt and every candidate. */
export function formatTranscript(t: Transcript): string {
  const out: string[] = [];
  const rewards = t.rewardByAgent ? Object.entries(t.rewardByAgent).map(([a, r]) => `${a}=${num(r)}`).join(' ') : '-';
  out.push(`episode ${t.episodeId}`);
  out.push(`  run ${t.runId}  iteration ${t.iteration}  ${t.phase}  env ${t.env ?? '?'}  problem seed ${t.problemSeed}`);
  out.push(`  ${t.status}  success ${t.success ?? '-'}  turns ${t.turns ?? '-'}  mean reward ${rewards}`);
  for (const s of t.steps) {
    out.push('');
    out.push(`== turn ${s.turn}  ${s.agent}  (policy ${s.policy} v${s.policyVersion}, group ${s.groupKey}, continued from candidate ${s.chosen})`);
    out.push('-- observation');
    out.push(indent(s.observation === null ? '(not recorded)' : json(s.observation), '   '));
    if (s.handoff !== null) {
      out.push('-- handoff');
      out.push(indent(json(s.handoff), '   '));
    }
    out.push('-- prompt');
    if (s.prompt === null) out.push('   (not recorded)');
    else for (const m of s.prompt) out.push(`   [${m.role}]`, indent(m.content, '     '));
    for (const c of s.candidates) {
      const update = c.update ? `update ${c.update.policy} v${c.update.fromVersion}->v${c.update.toVersion}` : 'not consumed by an update';
      out.push(`-- candidate ${c.candidate}${c.chosen ? ' (chosen)' : ''}  ${c.sampleId}`);
      // Consumed with no advantage: the update dropped the sample's zero-variance group.
      const advantage = c.update && c.advantage === null ? 'none (zero-variance group dropped)' : num(c.advantage);
      out.push(`   reward local ${num(c.local)}  global ${num(c.global)}  mixed ${num(c.reward)}  advantage ${advantage}  ${update}`);
      out.push(`   outcome ${c.outcome}${c.done === null ? '' : `  done ${c.done}  solved ${c.solved}`}`);
      out.push('   response:', indent(c.text ?? '(not recorded)', '     '));
    }
  }
  return out.join('\n');
}
