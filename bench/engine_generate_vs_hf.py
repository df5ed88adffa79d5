"""Benchmark: rollout tokens/s of the engine's `generate` op against transformers' model.generate.

    .venv/bin/python bench/engine_generate_vs_hf.py [--size small] [--prompts 8] [--n 4] [--tokens 128]
                                                    [--repeat 5] [--profile]

Same model object, same prompt token ids, same batch (prompts x n rows, one decode batch on both
sides), sampling at temperature 1 with no top-k/top-p, no stop (every row generates exactly
--tokens tokens on both sides; checked). Timed per repeat, alternating engine / HF:
  engine: Engine.handle({"op": "generate", ...}) in-process: chat rendering, one prefill per distinct
          prompt, the batched decode loop on a preallocated KV cache (generation.py, kv_cache.py; incl.
          the per-token log-probs it returns) and building the result;
  HF:     model.generate(input_ids, attention_mask, do_sample=True, ...) on the left-padded prompt ids
          (rendering not timed; HF returns no log-probs).
--profile: cProfile of one more engine call, top functions by own time.
Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats

import engine_common as ec


def profile(fn) -> str:
    """cProfile one call of fn: top functions by own time, and a one-line summary for RESULTS.md."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out).sort_stats("tottime")
    st.print_stats(15)
    print(out.getvalue())

    def own(name):  # own time of a function (e.g. a torch builtin), summed over its entries
        return sum(v[2] for k, v in st.stats.items() if k[2] == name)

    def cum(file_end, name):  # cumulative time of the outermost such function (Cache.update calls layer.update)
        return max([v[3] for k, v in st.stats.items() if k[0].endswith(file_end) and k[2] == name] or [0.0])

    total = st.total_tt
    parts = {
        "nn.linear (the matmuls)": own("<built-in method torch._C._nn.linear>"),
        "scaled_dot_product_attention": own("<built-in method torch._C._nn.scaled_dot_product_attention>"),
        "torch.cat": own("<built-in method torch.cat>"),
        "KV-cache append (kv_cache.PreallocatedLayer.update, cumulative)": cum("kv_cache.py", "update"),
        "sampling (SamplingParams.sample, cumulative)": cum("generation.py", "sample"),
    }
    return (f"cProfile of one more engine call ({total:.2f} s under the profiler): "
            + "; ".join(f"{k} {v:.2f} s ({v / total:.0%})" for k, v in parts.items()) + ".")


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--n", type=int, default=4, help="samples per prompt")
    ap.add_argument("--tokens", type=int, default=128, help="new tokens per row")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--hf-static", action="store_true",
                    help="also time HF generate with a preallocated KV cache (cache_implementation='static')")
    args = ap.parse_args()

    import torch
    from transformers import GenerationConfig

    eng, bb, reqs, desc = ec.generating_engine(args)
    msgs = [r["messages"] for r in reqs]

    # HF: the same rows (prompt i repeated n times, as the engine orders them), left-padded.
    ids = [bb.render(m) for m in msgs for _ in range(args.n)]
    P = max(len(x) for x in ids)
    input_ids = torch.tensor([[bb.pad_id] * (P - len(x)) + x for x in ids])
    attention_mask = torch.tensor([[0] * (P - len(x)) + [1] * len(x) for x in ids])
    bb.model.generation_config.eos_token_id = None  # else generate() takes the model's eos back (checked: it does)

    def run_engine():
        r = ec.call(eng, "generate", requests=reqs)
        return sum(len(s["response_ids"]) for x in r["results"] for s in x["samples"])

    def run_hf(cache=None):
        config = GenerationConfig(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=args.tokens,
                                  min_new_tokens=0, eos_token_id=None, pad_token_id=bb.pad_id,
                                  cache_implementation=cache)
        out = bb.model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=config)
        return out[:, P:].numel()

    sides = {"engine": run_engine, "hf": run_hf}
    if args.hf_static:
        sides["hf, static cache"] = lambda: run_hf(cache="static")
    for fn in sides.values():  # warm-up (first-call allocations)
        fn()
    times, tokens, discarded = ec.measure(sides, args.repeat)
    expected = len(ids) * args.tokens
    assert all(t == expected for k in tokens for t in tokens[k]), (tokens, expected)

    med = {k: ec.stats(v)["median"] for k, v in times.items()}
    best = {k: ec.stats(v)["best"] for k, v in times.items()}
    cpu = {k: ec.stats(v)["median"] for k, v in ec.CPU_SECONDS.items()}
    lines = [
        f"Machine: {ec.machine()}. {ec.versions('transformers')}.",
        f"Model: {desc}.",
        f"Batch: {args.prompts} Plan-Path prompts ({min(map(len, ids))}-{P} tokens) x n={args.n} = {len(ids)} rows, "
        f"{args.tokens} new tokens each (no stop: {expected} tokens per call on both sides), temperature 1, "
        f"no top-k/top-p. Engine: in-process `Engine.handle` generate op (tandem_engine.server). "
        f"HF: `model.generate(do_sample=True)` on the same model object and left-padded prompt ids. "
        f"{ec.runs_note(args.repeat, discarded)}.",
        "",
        "| side | wall s best / median / worst | tokens/s (median) | tokens/s (best) | CPU s of the bench process (median) |",
        "|---|---|---|---|---|",
        *[f"| {k} | {ec.spread(times[k])} | {expected / med[k]:.0f} | {expected / best[k]:.0f} | {cpu[k]:.1f} |"
          for k in times],
        "",
        f"**engine / HF tokens/s: {med['hf'] / med['engine']:.2f} (medians), {best['hf'] / best['engine']:.2f} "
        f"(bests)**; target >= 1. In CPU time of the bench process (less sensitive to other processes than wall "
        f"time): HF / engine {cpu['hf'] / cpu['engine']:.2f}.",
    ]
    if args.hf_static:
        lines += ["", "\"hf, static cache\": the same generate call with `cache_implementation=\"static\"` "
                  "(a KV cache preallocated to prompt + new tokens, instead of the default DynamicCache that "
                  "concatenates every layer's keys and values at every step)."]
    if args.profile:
        lines += ["", profile(run_engine)]
    ec.write_section(ec.section("engine_generate_vs_hf", args), lines)


if __name__ == "__main__":
    main()
