"""Weights by broadcast (placement.<base>.rollout.weights: broadcast): a policy's trainer engine sends
one version's weights to its rollout engines over one torch.distributed group, instead of each rollout
engine reading them from the checkpoint (rollout.py). The group is replicas.py's StepGroup: NCCL on
GPUs, gloo on CPUs; rank 0 is the trainer engine (`publish`), which hosts the rendezvous store; ranks
1..N are the rollout engines (`sync` with `broadcast`; PROTOCOL.md). A group lives for one round.

One round:
  1. every rank gives a row [manifest, version held, version asked, needs it]: the manifest is a crc of
     the names, shapes and dtypes of the tensors to be sent, so that a rank whose model differs fails
     before any weight moves (WeightsMismatch), and the trainer must hold the version asked for
     (VersionMismatch). Every rank sees every row and fails alike;
  2. if any rollout engine needs the version, rank 0 broadcasts each tensor in manifest order; every
     rollout engine receives into fresh buffers (as the file path reads the checkpoint into memory),
     and one that needs them installs them as the file path does (its rows in flight move onto a
     serving copy first);
  3. every rank compares a checksum of the weights it now holds (replicas.py check_identical): a
     difference fails the round on every rank (ReplicaMismatch).
A rank that dies fails the others' collectives at once (its connections close), one that never comes
fails them after join_timeout_s. A rollout engine whose round fails after its install began unloads the
policy (server.py), so no unchecked weights serve; the run then syncs it from the checkpoint.

What is sent: a LoRA policy's adapter (float32, named as PEFT saves it, so that two engines' adapter
names need not match), or a full model's state (its tensors once each: tied ones are one tensor), in
the model's dtype: a bf16 trainer's are its float32 masters rounded, the bits a rollout engine gets
by casting the checkpoint's masters.
"""

from __future__ import annotations

import time
import zlib

import torch
import torch.distributed as dist

from .errors import EngineError
from .replicas import StepGroup, buckets

SMALL = 1 << 20  # elements: smaller tensors are broadcast in buckets


def tensors_of(policy) -> dict[str, torch.Tensor]:
    """The tensors a round sends (rank 0) or holds (rollout engines), by name, in one order on every rank."""
    model = policy.backbone.model
    if policy.kind == "lora":
        from peft import get_peft_model_state_dict

        return get_peft_model_state_dict(model, adapter_name=policy.adapter, save_embedding_layers=False)
    seen, out = set(), {}
    for k, t in model.state_dict().items():
        if t.data_ptr() not in seen:  # a tied tensor once, under its first name
            seen.add(t.data_ptr())
            out[k] = t
    return out


def manifest(tensors: dict[str, torch.Tensor]) -> int:
    return zlib.crc32(";".join(f"{k}:{tuple(t.shape)}:{t.dtype}" for k, t in tensors.items()).encode())


def _agree(group: StepGroup, tensors: dict, held: int, asked: int, needs: bool) -> torch.Tensor:
    """Step 1: every rank's row; raises on every rank alike if they disagree. -> the rows, one per rank."""
    mine = torch.tensor([manifest(tensors), held, asked, int(needs)], dtype=torch.int64, device=group.device)
    rows = [torch.empty_like(mine) for _ in range(group.world)]
    group.collective("weights round agreement", lambda: dist.all_gather(rows, mine))
    table = torch.stack(rows).cpu()
    if len(set(table[:, 2].tolist())) > 1:
        raise EngineError("BadRequest", f"group {group.group_id}: the ranks ask for different versions {table[:, 2].tolist()}")
    if int(table[0, 1]) != asked:
        raise EngineError("VersionMismatch", f"group {group.group_id}: the trainer engine holds version {int(table[0, 1])}, "
                          f"not {asked}")
    differ = [r for r in range(group.world) if table[r, 0] != table[0, 0]]
    if differ:
        raise EngineError("WeightsMismatch", f"group {group.group_id}: the names, shapes or dtypes of rank(s) {differ}'s "
                          "weights differ from the trainer's (a broadcast needs one model and one dtype on both: "
                          "placement.<base>.dtype)")
    return table


