"""Checkpoint layout (one folder per policy version):

    <checkpoint_root>/v000001/
        adapter/        lora policies: PEFT layout (adapter_config.json, adapter_model.safetensors)
        model/          full policies: HF folder (config.json, model.safetensors, tokenizer files)
        optimizer.pt    AdamW state_dict
        scheduler.pt    LambdaLR state_dict (its step count)
        rng.pt          the policy's private RNG streams (torch CPU, CUDA, python) for dropout
        state.json      {"version", "kind", "update_result", "created_at"}  -- written LAST

A version folder is first written as <checkpoint_root>/.tmp-v000001-<pid>/ and then
renamed into place, so a folder named vNNNNNN is always complete; we still require
state.json to be present before trusting one.

Retention (`prune`): after a version is written, older complete versions beyond the newest
`keep_last` are removed, except those whose number `keep_every` divides. A removed folder is first
renamed to .pruned-vNNNNNN-<pid>/, so that a crash mid-removal never leaves a vNNNNNN folder with
part of its files; such leftovers are removed by the next prune.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import torch

from .errors import EngineError

_VERSION_DIR = re.compile(r"^v(\d{6,})$")


def version_dir(root: str, version: int) -> str:
    return os.path.join(root, f"v{version:06d}")


def list_complete(root: str) -> list[tuple[int, str]]:
    """[(version, folder)] of complete checkpoints under root, oldest first."""
    if not root or not os.path.isdir(root):
        return []
    found = []
    for name in os.listdir(root):
        m = _VERSION_DIR.match(name)
        path = os.path.join(root, name)
        if m and os.path.isfile(os.path.join(path, "state.json")):
            found.append((int(m.group(1)), path))
    return sorted(found)


def read_state(folder: str) -> dict:
    with open(os.path.join(folder, "state.json")) as f:
        return json.load(f)


def save(root: str, version: int, kind: str, write_weights, optimizer, scheduler, rng: dict,
         update_result: dict) -> str:
    """Write checkpoint `version`; `write_weights(folder)` writes adapter/ or model/ into the temp folder."""
    final = version_dir(root, version)
    if os.path.isfile(os.path.join(final, "state.json")):
        raise FileExistsError(f"checkpoint {final} already exists")
    os.makedirs(root, exist_ok=True)
    tmp = os.path.join(root, f".tmp-v{version:06d}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(tmp)
        write_weights(tmp)
        torch.save(optimizer.state_dict(), os.path.join(tmp, "optimizer.pt"))
        torch.save(scheduler.state_dict(), os.path.join(tmp, "scheduler.pt"))
        torch.save(rng, os.path.join(tmp, "rng.pt"))
        state = {"version": version, "kind": kind, "update_result": update_result, "created_at": time.time()}
        with open(os.path.join(tmp, "state.json"), "w") as f:  # last: marks the folder complete
            json.dump(state, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
    except (OSError, RuntimeError) as e:  # a full disk shows as either (torch's writer raises RuntimeError)
        shutil.rmtree(tmp, ignore_errors=True)  # what was written of it: space the retry needs
        free = shutil.disk_usage(root).free / 2**30
        raise EngineError("CheckpointWriteFailed", f"writing checkpoint v{version} under {root} failed ({e}); "
                          f"{free:.1f} GiB free on that disk") from e
    if os.path.isdir(final):  # an incomplete leftover (no state.json) from somebody else
        shutil.rmtree(final)
    os.rename(tmp, final)
    return final


def prune(root: str, keep_last: int, keep_every: int | None = None) -> None:
    """Removes the complete versions under `root` older than the newest `keep_last` (>= 1), but for
    those whose number `keep_every` divides. The newest is always kept: a fresh engine loads from
    it, and a retried update replays the result recorded in its state.json."""
    for name in os.listdir(root) if root and os.path.isdir(root) else []:
        if name.startswith(".pruned-"):  # a removal cut short
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    for version, folder in list_complete(root)[:-keep_last]:
        if keep_every is not None and version % keep_every == 0:
            continue
        doomed = os.path.join(root, f".pruned-v{version:06d}-{os.getpid()}")
        os.rename(folder, doomed)  # first out of sight of list_complete, then its files
        shutil.rmtree(doomed, ignore_errors=True)


def load_torch(folder: str, name: str, device, mmap: bool = False):
    """The torch file `name` in `folder`, or None. mmap: the file is mapped, not read, so only the
    tensors later copied out of it are read (a replica taking its part of an optimizer state)."""
    path = os.path.join(folder, name)
    return torch.load(path, map_location=device, weights_only=True, mmap=mmap) if os.path.isfile(path) else None
