"""The sync stage of bench/gpu/check.py: what a rollout engine's `sync` costs on the device (the
weights travel by file: docs/DEPLOYMENT.md, "Rollout engines").

For a LoRA adapter (rank 8, all-linear) on Llama-3-8B's shape and a full model (SmolLM2-135M's shape:
a larger one's checkpoint, float32 masters and AdamW state, would take the disk's time, not the
device's): a trainer policy takes one real update (its checkpoint written as in a run), then a rollout
policy of the same shape on the same device installs that version, first with the version's weight
files dropped from the page cache (a rollout engine on another host, or long after the write), then
the next version straight after its write (in the cache: a rollout engine on the trainer's host).
After each install the rollout policy's weights must equal the trainer's. Figures: the weights'
bytes, the trainer's checkpoint write, each install's seconds and GB/s, and the install against the
update step that made the version (the step of this stage's two short samples, not of a run's batch).
"""

from __future__ import annotations

import glob
import os
import time

import engine_common as ec
import shapes


def sync(ctx) -> dict:
    ctx.figures = fig = {"installs": [], "skipped": []}
    for kind, shape in ctx.sync_configs:
        if ctx.left() < ctx.min_sync_s:
            fig["skipped"].append(f"{kind} {shape}: no time left in the stage's budget")
            continue
        fig["installs"] += _installs(ctx, kind, shape)
    return fig


def _installs(ctx, kind: str, shape: str) -> list[dict]:
    eng = ctx.engine
    folder, root = shapes.model_folder(shape, ctx.smoke), ec.tempdir("gpucheck-sync-")
    ec.load(eng, "st", kind, folder, root, base="st-base")
    rollout = dict(kind=kind, role="rollout", model_path=folder, checkpoint_root=root, optim=ec.OPTIM, dtype=ec.DTYPE,
                   **({"base": "sr-base", "lora": ec.LORA} if kind == "lora" else {}))
    out = []
    try:
        ec.call(eng, "sync", policy="sr", version=0, **rollout)  # loads it, at version 0: the base model
        trainer = eng.policies["st"]
        for version, cached in ((1, False), (2, True)):
            t0 = time.perf_counter()
            r = ec.update(eng, "st", version - 1, ec.random_samples(trainer.backbone.vocab_size, 2, 64, seed=version), root)
            write_s = time.perf_counter() - t0 - r["update_s"]
            files = glob.glob(os.path.join(root, f"v{version:06d}", "adapter" if kind == "lora" else "model",
                                           "*.safetensors"))
            if not cached:
                _drop_from_page_cache(files)
            t0 = time.perf_counter()
            s = ec.call(eng, "sync", policy="sr", version=version, **rollout)
            call_s = time.perf_counter() - t0
            assert s["installed"] and s["version"] == version, s
            _assert_same_weights(trainer, eng.policies["sr"])
            weights = sum(os.path.getsize(f) for f in files)
            row = {"kind": kind, "shape": shape, "page_cache": "warm" if cached else "dropped", "version": version,
                   "weights_mb": weights / 1e6, "write_s": write_s, "install_s": s["seconds"], "call_s": call_s,
                   "install_gbs": weights / 1e9 / s["seconds"], "update_s": r["update_s"],
                   "install_of_update": s["seconds"] / r["update_s"]}
            print(f"  sync {kind} {shape} v{version} ({row['page_cache']}): {row['weights_mb']:.0f} MB in "
                  f"{row['install_s']:.3f} s ({row['install_gbs']:.2f} GB/s), checkpoint write {write_s:.2f} s", flush=True)
            out.append(row)
    finally:
        ec.call(eng, "unload", policy="sr")
        ec.call(eng, "unload", policy="st")
    return out


def _drop_from_page_cache(files: list[str]) -> None:
    """Written back, then out of the page cache, so that the install reads them from the disk."""
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _assert_same_weights(trainer, rollout) -> None:
    """The rollout policy serves the trainer's weights: every tensor the same bits (an adapter's, or
    the whole model's)."""
    import torch

    if trainer.kind == "lora":
        mine, theirs = trainer.trainable_parameters(), rollout.adapter_parameters()
    else:
        mine, theirs = list(trainer.backbone.model.parameters()), list(rollout.backbone.model.parameters())
    assert mine and len(mine) == len(theirs), (len(mine), len(theirs))
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape and torch.equal(a, b), f"a weight of shape {tuple(a.shape)} differs"
