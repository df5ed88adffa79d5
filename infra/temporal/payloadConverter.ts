// The payload converter of every workflow (bundled with them: infra/temporal/bundle.ts): the SDK's
// default, with one addition. A local activity's arguments are marked LOCAL_ARGUMENT: they go
// from the workflow to the activity inside the worker, are never sent to the server nor written to
// history (a local activity's marker records its result only), and so have no business in the
// payload store (payloadStore.ts keeps marked payloads inline). Without the mark, an episode's
// scoring inputs (its candidates' texts and state) and its closing (all its samples and events) were
// written to table `payloads` once each, never to be read again but by the activity next door.
import { defaultPayloadConverter, type Payload, type PayloadConverter, type SerializationContext } from '@temporalio/common';
import { inWorkflowContext } from '@temporalio/workflow';

/** Metadata key of a payload that is a local activity's argument. */
export const LOCAL_ARGUMENT = 'tandem-local-argument';

const MARK = new TextEncoder().encode('1');

class TandemPayloadConverter implements PayloadConverter {
  toPayload<T>(value: T, context?: SerializationContext): Payload {
    const payload = defaultPayloadConverter.toPayload(value, context);
    // A workflow converts a local activity's arguments under this context, and nothing else. (The
    // activity converts its result under the same context: that result goes into the activity's
    // marker, in history, and must be stored as any other payload.)
    if (context?.type !== 'activity' || !context.isLocal || !inWorkflowContext()) return payload;
    return { ...payload, metadata: { ...payload.metadata, [LOCAL_ARGUMENT]: MARK } };
  }

  fromPayload<T>(payload: Payload, context?: SerializationContext): T {
    return defaultPayloadConverter.fromPayload(payload, context);
  }
}

export const payloadConverter: PayloadConverter = new TandemPayloadConverter();
