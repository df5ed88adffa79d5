"""Continuous batching: rows join the running decode batch at the next step and leave when they finish.

One DecodeBatch per Backbone (all LoRA policies of one base decode together, each row through its own
adapter: mixed_lora.py). A step is one forward over every row of the batch plus one sampled token
per row. Between steps:

* newcomers are prefilled (one forward per distinct (prompt, adapter); generation.prefill; at most
  TANDEM_PREFILL_TOKENS padded prompt tokens per step, the rest at the next steps), sample their
  first token from the prefill logits and join the batch, at most TANDEM_GEN_BATCH live rows; the
  rows of a prompt that do not fit keep their prefill (Prefilled) and join first as rows finish, so
  that the n samples of a prompt are prefilled once, not once per admission;
* finished rows leave: a request is answered as soon as its own rows are finished, whatever the
  others still do.

Memory: the batches' KV buffers stay within a budget (kv_cache.kv_budget: TANDEM_KV_CACHE_GB, or a share
of the memory free); spare slots and columns shrink first. Newcomers that new buffers within the budget
cannot hold wait, with their prefill, until rows finish and make room: each finished row's slot takes one
of them, a compaction or an empty batch the rest (not a copy of the cache each time a row finishes);
meanwhile the batch takes nothing more from the queue. A single row larger than the whole budget is
refused when its request starts (server.py, KvCacheTooSmall).

The KV cache is left-aligned like a padded batch: every row writes its next key/value at the same
column L, rows that joined with a shorter history have masked (zero) columns on the left, and each
row keeps its own RoPE position. The batch is the first B slots (rows) of buffers with spare slots
and spare columns; a step writes one column in place (kv_cache.PreallocatedLayer). A newcomer is
written into a free slot (a finished row's, or a spare one) at columns L - P .. L: the live rows are
not touched. Only when that cannot be done (no free slot, a prompt longer than L, or too few columns
left for its tokens) is the cache copied once into fresh buffers sized for the rows, with the columns
every row masks trimmed (_rebuild); the same copy compacts the batch when more than half its slots
hold finished rows (finished rows at the end are dropped for free). On a GPU such a copy moves the
whole KV cache and needs it twice in memory: the spare room makes it rare. Models whose cache has
other layer kinds (sliding windows) cannot be merged this way: their batch takes newcomers only when
it is empty.

Outputs: greedy rows give the same tokens as decoding each alone (up to float summation order);
a seeded row draws from its own generator, so it is reproducible whenever the logits are, which holds
for a fixed arrival order (the same rows in the same steps), and on CPU whatever the neighbours
(tests/test_batching.py). On a GPU, batch composition may change kernels and so the last bits of the
logits; sampled tokens can then differ between arrival orders.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from contextlib import ExitStack
from dataclasses import dataclass

import torch
from transformers.cache_utils import Cache, DynamicLayer

from .generation import GEN_BATCH_ROWS, PREFILL_TOKENS, Row, SamplingParams, prefill, sample_next
from .kv_cache import PreallocatedLayer, kv_budget, spread_prefill
from .mixed_lora import lora_rows

SLACK_COLUMNS = 32  # the least spare columns of a rebuilt cache (see DecodeBatch._rebuild)


@dataclass(eq=False)
class Prefilled:
    """Newcomers after their prefill: their first token sampled, their prompts' keys and values to write
    into the batch."""
    rows: list[Row]
    cache: Cache  # the prefill's: one entry per distinct (prompt, adapter), left-padded to `width` columns
    attn: torch.Tensor  # [distinct prompts, width]
    src: torch.Tensor  # [rows]: each row's entry in the prefill
    pos: torch.Tensor  # [rows]: each row's next RoPE position (its prompt's length)
    tok: torch.Tensor  # [rows]: each row's first token, sampled from the prefill's logits

    @property
    def width(self) -> int:
        return self.attn.shape[1]

    def kv(self, layer: int, name: str) -> torch.Tensor:
        """Each row's prompt keys or values in `layer`: [rows, kv_heads, width, head_dim]."""
        return getattr(self.cache.layers[layer], name)[self.src]

    def select(self, idx) -> "Prefilled":
        t = torch.as_tensor(list(idx), device=self.src.device, dtype=torch.long)
        return Prefilled([self.rows[i] for i in t.tolist()], self.cache, self.attn, self.src[t], self.pos[t], self.tok[t])