def _broadcast_all(group: StepGroup, tensors: dict[str, torch.Tensor]) -> None:
    """Step 2: rank 0's tensors into every other rank's: each large one (SMALL elements or more) in a
    collective of its own, the small ones (a LoRA adapter's hundreds, a model's norms) in flat buckets of
    one dtype (replicas.buckets), since a collective's own cost outweighs theirs."""
    small: dict[torch.dtype, list[torch.Tensor]] = {}
    for t in tensors.values():
        if t.numel() >= SMALL:
            group.collective("weights broadcast", lambda t=t: dist.broadcast(t, src=0))
        else:
            small.setdefault(t.dtype, []).append(t)
    sender = group.rank == 0
    for same in small.values():
        for bucket in buckets(same):
            flat = torch.cat([t.reshape(-1) for t in bucket]) if sender else \
                torch.empty(sum(t.numel() for t in bucket), dtype=bucket[0].dtype, device=bucket[0].device)
            group.collective("weights broadcast", lambda: dist.broadcast(flat, src=0))
            if not sender:
                offset = 0
                for t in bucket:
                    t.copy_(flat[offset: offset + t.numel()].view_as(t))
                    offset += t.numel()


def _at_version(table: torch.Tensor) -> list[int]:
    """The ranks that hold the version asked for after the round: all but rollout engines already past it
    (a restarted engine that loaded a newer checkpoint), whose weights step 3 does not compare."""
    return [r for r in range(table.shape[0]) if table[r, 1] <= table[r, 2]]


def publish(policy, version: int, spec: dict) -> dict:
    """Rank 0: sends `policy`'s weights of version `version` (the version it holds) to the rollout engines.
    -> {policy, version, engines: rollout engines in the group, sent: whether any needed them, bytes, seconds,
    and the round's phases: join_s (joining and agreeing), send_s, check_s}."""
    t0 = time.perf_counter()
    group = StepGroup({**spec, "shard_optimizer": False}, policy.backbone.device, at="broadcast")
    if group.rank != 0:
        raise EngineError("BadRequest", f"broadcast.rank must be 0 on the trainer engine, not {group.rank}")
    with group:
        tensors = tensors_of(policy)
        table = _agree(group, tensors, policy.version, version, needs=False)
        t_agreed = time.perf_counter()
        sent = bool(table[1:, 3].any())
        if sent:
            _broadcast_all(group, tensors)
        t_sent = time.perf_counter()
        group.check_identical(list(tensors.values()), _at_version(table))
    t_end = time.perf_counter()
    return {"policy": policy.key, "version": version, "engines": group.world - 1, "sent": sent,
            "bytes": sum(t.numel() * t.element_size() for t in tensors.values()) if sent else 0,
            "seconds": t_end - t0, "join_s": t_agreed - t0, "send_s": t_sent - t_agreed, "check_s": t_end - t_sent}


def receive(policy, version: int, spec: dict, install) -> tuple[bool, str | None]:
    """Ranks 1..N: takes part in the round for version `version` of rollout policy `policy`;
    `install(weights, source)` installs them and returns the serving copy its rows in flight kept
    (server.py). -> (installed, that copy or None)."""
    group = StepGroup({**spec, "shard_optimizer": False}, policy.backbone.device, at="broadcast")
    if group.rank == 0:
        raise EngineError("BadRequest", "broadcast.rank 0 is the trainer engine's (publish); a rollout engine's is 1 or more")
    with group:
        held = tensors_of(policy)
        needs = policy.version < version
        table = _agree(group, held, policy.version, version, needs)
        installed, copy = False, None
        if bool(table[1:, 3].any()):
            weights = {k: torch.empty_like(t) for k, t in held.items()}
            _broadcast_all(group, weights)
            if needs:
                copy, installed = install(weights, f"broadcast from the trainer engine (group {group.group_id})"), True
        group.check_identical(list(tensors_of(policy).values()), _at_version(table))
    return installed, copy
