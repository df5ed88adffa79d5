// agentTurn (policy worker): K candidates for one (turn, agent) from the acting agent's policy.
// One engine request: it joins the engine's running decode batch at the next step, and carries
// how to load the policy should the engine not hold it yet (no round trip of its own). The
// token-level record of each candidate goes to the rollouts topic; only the text and a sample id
// go back into workflow history.
import { activityInfo, ApplicationFailure, Context } from '@temporalio/activity';
import type { SamplingConfig } from '../configs/schema.js';
import { recordableText } from '../domain/events.js';
import { policyKey, sampleIdOf } from '../domain/ids.js';
import type { ChatMessage } from '../envs/types.js';
import { RecordTooLarge, type LazyProducer } from '../infra/kafka/client.js';
import { EngineError, type GenerateRequest, type GenerateResult } from '../infra/engine/client.js';
import { TOPICS } from '../infra/settings.js';
import { loadSpec, offPolicy, type EngineDeps } from './policy.js';
import { engineKey, type PolicyRef } from '../policy/ref.js';
import { encodeRollout, type RolloutRecord } from './records.js';

export interface AgentTurnInput {
  policy: PolicyRef;
  policyVersion: number;
  iteration: number;
  episodeId: string;
  turn: number;
  agent: string;
  messages: ChatMessage[];
  k: number;
  sampling: SamplingConfig;
  maxNewTokens: number;
  /** training.max_prompt_length and training.truncation (absent in turns scheduled before they existed: no limit). */
  maxPromptTokens?: number;
  truncation?: 'keep_system' | 'left' | 'error';
  seed: number;
  /** Publish the token-level records for an update (false for evaluation turns). */
  record: boolean;
  /**
   * rollout.max_staleness for a training turn (absent in turns scheduled before it existed, and
   * evaluation turns: 0): the engine may generate with a version up to this many after
   * policyVersion, one an update made since the episode opened.
   */
  newerWithin?: number;
}

export interface CandidateText {
  sampleId: string;
  text: string;
  finishReason: string;
  responseTokens: number;
  /** The version that generated it (absent in turns recorded before it was returned: the turn's policyVersion). */
  policyVersion?: number;
  /** Its prompt was cut (training.truncation) from this many tokens to maxPromptTokens; absent: whole. */
  promptTruncatedFrom?: number;
}

/**
 * Engine errors a retry would meet again fail the turn for good: a prompt over
 * training.max_prompt_length (a retry renders the same prompt), and a sample that needs more KV
 * cache than the engine's whole budget.
 */
function forGood(err: unknown, input: AgentTurnInput): unknown {
  if (!(err instanceof EngineError)) return err;
  const turn = `turn ${input.turn} of ${input.episodeId}`;
  if (err.type === 'PromptTooLong')
    return ApplicationFailure.nonRetryable(
      `${input.agent}'s prompt in ${turn}: ${err.message} by training.max_prompt_length ` +
        `(training.truncation: error; raise max_prompt_length, or set truncation to keep_system or left to cut the prompt)`,
      'PromptTooLong',
    );
  if (err.type === 'KvCacheTooSmall')
    return ApplicationFailure.nonRetryable(
      `${input.agent}'s ${turn}: ${err.message} (training.max_prompt_length and training.max_response_length; ` +
        `TANDEM_KV_CACHE_GB in the policy worker's environment)`,
      'KvCacheTooSmall',
    );
  return err;
}

export interface AgentTurnDeps extends EngineDeps {
  producer: LazyProducer;
}

export function createAgentTurnActivities(deps: AgentTurnDeps) {
  return {
    async agentTurn(input: AgentTurnInput): Promise<CandidateText[]> {
      const { policy } = input;
      const request: GenerateRequest = {
        policy: engineKey(policy),
        version: input.policyVersion,
        newer_within: input.newerWithin ?? 0,
        messages: input.messages,
        n: input.k,
        temperature: input.sampling.temperature,
        top_p: input.sampling.top_p,
        top_k: input.sampling.top_k,
        min_p: input.sampling.min_p,
        // (absent in the sampling settings of turns scheduled before it existed: off)
        repetition_penalty: input.sampling.repetition_penalty ?? 1,
        max_new_tokens: input.maxNewTokens,
        stop: [],
        ignore_eos: input.sampling.ignore_eos ?? false, // (likewise)
        max_prompt_tokens: input.maxPromptTokens ?? null,
        truncation: input.truncation ?? 'error',
        seed: input.seed,
        enable_thinking: input.sampling.enable_thinking,
        load: loadSpec(deps, policy),
      };
      const { results } = await deps.engine
        .request<{ results: GenerateResult[] }>('generate', { requests: [request] }, Context.current().cancellationSignal)
        .catch((err) => Promise.reject(forGood(offPolicy(err), input)));
      const { samples, version, truncated_from: cutFrom } = results[0];
      // A retried attempt samples afresh under new ids; the old attempt's records are never
      // scored, so the update's join by sample id leaves them out.
      const attempt = activityInfo().attempt;
      const candidates = samples.map((c, i) => ({ c, sampleId: sampleIdOf(input.episodeId, input.turn, input.agent, i, attempt) }));
      const records: RolloutRecord[] = candidates.map(({ c, sampleId }) => ({
        sampleId,
        runId: policy.runId,
        iteration: input.iteration,
        policy: policy.spec.name,
        policyVersion: version,
        promptIds: c.prompt_ids,
        responseIds: c.response_ids,
        logprobs: c.logprobs,
        finishReason: c.finish_reason,
      }));
      if (input.record) {
        const key = policyKey(policy.runId, policy.spec.name);
        await deps.producer.send(TOPICS.rollouts, records.map((r) => ({ key, value: encodeRollout(r) }))).catch((err) => {
          // Over the record limit a retry would fail the same way: for good, naming the sample.
          if (!(err instanceof RecordTooLarge)) throw err;
          throw ApplicationFailure.nonRetryable(`rollout record of ${records[err.index].sampleId}: ${err.message} (infra/settings.ts MAX_RECORD_BYTES)`, 'RecordTooLarge');
        });
      }
      return candidates.map(({ c, sampleId }) => ({
        sampleId,
        text: recordableText(c.text),
        finishReason: c.finish_reason,
        responseTokens: c.response_ids.length,
        policyVersion: version,
        ...(typeof cutFrom === 'number' ? { promptTruncatedFrom: cutFrom } : {}),
      }));
    },
  };
}
