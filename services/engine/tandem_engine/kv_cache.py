"""The decode loop's KV cache: the prompt prefill's cache, spread over the rows that share each prompt,
in buffers preallocated to prompt + new tokens.

transformers' default DynamicCache appends every step's keys and values with torch.cat, which copies
each layer's whole cache once per generated token (a quarter of the CPU decode time on the bench
model). A PreallocatedLayer writes the new column in place instead and hands attention a view of the
filled columns, so attention still reads exactly as many keys as with the DynamicCache.
"""

from __future__ import annotations

import torch
from transformers.cache_utils import Cache, CacheLayerMixin, DynamicLayer


class PreallocatedLayer(CacheLayerMixin):
    """One layer's keys and values in [B, kv_heads, capacity, head_dim] buffers, filled up to `length`."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, length: int):
        super().__init__()
        self.keys, self.values, self.length = keys, values, length
        self.dtype, self.device = keys.dtype, keys.device
        self.is_initialized = True

    def lazy_initialization(self, key_states, value_states) -> None:  # built filled: never called
        raise AssertionError("PreallocatedLayer is created from a prefill cache")

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        end = self.length + key_states.shape[-2]
        if end > self.keys.shape[-2]:
            raise RuntimeError(f"KV cache full: {end} > {self.keys.shape[-2]} columns")
        self.keys[:, :, self.length: end] = key_states
        self.values[:, :, self.length: end] = value_states
        self.length = end
        return self.keys[:, :, :end], self.values[:, :, :end]

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.length + query_length, 0  # as DynamicLayer: the mask spans the filled columns + the new ones

    def get_seq_length(self) -> int:
        return self.length

    def get_max_length(self) -> int:
        return self.keys.shape[-2]


def spread_prefill(cache: Cache, rows: torch.Tensor, new_tokens: int) -> Cache:
    """Turn the prefill cache of U distinct prompts into the cache of B rows, in place.

    rows: [B] index of each row's prompt in the prefill batch (the n samples of a request share one).
    Full-attention layers (DynamicLayer) become PreallocatedLayers with room for `new_tokens` more
    columns; other layer kinds (sliding windows, ...) keep their own class, with their rows selected.
    """
    for i, layer in enumerate(cache.layers):
        if type(layer) is DynamicLayer:
            cache.layers[i] = PreallocatedLayer(_preallocate(layer.keys, rows, new_tokens),
                                                _preallocate(layer.values, rows, new_tokens), layer.keys.shape[-2])
        else:
            layer.batch_select_indices(rows)
    return cache


def _preallocate(prefill: torch.Tensor, rows: torch.Tensor, new_tokens: int) -> torch.Tensor:
    U, H, P, D = prefill.shape
    buf = torch.empty((rows.numel(), H, P + new_tokens, D), dtype=prefill.dtype, device=prefill.device)
    buf[:, :, :P] = prefill[rows]  # row b gets the prompt columns of prefill row rows[b]
    return buf
