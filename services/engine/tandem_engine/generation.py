"""Batched sampling with a KV cache, per-row sampling parameters and per-row LoRA adapters.

All rows of one Backbone are decoded together: one forward pass per step for the whole batch.
On a LoRA base, row i runs through base + adapter_i and nothing else (mixed_lora.py: all adapters
of the batch in one pass per layer; PEFT's `adapter_names=[...]` batches for layer kinds it does not handle).

The prompt is prefilled once per distinct (prompt, adapter), not once per row, and its KV cache
copied to the rows that share it (kv_cache.py): the n samples of a request start from one prefill.
Decoding appends to KV buffers preallocated to prompt + max new tokens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch

from .kv_cache import spread_prefill
from .mixed_lora import lora_rows

GEN_BATCH_ROWS = int(os.environ.get("TANDEM_GEN_BATCH", "64"))  # max sequences sampled in parallel
LOGPROB_FLOOR = -1e4  # -inf is not valid JSON; a token this unlikely is effectively impossible


@dataclass
class Row:
    """One sequence to sample. Rows of the same request share `group` (and its seeded generator)."""
    prompt_ids: list[int]
    group: int
    adapter: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    max_new_tokens: int = 256
    stop: list[str] = field(default_factory=list)


def generate(backbone, rows: list[Row], generators: dict[int, torch.Generator]) -> list[dict]:
    """Samples for `rows` (same order), in chunks of at most GEN_BATCH_ROWS rows."""
    out = []
    for s in range(0, len(rows), GEN_BATCH_ROWS):
        out += _generate_batch(backbone, rows[s: s + GEN_BATCH_ROWS], generators)
    return out


@torch.no_grad()
def _generate_batch(bb, rows: list[Row], generators) -> list[dict]:
    B, T = len(rows), max(r.max_new_tokens for r in rows)
    params = SamplingParams(rows, generators, bb.device)
    resp = [[] for _ in range(B)]
    lps = [[] for _ in range(B)]
    done = [r.max_new_tokens <= 0 for r in rows]
    reason = ["length"] * B
    if all(done):
        return _samples(bb, rows, resp, lps, reason)
    logits, cache, attn, pos = _prefill(bb, rows, T)
    with lora_rows(bb.model, [r.adapter for r in rows]) as adapters:
        for step in range(T):
            if step > 0:
                # Feed the sampled token back (finished rows keep running; their output is ignored).
                out = bb.model(input_ids=tok[:, None], attention_mask=attn[:, : cache.get_seq_length() + 1],
                               position_ids=pos + step, past_key_values=cache, use_cache=True, logits_to_keep=1,
                               **adapters)
                logits = out.logits[:, -1, :].float()
            tok = _step(bb, rows, params, logits, resp, lps, done, reason)
            if all(done):
                break
    return _samples(bb, rows, resp, lps, reason)


def _step(bb, rows: list[Row], params, logits, resp, lps, done, reason) -> torch.Tensor:
    """Sample each row's next token from `logits` [B, V] -> [B]; append it and its log-prob to the
    unfinished rows and mark the rows that stop or reach their length."""
    logp = torch.log_softmax(logits, dim=-1)  # plain softmax: what the update recomputes
    tok = params.sample(logits)
    tok_lp = logp.gather(1, tok[:, None])[:, 0].nan_to_num(neginf=LOGPROB_FLOOR).clamp(min=LOGPROB_FLOOR)
    for i, (t, lp) in enumerate(zip(tok.tolist(), tok_lp.tolist())):
        if done[i]:
            continue
        resp[i].append(t)
        lps[i].append(lp)
        if t in bb.stop_ids:
            done[i], reason[i] = True, "stop"
        elif rows[i].stop and _tail_has_stop(bb.tokenizer, resp[i], rows[i].stop):
            done[i], reason[i] = True, "stop"
        elif len(resp[i]) >= rows[i].max_new_tokens:
            done[i] = True
    return tok


def _samples(bb, rows: list[Row], resp, lps, reason) -> list[dict]:
    samples = []
    for i, r in enumerate(rows):
        token_stop = reason[i] == "stop" and resp[i][-1] in bb.stop_ids
        text = bb.tokenizer.decode(resp[i][:-1] if token_stop else resp[i], skip_special_tokens=True)
        if reason[i] == "stop" and not token_stop:  # a stop string: cut the text where it starts
            cut = [text.find(s) for s in r.stop if s in text]
            text = text[: min(cut)] if cut else text
        samples.append({
            "text": text,
            "prompt_ids": r.prompt_ids,
            "response_ids": resp[i],  # includes the stop token / the tokens spelling the stop string
            "logprobs": lps[i],
            "finish_reason": reason[i],
        })
    return samples


def _prefill(bb, rows: list[Row], new_tokens: int):
    """One forward over each distinct (prompt, adapter) of `rows`: the n samples of a request share it.

    -> (next-token logits [B, V] float32, the KV cache of the B rows with room for the new tokens,
        attention mask [B, P + new_tokens - 1], RoPE position [B, 1] of each row's last prompt token).
    """
    dev = bb.device
    keys = [(tuple(r.prompt_ids), r.adapter) for r in rows]
    order = {k: u for u, k in enumerate(dict.fromkeys(keys))}  # distinct (prompt, adapter) -> prefill row
    uniq = [rows[keys.index(k)] for k in order]
    src = torch.tensor([order[k] for k in keys], device=dev)  # row -> its prefill row
    U, P = len(uniq), max(len(r.prompt_ids) for r in uniq)
    # Left-pad the prompts so that all rows append new tokens at the same column.
    ids = torch.full((U, P), bb.pad_id, dtype=torch.long, device=dev)
    attn = torch.zeros((U, P), dtype=torch.long, device=dev)
    for u, r in enumerate(uniq):
        ids[u, P - len(r.prompt_ids):] = torch.tensor(r.prompt_ids, device=dev)
        attn[u, P - len(r.prompt_ids):] = 1
    pos = (attn.cumsum(-1) - 1).clamp(min=0)  # RoPE positions ignore the padding
    with lora_rows(bb.model, [r.adapter for r in uniq]) as adapters:
        out = bb.model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, logits_to_keep=1,
                       **adapters)
    # The last sampled token is never fed back: the cache needs new_tokens - 1 more columns.
    cache = spread_prefill(out.past_key_values, src, new_tokens - 1)
    # Generated columns are always attended; a decoding step passes the cached columns + its own.
    attn = torch.cat([attn[src], attn.new_ones((len(rows), new_tokens - 1))], dim=1)
    return out.logits[:, -1, :].float()[src], cache, attn, pos[src, -1:]


def _tail_has_stop(tokenizer, ids: list[int], stops: list[str]) -> bool:
    """Does the text of the last few tokens contain a stop string? (Decoding a window instead of the
    whole response keeps this O(1) per step; each token spells at least one character.)"""
    window = 2 * max(len(s) for s in stops) + 8
    tail = tokenizer.decode(ids[-window:], skip_special_tokens=True)
    return any(s in tail for s in stops)


class SamplingParams:
    """Per-row temperature / top-k / top-p / min-p as [B] tensors, and one generator per request."""

    def __init__(self, rows: list[Row], generators, dev):
        self.temperature = torch.tensor([r.temperature for r in rows], device=dev)
        self.top_k = torch.tensor([r.top_k if r.top_k > 0 else 0 for r in rows], device=dev)
        # top_p >= 1 is "off"; inf avoids dropping a tail token when float cumsums overshoot 1.
        self.top_p = torch.tensor([r.top_p if r.top_p < 1 else float("inf") for r in rows], device=dev)
        self.min_p = torch.tensor([r.min_p for r in rows], device=dev)
        self.filtered = any((r.top_k > 0) or r.top_p < 1 or r.min_p > 0 for r in rows)
        self.groups = []  # (row indices, generator, greedy?) per request
        for g in dict.fromkeys(r.group for r in rows):
            idx = [i for i, r in enumerate(rows) if r.group == g]
            self.groups.append((torch.tensor(idx, device=dev), generators[g], rows[idx[0]].temperature <= 0))

    def sample(self, logits: torch.Tensor) -> torch.Tensor:
        """Next token per row: temperature (0 = greedy), then top-k, then top-p, then min-p."""
        x = logits / self.temperature.clamp(min=1e-6)[:, None]
        if self.filtered:
            V = x.shape[-1]
            xs, order = torch.sort(x, dim=-1, descending=True)
            rank = torch.arange(V, device=x.device)[None, :]
            k = torch.where(self.top_k > 0, self.top_k, V)[:, None]
            drop = rank >= k  # top-k (-1/0 = off)
            probs = torch.softmax(xs.masked_fill(drop, float("-inf")), dim=-1)
            # top-p: drop a token if the tokens ranked above it already cover top_p.
            drop |= (probs.cumsum(dim=-1) - probs) > self.top_p[:, None]
            # min-p: keep p_i >= min_p * p_max, i.e. logit_i >= logit_max + log(min_p) (min_p=0: log 0 = -inf).
            drop |= xs < xs[:, :1] + torch.log(self.min_p)[:, None]
            drop[:, 0] = False  # the most likely token always survives
            x = torch.full_like(x, float("-inf")).scatter(-1, order, xs.masked_fill(drop, float("-inf")))
        probs = torch.softmax(x, dim=-1)
        tok = torch.empty(x.shape[0], dtype=torch.long, device=x.device)
        for idx, gen, greedy in self.groups:
            if greedy:
                tok[idx] = logits[idx].argmax(dim=-1)
            else:
                tok[idx] = torch.multinomial(probs[idx], 1, generator=gen)[:, 0]
        return tok
