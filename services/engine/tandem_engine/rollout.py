"""Rollout policies: a policy's weights on an engine that only generates (placement.<base>.rollout),
installed by version from the checkpoints its trainer engine writes.

A rollout policy holds no optimizer: no AdamW moments, no float32 masters, no scheduler or RNG state.
It loads like a trained policy (its newest complete checkpoint, else the base model, in the policy's
dtype), and `sync` (PROTOCOL.md) installs version v from `<checkpoint_root>/v<v>`: a LoRA adapter's
safetensors (megabytes), or a full model's weights, copied into the loaded tensors in place; or, with
`broadcast`, the same weights sent by the trainer engine (broadcast.py).

Rows in flight finish on the version they started with: before the weights change, the policy's
rows move onto a serving copy of the old version (serving.py, as an update with `overlap` does), which
is dropped once they finish. A full model whose copy does not fit waits for its rows instead
(Engine.advance). Versions only go forward: a sync to a version the policy has or has passed answers
with the version it holds, installed false.

The generated tokens equal the trainer engine's at the same version: the weights are the same bits
(a bf16 model's are its float32 masters rounded once, as the trainer's are; an adapter is float32 on
both).
"""

from __future__ import annotations

import glob
import os

import torch

from . import checkpoint
from .errors import EngineError
from .models import Backbone
from .precision import as_float32, name


class RolloutPolicy:
    role = "rollout"

    def __init__(self, key: str, kind: str, backbone: Backbone, adapter: str | None, checkpoint_root: str,
                 folder: str | None, dtype_note: str | None = None):
        """`folder`: the checkpoint the weights were loaded from, or None for version 0."""
        self.key, self.kind, self.backbone, self.adapter = key, kind, backbone, adapter
        self.checkpoint_root, self.dtype, self.dtype_note = checkpoint_root, name(backbone.dtype), dtype_note
        if kind == "lora":
            params = self.adapter_parameters()
            if not params:
                raise EngineError("LoadError", f"policy {key!r} has no adapter parameters (check lora.target_modules)")
            as_float32(params)  # as on its trainer: an adapter is float32 over a base of any dtype
            for p in params:
                p.requires_grad_(False)
        else:
            backbone.model.requires_grad_(False)
        self.version = int(checkpoint.read_state(folder)["version"]) if folder else 0
        self.source = self._source(folder) if folder else backbone.model_path

    def adapter_parameters(self) -> list[torch.nn.Parameter]:
        mine = f".{self.adapter}."
        return [p for n, p in self.backbone.model.named_parameters() if mine in n]

    def _source(self, folder: str) -> str:
        return os.path.join(folder, "adapter" if self.kind == "lora" else "model")

    def checkpoint_of(self, version: int) -> str:
        """The folder of version `version`'s complete checkpoint; CheckpointMissing if there is none."""
        folder = checkpoint.version_dir(self.checkpoint_root, version)
        if not os.path.isfile(os.path.join(folder, "state.json")):
            raise EngineError("CheckpointMissing", f"policy {self.key!r}: no complete checkpoint of version {version} "
                              f"at {folder} (a rollout engine reads its trainer's checkpoints: the same data folder)")
        return folder

    def read_checkpoint(self, version: int) -> tuple[dict[str, torch.Tensor], str]:
        """Version `version`'s weights from its checkpoint, loaded onto this policy's device: a LoRA
        adapter's (named as PEFT saves them) or a full model's (by its state_dict keys). -> the weights and
        the folder they came from. CheckpointMissing if there is no complete checkpoint of it."""
        from safetensors.torch import load_file

        source = self._source(self.checkpoint_of(version))
        device = str(self.backbone.device)
        if self.kind == "lora":
            return load_file(os.path.join(source, "adapter_model.safetensors"), device=device), source
        files = sorted(glob.glob(os.path.join(source, "*.safetensors")))
        if not files:
            raise EngineError("LoadError", f"{source}: no *.safetensors weights")
        weights: dict[str, torch.Tensor] = {}
        for f in files:
            weights.update(load_file(f, device=device))
        return weights, source

    def install(self, version: int, weights: dict[str, torch.Tensor], source: str) -> None:
        """Copy version `version`'s weights (read_checkpoint's, or a broadcast's: broadcast.py) into this
        policy's tensors, casting to their dtype; `source` says where they came from. The caller has moved
        the rows in flight off them."""
        with torch.no_grad():
            if self.kind == "lora":
                self._install_adapter(weights, source)
            else:
                self._install_model(weights, source)
        self.version, self.source = version, source

    def _install_adapter(self, weights: dict[str, torch.Tensor], source: str) -> None:
        from peft import set_peft_model_state_dict

        result = set_peft_model_state_dict(self.backbone.model, weights, adapter_name=self.adapter)
        if result.unexpected_keys:
            raise EngineError("LoadError", f"{source}: adapter weights this policy does not have: {result.unexpected_keys[:3]}")

    def _install_model(self, weights: dict[str, torch.Tensor], source: str) -> None:
        model = self.backbone.model
        missing, unexpected = model.load_state_dict(weights, strict=False)  # copy_: cast to the model's dtype
        state = model.state_dict()
        loaded = {t.data_ptr() for k, t in state.items() if k in weights}
        untied = [k for k in missing if state[k].data_ptr() not in loaded]  # a tied one was loaded as its twin
        if unexpected or untied:
            raise EngineError("LoadError", f"{source}: weights do not match the model (missing {untied[:3]}, "
                              f"unexpected {unexpected[:3]})")
