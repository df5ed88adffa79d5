"""Sampling rows: prefill, per-row sampling parameters and generators, stop rules, the finished sample.

A Row is one sequence to sample (a request with n = 4 makes 4 rows). The decode loop that runs rows
of many requests together, joining and leaving between steps, is in batching.py; this file holds
what happens to a set of rows at one point of it:

* `prefill`: one forward over each distinct (prompt, adapter) of the newcomers (the n samples of a
  request share it), left-padded so that all of them end at the same column;
* `sample_next`: one token per row from its logits (repetition penalty, then temperature, top-k,
  top-p, min-p; greedy at temperature 0), its plain-softmax log-prob, and whether the row is finished;
* `sample_of`: the finished row as the protocol's sample.

Each row draws from its own torch.Generator (seeded from the request's seed and the row's index), so
what a row samples depends on its own logits only, never on how many other rows share the step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch

from .mixed_lora import lora_rows

GEN_BATCH_ROWS = int(os.environ.get("TANDEM_GEN_BATCH", "64"))  # max rows decoded together per model
PREFILL_TOKENS = int(os.environ.get("TANDEM_PREFILL_TOKENS", "16384"))  # max padded prompt tokens prefilled per step
LOGPROB_FLOOR = -1e4  # -inf is not valid JSON; a token this unlikely is effectively impossible
_GOLDEN = 0x9E3779B97F4A7C15  # spreads the row index over the seed space


def row_generator(device, seed: int, k: int) -> torch.Generator:
    """Row k of a request seeded `seed`: its own stream, reproducible from (seed, k)."""
    g = torch.Generator(device=device)
    g.manual_seed((seed + k * _GOLDEN) % 2**63)
    return g


@dataclass(eq=False)
class Row:
    """One sequence to sample, and what it has sampled so far."""
    prompt_ids: list[int]
    generator: torch.Generator
    adapter: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0  # vLLM's: on the tokens of the prompt and the response so far; 1 = off
    max_new_tokens: int = 256
    stop: list[str] = field(default_factory=list)
    ignore_eos: bool = False  # vLLM's name: stop tokens do not end the row (stop strings still do)
    owner: object = None  # the request this row belongs to (batching.py)
    resp: list[int] = field(default_factory=list)
    lps: list[float] = field(default_factory=list)
    finish: str | None = None  # "stop" | "length" | "cancelled" once finished

    @property
    def remaining(self) -> int:
        return self.max_new_tokens - len(self.resp)


def prefill(bb, rows: list[Row]):
    """One forward over each distinct (prompt, adapter) of `rows`.

    -> (next-token logits [N, V] float32 per row, the prefill's KV cache (U distinct prompts, P columns,
        left-padded), its attention mask [U, P], src [N]: each row's prompt in the prefill batch)
    """
    dev = bb.device
    keys = [(tuple(r.prompt_ids), r.adapter) for r in rows]
    order = {k: u for u, k in enumerate(dict.fromkeys(keys))}  # distinct (prompt, adapter) -> prefill row
    uniq = [rows[keys.index(k)] for k in order]
    src = torch.tensor([order[k] for k in keys], device=dev)
    U, P = len(uniq), max(len(r.prompt_ids) for r in uniq)
    ids = torch.full((U, P), bb.pad_id, dtype=torch.long, device=dev)
    attn = torch.zeros((U, P), dtype=torch.long, device=dev)
    for u, r in enumerate(uniq):
        ids[u, P - len(r.prompt_ids):] = torch.tensor(r.prompt_ids, device=dev)
        attn[u, P - len(r.prompt_ids):] = 1
    pos = (attn.cumsum(-1) - 1).clamp(min=0)  # RoPE positions ignore the padding
    with lora_rows(bb.model, [r.adapter for r in uniq]) as adapters:
        out = bb.model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, logits_to_keep=1,
                       **adapters)
    return out.logits[:, -1, :].float()[src], out.past_key_values, attn, src


def sample_next(bb, rows: list[Row], params: "SamplingParams", logits: torch.Tensor) -> tuple[torch.Tensor, list[Row]]:
    """Sample each row's next token from `logits` [B, V]; append it and its log-prob to the unfinished
    rows and mark the rows that stop or reach their length. -> (tokens [B], the rows that finished now)."""
    logp = torch.log_softmax(logits, dim=-1)  # plain softmax: what the update recomputes
    tok = params.sample(logits)
    tok_lp = logp.gather(1, tok[:, None])[:, 0].nan_to_num(neginf=LOGPROB_FLOOR).clamp(min=LOGPROB_FLOOR)
    finished = []
    for r, t, lp in zip(rows, tok.tolist(), tok_lp.tolist()):
        if r.finish is not None:  # finished earlier (a row not yet compacted away): its token is ignored
            continue
        r.resp.append(t)
        r.lps.append(lp)
        if (t in bb.stop_ids and not r.ignore_eos) or (r.stop and _tail_has_stop(bb.tokenizer, r.resp, r.stop)):
            r.finish = "stop"
        elif len(r.resp) >= r.max_new_tokens:
            r.finish = "length"
        if r.finish is not None:
            finished.append(r)
    return tok, finished


def sample_of(bb, r: Row) -> dict:
    token_stop = r.finish == "stop" and r.resp[-1] in bb.stop_ids and not r.ignore_eos
    text = bb.tokenizer.decode(r.resp[:-1] if token_stop else r.resp, skip_special_tokens=True)
    if r.finish == "stop" and not token_stop:  # a stop string: cut the text where it starts
        cut = [text.find(s) for s in r.stop if s in text]
        text = text[: min(cut)] if cut else text
    return {
        "text": text,
        "prompt_ids": r.prompt_ids,
        "response_ids": r.resp,  # includes the stop token / the tokens spelling the stop string
        "logprobs": r.lps,
        "finish_reason": r.finish,
    }


def _tail_has_stop(tokenizer, ids: list[int], stops: list[str]) -> bool:
    """Does the text of the last few tokens contain a stop string? (Decoding a window instead of the
    whole response keeps this O(1) per step; each token spells at least one character.)"""
    window = 2 * max(len(s) for s in stops) + 8
    tail = tokenizer.decode(ids[-window:], skip_special_tokens=True)
    return any(s in tail for s in stops)


def penalize(logits: torch.Tensor, seen: torch.Tensor, penalty: torch.Tensor) -> torch.Tensor:
    """vLLM's (and HF's) repetition penalty: where `seen` [B, V], a logit x becomes x / p if x > 0, else
    x * p (p = `penalty` [B]); a row with p = 1 keeps its logits bit for bit (x / 1 and x * 1 are x)."""
    p = penalty[:, None]
    return torch.where(seen, torch.where(logits > 0, logits / p, logits * p), logits)


class SamplingParams:
    """Per-row repetition penalty / temperature / top-k / top-p / min-p as [B] tensors, and each row's
    generator.

    The penalty needs each row's seen tokens (prompt + response so far): a [B, V] bool mask, made at
    the first `sample` (V = the logits' width) and marked with each sampled token. It exists only
    while some row has p != 1. A new set of rows (`prev`: the params of the batch's previous rows) takes
    the masks of the rows it shares with `prev` (one gather on the device); only the newcomers' masks
    are made from their token ids."""

    def __init__(self, rows: list[Row], dev, prev: "SamplingParams | None" = None):
        self.rows = list(rows)
        self.penalized = any(r.repetition_penalty != 1 for r in rows)
        self.penalty = torch.tensor([r.repetition_penalty for r in rows], device=dev) if self.penalized else None
        self.seen: torch.Tensor | None = None  # [B, V] bool, made at the first sample
        # The params whose masks carry over: `prev`, or what `prev` would have taken had it never sampled.
        self._prev = None if not self.penalized or prev is None else prev if prev.seen is not None else prev._prev
        self.temperature = torch.tensor([r.temperature for r in rows], device=dev)
        self.top_k = torch.tensor([r.top_k if r.top_k > 0 else 0 for r in rows], device=dev)
        # top_p >= 1 is "off"; inf avoids dropping a tail token when float cumsums overshoot 1.
        self.top_p = torch.tensor([r.top_p if r.top_p < 1 else float("inf") for r in rows], device=dev)
        self.min_p = torch.tensor([r.min_p for r in rows], device=dev)
        self.filtered = any((r.top_k > 0) or r.top_p < 1 or r.min_p > 0 for r in rows)
        self.sampled = [(i, r.generator) for i, r in enumerate(rows) if r.temperature > 0]

    def sample(self, logits: torch.Tensor) -> torch.Tensor:
        """Next token per row: repetition penalty, then temperature (0 = greedy), top-k, top-p, min-p."""
        if not self.penalized:
            return self._draw(logits)
        if self.seen is None:
            self.seen = self._seen_masks(logits.shape[-1], logits.device)
        tok = self._draw(penalize(logits, self.seen, self.penalty))
        self.seen[torch.arange(len(tok), device=tok.device), tok] = True  # now in the row's response
        return tok

    def _seen_masks(self, V: int, dev) -> torch.Tensor:
        """[B, V] bool: True at the tokens of each row's prompt and response so far."""
        seen = torch.zeros((len(self.rows), V), dtype=torch.bool, device=dev)
        old = {r: i for i, r in enumerate(self._prev.rows)} if self._prev is not None else {}
        kept = [(i, old[r]) for i, r in enumerate(self.rows) if r in old]
        if kept:
            new_i, old_i = (torch.tensor(c, device=dev) for c in zip(*kept))
            seen[new_i] = self._prev.seen[old_i]
        fresh = [(i, r.prompt_ids + r.resp) for i, r in enumerate(self.rows) if r not in old]
        if fresh:
            at = torch.tensor([i for i, ids in fresh for _ in ids], device=dev)
            seen[at, torch.tensor([t for _, ids in fresh for t in ids], device=dev)] = True
        self._prev = None  # let the old masks go
        return seen

    def _draw(self, logits: torch.Tensor) -> torch.Tensor:
        """Temperature (0 = greedy), then top-k, then top-p, then min-p."""
        tok = logits.argmax(dim=-1)
        if not self.sampled:
            return tok
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
        for i, gen in self.sampled:
            tok[i] = torch.multinomial(probs[i], 1, generator=gen)[0]
        return tok
