"""bench/gpu/check.py --smoke in npm test (infra/test.sh): every stage of the GPU check runs on the CPU
in miniature, passes, and leaves its figures in summary.json, so that no path of the script first
breaks on a lent GPU machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check.py")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "services", "engine"))
from tandem_engine import precision  # noqa: E402
STAGES = ["environment", "pytest", "generate", "update", "sync", "mixed_adapters"]


def positive(*xs) -> bool:
    return all(isinstance(x, (int, float)) and x > 0 for x in xs)


def test_smoke_mode_passes_every_stage_with_figures(tmp_path):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, CHECK, "--smoke", "--out", str(out)], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert sorted(os.listdir(out)) == ["pytest.log", "pytest.xml", "summary.json", "summary.md"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] and summary["mode"] == "smoke" and summary["first_failure"] is None
    stages = {s["name"]: s for s in summary["stages"]}
    assert list(stages) == STAGES and all(s["ok"] and "error" not in s for s in stages.values())
    fig = {name: s["figures"] for name, s in stages.items()}

    env = fig["environment"]
    # bf16 where this CPU has bf16 units, else auto: float32, with the reason
    bf16 = precision.native_bf16(torch.device("cpu"))
    assert env["device"] == "cpu" and env["engine_dtype"] == ("bfloat16" if bf16 else "float32"), env
    assert (env["dtype_note"] is None) == bf16 and positive(env["copy_bandwidth_gbs"])
    assert env["torch"] and env["transformers"] and env["peft"] and env["drift"] == [], env

    assert fig["pytest"]["tests"] == fig["pytest"]["passed"] == 2 and fig["pytest"]["rc"] == 0

    gen = fig["generate"]
    assert gen["skipped"] == [] and positive(gen["kv_budget_gb"])
    assert [(r["shape"], r["rows"]) for r in gen["runs"]] == [
        (s, n) for s in ("smollm2-135m", "qwen3-1.7b", "llama-8b") for n in (2, 4)]
    for r in gen["runs"]:
        assert positive(r["engine_tok_s"], r["hf_tok_s"], r["bound_tok_s"], r["engine_vs_hf"], r["weight_gb"]), r
    assert gen["runs"][0]["logprob_max_abs_diff"] < (0.5 if bf16 else 1e-3)
    cb = [r for r in gen["runs"] if "hf_cb_tok_s" in r]  # HF's generate_batch (transformers 5.x has it), at 4 rows
    assert cb and cb[0]["rows"] == 4 and positive(cb[0]["hf_cb_tok_s"]) and "hf_cb" not in cb[0], gen["runs"]

    upd = fig["update"]
    assert upd["skipped"] == [] and [(s["kind"], s["tokens_per_sample"]) for s in upd["steps"]] == [
        ("full", 64), ("full", 128), ("lora", 64), ("lora", 128)]
    for s in upd["steps"]:
        assert positive(s["update_s"], s["tok_s"], s["grad_norm"], s["trainable_m"]), s
    assert upd["replica_group"]["backend"] == "gloo" and upd["replica_group"]["checksum"]

    syn = fig["sync"]  # (each install's weights equal to the trainer's: asserted in the stage)
    assert syn["skipped"] == [] and [(r["kind"], r["page_cache"], r["version"]) for r in syn["installs"]] == [
        ("lora", "dropped", 1), ("lora", "warm", 2), ("full", "dropped", 1), ("full", "warm", 2)]
    for r in syn["installs"]:
        assert positive(r["weights_mb"], r["write_s"], r["install_s"], r["install_gbs"], r["update_s"]), r

    mix = fig["mixed_adapters"]
    assert positive(mix["mixed_tok_s"], mix["separate_tok_s"], mix["speedup"]) and mix["adapters"] == 3

    table = (out / "summary.md").read_text()
    for line in ("| environment | ok |", "| pytest | ok |", "| generate | ok |", "| update | ok |",
                 "| sync | ok |", "| mixed_adapters | ok |", "| llama-8b (", "| lora (", "| lora | llama-8b | dropped |",
                 "Mixed adapters"):
        assert line in table, table
