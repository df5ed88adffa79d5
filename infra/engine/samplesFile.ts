// An update's samples as a file for the engine (the `update` op's `samples_file`; the reader and
// the layout: services/engine/tandem_engine/samples_file.py). A safetensors file of flat arrays:
// every distinct prompt once, every response with its log-probs, and spans into them. An
// iteration's samples as one JSON line stop fitting in a V8 string (about 512 MB: some 2,300
// samples of a 4k-token prompt and an 8k-token response at the reference's K=8) well before they
// stop fitting in a GPU host's memory.
import { writeFile } from 'node:fs/promises';

export interface UpdateSample {
  sample_id: string;
  prompt_ids: number[];
  response_ids: number[];
  logprobs: number[];
  advantage: number;
}

/** FNV-1a over a prompt's ids: where to look for an equal prompt already written. */
function promptHash(ids: number[]): string {
  let h = 0x811c9dc5;
  for (const id of ids) h = Math.imul(h ^ id, 0x01000193) >>> 0;
  return `${ids.length}:${h}`;
}

const sameIds = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The file's parts, in order: safetensors (an 8-byte little-endian header length, a JSON header, the data). */
export function encodeSamples(samples: UpdateSample[]): Buffer[] {
  const n = samples.length;
  const promptSpans = new BigInt64Array(2 * n);
  const responseSpans = new BigInt64Array(2 * n);
  const seen = new Map<string, { ids: number[]; start: number }[]>();
  const prompts: number[][] = [];
  let promptLength = 0;
  let responseLength = 0;
  samples.forEach((s, i) => {
    const key = promptHash(s.prompt_ids);
    const same = (seen.get(key) ?? []).find((p) => sameIds(p.ids, s.prompt_ids));
    const start = same ? same.start : promptLength;
    if (!same) {
      seen.set(key, [...(seen.get(key) ?? []), { ids: s.prompt_ids, start }]);
      prompts.push(s.prompt_ids);
      promptLength += s.prompt_ids.length;
    }
    promptSpans.set([BigInt(start), BigInt(start + s.prompt_ids.length)], 2 * i);
    responseSpans.set([BigInt(responseLength), BigInt(responseLength + s.response_ids.length)], 2 * i);
    responseLength += s.response_ids.length;
  });
  const promptTokens = new Int32Array(promptLength);
  let at = 0;
  for (const p of prompts) {
    promptTokens.set(p, at);
    at += p.length;
  }
  const responseTokens = new Int32Array(responseLength);
  const logprobs = new Float32Array(responseLength);
  at = 0;
  for (const s of samples) {
    responseTokens.set(s.response_ids, at);
    logprobs.set(s.logprobs, at);
    at += s.response_ids.length;
  }
  const tensors: [string, string, number[], ArrayBufferView][] = [
    ['prompt_tokens', 'I32', [promptLength], promptTokens],
    ['prompt_spans', 'I64', [n, 2], promptSpans],
    ['response_tokens', 'I32', [responseLength], responseTokens],
    ['response_spans', 'I64', [n, 2], responseSpans],
    ['logprobs', 'F32', [responseLength], logprobs],
    ['advantages', 'F64', [n], Float64Array.from(samples, (s) => s.advantage)],
  ];
  const header: Record<string, unknown> = { __metadata__: { sample_ids: JSON.stringify(samples.map((s) => s.sample_id)) } };
  let offset = 0;
  for (const [name, dtype, shape, data] of tensors) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  // The header padded with spaces to a multiple of 8 bytes, so that every tensor stays aligned.
  const json = Buffer.from(JSON.stringify(header));
  const headerBytes = Buffer.alloc(Math.ceil(json.length / 8) * 8, ' ');
  json.copy(headerBytes);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length));
  // Typed arrays are in the machine's byte order: little-endian on every platform torch runs on here.
  return [length, headerBytes, ...tensors.map(([, , , data]) => Buffer.from(data.buffer, data.byteOffset, data.byteLength))];
}

/** Writes the file part by part (no copy of the whole). */
export async function writeSamplesFile(path: string, samples: UpdateSample[]): Promise<void> {
  await writeFile(path, encodeSamples(samples));
}
