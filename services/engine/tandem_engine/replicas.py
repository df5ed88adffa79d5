"""Data-parallel updates: the replicas of one policy take one identical optimizer step together.

Each replica (an engine on its own device, usually behind its own policy worker) holds a full copy
of the policy. For one update, every replica gets its share of the iteration's samples (whole
groups) and the same `distributed` field: {rank, world_size, store: "host:port", group, timeout_s,
join_timeout_s, shard_optimizer}.
The replicas form torch.distributed's default process group for that one step (gloo on CPU, NCCL on CUDA):
rank 0's engine hosts the rendezvous store (a TCPStore at `store`), every key is prefixed with
`group` (one id per attempt of the step, so a late member of a failed attempt never meets the next
one), and the group is destroyed when the step ends, so that a replica that dies and comes back
needs no repair: the next step forms a new group.

Within the step (Policy.update):
  1. the batch's token and sequence counts are summed over the replicas, so that each replica's
     loss is its share of the *whole* batch's loss (the same normalisers as one engine would use);
  2. after the local backward passes, gradients are summed (all-reduce): every replica now holds
     the gradient one engine would compute on all the samples (to float summation order);
  3. clipping and AdamW run on identical inputs, so the replicas' weights stay identical (with
     `shard_optimizer`, torch's ZeroRedundancyOptimizer: each steps its part of the parameters and
     broadcasts the result; policy.py `_stepper`); a checksum per replica (per tensor: the sum of its
     bits read as integers, exact whatever the order of summation: checksum()) is gathered and compared, and any difference fails the step
     loudly (ReplicaMismatch) before anything is saved;
  4. rank 0 writes the checkpoint; all replicas then learn whether it was written (`all_ok`) and
     only then move to the new version. A failure anywhere fails the step on every replica.
A dead peer closes its connections, which fails the others' collectives at once; a peer that never
arrives fails the step after `join_timeout_s`, one that hangs after joining after `timeout_s` (a
collective waits that long for a slower peer's share).
"""

from __future__ import annotations

import datetime
import time
import zlib

import torch
import torch.distributed as dist

from .errors import EngineError

BUCKET_ELEMENTS = 1 << 24  # gradients are all-reduced in flat buckets of at most 16M elements


class StepGroup:
    """A process group for one update step; use as a context manager."""

    def __init__(self, spec: dict, device: torch.device, at: str = "distributed"):
        """`spec`: the request's field `at` (`distributed`; a broadcast's `broadcast`, broadcast.py)."""
        missing = [k for k in ("rank", "world_size", "store", "group", "timeout_s", "join_timeout_s", "shard_optimizer")
                   if spec.get(k) is None]
        if missing:
            raise EngineError("BadRequest", f"missing field(s) {at}.{f', {at}.'.join(missing)}")
        self.rank, self.world = int(spec["rank"]), int(spec["world_size"])
        self.group_id, self.device = str(spec["group"]), device
        host, _, port = str(spec["store"]).rpartition(":")
        if not host or not port.isdigit():
            raise EngineError("BadRequest", f"{at}.store must be host:port, not {spec['store']!r}")
        if not 0 <= self.rank < self.world:
            raise EngineError("BadRequest", f"{at}.rank {self.rank} is outside world_size {self.world}")
        self.host, self.port = host, int(port)
        self.sync_s = 0.0  # seconds spent in collectives (waiting for the others included)
        # AdamW's state split over the replicas (torch's ZeroRedundancyOptimizer; policy.py _stepper).
        self.shard_optimizer = bool(spec["shard_optimizer"])
        self.timeout = datetime.timedelta(seconds=float(spec["timeout_s"]))
        self.join_timeout = datetime.timedelta(seconds=float(spec["join_timeout_s"]))

    def __enter__(self) -> "StepGroup":
        try:
            if self.rank == 0:
                store = serve_store(self.host, self.port, self.join_timeout)
            else:
                store = dist.TCPStore(self.host, self.port, self.world, False, timeout=self.join_timeout)
            # torch's default process group, formed for this step under the step's own key prefix and
            # destroyed at its end (torch.distributed's ZeroRedundancyOptimizer needs a registered
            # group). An engine takes one step at a time, so one default group at a time suffices.
            dist.init_process_group(backend(self.device), store=dist.PrefixStore(self.group_id, store),
                                    rank=self.rank, world_size=self.world, timeout=self.join_timeout)
            dist.group.WORLD.set_timeout(self.timeout)  # joined: collectives wait for a slower peer this long
        except Exception as e:  # noqa: BLE001 - rendezvous failures become one clear, retryable error
            leave_group()
            raise EngineError("ReplicaGroupFailed", f"rank {self.rank} of {self.world} could not join group "
                              f"{self.group_id} at {self.host}:{self.port}: {e}") from None
        return self

    def __exit__(self, *exc) -> None:
        leave_group()  # closes its connections

    def collective(self, what: str, work) -> None:
        """Runs `work` (one collective, or e.g. a ZeroRedundancyOptimizer's step with collectives
        inside): a failure becomes ReplicaGroupFailed, its time counts as sync_s."""
        t0 = time.perf_counter()
        try:
            work()
            self.sync_s += time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - a peer died or timed out
            raise EngineError("ReplicaGroupFailed", f"{what} in group {self.group_id} (rank {self.rank} of "
                              f"{self.world}): {e}") from None

    def _all_reduce(self, what: str, t: torch.Tensor, op=dist.ReduceOp.SUM) -> None:
        self.collective(what, lambda: dist.all_reduce(t, op=op))

    def sum_(self, t: torch.Tensor) -> torch.Tensor:
        """Sums `t` over the replicas, in place (every replica gets the same result)."""
        dev = t.to(self.device)
        self._all_reduce("all-reduce", dev)
        t.copy_(dev)
        return t

    def max_(self, t: torch.Tensor) -> torch.Tensor:
        """The element-wise maximum of `t` over the replicas, in place."""
        dev = t.to(self.device)
        self._all_reduce("all-reduce max", dev, dist.ReduceOp.MAX)
        t.copy_(dev)
        return t

    def sum_grads(self, grads: list[torch.Tensor]) -> None:
        """Sums gradients over the replicas, in place (every replica holds every trained parameter's:
        precision.Masters.gradients), in flat buckets: one collective per bucket rather than one per
        tensor."""
        for bucket in buckets(grads):
            flat = torch.cat([g.reshape(-1) for g in bucket])
            self._all_reduce("gradient all-reduce", flat)
            offset = 0
            for g in bucket:
                g.copy_(flat[offset: offset + g.numel()].view_as(g))
                offset += g.numel()

    def check_identical(self, params: list[torch.Tensor], ranks: list[int] | None = None) -> str:
        """Compares the replicas' weights by a checksum (`ranks`: only these ranks' with rank 0's; every
        rank takes part); raises ReplicaMismatch if any differs. -> rank 0's checksum (hex)."""
        with torch.no_grad():
            mine = torch.stack([checksum(p) for p in params])
        everyone = [torch.empty_like(mine) for _ in range(self.world)]
        self.collective("checksum all-gather", lambda: dist.all_gather(everyone, mine))
        differ = [r for r, c in enumerate(everyone) if (ranks is None or r in ranks) and not torch.equal(c, everyone[0])]
        if differ:
            raise EngineError("ReplicaMismatch", f"after the step, the weights of rank(s) {differ} differ from "
                              f"rank 0's in group {self.group_id}")
        return f"{zlib.crc32(everyone[0].cpu().numpy().tobytes()):08x}"

    def all_ok(self, ok: bool) -> bool:
        """True when every replica says ok (e.g. rank 0 wrote the checkpoint)."""
        flag = torch.tensor([1.0 if ok else 0.0], device=self.device)
        self._all_reduce("agreement", flag, dist.ReduceOp.MIN)
        return flag.item() == 1.0


