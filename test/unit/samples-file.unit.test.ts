// The update's samples file (infra/engine/samplesFile.ts), read back by the safetensors layout:
// an aligned header naming each tensor's dtype, shape and bytes; every distinct prompt once
// (equal prompts in different arrays too); each sample's spans give back its arrays exactly.
// (The engine's reading of the layout, and the same step as from inline samples:
// services/engine/tests/test_samples_file.py; updatePolicy's file read by a real engine:
// test/integration/update-exactly-once.integration.test.ts and the end-to-end tests.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeSamples, type UpdateSample } from '../../infra/engine/samplesFile.js';

type Header = Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }> & { __metadata__: Record<string, string> };

function readBack(file: Buffer) {
  const headerLength = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.subarray(8, 8 + headerLength).toString()) as Header;
  const data = file.subarray(8 + headerLength);
  const kinds = { I32: Int32Array, I64: BigInt64Array, F32: Float32Array, F64: Float64Array } as const;
  const tensor = (name: string) => {
    const { dtype, data_offsets: [a, b] } = header[name];
    const bytes = Uint8Array.prototype.slice.call(data, a, b); // a copy: aligned for the typed array
    return new kinds[dtype as keyof typeof kinds](bytes.buffer);
  };
  return { headerLength, header, data, tensor };
}

const samples: UpdateSample[] = [
  { sample_id: 'e/t0/tool/c0/a1', prompt_ids: [5, 6, 7], response_ids: [1, 2], logprobs: [-0.5, -1.25], advantage: 0.7071067811865476 },
  { sample_id: 'e/t0/tool/c1/a1', prompt_ids: [5, 6, 7], response_ids: [], logprobs: [], advantage: -0.7071067811865476 },
  { sample_id: 'e/t0/plan/c0/a1', prompt_ids: [9], response_ids: [3, 4, 40000], logprobs: [-2, -0.125, -8], advantage: 0 },
];

test('the samples file is safetensors: aligned, its tensors back to back, sample ids in its metadata', () => {
  const file = Buffer.concat(encodeSamples(samples));
  const { headerLength, header, data } = readBack(file);
  assert.equal(headerLength % 8, 0, 'the data starts 8-byte aligned');
  const shapes = Object.fromEntries(Object.entries(header).filter(([k]) => k !== '__metadata__').map(([k, v]) => [k, [v.dtype, v.shape]]));
  assert.deepEqual(shapes, {
    prompt_tokens: ['I32', [4]],
    prompt_spans: ['I64', [3, 2]],
    response_tokens: ['I32', [5]],
    response_spans: ['I64', [3, 2]],
    logprobs: ['F32', [5]],
    advantages: ['F64', [3]],
  });
  const offsets = Object.entries(header).filter(([k]) => k !== '__metadata__').map(([, v]) => v.data_offsets);
  offsets.forEach(([a], i) => assert.equal(a, i === 0 ? 0 : offsets[i - 1][1], 'back to back'));
  assert.equal(offsets.at(-1)![1], data.length);
  assert.deepEqual(JSON.parse(header.__metadata__.sample_ids), samples.map((s) => s.sample_id));
});

test('each sample comes back from its spans; equal prompts are written once', () => {
  const { tensor } = readBack(Buffer.concat(encodeSamples([...samples, { ...samples[0], sample_id: 'again', prompt_ids: [5, 6, 7] }])));
  const [prompts, promptSpans, responses, responseSpans, logprobs, advantages] = ['prompt_tokens', 'prompt_spans', 'response_tokens', 'response_spans', 'logprobs', 'advantages'].map(tensor);
  assert.deepEqual([...prompts], [5, 6, 7, 9], 'the prompt of the first, second and fourth samples once');
  const span = (spans: ArrayLike<bigint>, i: number) => [Number(spans[2 * i]), Number(spans[2 * i + 1])];
  const back = [0, 1, 2, 3].map((i) => {
    const [ps, pe] = span(promptSpans as BigInt64Array, i);
    const [rs, re] = span(responseSpans as BigInt64Array, i);
    return { prompt: [...prompts.slice(ps, pe)], response: [...responses.slice(rs, re)], logprobs: [...logprobs.slice(rs, re)], advantage: advantages[i] };
  });
  assert.deepEqual(back, [...samples, { ...samples[0] }].map((s) => ({ prompt: s.prompt_ids, response: s.response_ids, logprobs: s.logprobs, advantage: s.advantage })));
});

test('no samples: an empty but valid file', () => {
  const { header } = readBack(Buffer.concat(encodeSamples([])));
  assert.deepEqual(header.prompt_spans.shape, [0, 2]);
  assert.deepEqual(header.advantages.data_offsets, [0, 0]);
});
