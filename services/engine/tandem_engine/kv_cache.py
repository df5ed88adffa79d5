"""The decode loop's KV cache: the prompt prefill's cache, spread over the rows that share each prompt,
in buffers preallocated to prompt + new tokens; and the memory those buffers may take (`kv_budget`).

transformers' default DynamicCache appends every step's keys and values with torch.cat, which copies
each layer's whole cache once per generated token (a quarter of the CPU decode time on the bench
model). A PreallocatedLayer writes the new column in place instead and hands attention a view of the
filled columns, so attention still reads exactly as many keys as with the DynamicCache.
"""

from __future__ import annotations

import os

import torch
from transformers.cache_utils import Cache, CacheLayerMixin, DynamicLayer


def _env_gb(name: str) -> int | None:
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        gb = float(raw)
    except ValueError:
        gb = -1.0
    if not gb > 0:
        raise ValueError(f"{name} must be a positive number of GB, not {raw!r}")
    return int(gb * 2**30)


KV_CACHE_BYTES = _env_gb("TANDEM_KV_CACHE_GB")  # the decode batches' KV buffers, in all (None: KV_FREE_SHARE)
# Unset, the budget is this share of the memory free now plus what the batches already hold: the rest
# is for a copy of the cache when a batch is rebuilt (old and new buffers both exist for a moment),
# the prefills' caches and the activations.
KV_FREE_SHARE = 0.45


def kv_bytes_per_token(model) -> int:
    """Bytes of keys and values one token of one row takes in the cache, all layers (from the config)."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    itemsize = model.get_input_embeddings().weight.element_size()
    return 2 * cfg.num_hidden_layers * kv_heads * head_dim * itemsize


def kv_budget(device: torch.device, held: int) -> int:
    """Bytes the decode batches' KV buffers may take in all on `device`, `held` being what they take now:
    TANDEM_KV_CACHE_GB, or KV_FREE_SHARE of the memory free plus `held`. A batch that would outgrow it takes
    fewer newcomers (the rest wait for rows to finish), so that a long-response config (K=8, 8k-token
    responses, tens of rows) runs within the device's memory instead of failing with out-of-memory."""
    if KV_CACHE_BYTES is not None:
        return KV_CACHE_BYTES
    return int(KV_FREE_SHARE * (free_bytes(device) + held))


def free_bytes(device: torch.device) -> int:
    """The memory free on `device` now: on a GPU what the driver reports plus torch's cached blocks
    (reusable), on the CPU the host's available memory."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return _mem_available()


def _mem_available() -> int:
    """The host's available memory (Linux's MemAvailable), or 8 GiB where /proc/meminfo is missing."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * 2**30


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
