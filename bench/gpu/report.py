"""The short Markdown table of bench/gpu/check.py's summary (printed, and written as summary.md)."""

from __future__ import annotations


def _f(x, digits=0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def table(summary: dict) -> str:
    stages = {s["name"]: s for s in summary["stages"]}
    env = (stages.get("environment") or {}).get("figures") or {}
    lines = [f"# bench/gpu/check.py, {summary['mode']} mode: {'ok' if summary['ok'] else 'FAILED'} "
             f"in {summary['wall_s']} s (budget {summary['budget_s']:.0f} s)", ""]
    if env:
        mem = f", {env['memory_gb']:.0f} GB" if "memory_gb" in env else ""
        lines += [f"Device: {env.get('name')}{mem}, engine dtype {env.get('engine_dtype')}"
                  f"{' (' + env['dtype_note'] + ')' if env.get('dtype_note') else ''}, copy bandwidth "
                  f"{_f(env.get('copy_bandwidth_gbs'))} GB/s (read + written). Python {env.get('python')}, torch "
                  f"{env.get('torch')} (CUDA {env.get('cuda')}), transformers {env.get('transformers')}, peft "
                  f"{env.get('peft')}; wheels: {env.get('wheels')}; drift from the pins: "
                  f"{', '.join(env.get('drift') or []) or 'none'}.", ""]
    lines += ["| stage | result | s | |", "|---|---|---|---|"]
    for s in summary["stages"]:
        lines.append(f"| {s['name']} | {'ok' if s['ok'] else 'FAILED'} | {s['seconds']} | {_stage_note(s)} |")
    gen = (stages.get("generate") or {}).get("figures") or {}
    _figures(lines, f"Generate, {gen.get('tokens_per_row')} new tokens per row (ignore_eos), {gen.get('rows_per_prompt')} "
             "rows per prompt; tokens/s; bound = rows x bandwidth / (weights + KV bytes read per step):",
             "| shape | rows | engine | HF generate | HF generate_batch | bound | engine/HF | engine/bound |",
             [f"| {r['shape']} ({_f(r['params_m'], 0 if r['params_m'] >= 10 else 2)}M) | {r['rows']} | {_f(r['engine_tok_s'])} | "
              f"{_f(r['hf_tok_s'])} | {_f(r['hf_cb_tok_s']) if 'hf_cb_tok_s' in r else r.get('hf_cb', '-')} | "
              f"{_f(r['bound_tok_s'])} | {r['engine_vs_hf']:.2f} | {r['engine_of_bound']:.0%} |" for r in gen.get("runs", [])],
             gen.get("skipped", []))
    upd = (stages.get("update") or {}).get("figures") or {}
    _figures(lines, "Update (one PPO step with AdamW, after a warm-up step; checkpoint write left out):",
             "| kind | shape | tokens/sample | samples | s | tokens/s | peak GB | AdamW state MB |",
             [f"| {r['kind']} ({_f(r['trainable_m'], 1 if r['trainable_m'] >= 1 else 3)}M trainable) | {r['shape']} | "
              f"{r['tokens_per_sample']} | {r['samples']} | {r['update_s']:.2f} | {_f(r['tok_s'])} | {_f(r['peak_gb'], 1)} | "
              f"{_f(r['optimizer_state_mb'])} |" for r in upd.get("steps", [])],
             upd.get("skipped", []))
    if upd.get("replica_group"):
        g = upd["replica_group"]
        lines.append(f"- replica group of one rank ({g['backend']}, {g['shape']}): update {g['update_s']:.2f} s, "
                     f"of which collectives {g['sync_s']:.3f} s, checksum {g['checksum']}")
    syn = (stages.get("sync") or {}).get("figures") or {}
    _figures(lines, "Sync (a rollout policy installs the version its trainer's update wrote; the weights equal the "
             "trainer's after each):",
             "| kind | shape | page cache | weights MB | checkpoint write s | install s | GB/s | install / update step |",
             [f"| {r['kind']} | {r['shape']} | {r['page_cache']} | {_f(r['weights_mb'], 1)} | {r['write_s']:.2f} | "
              f"{r['install_s']:.3f} | {_f(r['install_gbs'], 2)} | {r['install_of_update']:.2f} |" for r in syn.get("installs", [])],
             syn.get("skipped", []))
    mix = (stages.get("mixed_adapters") or {}).get("figures") or {}
    if "speedup" in mix:
        lines += ["", f"Mixed adapters ({mix['shape']}, {mix['adapters']} LoRA adapters x {mix['rows_per_adapter']} rows, "
                  f"{mix['tokens_per_row']} tokens): one batch {_f(mix['mixed_tok_s'])} tokens/s, one call per adapter "
                  f"{_f(mix['separate_tok_s'])} tokens/s: {mix['speedup']:.2f}x."]
    return "\n".join(lines) + "\n"


def _figures(lines: list[str], title: str, header: str, rows: list[str], skipped: list[str]) -> None:
    """A stage's table (when it has rows), then what it skipped and why."""
    if rows:
        lines += ["", title, "", header, "|---" * header.count(" | ") + "|---|", *rows]
    lines += [f"- skipped: {why}" for why in skipped]


def _stage_note(s: dict) -> str:
    if not s["ok"]:
        return s.get("error", "").replace("|", "/").replace("\n", " ")[:300]
    f = s.get("figures") or {}
    if s["name"] == "pytest":
        skips = "; ".join(f"{n} x {why}" for why, n in f.get("skip_reasons", {}).items())
        return f"{f['passed']} passed, {f['skipped']} skipped ({skips or '-'}) of {f['tests']} ({f['selection']})"
    if s["name"] == "generate":
        gaps = [r["logprob_max_abs_diff"] for r in f.get("runs", []) if "logprob_max_abs_diff" in r]
        return (f"{len(f.get('runs', []))} runs, {len(f.get('skipped', []))} skipped; KV budget {f['kv_budget_gb']:.1f} "
                f"GiB; engine log-probs vs a plain forward: max |diff| {max(gaps, default=0):.2g}")
    if s["name"] == "update":
        return f"{len(f.get('steps', []))} steps, {len(f.get('skipped', []))} skipped"
    if s["name"] == "sync":
        return f"{len(f.get('installs', []))} installs, {len(f.get('skipped', []))} skipped"
    return ""
