"""Checkpoints: layout, reload, exact resume (optimizer, LR schedule, dropout RNG), kind mismatch."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file

from conftest import LORA, OPTIM, PLAN_PROMPT, TOOL_PROMPT, as_train, load_hf, teacher_forced

# Warm-up, weight decay, KL and (for lora) dropout all active: resuming must restore all of it.
RESUME_OPTIM = {**OPTIM, "lr": 1e-2, "weight_decay": 0.01, "betas": [0.9, 0.95], "warmup_steps": 2,
                "total_steps": 5, "min_lr_ratio": 0.1}
RESUME_UPDATE = dict(kl_coef=0.1, loss_agg="seq-mean-token-mean", micro_batch_tokens=64)


def load(eng, kind, policy, tiny_model, root):
    if kind == "lora":
        return eng.load_lora(policy, tiny_model, root, lora={**LORA, "dropout": 0.2}, optim=RESUME_OPTIM)
    return eng.load_full(policy, tiny_model, root, optim=RESUME_OPTIM)


def saved_weights(folder):
    sub = "adapter/adapter_model.safetensors" if os.path.isdir(os.path.join(folder, "adapter")) else "model/model.safetensors"
    return load_file(os.path.join(folder, sub))


@pytest.mark.parametrize("kind", ["lora", "full"])
@pytest.mark.fp32
def test_resume_continues_exactly(eng, tiny_model, tmp_path, kind):
    root = tmp_path / "ck"
    load(eng, kind, "r", tiny_model, root)
    samples = [as_train(s, a, f"s{i}") for i, (s, a) in enumerate(zip(
        eng.gen("r", PLAN_PROMPT, n=2, seed=1, max_new_tokens=8) + eng.gen("r", TOOL_PROMPT, n=1, seed=2, max_new_tokens=8),
        [1.0, -1.0, 0.5]))]
    for v in range(3):
        assert eng.update("r", v, samples, root, **RESUME_UPDATE)["ok"]
    straight = eng.update("r", 3, samples, root, **RESUME_UPDATE)["result"]
    straight_w = saved_weights(straight["checkpoint"])

    # "Crash" after v3 and resume from its checkpoint.
    eng.ok("unload", policy="r")
    shutil.rmtree(root / "v000004")
    assert load(eng, kind, "r", tiny_model, root)["version"] == 3
    resumed = eng.update("r", 3, samples, root, **RESUME_UPDATE)["result"]
    for key in ("loss", "pg_loss", "kl", "entropy", "grad_norm", "logprob_gap", "lr"):
        assert resumed[key] == pytest.approx(straight[key], rel=1e-6, abs=1e-7), key
    resumed_w = saved_weights(resumed["checkpoint"])
    assert straight_w.keys() == resumed_w.keys()
    assert all(torch.allclose(straight_w[k], resumed_w[k], atol=1e-6, rtol=0) for k in straight_w)
    assert straight["lr"] == pytest.approx(1e-2 * (0.1 + 0.9 * 0.5 * (1 + torch.cos(torch.tensor(torch.pi / 3)).item())))


@pytest.mark.fp32
def test_layout_and_reload(eng, tiny_model, tmp_path):
    roots = {"lora": tmp_path / "lora", "full": tmp_path / "full"}
    eng.load_lora("l", tiny_model, roots["lora"], optim={**OPTIM, "lr": 1e-2})
    eng.load_full("f", tiny_model, roots["full"], optim={**OPTIM, "lr": 1e-2})
    probes = {}
    for key, kind in (("l", "lora"), ("f", "full")):
        s = eng.gen(key, TOOL_PROMPT, seed=9, max_new_tokens=8)[0]
        r = eng.update(key, 0, [as_train(s, 1.0)], roots[kind])["result"]
        ck = roots[kind] / "v000001"
        assert r["checkpoint"] == str(ck)
        weights = ["adapter/adapter_config.json", "adapter/adapter_model.safetensors"] if kind == "lora" else \
            ["model/config.json", "model/model.safetensors", "model/tokenizer.json"]
        for f in weights + ["optimizer.pt", "scheduler.pt", "rng.pt", "state.json"]:
            assert (ck / f).is_file(), f
        state = json.loads((ck / "state.json").read_text())
        assert state["version"] == 1 and state["kind"] == kind and state["update_result"]["loss"] == r["loss"]
        assert not [p for p in os.listdir(roots[kind]) if p.startswith(".tmp")]
        probes[key] = eng.gen(key, PLAN_PROMPT, version=1, n=2, seed=42, max_new_tokens=8)

    # An incomplete folder (no state.json) is ignored; reloading gives the same policy.
    (roots["full"] / "v000002").mkdir()
    for key, kind in (("l", "lora"), ("f", "full")):
        eng.ok("unload", policy=key)
    loaded_l = eng.load_lora("l", tiny_model, roots["lora"])
    loaded_f = eng.load_full("f", tiny_model, roots["full"])
    dtype = {"dtype": str(eng.dtype).removeprefix("torch."), "dtype_note": None}
    assert loaded_l == {"policy": "l", "version": 1, "source": str(roots["lora"] / "v000001" / "adapter"), **dtype, "role": "trainer"}
    assert loaded_f == {"policy": "f", "version": 1, "source": str(roots["full"] / "v000001" / "model"), **dtype, "role": "trainer"}
    for key in ("l", "f"):
        assert eng.gen(key, PLAN_PROMPT, version=1, n=2, seed=42, max_new_tokens=8) == probes[key]
    model, _ = load_hf(str(roots["full"] / "v000001" / "model"))
    s = probes["f"][0]
    assert torch.allclose(teacher_forced(model, s["prompt_ids"], s["response_ids"]), torch.tensor(s["logprobs"]),
                          atol=1e-4)


def test_kind_mismatch_is_a_load_error(eng, tiny_model, tmp_path):
    root = tmp_path / "ck"
    eng.load_full("f", tiny_model, root)
    s = eng.gen("f", PLAN_PROMPT, seed=1, max_new_tokens=3)[0]
    assert eng.update("f", 0, [as_train(s, 1.0)], root)["ok"]
    resp = eng.call("load", policy="l", kind="lora", model_path=tiny_model, base="b", lora=LORA, optim=OPTIM,
                    checkpoint_root=str(root))
    assert resp["ok"] is False and resp["error"]["type"] == "LoadError" and str(root) in resp["error"]["message"]


def test_retention_keeps_the_newest_and_every_nth_and_updates_stay_exactly_once(eng, tiny_model, tmp_path):
    root = tmp_path / "ck"
    eng.load_full("k", tiny_model, root, optim={**OPTIM, "lr": 1e-2})
    s = eng.gen("k", TOOL_PROMPT, seed=3, max_new_tokens=6)[0]
    keep = dict(keep_last=2, keep_every=3)
    on_disk = lambda: sorted(p for p in os.listdir(root))  # noqa: E731
    kept = []
    for v in range(6):
        if v == 4:  # a removal cut short by a crash: gone at the next prune
            (root / ".pruned-v000002-99999").mkdir()
        r = eng.update("k", v, [as_train(s, 1.0 if v % 2 else -1.0)], root, **keep)["result"]
        kept.append(r["kept_versions"])
    # The newest two, and the versions keep_every divides; the rest removed as the run went on.
    assert kept == [[1], [1, 2], [2, 3], [3, 4], [3, 4, 5], [3, 5, 6]]
    assert on_disk() == ["v000003", "v000005", "v000006"]

    # Exactly-once with retention: the update into the newest version, retried in this engine and in
    # a fresh one (its recorded result read from the newest checkpoint, which is always kept).
    recorded = r
    again = eng.update("k", 5, [as_train(s, 1.0)], root, **keep)["result"]
    assert again["replayed"] and {**again, "replayed": False} == recorded
    eng.ok("unload", policy="k")
    assert eng.load_full("k", tiny_model, root)["version"] == 6
    fresh = eng.update("k", 5, [as_train(s, 1.0)], root, **keep)["result"]
    assert fresh["replayed"] and fresh["loss"] == recorded["loss"] and fresh["kept_versions"] == [3, 5, 6]

    # Without a retention nothing is removed and nothing is reported.
    r = eng.update("k", 6, [as_train(s, 1.0)], root)["result"]
    assert "kept_versions" not in r and on_disk() == ["v000003", "v000005", "v000006", "v000007"]

    for bad in (dict(keep_last=0), dict(keep_last=1, keep_every=0)):
        resp = eng.update("k", 7, [as_train(s, 1.0)], root, **bad)
        assert resp["ok"] is False and resp["error"]["type"] == "BadRequest" and "keep_last" in resp["error"]["message"]


def test_a_checkpoint_that_cannot_be_written_fails_the_update_clearly_and_leaves_nothing(eng, tiny_model, tmp_path, monkeypatch):
    """A full disk mid-checkpoint (torch's writer raises RuntimeError "unexpected pos"): the update
    fails naming the checkpoint and the free space, its partial folder is gone, and the retry, after
    the policy is loaded again, writes the version."""
    import tandem_engine.checkpoint as checkpoint

    root = tmp_path / "ck"
    eng.load_full("w", tiny_model, root)
    s = eng.gen("w", TOOL_PROMPT, seed=3, max_new_tokens=4)[0]
    real_save = checkpoint.torch.save

    def full_disk(obj, path, *a, **kw):
        if str(path).endswith("optimizer.pt"):
            raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 290285248 vs 290285140")
        return real_save(obj, path, *a, **kw)

    monkeypatch.setattr(checkpoint.torch, "save", full_disk)
    resp = eng.update("w", 0, [as_train(s, 1.0)], root)
    assert resp["ok"] is False and resp["error"]["type"] == "CheckpointWriteFailed"
    assert f"writing checkpoint v1 under {root} failed" in resp["error"]["message"] and "GiB free" in resp["error"]["message"]
    assert os.listdir(root) == [], "no partial folder left"
    monkeypatch.setattr(checkpoint.torch, "save", real_save)
    assert eng.load_full("w", tiny_model, root)["version"] == 0  # the update had moved the weights: unloaded
    assert eng.update("w", 0, [as_train(s, 1.0)], root)["ok"] and os.listdir(root) == ["v000001"]
