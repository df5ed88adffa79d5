// Which charts a run has, with their captions: the one home of them, for `tandem report` (PNGs)
// and the dashboard (drawn live in the browser). Computed from a run's read models (pure: RunData
// in, chart specs out; chartOption.ts makes each an ECharts option). Iterations and turns are
// shown from 1.
import type { ChartSpec, Series } from './chartOption.js';
import type { RunData } from './load.js';

export interface NamedChart {
  /** File name without extension. */
  file: string;
  spec: ChartSpec;
  /** One line under the plot (report and dashboard): what it shows and where the numbers come from. */
  caption: string;
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

function rewardPerAgent(d: RunData): NamedChart {
  const agents = sorted(d.iterations.flatMap((i) => Object.keys(i.rewardByAgent)));
  return {
    file: 'reward_per_agent',
    spec: {
      title: 'Mean reward per agent',
      xLabel: 'iteration',
      yLabel: 'reward (chosen candidates)',
      integerX: true,
      series: agents.map((a) => ({
        name: a,
        points: d.iterations.filter((i) => a in i.rewardByAgent).map((i) => [i.iteration + 1, i.rewardByAgent[a]]),
      })),
    },
    caption: "Per iteration, each agent's mean mixed reward over the episodes' chosen candidates (iterations table).",
  };
}

function successRate(d: RunData): NamedChart {
  return {
    file: 'success_rate',
    spec: {
      title: 'Episode success rate',
      xLabel: 'iteration',
      yLabel: 'success rate',
      integerX: true,
      series: [{ name: 'team', points: d.iterations.map((i) => [i.iteration + 1, i.successRate]) }],
    },
    caption: "Per iteration, the share of episodes that succeeded (iterations table). Success belongs to the episode, which all its agents share.",
  };
}

function rewardPerTurn(d: RunData): NamedChart {
  const series: Series[] = [];
  for (const agent of sorted(d.turnRewards.map((t) => t.agent))) {
    const rows = d.turnRewards.filter((t) => t.agent === agent);
    series.push({ name: `${agent} chosen`, points: rows.filter((t) => t.chosen !== null).map((t) => [t.turn + 1, t.chosen!]) });
    series.push({ name: `${agent} all K`, dashed: true, points: rows.map((t) => [t.turn + 1, t.all]) });
  }
  return {
    file: 'reward_per_turn',
    spec: { title: 'Reward per turn', xLabel: 'turn', yLabel: 'mean reward', integerX: true, series },
    caption: "Over all training episodes of the run: the mean reward of the chosen candidates at each turn (solid) and of all K candidates (dashed), per agent (samples table).",
  };
}

function evaluation(d: RunData): NamedChart {
  const evals = d.evaluations.filter((e) => e.iteration !== null);
  const agents = sorted(evals.flatMap((e) => Object.keys(e.rewardByAgent)));
  return {
    file: 'evaluation',
    spec: {
      title: 'Evaluation on held-out problems',
      xLabel: 'training iterations done',
      yLabel: 'success rate / mean reward',
      integerX: true,
      series: [
        { name: 'success rate', points: evals.map((e) => [e.iteration!, e.successRate]) },
        ...agents.map((a) => ({
          name: `reward ${a}`,
          dashed: true,
          points: evals.filter((e) => a in e.rewardByAgent).map((e): [number, number] => [e.iteration!, e.rewardByAgent[a]]),
        })),
      ],
    },
    caption:
      'Each evaluation of the run (EvaluationFinished events; training.val_freq): success rate (solid) and mean reward of the chosen candidates per agent (dashed), at the number of training iterations done before it (0: before training). Empty when the run has no evaluation.',
  };
}

function updateMetric(d: RunData, file: string, title: string, keys: string[], caption: string): NamedChart {
  const series: Series[] = [];
  for (const policy of sorted(d.updates.map((u) => u.policy))) {
    for (const key of keys) {
      const points = d.updates.filter((u) => u.policy === policy && typeof u.metrics[key] === 'number').map((u): [number, number] => [u.iteration + 1, u.metrics[key]]);
      if (points.length > 0) series.push({ name: keys.length > 1 ? `${policy} ${key}` : policy, points, dashed: key !== keys[0] });
    }
  }
  return { file, spec: { title, xLabel: 'iteration', yLabel: keys.join(' / '), integerX: true, series }, caption };
}

/**
 * The share of each update's samples whose advantage was 0 (their group's scores all equal: no
 * learning signal; TRL's frac_reward_zero_std), per policy; updates recorded before the metric had
 * none.
 */
function noSignal(d: RunData): NamedChart {
  const series: Series[] = sorted(d.updates.map((u) => u.policy)).map((policy) => ({
    name: policy,
    points: d.updates
      .filter((u) => u.policy === policy && typeof u.metrics.zero_advantage_samples === 'number' && u.samples > 0)
      .map((u): [number, number] => [u.iteration + 1, u.metrics.zero_advantage_samples / u.samples]),
  }));
  return {
    file: 'update_no_signal',
    spec: { title: 'Samples without signal', xLabel: 'iteration', yLabel: 'share of samples of advantage 0', integerX: true, series },
    caption:
      "Per update: the share of its samples of advantage 0, whose group's scores were all equal (a task the agents always or never solve there), per policy (updates' metrics.zero_advantage_samples over samples).",
  };
}

/**
 * Generated tokens per second of each iteration: the response tokens that the iteration's updates
 * trained on (every candidate of every policy), over the time from the previous IterationFinished
 * (or RunStarted) to this one, as the projector recorded them.
 */
function tokensPerSecond(d: RunData): NamedChart {
  const points: [number, number][] = [];
  for (const it of d.iterations) {
    const end = d.times.iterationFinished.get(it.iteration);
    const start = it.iteration === 0 ? d.times.started : d.times.iterationFinished.get(it.iteration - 1);
    const tokens = d.updates.filter((u) => u.iteration === it.iteration).reduce((n, u) => n + (u.metrics.tokens ?? 0), 0);
    if (end && start && end > start && tokens > 0) points.push([it.iteration + 1, tokens / ((end.getTime() - start.getTime()) / 1000)]);
  }
  return {
    file: 'tokens_per_second',
    spec: { title: 'Generated tokens per second', xLabel: 'iteration', yLabel: 'tokens / s (wall clock)', integerX: true, series: [{ name: 'all policies', points }] },
    caption:
      "Per iteration: the response tokens its updates trained on (updates' metrics.tokens), over the wall time between the iteration's end and the previous one's (events recorded_at), so rollout, scoring and update time all count.",
  };
}

export function reportCharts(d: RunData): NamedChart[] {
  return [
    rewardPerAgent(d),
    successRate(d),
    rewardPerTurn(d),
    evaluation(d),
    updateMetric(d, 'update_loss', 'Update loss', ['loss', 'pg_loss'], 'Per update: the PPO loss (solid) and its policy-gradient part (dashed), per policy (updates table).'),
    updateMetric(d, 'update_kl', 'Update KL', ['kl', 'approx_kl'], 'Per update: the KL penalty to the reference model (solid, only when kl_coef > 0) and the approximate KL(old || new) per token between the rollout log-probs and the policy as the update computed them (dashed), per policy.'),
    updateMetric(d, 'update_clip_fraction', 'Update clip fraction', ['clip_fraction'], 'Per update: the share of response tokens whose ratio was clipped, per policy.'),
    updateMetric(d, 'update_entropy', 'Policy entropy', ['entropy'], "Per update: the policy's entropy, nats a response token (the update's mean over its tokens), per policy. A steady rise is the policy spreading: its sampled answers wander while its greedy ones may stay right (bench/RESULTS.md, the two-step table's trajectory GRPO)."),
    noSignal(d),
    tokensPerSecond(d),
  ];
}
