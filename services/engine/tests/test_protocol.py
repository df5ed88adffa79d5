"""The JSON-lines protocol of a real `engine.py` child process (see PROTOCOL.md)."""

from __future__ import annotations

from conftest import DEVICE, LORA, OPTIM, PLAN_PROMPT, TOOL_PROMPT, UPDATE, as_train, request


def test_ready_and_ping(engine):
    assert engine.ready["ready"] is True and engine.ready["device"] == DEVICE and engine.ready["torch"]
    result = engine.ok("ping")
    assert result["pong"] is True and isinstance(result["policies"], dict)


def test_errors_keep_serving(engine, tmp_path):
    resp = engine.call("frobnicate")
    assert resp["ok"] is False and resp["error"]["type"] == "UnknownOp"
    resp = engine.send_raw("this is not json")
    assert resp == {"id": None, "ok": False, "error": resp["error"]} and resp["error"]["type"] == "BadRequest"
    resp = engine.call("generate", requests=[request("never-loaded", PLAN_PROMPT)])
    assert resp["ok"] is False and resp["error"]["type"] == "PolicyNotLoaded"
    resp = engine.call("load", policy="x", kind="sideways", model_path=str(tmp_path), optim=OPTIM, checkpoint_root="")
    assert resp["ok"] is False and resp["error"]["type"] == "BadRequest"
    # The engine has no defaults of its own for what a run configures: a field left out is named, with its op.
    partial = {k: v for k, v in request("never-loaded", PLAN_PROMPT).items() if k != "top_p"}
    resp = engine.call("generate", requests=[partial])
    assert resp["error"] == {"type": "BadRequest", "message": "generate: missing field 'requests[0].top_p'"}
    optim = {k: v for k, v in OPTIM.items() if k != "warmup_start"}
    resp = engine.call("load", policy="x", kind="full", model_path=str(tmp_path), optim=optim, checkpoint_root="")
    assert resp["error"] == {"type": "BadRequest", "message": "load: missing field 'optim.warmup_start'"}
    missing = str(tmp_path / "no-such-model")
    for op, extra in (("inspect", {}), ("load", dict(policy="bad", kind="full", optim=OPTIM, checkpoint_root=""))):
        resp = engine.call(op, model_path=missing, **extra)
        assert resp["ok"] is False and resp["error"]["type"] == "LoadError" and missing in resp["error"]["message"]
    assert engine.ok("ping")["pong"] is True


def test_round_trip(engine, tiny_model, tmp_path):
    assert engine.ok("inspect", model_path=tiny_model)["kind"] == "hf"
    for name in ("plan", "tool"):
        assert engine.ok("load", policy=f"run/{name}", kind="lora", model_path=tiny_model, base="run/base", lora=LORA,
                         optim=OPTIM, checkpoint_root=str(tmp_path / name)) == {
            "policy": f"run/{name}", "version": 0, "source": tiny_model,
            "dtype": str(engine.dtype).removeprefix("torch."), "dtype_note": None, "role": "trainer"}
    engine.ok("load", policy="run/critic", kind="full", model_path=tiny_model, optim=OPTIM,
              checkpoint_root=str(tmp_path / "critic"))
    common = dict(newer_within=0, temperature=1.0, top_p=0.95, top_k=50, min_p=0.0, repetition_penalty=1.0, max_new_tokens=8,
                  stop=["####"], ignore_eos=False, enable_thinking=False, max_prompt_tokens=2048, truncation="error")
    res = engine.ok("generate", requests=[
        dict(policy="run/plan", version=0, messages=PLAN_PROMPT, n=2, seed=1, **common),
        dict(policy="run/critic", version=0, messages=TOOL_PROMPT, n=1, seed=2, **common),
        dict(policy="run/tool", version=0, messages=TOOL_PROMPT, n=3, seed=3, **common),
    ])["results"]
    assert [(r["policy"], r["version"], len(r["samples"])) for r in res] == [
        ("run/plan", 0, 2), ("run/critic", 0, 1), ("run/tool", 0, 3)]
    sample = res[2]["samples"][0]
    assert set(sample) == {"text", "prompt_ids", "response_ids", "logprobs", "finish_reason"}

    result = engine.ok("update", policy="run/tool", from_version=0,
                       samples=[as_train(s, a, f"t{i}") for i, (s, a) in enumerate(zip(res[2]["samples"], [1, -1, 0]))],
                       checkpoint_root=str(tmp_path / "tool"), **UPDATE)
    assert set(result) == {"version", "replayed", "loss", "pg_loss", "kl", "clip_fraction", "approx_kl", "entropy",
                           "grad_norm", "skipped_step", "tokens", "samples", "samples_forwarded", "logprob_gap", "lr", "update_s", "optimizer_state_mb", "optimizer_steps",
                           "rollout_weight_mean", "rollout_weight_std", "rollout_weight_min", "rollout_weight_max",
                           "dtype", "dtype_note", "masters_mb", "checkpoint"}
    assert result["version"] == 1 and result["replayed"] is False and result["samples"] == 3
    assert result["samples_forwarded"] == 2  # the sample of advantage 0 adds no gradient
    replay = engine.ok("update", policy="run/tool", from_version=0, samples=[], checkpoint_root=str(tmp_path / "tool"),
                       **UPDATE)
    assert replay == {**result, "replayed": True}
    assert engine.ok("ping")["policies"] == {"run/plan": 0, "run/tool": 1, "run/critic": 0}
    for name in ("plan", "tool", "critic"):
        assert engine.ok("unload", policy=f"run/{name}") == {"policy": f"run/{name}", "unloaded": True}
    assert engine.ok("unload", policy="run/plan")["unloaded"] is False
