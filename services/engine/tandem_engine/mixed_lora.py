"""Mixed-adapter LoRA batches in one pass per layer: row b runs through base + adapter_b.

PEFT's own mixed batches (forward(..., adapter_names=[...])) loop over the batch's adapters in every
LoRA layer, gathering each adapter's rows (x[rows]) and scattering its output back (result[rows] += ...):
per layer and decoding step a handful of small indexing ops per adapter, which on CPU cost more than
the rank-r matmuls themselves. Here each LoRA Linear computes every adapter's projection for every row
and masks per row:

    delta = ((x @ A_cat^T) * S) @ B_cat^T
    A_cat = [A_1; ...; A_k]  (k*r x in),   B_cat = [B_1 ... B_k]  (out x k*r)
    S[b, j] = scaling_a if column j belongs to adapter a = adapter of row b, else 0

so row b gets scaling_a * B_a A_a x_b: the other adapters' columns are multiplied by exact zeros (the
result differs from PEFT's only in float summation order). The k*r extra columns are negligible next
to the base matmul. The base layers run alone via PEFT's "__base__" adapter name, and a forward hook
on each LoRA Linear adds the delta.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch


@contextmanager
def lora_rows(model, adapters: list[str | None]):
    """Within: forward(**kwargs) runs row b of the batch through base + adapters[b].
    Yields the kwargs for the model's forward ({} on a plain model)."""
    if adapters[0] is None:  # a full model: no adapters
        yield {}
        return
    layers = _lora_linears(model, set(adapters))
    if layers is None:  # a layer kind this does not handle: PEFT's own mixed batch
        yield {"adapter_names": list(adapters)}
        return
    hooks = [m.register_forward_hook(_delta_hook(m, adapters)) for m in layers]
    try:
        yield {"adapter_names": ["__base__"] * len(adapters)}
    finally:
        for h in hooks:
            h.remove()


def _lora_linears(model, names: set[str]):
    """The LoRA layers of `model` that hold one of `names`, if all are plain LoRA Linears (no DoRA or other
    variant, not merged); else None."""
    from peft.tuners.lora.layer import Linear
    from peft.tuners.tuners_utils import BaseTunerLayer

    layers = [m for m in model.modules() if isinstance(m, BaseTunerLayer) and names & set(getattr(m, "lora_A", {}))]
    plain = all(type(m) is Linear and not m.merged and not (names & set(m.lora_variant)) for m in layers)
    return layers if plain else None


def _delta_hook(layer, adapters: list[str]):
    names = [a for a in dict.fromkeys(adapters) if a in layer.lora_A]  # a policy may not target this layer
    A = torch.cat([layer.lora_A[a].weight.detach() for a in names])          # [k*r, in]
    B = torch.cat([layer.lora_B[a].weight.detach() for a in names], dim=1)   # [out, k*r]
    # S[b, j]: adapter of row b's scaling on its own rank columns, 0 elsewhere.
    col = torch.cat([torch.full((layer.r[a],), i) for i, a in enumerate(names)]).to(A.device)
    row = torch.tensor([names.index(a) if a in names else -1 for a in adapters], device=A.device)
    scale = torch.tensor([layer.scaling[a] for a in names], dtype=A.dtype, device=A.device)
    S = (row[:, None] == col[None, :]).to(A.dtype) * scale[row.clamp(min=0)][:, None]  # [rows, k*r]

    def hook(module, args, output):
        x = args[0]
        s = S.view(S.shape[0], *[1] * (x.dim() - 2), S.shape[1])  # broadcast over the sequence dim
        return output + (((x.to(A.dtype) @ A.T) * s) @ B.T).to(output.dtype)

    return hook
