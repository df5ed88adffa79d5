// The update groups around a run (CPU worker). At its start, each trainable policy's group of
// iteration 0 is made at the data topics' current ends, so that its first update reads what the
// run publishes, not the topics' whole history. At its end, every update group it made is
// deleted, so that a finished run holds no record in Kafka (infra/kafka/retention.ts: a record
// stays until every group has read past it). Between the two, each update deletes the groups of
// the iteration before its own (activities/updatePolicy.ts).
import type { Kafka } from 'kafkajs';
import { updateConsumerGroup, updateGroupsOf } from '../domain/ids.js';
import { startAtEnd } from '../infra/kafka/readBatch.js';
import { deleteGroups } from '../infra/kafka/retention.js';
import { UPDATE_TOPICS } from '../infra/settings.js';

export interface RunPolicies {
  runId: string;
  /** The run's trainable policies, with their replica counts (1 without replicas). */
  policies: { name: string; replicas: number }[];
}

export function createUpdateGroupActivities(kafka: Kafka) {
  return {
    /** Idempotent: a group that already has offsets (a retry after its update began) stays where it is. */
    async startUpdateGroups(input: RunPolicies): Promise<void> {
      for (const p of input.policies) await startAtEnd(kafka, updateConsumerGroup(input.runId, p.name, 0), UPDATE_TOPICS);
    },

    /** The groups of iterations 0..`iterations` (the last update set the group of `iterations`). */
    async releaseUpdateGroups(input: RunPolicies & { iterations: number }): Promise<void> {
      const groups = input.policies.flatMap((p) => Array.from({ length: input.iterations + 1 }, (_, it) => updateGroupsOf(input.runId, p.name, it, p.replicas)).flat());
      await deleteGroups(kafka, groups);
    },
  };
}