class DecodeBatch:
    """The running rows of one Backbone and their KV cache (see the module comment)."""

    def __init__(self, bb, stats: dict, memory):
        self.bb = bb
        self.stats = stats  # the Scheduler's counters: cache_copies counts the copies of live rows
        self.memory = memory  # (batch) -> (the budget of all batches' KV buffers, what the other batches take)
        self.rows: list[Row] = []
        self.joinable = True  # False: the cache has layer kinds that cannot be merged
        self._lora = ExitStack()  # the mixed-adapter hooks of the current set of rows
        self.held: list[Prefilled] = []  # prefilled rows of a prompt that did not all fit: they join first
        self._reset()

    def _reset(self):
        self._lora.close()
        self.rows, self.cache, self.attn, self.pos, self.tok, self.length = [], None, None, None, None, 0
        self.params, self.forward_kwargs = None, None
        self._kv, self._attn = [], None  # the whole buffers (slots x capacity); the batch uses their first rows
        self.kv_bytes = 0  # the keys' and values' buffers, allocated
        self.memory_held = False  # held rows wait for memory: nothing more is taken from the queue meanwhile

    @property
    def live(self) -> int:
        return sum(r.finish is None for r in self.rows)

    def room(self) -> int:
        """How many newcomers may join now."""
        if self.rows and not self.joinable:
            return 0
        return max(0, GEN_BATCH_ROWS - self.live)

    @property
    def held_rows(self) -> int:
        return sum(len(p.rows) for p in self.held)

    @torch.no_grad()
    def admit(self, newcomers: list[Row]) -> list[Row]:
        """Held rows, then `newcomers` (prefilled, their first token sampled) join, as many as there is
        room for; the rest are held with their prefill. -> rows finished now."""
        self._lora.close()  # the prefill runs without the batch's adapter hooks
        self.forward_kwargs = None
        parts = list(self.held)  # (Scheduler.cancel drops the cancelled ones)
        finished = [r for r in newcomers if r.remaining <= 0]
        for r in finished:
            r.finish = "length"
        todo = [r for r in newcomers if r.remaining > 0]
        if todo:
            logits, cache, attn, src = prefill(self.bb, todo)
            self.stats["prefills"] += 1
            tok, done = sample_next(self.bb, todo, SamplingParams(todo, self.bb.device), logits)
            finished += done
            pos = torch.tensor([len(r.prompt_ids) for r in todo], device=self.bb.device)
            parts.append(Prefilled(todo, cache, attn, src, pos, tok).select(
                i for i, r in enumerate(todo) if r.finish is None))
        joining, self.held, room = [], [], self.room()
        for p in (p for p in parts if p.rows):
            n = min(room, len(p.rows))
            room -= n
            joining += [p.select(range(n))] if n else []
            self.held += [p.select(range(n, len(p.rows)))] if n < len(p.rows) else []
        waited, self.memory_held = self.memory_held, False
        if not joining:
            return finished
        if not self.rows:
            self.joinable = all(type(layer) is DynamicLayer for layer in joining[0].cache.layers)
            if not self.joinable:  # exact buffers for one prefill: its rows join, the other parts wait
                joining, self.held = joining[:1], joining[1:] + self.held
        placeable = self._placeable(joining) if self.rows and self.joinable else 0
        if placeable == sum(len(p.rows) for p in joining):
            self._place(joining)
        elif waited and self.rows:  # still waiting for memory: free slots take what they can, no copy per finish
            joining, rest = _split(joining, placeable)
            self.held, self.memory_held = rest + self.held, True
            if not joining:
                return finished
            self._place(joining)
        else:  # new buffers, within the memory budget
            joining = self._within_memory(joining)
            self.stats["memory_waits"] += int(self.memory_held and not waited)  # rows started waiting for memory
            if not joining:
                return finished
            if not self.joinable:  # an empty batch (a non-joinable one takes newcomers only then)
                (new,) = joining
                capacity = max(r.remaining for r in new.rows)
                self.cache = spread_prefill(new.cache, new.src, capacity)
                self.attn = torch.cat([new.attn[new.src], new.attn.new_ones((len(new.rows), capacity))], dim=1)
                self.rows, self.pos, self.tok, self.length = new.rows, new.pos, new.tok, new.width
                self._allocated(len(new.rows) * (new.width + capacity))
            else:
                self._rebuild(joining)
        self._rows_changed()
        return finished

    def _within_memory(self, joining: list[Prefilled]) -> list[Prefilled]:
        """The first rows of `joining` that new buffers can hold within the memory budget, with the batch's
        live rows; the others are held (first in line), and the batch takes nothing from the queue until
        they join. An empty batch takes one row over the budget rather than none, unless other batches
        hold memory (it waits for them)."""
        rows = [(r, p.width) for p in joining for r in p.rows]
        keep = [i for i, r in enumerate(self.rows) if r.finish is None]
        live, span = [self.rows[i] for i in keep], self._span(keep) if keep else 0
        budget, others = self.memory(self)
        avail, bpt = budget - others, self.bb.kv_bytes_per_token
        n = len(rows)
        while n > 0:  # the buffers' least size for n newcomers: every row's history and its remaining tokens
            width = max([span] + [w for _, w in rows[:n]])
            longest = max(r.remaining for r in live + [r for r, _ in rows[:n]])
            if (len(live) + n) * (width + longest) * bpt <= avail:
                break
            n -= 1
        if n == len(rows):
            return joining
        if n == 0 and not self.rows and not others:  # alone on the device: one row rather than none
            n = 1
        self.memory_held = True
        out, rest = _split(joining, n)
        self.held = rest + self.held
        return out

    def _allocated(self, slots_x_columns: int) -> None:
        self.kv_bytes = slots_x_columns * self.bb.kv_bytes_per_token

    def _span(self, keep: list[int]) -> int:
        """The columns the rows `keep` need for their histories: those every one of them masks on the left
        trimmed (each row has at least one real column)."""
        keep_t = torch.tensor(keep, device=self.bb.device, dtype=torch.long)
        return self.length - int((self.attn[keep_t, : self.length] != 0).int().argmax(dim=1).min())

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
        """Drop finished (or cancelled) rows: all of them once the batch is done; the last rows of the
        batch at no cost (the batch's views get shorter); the others when they are more than half the
        batch (a compaction copies the cache), until then their slots wait for newcomers."""
        live = self.live
        if live == 0:
            self._reset()
            return
        if not self.joinable:
            return
        B = len(self.rows)
        while self.rows[B - 1].finish is not None:
            B -= 1
        if B - live > live:
            self._rebuild([])
        elif B < len(self.rows):
            self._use_rows(B)
        else:
            return
        self._rows_changed()

    def _rows_changed(self) -> None:
        """The set of rows changed: per-row sampling parameters and adapter hooks follow."""
        self._lora.close()
        self.forward_kwargs = None
        self.params = SamplingParams(self.rows, self.bb.device, prev=self.params)

    def _use_rows(self, B: int) -> None:
        """The batch is the first B slots of the buffers."""
        for li, (k, v) in enumerate(self._kv):
            self.cache.layers[li] = PreallocatedLayer(k[:B], v[:B], self.length)
        self.attn = self._attn[:B]
        self.rows, self.pos, self.tok = self.rows[:B], self.pos[:B], self.tok[:B]

    def _free_slots(self) -> list[int]:
        """Finished rows' slots first, then the spare ones."""
        return [i for i, r in enumerate(self.rows) if r.finish is not None] + list(range(len(self.rows), self._attn.shape[0]))

    def _placeable(self, parts: list[Prefilled]) -> int:
        """How many of the parts' first rows free slots can take as they are: a slot each, a prompt no
        longer than the batch's history (its columns would start before column 0), and columns left for
        every token the row may generate."""
        L, capacity = self.length, self._attn.shape[1]
        room, n = len(self._free_slots()), 0
        for p in parts:
            for r in p.rows:
                if n == room or p.width > L or L + r.remaining > capacity:
                    return n
                n += 1
        return n

    def _place(self, parts: list[Prefilled]) -> None:
        """Write the newcomers' prefill into free slots without touching the live rows (all of them
        placeable: _placeable)."""
        L, rows = self.length, [r for p in parts for r in p.rows]
        slots = torch.tensor(self._free_slots()[: len(rows)], device=self.bb.device)
        self._write(parts, slots, L)
        B = max(len(self.rows), int(slots[-1]) + 1)
        grow = B - len(self.rows)
        self.rows = self.rows + [None] * grow
        self.pos = torch.cat([self.pos, self.pos.new_zeros(grow)])
        self.tok = torch.cat([self.tok, self.tok.new_zeros(grow)])
        for i, r in zip(slots.tolist(), rows):
            self.rows[i] = r
        self.pos[slots] = torch.cat([p.pos for p in parts])
        self.tok[slots] = torch.cat([p.tok for p in parts])
        self._use_rows(B)

    def _write(self, parts: list[Prefilled], slots: torch.Tensor, L: int) -> None:
        """Write the parts' rows, in order, into buffer rows `slots`: each prompt's keys and values end
        at column L, zeros (masked) before them; every column from L on is attended."""
        at = 0
        for p in parts:
            s, P = slots[at: at + len(p.rows)], p.width
            at += len(p.rows)
            for li, (k, v) in enumerate(self._kv):
                for buf, name in ((k, "keys"), (v, "values")):
                    buf[s, :, : L - P] = 0  # masked columns: zeros, never garbage (0 * NaN is NaN)
                    buf[s, :, L - P: L] = p.kv(li, name)
            self._attn[s, : L - P] = 0
            self._attn[s, L - P: L] = p.attn[p.src]
            self._attn[s, L:] = 1

    def _rebuild(self, parts: list[Prefilled]) -> None:
        """Copy the live rows (and the newcomers' prefill, if any) into fresh buffers: left-aligned
        at column L' = the longest history, with room for every row's remaining tokens. The buffers
        hold up to twice as many rows (at most TANDEM_GEN_BATCH) and a quarter more columns than the
        rows may generate, so that later newcomers usually join in free slots without a copy."""
        dev = self.bb.device
        keep = [i for i, r in enumerate(self.rows) if r.finish is None]
        keep_t = torch.tensor(keep, device=dev, dtype=torch.long)
        rows = [self.rows[i] for i in keep]
        L = self.length
        span = self._span(keep) if keep else 0  # columns every kept row masks on the left are trimmed
        first = L - span
        L2 = max([span] + [p.width for p in parts])
        rows_all = rows + [r for p in parts for r in p.rows]
        longest = max(r.remaining for r in rows_all)
        B_old, B = len(rows), len(rows_all)
        # Spare slots and columns, as far as the memory budget allows (the rows themselves fit: admit and
        # _within_memory checked; a compaction needs no more than the buffers it replaces).
        budget, others = self.memory(self)
        room = max(0, budget - others) // self.bb.kv_bytes_per_token  # slots x columns
        R2 = max(B, min(GEN_BATCH_ROWS, 2 * B, room // (L2 + longest)))
        C2 = max(L2 + longest, min(L2 + longest + max(SLACK_COLUMNS, longest // 4), room // R2))
        self.stats["cache_copies"] += B_old > 0
        if self.cache is None:  # a container for the new layers; the prefill's own cache is left as it is
            self.cache = copy.copy(parts[0].cache)
            self.cache.layers = list(self.cache.layers)

        kv = []
        for li, layer in enumerate(self.cache.layers):
            pair = []
            for name in ("keys", "values"):
                ref = getattr(layer, name)
                _, H, _, D = ref.shape
                buf = torch.empty((R2, H, C2, D), dtype=ref.dtype, device=dev)
                buf[:B_old, :, : L2 - span] = 0  # masked columns: zeros, never garbage (0 * NaN is NaN)
                if B_old:
                    buf[:B_old, :, L2 - span: L2] = ref[keep_t, :, first:L]
                pair.append(buf)
            kv.append(tuple(pair))
        self._kv = kv

        self._attn = torch.zeros((R2, C2), dtype=torch.long, device=dev)
        if B_old:
            self._attn[:B_old, L2 - span: L2] = self.attn[keep_t, first:L]
        self._attn[:, L2:] = 1  # generated columns are always attended
        self._write(parts, torch.arange(B_old, B, device=dev), L2)
        pos = [self.pos[keep_t]] if B_old else []
        tok = [self.tok[keep_t]] if B_old else []
        self.pos = torch.cat(pos + [p.pos for p in parts])
        self.tok = torch.cat(tok + [p.tok for p in parts])
        self.rows, self.length = rows_all, L2
        self._allocated(R2 * C2)
        self._use_rows(B)


def _split(parts: list[Prefilled], n: int) -> tuple[list[Prefilled], list[Prefilled]]:
    """The parts' first n rows, and the others, each kept with its prefill."""
    first, rest = [], []
    for p in parts:
        k = max(0, min(n, len(p.rows)))
        n -= k
        first += [p.select(range(k))] if k else []
        rest += [p.select(range(k, len(p.rows)))] if k < len(p.rows) else []
    return first, rest


def _admission(q: deque, room: int, whole: bool) -> list[Row]:
    """The rows that join at this step: at most `room`, and a prefill of at most PREFILL_TOKENS (distinct
    prompts x the longest, as the padded prefill computes them; at least one row), so that a wave of long
    prompts is prefilled over several steps with decoding in between. `whole`: the last prompt's rows
    beyond `room` are taken too, so that its prefill is computed once (the batch holds them until there
    is room)."""
    take, keys, longest = [], set(), 0
    while q and len(take) < room:
        r = q[0]
        key = (tuple(r.prompt_ids), r.adapter)
        if take and key not in keys and (len(keys) + 1) * max(longest, len(r.prompt_ids)) > PREFILL_TOKENS:
            break  # a new prompt would overflow the prefill (rows of a prompt already in it cost nothing)
        take.append(q.popleft())
        keys.add(key)
        longest = max(longest, len(r.prompt_ids))
    while whole and take and q and (q[0].prompt_ids, q[0].adapter) == (take[-1].prompt_ids, take[-1].adapter):
        take.append(q.popleft())
    return take


class Scheduler:
    """Rows waiting to join, and the decode batch of each backbone. `tick` runs one step of work."""

    def __init__(self):
        self.batches: dict[object, DecodeBatch] = {}  # Backbone -> its batch
        self.waiting: dict[object, deque[Row]] = {}
        self.stats = {"busy_seconds": 0.0, "steps": 0, "prefills": 0, "cache_copies": 0, "generated_tokens": 0,
                      "rows_finished": 0, "memory_waits": 0, "kv_cache_peak_bytes": 0}

    def kv_bytes(self) -> int:
        """What the decode batches' KV buffers take now, in all."""
        return sum(b.kv_bytes for b in self.batches.values())

    def kv_budget(self, device) -> int:
        """What they may take in all (kv_cache.kv_budget)."""
        return kv_budget(device, self.kv_bytes())

    def memory(self, batch: DecodeBatch) -> tuple[int, int]:
        """(the budget of all batches' KV buffers, what the batches other than `batch` take)."""
        held = self.kv_bytes()
        return kv_budget(batch.bb.device, held), held - batch.kv_bytes

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
            held = (p.select(i for i, r in enumerate(p.rows) if r.finish is None) for p in b.held)
            b.held = [p for p in held if p.rows]
            b.memory_held = b.memory_held and bool(b.held)
            b.settle()

    def rows_of(self, bb) -> list[Row]:
        """The rows of backbone `bb` not finished: waiting, held with their prefill, or decoding."""
        b = self.batches.get(bb)
        held = [r for p in b.held for r in p.rows] if b else []
        return [*self.waiting.get(bb, ()), *held, *(r for r in (b.rows if b else []) if r.finish is None)]

    def retarget(self, bb, to_bb, adapter: str | None, to_adapter: str | None) -> None:
        """The rows of `bb` with `adapter` go on with `to_bb` and `to_adapter`, an exact copy of those
        weights (serving.py), their KV cache and prefill kept: a lora adapter's rows are renamed in place;
        a full model's batch and queue move to the copy as they are."""
        if to_bb is not bb:
            if bb in self.waiting:
                self.waiting[to_bb] = self.waiting.pop(bb)
            if bb in self.batches:
                self.batches[to_bb] = batch = self.batches.pop(bb)
                batch.bb = to_bb
            return
        for r in self.rows_of(bb):
            if r.adapter == adapter:
                r.adapter = to_adapter
        self.unhook()  # the adapter hooks follow the rows' new names at the next step

    def unhook(self) -> None:
        """Remove the batches' mixed-adapter hooks (each batch adds them again at its next step): before
        any other forward through a model they decode with (an update's, beside the decoding)."""
        for b in self.batches.values():
            b._lora.close()
            b.forward_kwargs = None

    def drop_all(self) -> None:
        """Every row dropped, waiting, held or decoding (after a step failed: their requests fail with it)."""
        for b in self.batches.values():
            b.held = []
            b._reset()
        self.batches.clear()
        self.waiting.clear()

    def busy(self) -> bool:
        return any(self.waiting.values()) or any(b.rows or b.held for b in self.batches.values())

    def counts(self) -> dict:
        return {"live_rows": sum(b.live for b in self.batches.values()),
                "waiting_rows": sum(len(q) for q in self.waiting.values()) + sum(b.held_rows for b in self.batches.values())}

    def tick(self) -> list[Row]:
        """Admit waiting rows where there is room, then one decode step per backbone with rows.
        -> the rows that finished."""
        finished: list[Row] = []
        t0 = time.perf_counter()
        for bb in dict.fromkeys([*self.waiting, *(bb for bb, b in self.batches.items() if b.held)]):
            if bb not in self.batches:
                self.batches[bb] = DecodeBatch(bb, self.stats, self.memory)
            batch, q = self.batches[bb], self.waiting.get(bb, deque())
            room = batch.room()
            if room > 0:
                newcomers = [] if batch.memory_held else _admission(q, room - batch.held_rows, whole=bool(batch.rows))
                if newcomers or batch.held:
                    finished += batch.admit(newcomers)
            if not q:
                self.waiting.pop(bb, None)
        for bb, batch in list(self.batches.items()):
            if batch.rows:
                finished += batch.step()
                self.stats["steps"] += 1
            if not batch.rows and not batch.held and bb not in self.waiting:
                del self.batches[bb]  # an unloaded backbone must not be kept alive here
        self.stats["kv_cache_peak_bytes"] = max(self.stats["kv_cache_peak_bytes"], self.kv_bytes())
        self.stats["busy_seconds"] += time.perf_counter() - t0
        for r in finished:
            self.stats["rows_finished"] += 1
            self.stats["generated_tokens"] += len(r.resp)
        return finished
