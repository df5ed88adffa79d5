"""Continuous batching: rows join the running decode batch at the next step and leave when they finish.

One DecodeBatch per Backbone (all LoRA policies of one base decode together, each row through its own
adapter: mixed_lora.py). A step is one forward over every row of the batch plus one sampled token
per row. Between steps:

* newcomers are prefilled (one forward per distinct (prompt, adapter); generation.prefill; at most
  TANDEM_PREFILL_TOKENS padded prompt tokens per step, the rest at the next steps), sample their
  first token from the prefill logits and are merged into the batch;
* finished rows are compacted away (at a merge, or once they are more than an eighth of the batch);
  a request is answered as soon as its own rows are finished, whatever the others still do.

The KV cache is left-aligned like a padded batch: every row writes its next key/value at the same
column L, rows that joined with a shorter history have masked (zero) columns on the left, and each
row keeps its own RoPE position. A merge or compaction copies the cache once into buffers sized for
the new set of rows (the columns every row masks are trimmed); a step writes one column in place
(kv_cache.PreallocatedLayer). Models whose cache has other layer kinds (sliding windows) cannot be
merged this way: their batch takes newcomers only when it is empty.

Outputs: greedy rows give the same tokens as decoding each alone (up to float summation order);
a seeded row draws from its own generator, so it is reproducible whenever the logits are, which holds
for a fixed arrival order (the same rows in the same steps), and on CPU whatever the neighbours
(tests/test_batching.py). On a GPU, batch composition may change kernels and so the last bits of the
logits; sampled tokens can then differ between arrival orders.
"""

from __future__ import annotations

import time
from collections import deque
from contextlib import ExitStack

import torch
from transformers.cache_utils import DynamicLayer

from .generation import GEN_BATCH_ROWS, PREFILL_TOKENS, Row, SamplingParams, prefill, sample_next
from .kv_cache import PreallocatedLayer, spread_prefill
from .mixed_lora import lora_rows


class DecodeBatch:
    """The running rows of one Backbone and their KV cache (see the module comment)."""

    def __init__(self, bb):
        self.bb = bb
        self.rows: list[Row] = []
        self.joinable = True  # False: the cache has layer kinds that cannot be merged
        self._lora = ExitStack()  # the mixed-adapter hooks of the current set of rows
        self._reset()

    def _reset(self):
        self._lora.close()
        self.rows, self.cache, self.attn, self.pos, self.tok, self.length = [], None, None, None, None, 0
        self.params, self.forward_kwargs = None, None

    @property
    def live(self) -> int:
        return sum(r.finish is None for r in self.rows)

    def room(self) -> int:
        """How many newcomers may join now."""
        if self.rows and not self.joinable:
            return 0
        return max(0, GEN_BATCH_ROWS - self.live)

    @torch.no_grad()
    def admit(self, newcomers: list[Row]) -> list[Row]:
        """Prefill `newcomers`, sample their first token, merge the unfinished ones. -> rows finished now."""
        self._lora.close()
        self.forward_kwargs = None
        todo = [r for r in newcomers if r.remaining > 0]
        finished = [r for r in newcomers if r.remaining <= 0]
        for r in finished:
            r.finish = "length"
        if not todo:
            return finished
        logits, cache, attn, src = prefill(self.bb, todo)
        tok, done = sample_next(self.bb, todo, SamplingParams(todo, self.bb.device), logits)
        finished += done
        keep = [i for i, r in enumerate(todo) if r.finish is None]
        if not keep:
            return finished
        new_rows = [todo[i] for i in keep]
        keep_t = torch.tensor(keep, device=self.bb.device)
        positions = torch.tensor([len(r.prompt_ids) for r in new_rows], device=self.bb.device)
        if not self.rows:
            self.joinable = all(type(layer) is DynamicLayer for layer in cache.layers)
            capacity = max(r.remaining for r in new_rows)
            self.cache = spread_prefill(cache, src[keep_t], capacity)
            P = attn.shape[1]
            self.attn = torch.cat([attn[src[keep_t]], attn.new_ones((len(new_rows), capacity))], dim=1)
            self.rows, self.pos, self.tok, self.length = new_rows, positions, tok[keep_t], P
        else:
            self._rebuild(new=(new_rows, cache, attn, src[keep_t], positions, tok[keep_t]))
        self.params = SamplingParams(self.rows, self.bb.device)
        return finished

    @torch.no_grad()
    def step(self) -> list[Row]:
        """One forward over the batch and one token per row. -> rows finished now."""
        if self.forward_kwargs is None:
            self.forward_kwargs = self._lora.enter_context(lora_rows(self.bb.model, [r.adapter for r in self.rows]))
        out = self.bb.model(input_ids=self.tok[:, None], attention_mask=self.attn[:, : self.length + 1],
                            position_ids=self.pos[:, None], past_key_values=self.cache, use_cache=True,
                            logits_to_keep=1, **self.forward_kwargs)
        self.length += 1
        self.pos += 1
        self.tok, finished = sample_next(self.bb, self.rows, self.params, out.logits[:, -1, :].float())
        self.settle()
        return finished

    def settle(self) -> None:
        """Drop finished (or cancelled) rows: all of them once the batch is done, else when they are
        more than an eighth of the batch (a compaction copies the cache; a dead row only costs its
        share of each step)."""
        live = self.live
        if live == 0:
            self._reset()
        elif self.joinable and (len(self.rows) - live) * 8 > live:
            self._lora.close()
            self.forward_kwargs = None
            self._rebuild(new=None)
            self.params = SamplingParams(self.rows, self.bb.device)

    def _rebuild(self, new) -> None:
        """Copy the live rows (and the newcomers' prefill, if any) into fresh buffers: left-aligned
        at column L' = the longest history, with room for every row's remaining tokens."""
        dev = self.bb.device
        keep = [i for i, r in enumerate(self.rows) if r.finish is None]
        keep_t = torch.tensor(keep, device=dev, dtype=torch.long)
        rows = [self.rows[i] for i in keep]
        L = self.length
        # Columns every kept row masks on the left are trimmed (each row has at least one real column).
        first = int((self.attn[keep_t, :L] != 0).int().argmax(dim=1).min()) if keep else L
        span = L - first
        P = new[2].shape[1] if new else 0
        L2 = max(span, P)
        rows_all = rows + (new[0] if new else [])
        C2 = L2 + max(r.remaining for r in rows_all)
        B_old, B_new = len(rows), len(new[0]) if new else 0

        for li, layer in enumerate(self.cache.layers):
            parts = []
            for name in ("keys", "values"):
                old = getattr(layer, name)
                _, H, _, D = old.shape
                buf = torch.empty((B_old + B_new, H, C2, D), dtype=old.dtype, device=dev)
                buf[:B_old, :, : L2 - span] = 0  # masked columns: zeros, never garbage (0 * NaN is NaN)
                buf[:B_old, :, L2 - span: L2] = old[keep_t, :, first:L]
                if new:
                    pre = getattr(new[1].layers[li], name)
                    buf[B_old:, :, : L2 - P] = 0
                    buf[B_old:, :, L2 - P: L2] = pre[new[3]]
                parts.append(buf)
            self.cache.layers[li] = PreallocatedLayer(parts[0], parts[1], L2)

        attn = torch.zeros((B_old + B_new, C2), dtype=torch.long, device=dev)
        attn[:B_old, L2 - span: L2] = self.attn[keep_t, first:L]
        attn[:, L2:] = 1  # generated columns are always attended
        pos, tok = self.pos[keep_t], self.tok[keep_t]
        if new:
            attn[B_old:, L2 - P: L2] = new[2][new[3]]
            pos, tok = torch.cat([pos, new[4]]), torch.cat([tok, new[5]])
        self.rows, self.attn, self.pos, self.tok, self.length = rows_all, attn, pos, tok, L2


