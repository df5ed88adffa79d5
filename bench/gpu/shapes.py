"""Real-size model shapes with random weights for bench/gpu/check.py, made on the device itself.

No hub and no weight files: each shape is a transformers config (the published model's sizes, and
its vocabulary) with the project's ChatML tokenizer (services/engine/make_tiny_model.py; ids past
its 1,024 tokens decode to nothing, which a throughput bench does not mind). `model_folder` writes
config, tokenizer and an empty weights file, so that the engine's own `load` op accepts the folder;
`serve_random_weights` then makes the engine build such a folder's model straight on the device,
randomly initialised from a fixed seed, instead of reading weights (a 16 GB file would cost a minute
of the device's time each way). Everything else the engine does with the model is its own code.
"""

from __future__ import annotations

import json
import os
import time

import engine_common as ec

# name -> (model type, config). Sizes of the published models (rope settings left at their defaults:
# they do not change the cost of a step).
SHAPES = {
    "smollm2-135m": ("llama", dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                                   num_attention_heads=9, num_key_value_heads=3, head_dim=64, vocab_size=49152,
                                   tie_word_embeddings=True)),
    "qwen3-1.7b": ("qwen3", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                                 num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                                 tie_word_embeddings=True)),
    "llama-8b": ("llama", dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                               num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=128256,
                               tie_word_embeddings=False)),
}
# --smoke: the same three kinds (tied Llama, tied Qwen3 with a vocabulary past the tokenizer's, untied
# Llama) in miniature.
_TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16)
SMOKE_SHAPES = {
    "smollm2-135m": ("llama", {**_TINY, "vocab_size": 1024, "tie_word_embeddings": True}),
    "qwen3-1.7b": ("qwen3", {**_TINY, "vocab_size": 2048, "tie_word_embeddings": True}),
    "llama-8b": ("llama", {**_TINY, "vocab_size": 2048, "tie_word_embeddings": False}),
}

_RANDOM: dict[str, int] = {}  # model folder (real path) -> seed of its random weights


def tokenizer_folder() -> str:
    """The project's ChatML tokenizer (with a tiny model beside it), built once per process."""
    if not hasattr(tokenizer_folder, "path"):
        tokenizer_folder.path = ec.build_model("tiny")[0]
    return tokenizer_folder.path


def model_folder(name: str, smoke: bool, seed: int = 0) -> str:
    """A folder the engine loads as shape `name`: config.json, tokenizer, an empty weights file.
    Its weights are made by `serve_random_weights` at load time."""
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoTokenizer, GenerationConfig

    kind, sizes = (SMOKE_SHAPES if smoke else SHAPES)[name]
    tok = AutoTokenizer.from_pretrained(tokenizer_folder(), local_files_only=True)
    eot, im_end = tok.convert_tokens_to_ids("<|endoftext|>"), tok.convert_tokens_to_ids("<|im_end|>")
    config = AutoConfig.for_model(kind, **sizes, max_position_embeddings=8192, bos_token_id=eot,
                                  eos_token_id=[im_end, eot], pad_token_id=eot)
    config.architectures = [{"llama": "LlamaForCausalLM", "qwen3": "Qwen3ForCausalLM"}[kind]]
    out = ec.tempdir(f"gpucheck-{name}-")
    config.save_pretrained(out)
    GenerationConfig(bos_token_id=eot, eos_token_id=[im_end, eot], pad_token_id=eot).save_pretrained(out)
    tok.save_pretrained(out)
    save_file({}, os.path.join(out, "random-weights.safetensors"),
              metadata={"format": "pt", "note": "no weights: bench/gpu/shapes.py builds them at load time"})
    _RANDOM[os.path.realpath(out)] = seed
    return out


def serve_random_weights() -> None:
    """Make the engine's model loading (tandem_engine.models.load_pretrained, which the `load` op
    calls) build the folders of `model_folder` on the device with random weights."""
    from tandem_engine import models

    if getattr(models.load_pretrained, "serves_random_weights", False):
        return
    real = models.load_pretrained

    def load_pretrained(path, dtype, device):
        seed = _RANDOM.get(os.path.realpath(path))
        if seed is None:
            return real(path, dtype, device)
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        models.inspect(path)
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        torch.manual_seed(seed)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, dtype=dtype)
        return model.eval(), AutoTokenizer.from_pretrained(path, local_files_only=True)

    load_pretrained.serves_random_weights = True
    models.load_pretrained = load_pretrained


def weight_bytes_per_step(model) -> int:
    """Bytes of weights one decoding step reads: every parameter, less an input embedding that is not
    also the output head (a step reads only its rows of it)."""
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    if head is not None and head.weight is not emb.weight:
        total -= emb.weight.numel() * emb.weight.element_size()
    return total


def copy_bandwidth(device, smoke: bool) -> float:
    """Bytes per second a device-to-device copy moves, counting bytes read and bytes written (the best
    of a few copies of 1 GiB; 64 MiB in --smoke)."""
    import torch

    n = (64 if smoke else 1024) * 2**20
    src = torch.empty(n, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    best = float("inf")
    for _ in range(6):
        sync(device)
        t0 = time.perf_counter()
        dst.copy_(src)
        sync(device)
        best = min(best, time.perf_counter() - t0)
    return 2 * n / best


def sync(device) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def describe(name: str, smoke: bool) -> str:
    kind, s = (SMOKE_SHAPES if smoke else SHAPES)[name]
    return json.dumps({"type": kind, **s}, separators=(",", ":"))
