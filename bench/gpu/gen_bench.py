"""The generation stages of bench/gpu/check.py.

generate: per model shape (shapes.py), the engine's `generate` op at each row count against
transformers' `model.generate` on the same model object and prompt ids (and its continuous-batching
`generate_batch` where the installed version has it), and against the memory-bandwidth bound: a
decoding step reads the weights once and each row's keys and values, so no engine can make more than
rows x bandwidth / (weight bytes + KV bytes) tokens per second. Every row generates exactly --tokens
tokens on every side (ignore_eos; HF with no eos), which is checked, and the engine's log-probs of
one row are checked against a plain forward pass of the model.

mixed_adapters: LoRA adapters on one base, one mixed-adapter batch against one call per adapter.
"""

from __future__ import annotations

import math
import time

import engine_common as ec
import shapes

ROWS_PER_PROMPT = 4  # a request's n: rows = prompts x 4, as a GRPO group's samples


def _requests(policy: str, msgs: list, n: int, tokens: int) -> list[dict]:
    """One request of n rows per prompt, seeded by its index, `tokens` new tokens each (ignore_eos)."""
    return [ec.request(policy, m, n=n, seed=i, max_new_tokens=tokens) for i, m in enumerate(msgs)]


def _engine_tokens(eng, reqs) -> tuple[int, list]:
    res = ec.call(eng, "generate", requests=reqs)["results"]
    samples = [s for r in res for s in r["samples"]]
    return sum(len(s["response_ids"]) for s in samples), samples


def _timed(fn, device):
    shapes.sync(device)
    t0 = time.perf_counter()
    out = fn()
    shapes.sync(device)
    return time.perf_counter() - t0, out


def generate(ctx) -> dict:
    """ctx: check.Ctx. -> the stage's figures; raises on a failed check (after recording the runs)."""
    eng, T = ctx.engine, ctx.tokens
    fig = {"tokens_per_row": T, "rows_per_prompt": ROWS_PER_PROMPT, "copy_bandwidth_gbs": ctx.bandwidth / 1e9,
           "runs": [], "skipped": []}
    ctx.figures = fig
    for name in ctx.shapes:
        if ctx.left() < ctx.min_step_s:
            fig["skipped"].append(f"{name}: no time left in the stage's budget")
            continue
        path = shapes.model_folder(name, ctx.smoke)
        ec.load(eng, "gen", "full", path)
        try:
            _shape_runs(ctx, name, fig)
        finally:
            ec.call(eng, "unload", policy="gen")
    fig["kv_budget_gb"] = ec.call(eng, "stats")["kv_budget_bytes"] / 2**30  # cuda: from torch.cuda.mem_get_info
    return fig


