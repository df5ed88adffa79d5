"""Benchmark: continuous batching within a KV-cache budget (TANDEM_KV_CACHE_GB), on CPU.

    .venv/bin/python bench/engine_kv_budget.py [--size small] [--prompts 8] [--n 8] [--tokens 256]
                                               [--fractions 1,0.5,0.25] [--repeat 2]

The reference's rollout shape in small: --prompts requests of n rows each (K candidates of a turn),
all submitted at once to the in-process engine (as the policy worker's concurrent turns arrive), no
stop (every row generates --tokens). First with no binding budget, which gives the KV buffers' peak;
then with the budget at each fraction of that peak. Per run: wall time, tokens/s, decoding steps,
rows per step, the KV buffers' peak between steps, and how often newcomers waited for memory.
What carries over to a GPU is that the peak stays within the budget and the rows per step it leaves;
the tokens/s do not (on a CPU a step's cost grows with its rows; on a GPU decoding is bound by
reading the weights, and fewer rows per step cost nearly proportionally fewer tokens/s).
Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import time

import engine_common as ec


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--n", type=int, default=8, help="rows per request (K)")
    ap.add_argument("--tokens", type=int, default=256, help="new tokens per row")
    ap.add_argument("--fractions", default="1,0.5,0.25", help="budgets, as fractions of the unbound peak")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    from tandem_engine import kv_cache

    eng, bb, reqs, desc = ec.generating_engine(args)

    def run(budget: int | None) -> dict:
        kv_cache.KV_CACHE_BYTES = budget
        before = ec.call(eng, "stats")
        eng.scheduler.stats["kv_cache_peak_bytes"] = 0
        boxes = [[] for _ in reqs]
        t0 = time.perf_counter()
        for i, r in enumerate(reqs):
            eng.submit({"id": i, "op": "generate", "requests": [r]}, boxes[i].append)
        while not all(boxes):
            eng.tick()
        wall = time.perf_counter() - t0
        assert all(b[0]["ok"] for b in boxes), [b[0] for b in boxes if not b[0]["ok"]]
        after = ec.call(eng, "stats")
        steps = after["steps"] - before["steps"]
        tokens = after["generated_tokens"] - before["generated_tokens"]
        return {"wall": wall, "tokens": tokens, "steps": steps, "waits": after["memory_waits"] - before["memory_waits"],
                "peak": after["kv_cache_peak_bytes"]}

    run(None)  # warm-up
    unbound = run(None)
    rows = [(None, unbound)]
    for f in (float(x) for x in args.fractions.split(",")):
        budget = int(f * unbound["peak"])
        for _ in range(args.repeat):
            rows.append((budget, run(budget)))
    kv_cache.KV_CACHE_BYTES = None

    mib = 2**20
    lines = [
        f"Machine: {ec.machine()}. {ec.versions('transformers')}.",
        f"Model: {desc}; {bb.kv_bytes_per_token} bytes of KV cache per token and row.",
        f"Work: {args.prompts} Plan-Path prompts as {args.prompts} requests of n={args.n} rows, submitted at once, "
        f"{args.tokens} new tokens per row (no stop), temperature 1; the in-process engine "
        f"(`Engine.submit` + `tick`). Budgets as fractions of the KV buffers' peak with none binding "
        f"({unbound['peak'] / mib:.1f} MiB); one run without, then {args.repeat} per budget.",
        "",
        "| budget MiB | wall s | tokens/s | decoding steps | rows per step | KV peak MiB | peak / budget | waits for memory |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for budget, r in rows:
        shown = "none" if budget is None else f"{budget / mib:.1f}"
        ratio = "-" if budget is None else f"{r['peak'] / budget:.2f}"
        lines.append(f"| {shown} | {r['wall']:.2f} | {r['tokens'] / r['wall']:.0f} | {r['steps']} "
                     f"| {r['tokens'] / max(r['steps'], 1):.1f} | {r['peak'] / mib:.1f} | {ratio} | {r['waits']} |")
    ec.write_section(ec.section("engine_kv_budget", args), lines)


if __name__ == "__main__":
    main()
