// Episodes opened by the workflow that starts them (a training run, an evaluation). The episodes
// that start together (an iteration's first episode_window) are opened together, in the parent's
// workflow task: their EpisodeStarted events go to Kafka in one request and their envs are reset
// in one local activity. Each episode's first workflow task then schedules its first turn at once,
// where it used to run its own opening first (bench/notes/rollout.md, "Episodes opened by their parent").
import { patched } from '@temporalio/workflow';
import type { EnvConfig } from '../envs/index.js';
import { episodeStarted, type EpisodeInput } from './episode.js';
import type { proxiesOf } from './proxies.js';

type Waiting = { input: EpisodeInput; resolve: (opened: EpisodeInput) => void; reject: (err: unknown) => void };

/**
 * open(input) -> the input, opened. The calls made in one stretch of workflow code (before it
 * next waits on a result) share one opening; every input's config has the env `env`. Create one
 * per fan-out (an iteration's episodes, an evaluation's); `localCpu`: the run's (proxiesOf).
 */
export function episodeOpener(env: EnvConfig, localCpu: ReturnType<typeof proxiesOf>['localCpu']): (input: EpisodeInput) => Promise<EpisodeInput> {
  // Parents recorded before they opened their episodes replay with episodes that open themselves.
  if (!patched('episodes-opened-by-parent')) return async (input) => input;
  let waiting: Waiting[] = [];
  const openAll = async () => {
    const batch = waiting;
    waiting = [];
    try {
      const [, states] = await Promise.all([
        localCpu.publishEvents(batch.flatMap((w) => episodeStarted(w.input))),
        localCpu.envResets({ env, seeds: batch.map((w) => w.input.problemSeed) }),
      ]);
      batch.forEach((w, i) => w.resolve({ ...w.input, opened: { initial: states[i] } }));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  };
  return (input) =>
    new Promise((resolve, reject) => {
      // Workflow code is deterministic, microtasks included: the same calls share an opening on replay.
      if (waiting.length === 0) void Promise.resolve().then(openAll);
      waiting.push({ input, resolve, reject });
    });
}
