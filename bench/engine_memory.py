"""Benchmark: peak memory (RSS high-water mark) of the engine per specialisation setting, on CPU.

    .venv/bin/python bench/engine_memory.py [--size small] [--prompts 4] [--n 4] [--response 128] [--repeat 3]

Each setting runs in a fresh subprocess (`--child SETTING`): an in-process engine loads the setting's
policies, then runs one `update` per policy (the same batch for each: --prompts x --n samples with
--response random tokens, micro_batch_tokens 8192: engine_common.UPDATE), and reports /proc/self/status
VmHWM (peak RSS over the whole process life) and VmRSS (after the updates). Every setting runs twice:
with glibc malloc's defaults and with MALLOC_MMAP_THRESHOLD_=1048576 (large buffers mmapped, returned
to the OS on free):
  baseline:   python + torch + transformers (Llama) + peft + the engine imported, nothing loaded;
  L1:         one full model + its optimizer;
  L2 x2, x3:  one frozen base + 2 / 3 LoRA adapters (rank 8, all-linear), each with its optimizer;
  L3 x2:      two full models, each with its optimizer.
Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics

import engine_common as ec

SETTINGS = {  # name -> (kind, number of policies)
    "baseline": ("none", 0),
    "L1": ("full", 1),
    "L2 x2": ("lora", 2),
    "L2 x3": ("lora", 3),
    "L3 x2": ("full", 2),
}


def child(setting: str, path: str, args) -> dict:
    import torch

    kind, count = SETTINGS[setting]
    eng = ec.engine()
    if kind == "none":  # the baseline imports what loading a policy imports
        from peft import PeftModel  # noqa: F401
        from transformers import LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: F401
    root = ec.tempdir("bench-mem-ckpt-")
    for i in range(count):
        ec.load(eng, f"agent{i}", kind, path, os.path.join(root, str(i)), base="b")
    g = torch.Generator().manual_seed(0)
    for key, p in eng.policies.items():
        prompt_ids = [p.backbone.render(m) for m in ec.prompts(args.prompts) for _ in range(args.n)]
        samples = [{"sample_id": str(j), "prompt_ids": ids,
                    "response_ids": torch.randint(3, p.backbone.vocab_size, (args.response,), generator=g).tolist(),
                    "logprobs": [0.0] * args.response, "advantage": 1.0 if j % 2 else -1.0}
                   for j, ids in enumerate(prompt_ids)]
        ec.update(eng, key, 0, samples, p.checkpoint_root)  # micro_batch_tokens 8192 (ec.UPDATE)
    trainable = sum(sum(x.numel() for x in p.trainable_parameters()) for p in eng.policies.values())
    return {"hwm": ec.status_mb("VmHWM"), "rss": ec.status_mb("VmRSS"), "trainable": trainable}


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--response", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    args = ec.parse_with_child(ap, child)
    if args is None:
        return

    path, n_params, desc = ec.bench_model(args)
    # glibc's default malloc keeps freed activation buffers in its heap (dynamic mmap threshold up to
    # 32 MiB); a fixed 1 MiB threshold serves every large tensor by mmap and returns it on free.
    variants = {"default": {}, "mmap1m": {"MALLOC_MMAP_THRESHOLD_": str(2**20)}}
    runs = {(s, v): [] for s in SETTINGS for v in variants}
    for _ in range(args.repeat):
        for s in SETTINGS:
            for v, env in variants.items():
                runs[s, v].append(ec.run_child(__file__, s, path, ["--size", args.size, "--prompts", str(args.prompts),
                                                                 "--n", str(args.n), "--response", str(args.response)], env))
                print(s, v, runs[s, v][-1], flush=True)

    def col(s, v, k):
        xs = [r[k] for r in runs[s, v]]
        return f"{statistics.median(xs):,.0f}" + (f" ({min(xs):,.0f}-{max(xs):,.0f})" if max(xs) - min(xs) >= 1 else "")

    lines = [
        f"Machine: {ec.machine()}. {ec.versions('transformers', 'peft')}.",
        f"Model: {desc} ({n_params * 4 / 2**20:.0f} MiB of fp32 weights); LoRA rank "
        f"{ec.LORA['rank']} all-linear; AdamW.",
        f"Each setting in a fresh process (in-process engine): load the policies, then one `update` per policy on "
        f"{args.prompts} Plan-Path prompts x n={args.n} samples with {args.response} response tokens (default "
        f"micro_batch_tokens 8192, checkpoint written). MiB, median of {args.repeat} processes (min-max when they "
        f"differ). Peak = /proc/self/status VmHWM over the process life; RSS after = VmRSS after the updates. "
        f"Right: the same with `MALLOC_MMAP_THRESHOLD_=1048576` in the environment (glibc serves allocations "
        f">= 1 MiB by mmap and unmaps them on free, instead of keeping them in its heap).",
        "",
        "| setting | trainable parameters | peak | RSS after | peak, mmap threshold 1 MiB | RSS after, idem |",
        "|---|---|---|---|---|---|",
        *[f"| {s} | {runs[s, 'default'][0]['trainable'] / 1e6:.2f}M | {col(s, 'default', 'hwm')} | "
          f"{col(s, 'default', 'rss')} | {col(s, 'mmap1m', 'hwm')} | {col(s, 'mmap1m', 'rss')} |" for s in SETTINGS],
    ]
    ec.write_section(ec.section("engine_memory", args), lines)


if __name__ == "__main__":
    main()