def _admission(q: deque, room: int) -> list[Row]:
    """The rows that join at this step: at most `room`, and a prefill of at most PREFILL_TOKENS (distinct
    prompts x the longest, as the padded prefill computes them; at least one row), so that a wave of long
    prompts is prefilled over several steps with decoding in between."""
    take, keys, longest = [], set(), 0
    while q and len(take) < room:
        r = q[0]
        key = (tuple(r.prompt_ids), r.adapter)
        if take and key not in keys and (len(keys) + 1) * max(longest, len(r.prompt_ids)) > PREFILL_TOKENS:
            break  # a new prompt would overflow the prefill (rows of a prompt already in it cost nothing)
        take.append(q.popleft())
        keys.add(key)
        longest = max(longest, len(r.prompt_ids))
    return take


class Scheduler:
    """Rows waiting to join, and the decode batch of each backbone. `tick` runs one step of work."""

    def __init__(self):
        self.batches: dict[object, DecodeBatch] = {}  # Backbone -> its batch
        self.waiting: dict[object, deque[Row]] = {}
        self.stats = {"busy_seconds": 0.0, "steps": 0, "prefills": 0, "generated_tokens": 0, "rows_finished": 0}

    def add(self, bb, rows: list[Row]) -> None:
        self.waiting.setdefault(bb, deque()).extend(rows)

    def cancel(self, rows: list[Row]) -> None:
        """Rows of a cancelled request: dropped from the queue; in a batch they stop at the next step."""
        gone = set(map(id, rows))
        for q in self.waiting.values():
            for r in [r for r in q if id(r) in gone]:
                q.remove(r)
        for r in rows:
            if r.finish is None:
                r.finish = "cancelled"
        for b in self.batches.values():
            b.settle()

    def busy(self) -> bool:
        return any(self.waiting.values()) or any(b.rows for b in self.batches.values())

    def counts(self) -> dict:
        return {"live_rows": sum(b.live for b in self.batches.values()),
                "waiting_rows": sum(len(q) for q in self.waiting.values())}

    def tick(self) -> list[Row]:
        """Admit waiting rows where there is room, then one decode step per backbone with rows.
        -> the rows that finished."""
        finished: list[Row] = []
        t0 = time.perf_counter()
        for bb in list(self.waiting):
            q = self.waiting[bb]
            batch = self.batches.setdefault(bb, DecodeBatch(bb))
            newcomers = _admission(q, batch.room())
            if newcomers:
                finished += batch.admit(newcomers)
                self.stats["prefills"] += 1
            if not q:
                del self.waiting[bb]
        for bb, batch in list(self.batches.items()):
            if batch.rows:
                finished += batch.step()
                self.stats["steps"] += 1
            if not batch.rows and bb not in self.waiting:
                del self.batches[bb]  # an unloaded backbone must not be kept alive here
        self.stats["busy_seconds"] += time.perf_counter() - t0
        for r in finished:
            self.stats["rows_finished"] += 1
            self.stats["generated_tokens"] += len(r.resp)
        return finished
