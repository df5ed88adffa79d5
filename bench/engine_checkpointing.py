"""Benchmark: the memory and time of one long sample's update, with and without the update's
gradient checkpointing (update.gradient_checkpointing), on CPU.

    .venv/bin/python bench/engine_checkpointing.py [--model-dir DIR | --size small] [--prompt 512] [--response 1536]

Each variant runs in a fresh subprocess (`--child VARIANT`): an in-process engine loads the model as
a full policy and takes one update on --samples samples of --prompt + --response random tokens (the
first update also creates AdamW's state), then the peak RSS is reset (/proc/self/clear_refs) and a
second update is measured: its peak RSS above the RSS before it (the update's activations, logits
and temporaries; the weights, gradients and AdamW state are there already) and its wall time. The
peak is also given per token, layer and hidden unit, the figure that carries over to another model
(times its bytes per value: 4 here in fp32, 2 in bf16). Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import time

import engine_common as ec

VARIANTS = {"plain": False, "checkpointing": True}


def child(variant: str, path: str, args) -> dict:
    import torch

    eng = ec.engine()
    root = ec.tempdir("bench-ckpt-")  # its checkpoints (two versions of the model and AdamW) go at exit
    ec.load(eng, "p", "full", path, root)
    bb = eng.policies["p"].backbone
    g = torch.Generator().manual_seed(0)
    samples = [{"sample_id": str(j), "prompt_ids": torch.randint(3, bb.vocab_size, (args.prompt,), generator=g).tolist(),
                "response_ids": torch.randint(3, bb.vocab_size, (args.response,), generator=g).tolist(),
                "logprobs": [0.0] * args.response, "advantage": 1.0 if j % 2 else -1.0} for j in range(args.samples)]
    update = dict(gradient_checkpointing=VARIANTS[variant], micro_batch_tokens=args.prompt + args.response)
    ec.update(eng, "p", 0, samples, root, **update)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    before = ec.status_mb("VmRSS")
    t0 = time.perf_counter()
    ec.update(eng, "p", 1, samples, root, **update)
    seconds = time.perf_counter() - t0
    cfg = bb.model.config
    return {"peak_mb": ec.status_mb("VmHWM") - before, "seconds": seconds, "layers": cfg.num_hidden_layers,
            "hidden": cfg.hidden_size, "vocab": cfg.vocab_size}


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--response", type=int, default=1536)
    ap.add_argument("--samples", type=int, default=1)
    args = ec.parse_with_child(ap, child)
    if args is None:
        return

    path, n_params, desc = ec.bench_model(args)
    runs = {}
    for v in VARIANTS:
        # Large buffers by mmap, returned on free: the peak is what the update held at once.
        runs[v] = ec.run_child(__file__, v, path, ["--prompt", str(args.prompt), "--response", str(args.response),
                                                   "--samples", str(args.samples)], {"MALLOC_MMAP_THRESHOLD_": str(2**20)})
        print(v, runs[v], flush=True)

    tokens = args.samples * (args.prompt + args.response)
    r = runs["plain"]

    def per_value(v):  # bytes per token, layer and hidden unit
        return runs[v]["peak_mb"] * 2**20 / (tokens * r["layers"] * r["hidden"])

    lines = [
        f"Machine: {ec.machine()}. {ec.versions('torch', 'transformers')}.",
        f"Model: {desc}.",
        f"One update (one optimizer step) on {args.samples} sample(s) of {args.prompt} prompt + {args.response} "
        f"response tokens ({tokens} tokens), each variant in a fresh process, measured on its second update "
        f"(AdamW's state already made). Peak = the update's RSS high-water mark above the RSS before it "
        f"(MALLOC_MMAP_THRESHOLD_=1048576). Per value = peak bytes / (tokens x layers x hidden), fp32 here.",
        "",
        "| update.gradient_checkpointing | peak above the weights and optimizer (MiB) | bytes per token, layer and hidden unit | update s |",
        "|---|---|---|---|",
        *[f"| {'true' if VARIANTS[v] else 'false'} | {runs[v]['peak_mb']:,.0f} | {per_value(v):.1f} | {runs[v]['seconds']:.1f} |"
          for v in VARIANTS],
        "",
        f"Peak {runs['checkpointing']['peak_mb'] / runs['plain']['peak_mb']:.2f}x, time "
        f"{runs['checkpointing']['seconds'] / runs['plain']['seconds']:.2f}x with checkpointing.",
    ]
    ec.write_section(ec.section("engine_checkpointing", args), lines)


if __name__ == "__main__":
    main()
