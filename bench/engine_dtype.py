"""Benchmark: float32 against bfloat16 (mixed precision, precision.py), side by side on one machine.

    .venv/bin/python bench/engine_dtype.py --model-dir .tools/models/smollm2-135m-instruct [--prompts 4] [--n 4]
        [--tokens 64] [--samples 8] [--response 128] [--repeat 3]

Each run is a fresh process (`--child DTYPE`), float32 and bfloat16 alternating (A B A B ...), that loads
the model as one full policy in that dtype and times, in this order:
  generate: --prompts Plan-Path prompts x --n rows, --tokens new tokens each (no stop), after a 2-token warm-up;
  update:   one PPO step (engine_common.UPDATE) on --samples samples of --response random tokens on
            those prompts, after one untimed update (first-call allocations): the engine's update_s
            (forward, backward, AdamW), and apart from it the checkpoint's writing;
and reports the process's peak RSS (VmHWM). It prints and writes the ratios bf16 / fp32 (tokens/s,
update time, peak memory) with the CPU's bf16 flags into its section of bench/RESULTS.md. On a CPU
without bf16 units bf16 runs emulated (TANDEM_ALLOW_EMULATED_BF16=1, which this bench sets): the
section says so, and its ratio says what `auto` avoids there.
"""

from __future__ import annotations

import argparse
import statistics
import time

import engine_common as ec

DTYPES = ("float32", "bfloat16")
FLAGS = ("avx512_bf16", "amx_bf16", "amx_tile", "avx512f", "avx2")


def child(dtype: str, path: str, args) -> dict:
    import torch

    eng = ec.engine()
    root = ec.tempdir("bench-dtype-ckpt-")
    loaded = ec.load(eng, "p", "full", path, root, dtype=dtype)
    ec.no_stop_tokens(eng)
    msgs = ec.prompts(args.prompts)
    gen = lambda tokens: ec.call(eng, "generate", requests=[  # noqa: E731
        ec.request("p", m, n=args.n, seed=i, max_new_tokens=tokens) for i, m in enumerate(msgs)])
    gen(2)
    t0 = time.perf_counter()
    gen(args.tokens)
    gen_s = time.perf_counter() - t0
    bb = eng.policies["p"].backbone
    g = torch.Generator().manual_seed(0)
    samples = [{"sample_id": str(j), "prompt_ids": bb.render(msgs[j % len(msgs)]),
                "response_ids": torch.randint(3, bb.vocab_size, (args.response,), generator=g).tolist(),
                "logprobs": [-5.0] * args.response, "advantage": 1.0 if j % 2 else -1.0} for j in range(args.samples)]
    ec.update(eng, "p", 0, samples, root)
    t0 = time.perf_counter()
    r = ec.update(eng, "p", 1, samples, root)
    update_s = time.perf_counter() - t0
    # update_s: the step (forward, backward, AdamW); the rest of the op writes the checkpoint.
    return {"dtype": loaded["dtype"], "gen_tok_s": len(msgs) * args.n * args.tokens / gen_s, "update_s": r["update_s"],
            "checkpoint_s": update_s - r["update_s"], "hwm_mb": ec.status_mb("VmHWM"), "threads": torch.get_num_threads()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--response", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    args = ec.parse_with_child(ap, child)
    if args is None:
        return
    from tandem_engine import precision

    path, _, desc = ec.bench_model(args)
    flags = precision.cpu_flags() or set()
    units = bool(flags & set(precision.BF16_FLAGS))
    argv = ["--prompts", str(args.prompts), "--n", str(args.n), "--tokens", str(args.tokens),
            "--samples", str(args.samples), "--response", str(args.response)]
    env = {"TANDEM_ALLOW_EMULATED_BF16": "1"}
    runs: dict[str, list[dict]] = {d: [] for d in DTYPES}
    for i in range(args.repeat):
        for d in DTYPES:
            ec.wait_idle()
            runs[d].append(ec.run_child(__file__, d, path, argv, env))
            r = runs[d][-1]
            print(f"  run {i + 1} {d}: generate {r['gen_tok_s']:.1f} tok/s, update step {r['update_s']:.2f} s, "
                  f"peak {r['hwm_mb']:.0f} MiB", flush=True)
    med = {d: {k: statistics.median(r[k] for r in runs[d]) for k in ("gen_tok_s", "update_s", "checkpoint_s", "hwm_mb")}
           for d in DTYPES}
    ratio = {k: med["bfloat16"][k] / med["float32"][k] for k in ("gen_tok_s", "update_s", "hwm_mb")}
    lines = [
        f"Machine: {ec.machine()}; CPU flags: {', '.join(f for f in FLAGS if f in flags) or 'none of ' + ', '.join(FLAGS)}"
        f" ({'bf16 units' if units else 'no bf16 units: bf16 runs emulated'}); {runs['float32'][0]['threads']} torch thread(s).",
        f"Model: {desc}. Generate: {args.prompts} prompts x {args.n} rows x {args.tokens} new tokens; update: one PPO "
        f"step on {args.samples} samples of {args.response} response tokens. Each run a fresh process, float32 and "
        f"bfloat16 alternating, {args.repeat} each; medians.",
        "",
        "| dtype | generate tok/s | update step s | its checkpoint s | peak RSS MiB |",
        "|---|---|---|---|---|",
        *[f"| {d} | {med[d]['gen_tok_s']:.1f} | {med[d]['update_s']:.2f} | {med[d]['checkpoint_s']:.2f} | "
          f"{med[d]['hwm_mb']:.0f} |" for d in DTYPES],
        f"| bf16 / fp32 | **{ratio['gen_tok_s']:.2f}x** | {ratio['update_s']:.2f}x the time "
        f"(**{1 / ratio['update_s']:.2f}x** the speed) | | {ratio['hwm_mb']:.2f}x |",
        "",
        "Runs: " + "; ".join(f"{d} " + ", ".join(f"{r['gen_tok_s']:.1f} tok/s / {r['update_s']:.2f} s" for r in runs[d])
                            for d in DTYPES) + ".",
    ]
    ec.write_section(ec.section("engine_dtype", args), lines)


if __name__ == "__main__":
    main()
