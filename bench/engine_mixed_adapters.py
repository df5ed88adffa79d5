"""Benchmark: one mixed-adapter generate batch vs one generate call per LoRA policy.

    .venv/bin/python bench/engine_mixed_adapters.py [--size small] [--adapters 3] [--n 8] [--tokens 64]
                                                    [--repeat 5]

--adapters agents, each a lora policy on one shared base (rank 8, all-linear), each with its own
Plan-Path prompt and n samples. Timed in an in-process engine (Engine.handle), alternating:
  mixed:    one `generate` op with one request per policy (one decode batch of adapters x n rows,
            each row through base + its own adapter: PEFT adapter_names=[...]);
  separate: one `generate` op per policy, one after the other (adapters decode batches of n rows).
Same seeds and no stop tokens: every row generates exactly --tokens tokens in both modes (checked).
Then both modes again with max_new_tokens=1, to split the time into prompt prefill and decoding, and
the mixed call with n=1 too (one row per prompt: the n rows of a request share one prefill, so this
should cost about as much as the n-row call).
Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse

import engine_common as ec


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--adapters", type=int, default=3)
    ap.add_argument("--n", type=int, default=8, help="samples (rows) per agent")
    ap.add_argument("--tokens", type=int, default=64, help="new tokens per row")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    path, n_params, desc = ec.bench_model(args)
    eng = ec.engine()
    keys = [f"agent{i}" for i in range(args.adapters)]
    for k in keys:
        ec.load(eng, k, "lora", path, base="b")
    ec.no_stop_tokens(eng)
    msgs = ec.prompts(args.adapters)
    reqs = [ec.request(k, m, n=args.n, seed=i, temperature=1.0, max_new_tokens=args.tokens, stop=[])
            for i, (k, m) in enumerate(zip(keys, msgs))]
    lens = [len(eng.policies[k].backbone.render(m)) for k, m in zip(keys, msgs)]

    def run(batches, max_new, n=args.n):
        def fn():
            results = [ec.call(eng, "generate", requests=[{**r, "max_new_tokens": max_new, "n": n} for r in b])["results"]
                       for b in batches]
            return sum(len(s["response_ids"]) for rs in results for x in rs for s in x["samples"])
        return fn

    ec.call(eng, "generate", requests=[{**r, "max_new_tokens": 2} for r in reqs])  # warm-up
    times, tokens, discarded = ec.measure({"mixed": run([reqs], args.tokens),
                                           "separate": run([[r] for r in reqs], args.tokens)}, args.repeat)
    cpu = {k: ec.stats(v)["median"] for k, v in ec.CPU_SECONDS.items()}  # before the next measure adds to it
    # The same with one new token: (nearly) only the prompt prefill, whose work batching does not reduce.
    # And with n=1: one row per prompt (the n rows of a request share one prefill: about the same cost).
    prefill, _, _ = ec.measure({"mixed": run([reqs], 1), "separate": run([[r] for r in reqs], 1),
                                "mixed n=1": run([reqs], 1, n=1)}, args.repeat)
    expected = args.adapters * args.n * args.tokens
    assert all(t == expected for k in tokens for t in tokens[k]), (tokens, expected)

    med = {k: ec.stats(v)["median"] for k, v in times.items()}
    best = {k: ec.stats(v)["best"] for k, v in times.items()}
    lines = [
        f"Machine: {ec.machine()}. {ec.versions('transformers', 'peft')}.",
        f"Model: {desc}; {args.adapters} LoRA adapters (rank {ec.LORA['rank']}, "
        f"all-linear) on the one shared base.",
        f"Batch: {args.adapters} agents x n={args.n} rows, each agent its own Plan-Path prompt "
        f"({min(lens)}-{max(lens)} tokens), {args.tokens} new tokens per row (no stop: {expected} tokens per mode), "
        f"temperature 1. In-process `Engine.handle` generate ops. "
        f"{ec.runs_note(args.repeat, discarded)}.",
        "",
        "| mode | wall s best / median / worst | tokens/s (median) | CPU s of the bench process (median) |",
        "|---|---|---|---|",
        f"| one mixed-adapter batch ({args.adapters * args.n} rows) | {ec.spread(times['mixed'])} | "
        f"{expected / med['mixed']:.0f} | {cpu['mixed']:.1f} |",
        f"| one call per adapter ({args.adapters} x {args.n} rows) | {ec.spread(times['separate'])} | "
        f"{expected / med['separate']:.0f} | {cpu['separate']:.1f} |",
        "",
        f"**mixed / separate speed-up: {med['separate'] / med['mixed']:.2f}x (medians), "
        f"{best['separate'] / best['mixed']:.2f}x (bests)**; target >= 1.5x. In CPU time of the bench process "
        f"(less sensitive to other processes than wall time): {cpu['separate'] / cpu['mixed']:.2f}x.",
        "",
        f"Where the time goes: the same calls with max_new_tokens=1 (prompt prefill + one step) take "
        f"{ec.spread(prefill['mixed'])} s mixed and {ec.spread(prefill['separate'])} s separate (best / median / "
        f"worst); the remaining {args.tokens - 1} decoding steps take {med['mixed'] - ec.stats(prefill['mixed'])['median']:.2f} s "
        f"mixed vs {med['separate'] - ec.stats(prefill['separate'])['median']:.2f} s separate (medians): a decode speed-up "
        f"of {(med['separate'] - ec.stats(prefill['separate'])['median']) / (med['mixed'] - ec.stats(prefill['mixed'])['median']):.2f}x. "
        f"The {args.n} rows of a request share one prefill of its prompt: the mixed call with n=1 and "
        f"max_new_tokens=1 takes {ec.spread(prefill['mixed n=1'])} s, against "
        f"{ec.stats(prefill['mixed'])['median']:.3f} s (median) with n={args.n}.",
    ]
    ec.write_section(ec.section("engine_mixed_adapters", args), lines)


if __name__ == "__main__":
    main()
