// Publishing (CPU worker): domain events to the events topic, and an episode's scored samples
// to the trajectories topic. Event ids are deterministic, so a retried publish is harmless:
// the projector stores each event id once and the update keeps each sample id once.
import type { EventEnvelope } from '../domain/events.js';
import type { LazyProducer } from '../infra/kafka/client.js';
import { TOPICS } from '../infra/settings.js';
import { policyKey } from '../domain/ids.js';
import type { TrajectoryRecord } from './records.js';

export function createPublishActivities(producer: LazyProducer) {
  return {
    async publishEvents(events: EventEnvelope[]): Promise<void> {
      await producer.send(TOPICS.events, events.map((e) => ({ key: e.stream, value: JSON.stringify(e) })));
    },

    /** The episode's samples first, then its events: an EpisodeFinished implies its samples are in Kafka. */
    async publishEpisode(input: { samples: TrajectoryRecord[]; events: EventEnvelope[] }): Promise<void> {
      await producer.send(
        TOPICS.trajectories,
        input.samples.map((s) => ({ key: policyKey(s.runId, s.policy), value: JSON.stringify(s) })),
      );
      await producer.send(TOPICS.events, input.events.map((e) => ({ key: e.stream, value: JSON.stringify(e) })));
    },
  };
}
