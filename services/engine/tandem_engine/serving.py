"""Serving copies: a policy's current weights kept for generation while an update trains the next
version in place (an `update` with `overlap`: asynchronous training, PROTOCOL.md), or while a `sync`
installs the next version on a rollout engine (rollout.py).

An update moves the weights at each optimizer step, and rows decoding with them would then mix two
versions in one sample. So, before its first step, the version being trained is copied, and every
row of that policy (running, prefilled, or waiting) and every row that starts during the update
decodes with the copy and is answered with its version. When the update ends, new rows use the new
weights; the copy is dropped once the last row using it finishes.

* lora policy: the copy is a second adapter in the same PeftModel (`<adapter>_serving_v<version>`),
  the adapter's weights only (rank x (in + out) per layer: megabytes). Rows of the copy decode in the
  same batch as the base's other adapters (mixed_lora.py).
* full policy: the copy is a second model (its parameters' bytes again; Qwen3-8B in bf16: 16 GB). It
  is made only if that leaves at least as much memory free as it takes (COPY_FREE_SHARE); otherwise
  the update runs as without `overlap` (it waits for the rows in flight, and generation waits for it),
  and says why in its result.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import torch

from .kv_cache import free_bytes
from .models import Backbone

# A full model is copied only if the copy takes at most this share of the memory free: the rest stays
# for the update's activations and gradients and the decode batches' KV cache.
COPY_FREE_SHARE = 0.5


@dataclass(eq=False)
class ServingCopy:
    """Version `version` of policy `key`, as generation sees it: `backbone` and, for lora, `adapter`."""
    key: str
    version: int
    backbone: Backbone
    adapter: str | None
    bytes: int
    kind: str  # "adapter" | "model"


def make(policy, scheduler) -> ServingCopy | str:
    """A serving copy of `policy` at its version, its rows in `scheduler` moved onto it; or, when a full
    model's copy does not fit, the reason (a string) and nothing is copied."""
    if policy.kind == "lora":
        name = f"{policy.adapter}_serving_v{policy.version}"
        size = _copy_adapter(policy.backbone, policy.adapter, name)
        scheduler.retarget(policy.backbone, policy.backbone, policy.adapter, name)
        return ServingCopy(policy.key, policy.version, policy.backbone, name, size, "adapter")
    too_big = fits(policy)
    if too_big is not None:
        return f"{too_big}: the update ran alone"
    bb = policy.backbone
    model = copy.deepcopy(bb.model).eval().requires_grad_(False)
    served = Backbone(model, bb.tokenizer, bb.model_path, bb.device)
    scheduler.retarget(bb, served, None, None)
    return ServingCopy(policy.key, policy.version, served, None, _bytes(bb), "model")


def fits(policy) -> str | None:
    """None if a serving copy of the policy fits (an adapter always does), else why not."""
    if policy.kind == "lora":
        return None
    bb = policy.backbone
    size, free = _bytes(bb), free_bytes(bb.device)
    if size <= COPY_FREE_SHARE * free:
        return None
    return (f"a copy of the model takes {size / 2**30:.2f} GB, more than {COPY_FREE_SHARE:.0%} of the "
            f"{free / 2**30:.2f} GB free")


def _bytes(bb: Backbone) -> int:
    return sum(t.numel() * t.element_size() for t in [*bb.model.parameters(), *bb.model.buffers()])


def in_use(served: ServingCopy, scheduler) -> bool:
    """Do rows (waiting, prefilled or decoding) still use the copy?"""
    return any(r.adapter == served.adapter for r in scheduler.rows_of(served.backbone))


def drop(served: ServingCopy) -> None:
    """Free the copy (no row uses it any more)."""
    if served.kind == "adapter":
        from .policy import detach_adapter

        detach_adapter(served.backbone, served.adapter)


def _copy_adapter(bb: Backbone, source: str, name: str) -> int:
    """Add adapter `name` to the backbone's PeftModel, its weights equal to `source`'s and frozen.
    -> its bytes."""
    model = bb.model
    cuda = [bb.device] if bb.device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda), warnings.catch_warnings():  # add_adapter draws an init
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*")
        model.add_adapter(name, copy.deepcopy(model.peft_config[source]))
    params = dict(model.named_parameters())
    size = 0
    with torch.no_grad():
        for n, p in params.items():
            if f".{name}." in n:
                src = params[n.replace(f".{name}.", f".{source}.")]
                p.data = p.data.to(src.dtype)  # the trained adapter's dtype (float32: precision.py), bit for bit
                p.copy_(src)
                p.requires_grad_(False)
                size += p.numel() * p.element_size()
    return size
