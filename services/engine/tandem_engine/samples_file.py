"""An update's samples as a file (the `update` op's `samples_file`), written by the policy worker
(infra/engine/samplesFile.ts): a safetensors file of flat arrays. An iteration's tokens as one
JSON line grow past what V8 can build as a string (about 512 MB: some 2,300 samples of a 4k-token
prompt and an 8k-token response), and cost seconds to encode and to parse; as arrays they are
read at disk speed and checked with tensor operations.

    prompt_tokens    int32   [P]     every distinct prompt once, concatenated
    prompt_spans     int64   [n, 2]  sample i's prompt is prompt_tokens[start:end]
    response_tokens  int32   [R]     every sample's response, concatenated
    response_spans   int64   [n, 2]  sample i's response (and its log-probs) [start:end]
    logprobs         float32 [R]     one per response token
    advantages       float64 [n]
    metadata "sample_ids": a JSON list of the n sample ids
"""

from __future__ import annotations

import json

import torch
from safetensors import SafetensorError, safe_open

from .errors import EngineError

TENSORS = {
    "prompt_tokens": (torch.int32, 1),
    "prompt_spans": (torch.int64, 2),
    "response_tokens": (torch.int32, 1),
    "response_spans": (torch.int64, 2),
    "logprobs": (torch.float32, 1),
    "advantages": (torch.float64, 1),
}


def read_samples(path: str, vocab_size: int) -> list[dict]:
    """The samples of `path`, as the `samples` field holds them (samples sharing a prompt share
    its list); BadRequest naming the file and what is wrong with it."""
    def bad(what: str) -> EngineError:
        return EngineError("BadRequest", f"samples_file {path}: {what}")

    try:
        with safe_open(path, framework="pt") as f:
            meta = f.metadata() or {}
            t = {name: f.get_tensor(name) for name in TENSORS if name in f.keys()}
    except (OSError, SafetensorError, RuntimeError, ValueError) as e:  # missing, unreadable, not safetensors
        raise bad(f"cannot be read ({e})") from e
    for name, (dtype, dims) in TENSORS.items():
        if name not in t:
            raise bad(f"has no tensor {name!r}")
        if t[name].dtype != dtype or t[name].dim() != dims:
            raise bad(f"{name} must be {dims}-d {dtype}, not {t[name].dim()}-d {t[name].dtype}")
    try:
        ids = json.loads(meta.get("sample_ids", ""))
    except ValueError:
        ids = None
    n = t["advantages"].shape[0]
    if not isinstance(ids, list) or len(ids) != n or not all(isinstance(i, str) for i in ids):
        raise bad(f"its metadata sample_ids must be a JSON list of {n} strings")
    for kind in ("prompt", "response"):
        spans, tokens = t[f"{kind}_spans"], t[f"{kind}_tokens"]
        if spans.shape != (n, 2):
            raise bad(f"{kind}_spans must be [{n}, 2], not {list(spans.shape)}")
        starts, ends = spans[:, 0], spans[:, 1]
        if n and (starts.min() < 0 or ends.max() > tokens.shape[0] or (ends < starts).any()):
            raise bad(f"{kind}_spans must lie within {kind}_tokens ({tokens.shape[0]} tokens)")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
            raise bad(f"{kind}_tokens must be token ids < {vocab_size}")
    if n and (t["prompt_spans"][:, 1] == t["prompt_spans"][:, 0]).any():
        raise bad("every sample needs a prompt of at least one token")
    if t["logprobs"].shape != t["response_tokens"].shape:
        raise bad("logprobs must have one value per response token")
    if not torch.isfinite(t["logprobs"]).all() or not torch.isfinite(t["advantages"]).all():
        raise bad("logprobs and advantages must be finite")

    prompt_tokens, response_tokens, logprobs = (t[k].tolist() for k in ("prompt_tokens", "response_tokens", "logprobs"))
    prompts: dict[tuple[int, int], list[int]] = {}
    samples = []
    for i, ((ps, pe), (rs, re), adv) in enumerate(zip(t["prompt_spans"].tolist(), t["response_spans"].tolist(),
                                                     t["advantages"].tolist())):
        if (ps, pe) not in prompts:
            prompts[ps, pe] = prompt_tokens[ps:pe]
        prompt = prompts[ps, pe]
        samples.append({"sample_id": ids[i], "prompt_ids": prompt, "response_ids": response_tokens[rs:re],
                        "logprobs": logprobs[rs:re], "advantage": adv})
    return samples