def _shape_runs(ctx, name: str, fig: dict) -> None:
    eng, dev, T = ctx.engine, ctx.device, ctx.tokens
    bb = eng.policies["gen"].backbone
    model = bb.model
    weights = shapes.weight_bytes_per_step(model)
    n_params = sum(p.numel() for p in model.parameters())
    model.generation_config.eos_token_id = None  # else HF generate takes the model's eos back
    for rows in ctx.rows:
        msgs = ec.prompts(max(1, rows // ROWS_PER_PROMPT))
        n = rows // len(msgs)
        ids = [bb.render(m) for m in msgs for _ in range(n)]
        kv_need = sum(len(x) + T for x in ids) * bb.kv_bytes_per_token
        why = ctx.no_room(kv_need)
        if why or ctx.left() < ctx.min_step_s:
            fig["skipped"].append(f"{name} x {rows} rows: {why or 'no time left in the stage budget'}")
            continue
        run = {"shape": name, "params_m": n_params / 1e6, "rows": rows, "prompt_tokens": [min(map(len, ids)),
               max(map(len, ids))]}
        reqs = _requests("gen", msgs, n, T)
        _engine_tokens(eng, _requests("gen", msgs, n, 2))  # warm-up: first-call allocations and kernels
        secs, (got, samples) = _timed(lambda: _engine_tokens(eng, reqs), dev)
        assert got == rows * T, f"{name} x {rows}: the engine generated {got} tokens, not {rows * T}"
        run["engine_s"], run["engine_tok_s"] = secs, got / secs
        hf = _hf_generate(model, ids, bb.pad_id, dev)
        hf(2)
        secs, got = _timed(lambda: hf(T), dev)
        assert got == rows * T, f"{name} x {rows}: HF generate gave {got} tokens, not {rows * T}"
        run["hf_s"], run["hf_tok_s"] = secs, got / secs
        # Bound: each step reads the weights and every row's KV (prompt + tokens so far, on average).
        kv_per_step = sum(len(x) + (T - 1) / 2 for x in ids) * bb.kv_bytes_per_token
        run["bound_tok_s"] = rows * ctx.bandwidth / (weights + kv_per_step)
        run["weight_gb"], run["kv_gb_per_step"] = weights / 1e9, kv_per_step / 1e9
        run["engine_vs_hf"] = run["engine_tok_s"] / run["hf_tok_s"]
        run["engine_of_bound"] = run["engine_tok_s"] / run["bound_tok_s"]
        if rows == ctx.rows[0]:
            run["logprob_max_abs_diff"] = _logprob_gap(model, samples[0], dev)
        if rows in ctx.cb_rows:
            _hf_continuous(ctx, model, ids, bb.pad_id, run)
        fig["runs"].append(run)
        print(f"  generate {name} x {rows}: engine {run['engine_tok_s']:.0f} tok/s, HF {run['hf_tok_s']:.0f}, "
              f"bound {run['bound_tok_s']:.0f}", flush=True)
        gap = run.get("logprob_max_abs_diff")
        assert gap is None or gap <= ctx.logprob_tol, (
            f"{name}: the engine's log-probs differ from a plain forward pass by {gap:.3g} (> {ctx.logprob_tol})")


def _hf_generate(model, ids: list[list[int]], pad: int, dev):
    """model.generate on the rows, left-padded, sampling at temperature 1 with no eos: -> fn(tokens) -> count."""
    import torch
    from transformers import GenerationConfig

    P = max(map(len, ids))
    input_ids = torch.tensor([[pad] * (P - len(x)) + x for x in ids], device=dev)
    mask = torch.tensor([[0] * (P - len(x)) + [1] * len(x) for x in ids], device=dev)

    def run(tokens: int) -> int:
        config = GenerationConfig(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=tokens,
                                  min_new_tokens=0, eos_token_id=None, pad_token_id=pad)
        out = model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config)
        return out[:, P:].numel()

    return run


def _hf_continuous(ctx, model, ids, pad, run: dict) -> None:
    """transformers' continuous batching (`generate_batch`), if this version has it; its manager is set
    up inside every call (so its time counts). A failure is recorded, not raised: it is HF's API. After
    a failure, or a call far slower than HF generate's (its set-up, CUDA graphs), it is not tried again."""
    if not hasattr(model, "generate_batch"):
        run["hf_cb"] = "not in this transformers version"
        return
    if getattr(ctx, "hf_cb_off", None) or ctx.left() < 2 * ctx.min_step_s:
        run["hf_cb"] = f"skipped: {getattr(ctx, 'hf_cb_off', None) or 'no time left in the stage budget'}"
        return
    from transformers import GenerationConfig

    kw = {}
    if ctx.smoke:  # sized by default to most of the free memory: on a CPU, slow to page in, or out of memory
        from transformers.generation.configuration_utils import ContinuousBatchingConfig

        kw["continuous_batching_config"] = ContinuousBatchingConfig(num_blocks=16, max_batch_tokens=512)

    def cb(tokens: int) -> int:
        config = GenerationConfig(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=tokens,
                                  eos_token_id=-1, pad_token_id=pad)
        out = model.generate_batch(inputs=ids, generation_config=config, progress_bar=False, **kw)
        return sum(len(o.generated_tokens) for o in out.values())

    t0 = time.perf_counter()
    try:
        cb(2)
        secs, got = _timed(lambda: cb(ctx.tokens), ctx.device)
        run["hf_cb_s"], run["hf_cb_tok_s"] = secs, got / secs
        if got != len(ids) * ctx.tokens:
            run["hf_cb"] = f"generated {got} tokens, not {len(ids) * ctx.tokens}"
        took = time.perf_counter() - t0
        if took > 5 * run["hf_s"] + ctx.min_step_s:
            ctx.hf_cb_off = f"an earlier call with its warm-up took {took:.0f} s"
    except Exception as e:  # noqa: BLE001 - recorded in the summary
        run["hf_cb"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
        ctx.hf_cb_off = "it failed earlier"
    finally:
        if hasattr(model, "destroy_cached_continuous_batching_manager"):
            model.destroy_cached_continuous_batching_manager()
        if ctx.cuda:
            import torch

            torch.cuda.empty_cache()  # its cache's memory back to the device, for the engine's KV budget


def _logprob_gap(model, sample: dict, dev) -> float:
    """Largest |engine log-prob - log-prob from one plain forward pass (no cache)| over a row's tokens."""
    import torch

    p, r = sample["prompt_ids"], sample["response_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([p + r], device=dev)).logits[0, len(p) - 1: -1].float()
    ref = torch.log_softmax(logits, -1).gather(1, torch.tensor(r, device=dev)[:, None])[:, 0].cpu()
    gap = (ref - torch.tensor(sample["logprobs"])).abs().max().item()
    return gap if math.isfinite(gap) else float("inf")


def mixed_adapters(ctx) -> dict:
    """Three LoRA policies on one base: one generate op with a request per policy (one decode batch,
    each row through its own adapter) against one op per policy."""
    eng, T, shape, k, n = ctx.engine, ctx.tokens, ctx.mixed_shape, 3, ctx.mixed_rows
    ctx.figures = fig = {"shape": shape, "adapters": k, "rows_per_adapter": n, "tokens_per_row": T}
    path = shapes.model_folder(shape, ctx.smoke)
    keys = [f"agent{i}" for i in range(k)]
    for key in keys:
        ec.load(eng, key, "lora", path, base="mixed")
    try:
        msgs = ec.prompts(k)
        reqs = [{**r, "policy": key} for r, key in zip(_requests("x", msgs, n, T), keys)]

        def run(batches, tokens=T):
            return sum(_engine_tokens(eng, [{**r, "max_new_tokens": tokens} for r in b])[0] for b in batches)

        run([reqs], 2)  # warm-up
        mixed_s, got = _timed(lambda: run([reqs]), ctx.device)
        separate_s, got2 = _timed(lambda: run([[r] for r in reqs]), ctx.device)
        assert got == got2 == k * n * T, (got, got2, k * n * T)
        fig.update(mixed_s=mixed_s, separate_s=separate_s, mixed_tok_s=got / mixed_s, separate_tok_s=got / separate_s,
                   speedup=separate_s / mixed_s)
    finally:
        for key in keys:
            ec.call(eng, "unload", policy=key)
    return fig
