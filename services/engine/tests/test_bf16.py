"""The bf16 path on every test run (the GPU's dtype, emulated on a CPU without bf16 units; precision.py):
which dtype `load` takes, float32 master weights under a full bf16 policy, its checkpoints, exact
resume, the rollout/trainer mismatch each update reports, mixed-adapter batches and the overlap copy."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file

from conftest import LORA, OPTIM, PLAN_PROMPT, TOOL_PROMPT, UPDATE, as_train, request
from tandem_engine import precision

BF16 = torch.bfloat16


@pytest.fixture
def bf16(eng):
    """The in-process engine, its loads in bfloat16 for this test."""
    eng.dtype = BF16
    return eng


def train_batch(eng, policy, advantages=(1.0, -1.0, 0.5, -0.5)):
    gen = eng.gen(policy, PLAN_PROMPT, n=2, seed=1, max_new_tokens=8) + eng.gen(policy, TOOL_PROMPT, n=2, seed=2, max_new_tokens=8)
    return [as_train(s, a, f"s{i}") for i, (s, a) in enumerate(zip(gen, advantages))]


# ---------------------------------------------------------------------- which dtype a load takes

def test_resolve_auto_and_the_refusal(monkeypatch):
    cpu, logged = torch.device("cpu"), []
    # auto on a CPU: float32, with bf16 units or without, each saying why
    for flags in ({"avx2", "avx512_bf16"}, {"avx2", "amx_bf16"}):
        dtype, note = precision.resolve("auto", cpu, flags=flags)
        assert dtype == torch.float32 and note == f"auto chose float32: {precision.CPU_NOTE}"
        assert precision.native_bf16(cpu, flags)
    assert precision.resolve("float32", cpu, flags={"amx_bf16"}) == (torch.float32, None)
    dtype, note = precision.resolve("auto", cpu, flags={"avx2"}, log=logged.append)
    assert dtype == torch.float32 and "neither avx512_bf16 nor amx_bf16" in note and not precision.native_bf16(cpu, {"avx2"})
    precision.resolve("auto", cpu, flags={"avx2"}, log=logged.append)
    assert len(logged) <= 1  # said once per engine (maybe before this test, by an earlier load)
    monkeypatch.delenv("TANDEM_ALLOW_EMULATED_BF16")
    with pytest.raises(precision.EngineError, match="avx512_bf16 nor amx_bf16"):
        precision.resolve("bfloat16", cpu, flags={"avx2"})
    assert precision.resolve("bfloat16", cpu, flags={"avx512_bf16"}) == (BF16, None)
    with pytest.raises(precision.EngineError, match="dtype must be one of"):
        precision.resolve("half", cpu)


def test_load_names_a_bad_or_missing_dtype_and_says_why_auto_fell_back(eng, tiny_model, tmp_path, monkeypatch):
    bad = eng.call("load", policy="x", kind="full", model_path=tiny_model, optim=OPTIM, checkpoint_root="", dtype="half")
    assert bad["error"]["type"] == "BadRequest" and "dtype must be one of" in bad["error"]["message"]
    missing = eng.call("load", policy="x", kind="full", model_path=tiny_model, optim=OPTIM, checkpoint_root="", dtype=None)
    assert missing["error"]["message"] == "load: missing field 'dtype'"
    monkeypatch.setattr(precision, "cpu_flags", lambda: {"avx2"})
    monkeypatch.delenv("TANDEM_ALLOW_EMULATED_BF16")
    refused = eng.call("load", policy="x", kind="full", model_path=tiny_model, optim=OPTIM, checkpoint_root="",
                       dtype="bfloat16")
    assert refused["error"]["type"] == "BadRequest" and "neither avx512_bf16 nor amx_bf16" in refused["error"]["message"]
    loaded = eng.ok("load", policy="a", kind="lora", model_path=tiny_model, base="b", lora=LORA, optim=OPTIM,
                    checkpoint_root=str(tmp_path / "a"), dtype="auto")
    assert loaded["dtype"] == "float32" and "auto chose float32" in loaded["dtype_note"]
    s = eng.gen("a", PLAN_PROMPT, seed=3, max_new_tokens=6)[0]
    result = eng.update("a", 0, [as_train(s, 1.0)], tmp_path / "a")["result"]
    assert result["dtype"] == "float32" and result["dtype_note"] == loaded["dtype_note"]
    monkeypatch.setattr(precision, "cpu_flags", lambda: {"avx512_bf16"})
    other = eng.call("load", policy="a2", kind="lora", model_path=tiny_model, base="b", lora=LORA, optim=OPTIM,
                     checkpoint_root="", dtype="bfloat16")  # the base is float32 already: not a bf16 one
    assert other["error"]["type"] == "BadRequest" and "already loaded in float32, not bfloat16" in other["error"]["message"]


# ---------------------------------------------------------------------- full policies: float32 masters

def test_a_full_bf16_step_at_lr_1e_6_moves_the_weights_as_float32_does(eng, tiny_model, tmp_path):
    """AdamW's first step moves a weight by about lr * g / |g|. On bf16 weights (8 bits of mantissa)
    a step of 1e-6 rounds away for nearly every weight; on their float32 masters it does not. The
    checkpoint (the masters, in float32) moves like the float32 policy's weights, and the bf16 weights
    the engine generates with are the masters rounded."""
    optim = {**OPTIM, "lr": 1e-6}
    eng.dtype = torch.float32
    eng.load_full("f32", tiny_model, tmp_path / "f32", optim=optim)
    samples = train_batch(eng, "f32")
    eng.dtype = BF16
    assert eng.load_full("b16", tiny_model, tmp_path / "b16", optim=optim)["dtype"] == "bfloat16"
    f32 = eng.update("f32", 0, samples, tmp_path / "f32")["result"]
    b16 = eng.update("b16", 0, samples, tmp_path / "b16")["result"]
    assert b16["dtype"] == "bfloat16" and b16["optimizer_steps"] == 1
    base = load_file(os.path.join(tiny_model, "model.safetensors"))
    w32 = load_file(os.path.join(f32["checkpoint"], "model", "model.safetensors"))
    w16 = load_file(os.path.join(b16["checkpoint"], "model", "model.safetensors"))
    assert all(t.dtype == torch.float32 for t in w16.values())  # the masters
    assert json.loads(open(os.path.join(b16["checkpoint"], "model", "config.json")).read())["dtype"] == "float32"
    d32 = torch.cat([(w32[k] - b).flatten() for k, b in base.items()])
    d16 = torch.cat([(w16[k] - b).flatten() for k, b in base.items()])
    on = d32 != 0
    moved32 = on.sum().item()
    assert moved32 > 0.5 * d32.numel()
    assert (d16[on] != 0).sum().item() > 0.99 * moved32, "the weights the float32 step moved, the bf16 step's masters moved"
    # The same direction and size (about lr each), but for gradients near zero, where bf16's noise
    # in the gradient changes AdamW's g / |g|.
    assert (torch.sign(d16[on]) == torch.sign(d32[on])).float().mean().item() > 0.97
    size = (d16[on].abs() - d32[on].abs()).abs()
    assert size.mean().item() < 0.05e-6 and torch.quantile(size[:2**24].double(), 0.99).item() < 0.2e-6
    # The weights the engine now holds are the masters rounded to bf16 ...
    p = eng.engine.policies["b16"]
    weights = dict(p.backbone.model.named_parameters())
    assert len(p.masters.pairs) == len(weights)
    for w, m in p.masters.pairs:
        assert w.dtype == BF16 and m.dtype == torch.float32 and torch.equal(w, m.detach().to(BF16))
    # ... and few of them differ from the base's: AdamW stepping the bf16 weights themselves (the
    # engine before master weights) would have left them all but unmoved.
    rounded = sum((weights[k] != b.to(BF16)).sum().item() for k, b in base.items() if k in weights)
    assert rounded < 0.05 * moved32


def test_bf16_checkpoint_resumes_exactly_and_loads_at_any_dtype(bf16, tiny_model, tmp_path):
    """Exact resume at one dtype: the masters, AdamW's state, the schedule and the RNG come back."""
    root = tmp_path / "ck"
    optim = {**OPTIM, "lr": 1e-2, "weight_decay": 0.01, "warmup_steps": 2, "total_steps": 5, "min_lr_ratio": 0.1}
    bf16.load_full("r", tiny_model, root, optim=optim)
    samples = train_batch(bf16, "r")
    for v in range(2):
        assert bf16.update("r", v, samples, root, kl_coef=0.1)["ok"]
    straight = bf16.update("r", 2, samples, root, kl_coef=0.1)["result"]
    straight_w = load_file(os.path.join(straight["checkpoint"], "model", "model.safetensors"))
    bf16.ok("unload", policy="r")
    shutil.rmtree(root / "v000003")
    assert bf16.load_full("r", tiny_model, root, optim=optim)["version"] == 2
    resumed = bf16.update("r", 2, samples, root, kl_coef=0.1)["result"]
    for key in ("loss", "pg_loss", "kl", "entropy", "grad_norm", "logprob_gap", "lr", "rollout_weight_mean"):
        assert resumed[key] == straight[key], key
    resumed_w = load_file(os.path.join(resumed["checkpoint"], "model", "model.safetensors"))
    assert all(torch.equal(straight_w[k], resumed_w[k]) for k in straight_w)
    # Any dtype loads it: a float32 engine generates from the masters themselves.
    bf16.dtype = torch.float32
    assert bf16.load_full("as32", tiny_model, root, optim=optim)["dtype"] == "float32"
    m = dict(bf16.engine.policies["as32"].backbone.model.named_parameters())
    assert all(torch.equal(m[k], straight_w[k]) for k in straight_w if k in m)


