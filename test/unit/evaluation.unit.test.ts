// Evaluation summaries and `tandem eval --checkpoint` folder resolution.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadRunConfig } from '../../configs/load.js';
import { checkpointDirs } from '../../services/cli/eval.js';
import type { EpisodeSummary } from '../../domain/summaries.js';
import { summariseEvaluation } from '../../domain/summaries.js';

const episode = (success: boolean, turnRewards: EpisodeSummary['turnRewards']): EpisodeSummary => {
  const agents = [...new Set(turnRewards.map((t) => t.agent))];
  const rewardByAgent = Object.fromEntries(
    agents.map((a) => {
      const rs = turnRewards.filter((t) => t.agent === a).map((t) => t.reward);
      return [a, rs.reduce((x, y) => x + y, 0) / rs.length];
    }),
  );
  return { episodeId: 'e', success, turns: 1 + Math.max(...turnRewards.map((t) => t.turn)), rewardByAgent, turnRewards, samplesByPolicy: {} };
};

test('an evaluation averages success, turns and rewards over episodes, per agent and per turn', () => {
  const r = summariseEvaluation('ev', 'run', 3, { m: 3 }, [
    episode(true, [{ turn: 0, agent: 'tool', reward: 1 }, { turn: 0, agent: 'plan', reward: 2 }]),
    episode(false, [
      { turn: 0, agent: 'tool', reward: 3 },
      { turn: 0, agent: 'plan', reward: 0 },
      { turn: 1, agent: 'plan', reward: -1 },
    ]),
  ]);
  assert.equal(r.episodes, 2);
  assert.equal(r.successRate, 0.5);
  assert.equal(r.meanTurns, 1.5);
  assert.deepEqual(r.rewardByAgentTurn, { plan: [1, -1], tool: [2, null] }); // tool never acted at turn 1
  assert.deepEqual(r.rewardByAgent, { plan: (2 + -0.5) / 2, tool: 2 });
  assert.deepEqual([r.evalId, r.runId, r.iteration, r.versions], ['ev', 'run', 3, { m: 3 }]);
});

test('--checkpoint: a folder per trainable policy, or the one policy’s own folder; anything else is explained', (t) => {
  const l2 = loadRunConfig('configs/planpath/planpath_L2_lora.yaml', []);
  const l1 = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', []);
  assert.ok(l2.ok && l1.ok);
  const root = mkdtempSync(join(tmpdir(), 'tandem-ckpt-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const p of ['tool_call_agent', 'plan_agent']) mkdirSync(join(root, 'runs', p, 'v000001'), { recursive: true });
  mkdirSync(join(root, 'one', 'v000002'), { recursive: true });

  assert.deepEqual(checkpointDirs(l2.config, join(root, 'runs')), {
    tool_call_agent: join(root, 'runs', 'tool_call_agent'),
    plan_agent: join(root, 'runs', 'plan_agent'),
  });
  assert.deepEqual(checkpointDirs(l1.config, join(root, 'one')), { shared_model: join(root, 'one') });
  assert.match(checkpointDirs(l2.config, join(root, 'one')) as string, /sub-folder per trainable policy \(tool_call_agent, plan_agent\)/);
  assert.equal(checkpointDirs(l1.config, join(root, 'missing')), 'no such folder');
});
