"""The update stage of bench/gpu/check.py: one `update` op (one PPO step: log-probs, loss, backward,
clip, AdamW) for a full model and for a LoRA adapter, at each length of sample; and one LoRA step
in a replica group of one rank (replicas.py: NCCL on cuda, gloo on cpu), which takes the group's
path (all-reduces, the weights' checksum) without needing a second GPU.

Each step is timed after one warm-up step at the same length (AdamW's state, first-call kernels),
by its own `update_s` (before the checkpoint write). Checkpoint writes are left out (stubbed): their
cost is the disk's, and two of a 2B model with its AdamW state would take 12 GB and minutes of the
device's time; the engine's test suite writes real checkpoints on the device.
"""

from __future__ import annotations

import math
import socket

import engine_common as ec
import shapes


def update(ctx) -> dict:
    from tandem_engine import checkpoint

    ctx.figures = fig = {"samples_per_step": ctx.update_samples, "steps": [], "skipped": []}
    real_save = checkpoint.save
    checkpoint.save = lambda root, version, *a, **k: checkpoint.version_dir(root, version)  # no disk writes
    try:
        for kind, shape, micro in ctx.update_configs:
            if ctx.left() < ctx.min_step_s:
                fig["skipped"].append(f"{kind} {shape}: no time left in the stage's budget")
                continue
            _policy_steps(ctx, kind, shape, micro, fig)
        fig["replica_group"] = _one_rank_group(ctx)
    finally:
        checkpoint.save = real_save
    return fig


def _load(ctx, key: str, kind: str, shape: str) -> None:
    ec.load(ctx.engine, key, kind, shapes.model_folder(shape, ctx.smoke), ec.tempdir("gpucheck-ckpt-"), base=f"{key}-base")


def _policy_steps(ctx, kind: str, shape: str, micro: int, fig: dict) -> None:
    eng = ctx.engine
    _load(ctx, "u", kind, shape)
    p = eng.policies["u"]
    trainable = sum(x.numel() for x in p.trainable_parameters())
    try:
        for length in ctx.update_lengths:
            if ctx.left() < ctx.min_step_s:
                fig["skipped"].append(f"{kind} {shape} at {length} tokens: no time left in the stage's budget")
                continue
            samples = ec.random_samples(p.backbone.vocab_size, ctx.update_samples, length, seed=length)
            ec.update(eng, "u", p.version, samples, p.checkpoint_root, micro_batch_tokens=micro)  # warm-up step
            ctx.reset_peak()
            r = ec.update(eng, "u", p.version, samples, p.checkpoint_root, micro_batch_tokens=micro)
            step = {"kind": kind, "shape": shape, "trainable_m": trainable / 1e6, "tokens_per_sample": length,
                    "samples": len(samples), "micro_batch_tokens": micro, "update_s": r["update_s"],
                    "tok_s": len(samples) * length / r["update_s"], "peak_gb": ctx.peak_gb(),
                    "optimizer_state_mb": r["optimizer_state_mb"], "loss": r["loss"], "grad_norm": r["grad_norm"]}
            fig["steps"].append(step)
            print(f"  update {kind} {shape} {length} tokens/sample: {step['update_s']:.2f} s, "
                  f"{step['tok_s']:.0f} tok/s, peak {step['peak_gb']} GB", flush=True)
            assert math.isfinite(r["loss"]) and r["grad_norm"] is not None and r["grad_norm"] > 0, (
                f"{kind} {shape} at {length} tokens: loss {r['loss']}, grad_norm {r['grad_norm']}")
    finally:
        ec.call(eng, "unload", policy="u")


def _one_rank_group(ctx) -> dict:
    """A LoRA update with `distributed` of world size 1: the replica group's collectives on this device."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _load(ctx, "g", "lora", ctx.group_shape)
    try:
        p = ctx.engine.policies["g"]
        r = ec.update(ctx.engine, "g", 0, ec.random_samples(p.backbone.vocab_size, 2, 64, seed=1), p.checkpoint_root,
                       distributed={"rank": 0, "world_size": 1, "store": f"127.0.0.1:{port}", "group": "gpucheck",
                                    "timeout_s": 120, "join_timeout_s": 120, "shard_optimizer": False})
    finally:
        ec.call(ctx.engine, "unload", policy="g")
    from tandem_engine.replicas import backend

    assert r["replicas"] == 1 and r["checksum"] and r["grad_norm"] > 0, r
    return {"backend": backend(ctx.device), "shape": ctx.group_shape, "update_s": r["update_s"], "sync_s": r["sync_s"],
            "checksum": r["checksum"]}