# ---------------------------------------------------------------------- LoRA over a bf16 base

def test_lora_adapters_are_float32_over_a_bf16_base_and_mix_in_one_batch(bf16, tiny_model, tmp_path):
    for name in ("a", "b"):
        assert bf16.load_lora(name, tiny_model, tmp_path / name, optim={**OPTIM, "lr": 1e-2})["dtype"] == "bfloat16"
    pol = bf16.engine.policies["a"]
    assert pol.backbone.dtype == BF16 and not pol.masters.mixed
    assert all(p.dtype == torch.float32 for p in pol.trainable_parameters())
    bf16.update("a", 0, [as_train(s, a) for s, a in zip(bf16.gen("a", PLAN_PROMPT, n=2, seed=5), (1.0, -1.0))],
                tmp_path / "a")
    # A mixed batch (a at v1, b at v0) samples what each request samples alone.
    alone = [bf16.gen("a", PLAN_PROMPT, version=1, seed=7, n=2), bf16.gen("b", TOOL_PROMPT, seed=8, n=2)]
    mixed = bf16.ok("generate", requests=[request("a", PLAN_PROMPT, 1, seed=7, n=2, max_new_tokens=12),
                                          request("b", TOOL_PROMPT, 0, seed=8, n=2, max_new_tokens=12)])["results"]
    for one, both in zip(alone, mixed):
        assert [s["response_ids"] for s in one] == [s["response_ids"] for s in both["samples"]]
        for x, y in zip(one, both["samples"]):  # bf16 sums in another order: log-probs to its precision
            assert torch.allclose(torch.tensor(x["logprobs"]), torch.tensor(y["logprobs"]), atol=0.05)