_SAME_SIZE_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def checksum(t: torch.Tensor) -> torch.Tensor:
    """A tensor's checksum: its elements' bits read as integers, summed in int64 (wrapping). Integer sums
    do not depend on their order, so equal bits give equal checksums on any device and thread count,
    and any change to one element changes it (a float sum could round it away); about 4x cheaper
    than float64 sums of the values and their squares on a CPU."""
    return t.detach().contiguous().view(_SAME_SIZE_INT[t.element_size()]).sum(dtype=torch.int64)


_servers: dict[tuple[str, int], dist.TCPStore] = {}


def backend(device: torch.device) -> str:
    """gloo on CPU, NCCL on CUDA (the NCCL branch is not exercised on this project's CPU machines)."""
    return "nccl" if device.type == "cuda" else "gloo"


def leave_group() -> None:
    """Destroys the step's default group, if it was formed. After a failed init_process_group, torch's
    group counter has moved on although no group exists; it names the next group's store keys, so it
    is reset here, or a replica that failed once and one that did not would never meet again."""
    if dist.is_initialized():
        dist.destroy_process_group()  # also resets the counter
    else:
        dist.distributed_c10d._world.group_count = 0


def serve_store(host: str, port: int, timeout: datetime.timedelta) -> dist.TCPStore:
    """Rank 0's store server at host:port, started on its first step and kept for the engine's life:
    every step meets in it under its own key prefix. (One server per engine, rather than one per
    step, so that no step has to wait for the port to be released.)"""
    key = (host, port)
    if key not in _servers:
        _servers[key] = dist.TCPStore(host, port, None, True, timeout=timeout, wait_for_workers=False)
    _servers[key].set_timeout(timeout)
    return _servers[key]


def zero_optimizer(params: list[torch.nn.Parameter], sync_params: bool, **adamw):
    """torch's ZeroRedundancyOptimizer with AdamW over `params`: each replica keeps and steps the state
    of its part. `sync_params` False: the stepped parameters are not broadcast (float32 masters that
    stay with the replica that steps them; precision.Masters broadcasts the rounded weights instead)."""
    from torch.distributed.optim import ZeroRedundancyOptimizer

    class Zero(ZeroRedundancyOptimizer):
        def _sync_params(self):
            if sync_params:
                super()._sync_params()

    return Zero(params, optimizer_class=torch.optim.AdamW, **adamw)


def owners(zero, params: list[torch.nn.Parameter]) -> list[int]:
    """The replica whose ZeroRedundancyOptimizer steps each of `params`: its partition, which every
    replica computes alike from the parameters' sizes (no collective: a replica loaded again makes its
    optimizer at a step where the others have theirs already). (ZeroRedundancyOptimizer's own map,
    `_param_to_rank`, is not public.)"""
    rank_of = zero._param_to_rank
    return [rank_of[p] for p in params]


def buckets(params: list[torch.Tensor]):
    """Consecutive runs of tensors of at most BUCKET_ELEMENTS elements (a larger one alone)."""
    bucket, size = [], 0
    for p in params:
        if bucket and size + p.numel() > BUCKET_ELEMENTS:
            yield bucket
            bucket, size = [], 0
        bucket.append(p)
        size += p.numel()
    if bucket:
        yield bucket
