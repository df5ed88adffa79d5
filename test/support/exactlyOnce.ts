// The exactly-once property of a finished run, checked from Postgres's `events` table alone
// (once the projector has stored every event on the topic: the run's streams sit on different
// partitions, so its RunFinished can reach Postgres before another stream's earlier events):
//   - for every (iteration, policy) there is exactly one SamplesConsumed and one UpdateApplied;
//   - the sample ids a SamplesConsumed lists (trained on, or set apart as stale) are exactly the
//     sample ids of that iteration's TurnGroupScored events for that policy (training episodes;
//     evaluations train nothing);
//   - no sample id is scored twice, and none is consumed by two updates;
//   - each policy's versions go from..to as 0→1→…→N, one step per iteration;
//   - every sample trained on (not set apart as stale) is at most `maxStaleness` versions older
//     than the update that trained it (its age: the update's from-version minus the version that
//     generated it), and never newer; the ages found are returned, for tests that need some of each.
import assert from 'node:assert/strict';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { events } from '../../infra/db/schema.js';
import { PROJECTOR_GROUP, TOPICS } from '../../infra/settings.js';
import type { TandemEvent } from '../../domain/events.js';
import { eventually } from './eventually.js';
import { database, kafka } from './stack.js';

type Of<T extends TandemEvent['type']> = Extract<TandemEvent, { type: T }>;

/** Waits for the run's RunFinished in Postgres, then asserts exactly-once; returns what it checked. */
export async function assertExactlyOnce(
  runId: string,
  opts: { iterations: number; policies: string[]; /** The run's rollout.max_staleness (default 0). */ maxStaleness?: number },
): Promise<{ samples: number; /** Trained samples by age (versions behind their update). */ ages: Map<number, number> }> {
  const pg = database();
  try {
    const runEvents = (types: string[]) =>
      pg.db
        .select({ type: events.type, data: events.data })
        .from(events)
        .where(and(inArray(events.type, types), eq(sql`${events.data}->>'runId'`, runId)));
    await eventually(`RunFinished of ${runId} in Postgres`, async () => ((await runEvents(['RunFinished'])).length > 0 ? true : undefined), 300_000);
    await projectorCaughtUp();
    const rows = await runEvents(['EpisodeStarted', 'TurnGroupScored', 'SamplesConsumed', 'UpdateApplied']);
    const of = <T extends TandemEvent['type']>(type: T) => rows.filter((r) => r.type === type).map((r) => r.data as Of<T>);
    // Evaluation episodes score groups too, but publish nothing for updates.
    const evaluations = new Set(of('EpisodeStarted').filter((e) => e.phase === 'eval').map((e) => e.episodeId));

    const scored = new Map<string, Set<string>>(); // "<iteration>/<policy>" -> sample ids
    const everScored = new Set<string>();
    const generatedBy = new Map<string, number>(); // sample id -> the version that generated it
    for (const g of of('TurnGroupScored').filter((e) => !evaluations.has(e.episodeId))) {
      const ids = scored.get(`${g.iteration}/${g.policy}`) ?? new Set<string>();
      scored.set(`${g.iteration}/${g.policy}`, ids);
      for (const s of g.samples) {
        assert.ok(!everScored.has(s.sampleId), `sample ${s.sampleId} is scored twice`);
        everScored.add(s.sampleId);
        generatedBy.set(s.sampleId, g.policyVersion);
        ids.add(s.sampleId);
      }
    }

    const consumedBy = new Map<string, string>(); // sample id -> the update that consumed it
    const ages = new Map<number, number>();
    const bound = opts.maxStaleness ?? 0;
    for (const policy of opts.policies) {
      for (let it = 0; it < opts.iterations; it++) {
        const where = `iteration ${it}, policy ${policy}`;
        const consumed = of('SamplesConsumed').filter((e) => e.iteration === it && e.policy === policy);
        const applied = of('UpdateApplied').filter((e) => e.iteration === it && e.policy === policy);
        assert.equal(consumed.length, 1, `${where}: ${consumed.length} SamplesConsumed events, expected 1`);
        assert.equal(applied.length, 1, `${where}: ${applied.length} UpdateApplied events, expected 1`);
        const [c] = consumed;
        assert.deepEqual([c.fromVersion, c.toVersion], [it, it + 1], `${where}: versions ${c.fromVersion}->${c.toVersion}`);
        assert.deepEqual([applied[0].fromVersion, applied[0].toVersion], [it, it + 1], `${where}: UpdateApplied versions`);
        // (stale: samples older than rollout.max_staleness allows, consumed without training)
        const ids = [...Object.keys(c.advantages), ...Object.keys(c.stale ?? {})];
        const expected = scored.get(`${it}/${policy}`) ?? new Set<string>();
        assert.ok(expected.size > 0, `${where}: no TurnGroupScored samples`);
        assert.deepEqual(new Set(ids), expected, `${where}: consumed sample ids differ from the scored ones`);
        for (const id of ids) {
          const other = consumedBy.get(id);
          assert.ok(other === undefined, `sample ${id} consumed by two updates: ${other} and ${where}`);
          consumedBy.set(id, where);
        }
        for (const id of Object.keys(c.advantages)) {
          const age = c.fromVersion - generatedBy.get(id)!;
          assert.ok(age >= 0 && age <= bound, `${where}: sample ${id} trained at age ${age} (generated by v${generatedBy.get(id)}, update from v${c.fromVersion}); rollout.max_staleness is ${bound}`);
          ages.set(age, (ages.get(age) ?? 0) + 1);
        }
      }
    }
    const stray = of('SamplesConsumed').filter((e) => !opts.policies.includes(e.policy) || e.iteration >= opts.iterations);
    assert.equal(stray.length, 0, `SamplesConsumed for unexpected updates: ${JSON.stringify(stray.map((e) => [e.iteration, e.policy]))}`);
    assert.equal(consumedBy.size, everScored.size, 'every scored sample was consumed');
    return { samples: consumedBy.size, ages };
  } finally {
    await pg.close();
  }
}

/**
 * Waits until the projector has stored every event now on the events topic: its group's
 * committed offsets (committed after each event's Postgres transaction) reach every partition's end.
 */
async function projectorCaughtUp(): Promise<void> {
  const admin = kafka().admin();
  await admin.connect();
  try {
    await eventually(
      'the projector to store every event on the topic',
      async () => {
        const ends = await admin.fetchTopicOffsets(TOPICS.events);
        const [group] = await admin.fetchOffsets({ groupId: PROJECTOR_GROUP, topics: [TOPICS.events] });
        const committed = new Map(group.partitions.map((p) => [p.partition, Math.max(0, Number(p.offset))]));
        return ends.every((e) => (committed.get(e.partition) ?? 0) >= Number(e.high)) ? true : undefined;
      },
      300_000,
    );
  } finally {
    await admin.disconnect();
  }
}