def test_the_overlap_copy_of_a_bf16_policy_serves_the_version_before(tiny_model, tmp_path):
    """An update with overlap: rows started before it decode with the copy (the version it trains
    from) and match that version's rows bit for bit; the new version's rows come after."""
    from conftest import LocalEngine

    for kind in ("lora", "full"):
        eng = LocalEngine()
        eng.dtype = BF16
        (eng.load_lora if kind == "lora" else eng.load_full)("p", tiny_model, tmp_path / kind, optim={**OPTIM, "lr": 1e-2})
        samples = train_batch(eng, "p")
        before = eng.gen("p", PLAN_PROMPT, seed=11, n=2, max_new_tokens=10)
        box: list = []
        eng.engine.submit({"id": "u", "op": "update", "policy": "p", "from_version": 0, "samples": samples,
                           "checkpoint_root": str(tmp_path / kind), **{**UPDATE, "overlap": True}}, box.append)
        rows: list = []
        eng.engine.submit({"id": "g", "op": "generate", "requests": [request("p", PLAN_PROMPT, 0, seed=11, n=2, max_new_tokens=10)]},
                          rows.append)
        while not (box and rows):
            eng.engine.tick()
        assert box[0]["ok"] and box[0]["result"]["overlap"]["copy"] == ("adapter" if kind == "lora" else "model")
        assert rows[0]["ok"] and rows[0]["result"]["results"][0]["version"] == 0
        assert rows[0]["result"]["results"][0]["samples"] == json.loads(json.dumps(before))
        eng.unload_all()


# ---------------------------------------------------------------------- the rollout/trainer mismatch

def test_each_update_reports_the_rollout_trainer_weights(eng, tiny_model, tmp_path):
    """pi_trainer / pi_rollout per token under the weights before the update, at max_staleness 0:
    about 1 in float32 (the same arithmetic but for batching), spread by bf16's rounding in bf16."""
    spread = {}
    for dtype in (torch.float32, BF16):
        eng.dtype = dtype
        name = str(dtype).removeprefix("torch.")
        eng.load_full(name, tiny_model, tmp_path / name)
        for steps in (dict(ppo_epochs=1), dict(ppo_epochs=2)):  # the step's own forward, and the trainer pass
            version = eng.engine.policies[name].version
            samples = train_batch(eng, name) if version == 0 else [
                as_train(s, a, f"s{i}") for i, (s, a) in enumerate(zip(eng.gen(name, PLAN_PROMPT, version, n=4, seed=4), (1.0, -1.0, 0.5, -0.5)))]
            r = eng.update(name, version, samples, tmp_path / name, **steps)["result"]
            assert r["rollout_weight_min"] <= r["rollout_weight_mean"] <= r["rollout_weight_max"]
            assert r["rollout_weight_mean"] == pytest.approx(1.0, abs=0.05) and r["rollout_weight_std"] >= 0
            spread[(name, steps["ppo_epochs"])] = r["rollout_weight_max"] - r["rollout_weight_min"]
    assert spread[("float32", 1)] < 1e-3 and spread[("float32", 2)] < 1e-3
    assert spread[("bfloat16", 2)] > spread[("float32", 2)]
