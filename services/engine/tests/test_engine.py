"""Behavioural tests of the tensor engine (run: python -m pytest services/engine/tests -q)."""

from __future__ import annotations

import json
import math
import os

import pytest
import torch

from tandem_engine.ppo import ppo_loss

PLAN_PROMPT = [
    {"role": "system", "content": "You are plan_agent in a team solving a Plan-Path grid task. "
                                  "Give the moves after '####' as a JSON list."},
    {"role": "user", "content": "Grid:\nS..#\n.#..\n...G\n....\nFind the moves that take S to G."},
]
TOOL_PROMPT = [
    {"role": "system", "content": "You are tool_call_agent. Write a Python code block that prints the moves."},
    {"role": "user", "content": "Grid:\n.S..\n.##.\n...G\nWhat actions reach the goal?"},
]
GEN = dict(temperature=1.0, top_p=1.0, top_k=-1, max_new_tokens=16)


# ----------------------------------------------------------------------------- helpers

def load_hf(folder):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True).eval()
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


@torch.no_grad()
def teacher_forced(model, prompt_ids, response_ids):
    """log p(response_t | prefix) for one unpadded sequence, in the test process."""
    ids = torch.tensor([prompt_ids + response_ids])
    logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
    pos = torch.arange(len(response_ids)) + len(prompt_ids) - 1
    return logp[pos, torch.tensor(response_ids)]


def load(engine, policy, model_path, root):
    return engine.ok("load", policy=policy, model_path=model_path, checkpoint_root=str(root))


def update(engine, policy, from_version, samples, root, **kw):
    args = dict(lr=1e-3, clip_low=0.2, clip_high=0.2, max_grad_norm=1.0, micro_batch_size=2)
    args.update(kw)
    return engine.call("update", policy=policy, from_version=from_version, samples=samples,
                       checkpoint_root=str(root), **args)


def as_train(sample, advantage, sample_id="s"):
    return {"sample_id": sample_id, "prompt_ids": sample["prompt_ids"], "response_ids": sample["response_ids"],
            "logprobs": sample["logprobs"], "advantage": advantage}


# ----------------------------------------------------------------------------- PPO loss

def test_ppo_loss_ratio_one_is_negative_token_mean_advantage():
    logp = torch.log(torch.rand(3, 5) * 0.9 + 0.05)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=torch.float32)
    adv = torch.tensor([1.0, -2.0, 0.5])
    loss, stats = ppo_loss(logp, logp.clone(), adv, mask)
    expected = -(adv[:, None] * mask).sum() / mask.sum()  # -mean of A over all tokens (5 + 2 + 3)
    assert loss.item() == pytest.approx(expected.item(), abs=1e-6)
    assert stats["clipped"] == 0 and stats["tokens"] == 10 and stats["kl"] == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("ratio,adv,loss,clipped", [
    (1.5, 1.0, -1.2, True),    # above 1+eps with A>0: capped at (1+eps)A, no gradient
    (1.5, -1.0, 1.5, False),   # above 1+eps with A<0: pessimistic unclipped branch stays active
    (0.5, -1.0, 0.8, True),    # below 1-eps with A<0: capped at (1-eps)A, no gradient
    (0.5, 1.0, -0.5, False),   # below 1-eps with A>0: unclipped branch
    (1.1, 1.0, -1.1, False),   # inside the trust region: plain ratio * A
])
def test_ppo_loss_clipping(ratio, adv, loss, clipped):
    old = torch.full((1, 4), -1.0)
    new = (old + math.log(ratio)).requires_grad_(True)
    value, stats = ppo_loss(new, old, torch.tensor([adv]), torch.ones(1, 4), clip_low=0.2, clip_high=0.2)
    assert value.item() == pytest.approx(loss, abs=1e-5)
    value.backward()
    assert (new.grad.abs().sum().item() == 0.0) == clipped
    assert stats["clipped"] == (4 if clipped else 0)


def test_ppo_loss_micro_batches_sum_to_full_batch():
    new, old = torch.randn(4, 6), torch.randn(4, 6)
    mask = (torch.rand(4, 6) > 0.3).float()
    adv = torch.randn(4)
    full, _ = ppo_loss(new, old, adv, mask)
    n = mask.sum()
    parts = sum(ppo_loss(new[i:i + 1], old[i:i + 1], adv[i:i + 1], mask[i:i + 1], num_tokens=n)[0] for i in range(4))
    assert parts.item() == pytest.approx(full.item(), abs=1e-6)


# ----------------------------------------------------------------------------- protocol basics

def test_ready_and_ping(engine):
    assert engine.ready["ready"] is True and engine.ready["device"] == "cpu" and engine.ready["torch"]
    result = engine.ok("ping")
    assert result["pong"] is True and isinstance(result["policies"], dict)


def test_unknown_op_and_garbage_keep_serving(engine):
    resp = engine.call("frobnicate")
    assert resp["ok"] is False and resp["error"]["type"] == "UnknownOp"
    resp = engine.send_raw("this is not json")
    assert resp["ok"] is False and resp["error"]["type"] == "BadRequest"
    resp = engine.call("generate", policy="never-loaded", version=0, prompts=[PLAN_PROMPT])
    assert resp["ok"] is False and resp["error"]["type"] == "PolicyNotLoaded"
    assert engine.ok("ping")["pong"] is True


def test_bad_model_path(engine, tmp_path):
    missing = str(tmp_path / "no-such-model")
    resp = engine.call("load", policy="bad", model_path=missing, checkpoint_root=str(tmp_path / "ck"))
    assert resp["ok"] is False and resp["error"]["type"] == "LoadError"
    assert missing in resp["error"]["message"]
    not_hf = tmp_path / "empty-folder"
    not_hf.mkdir()
    resp = engine.call("load", policy="bad", model_path=str(not_hf), checkpoint_root="")
    assert resp["ok"] is False and str(not_hf) in resp["error"]["message"] and "config.json" in resp["error"]["message"]
    assert "bad" not in engine.ok("ping")["policies"]


# ----------------------------------------------------------------------------- generate

def test_generate_shapes_and_logprobs(engine, tiny_model, tmp_path):
    assert load(engine, "gen", tiny_model, tmp_path / "ck") == {"policy": "gen", "version": 0, "source": tiny_model}
    res = engine.ok("generate", policy="gen", version=0, prompts=[PLAN_PROMPT, TOOL_PROMPT], n=3, seed=7, **GEN)
    assert res["version"] == 0 and len(res["samples"]) == 2
    model, tok = load_hf(tiny_model)
    stop_ids = {tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")}
    for prompt, group in zip([PLAN_PROMPT, TOOL_PROMPT], res["samples"]):
        assert len(group) == 3
        rendered = tok.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        assert rendered.endswith("<|im_start|>assistant\n")
        for s in group:
            assert s["prompt_ids"] == tok(rendered, add_special_tokens=False)["input_ids"]
            assert 1 <= len(s["response_ids"]) == len(s["logprobs"]) <= GEN["max_new_tokens"]
            assert all(lp <= 0 for lp in s["logprobs"])
            assert s["finish_reason"] in ("stop", "length")
            if s["finish_reason"] == "stop":
                assert s["response_ids"][-1] in stop_ids
            else:
                assert len(s["response_ids"]) == GEN["max_new_tokens"]
            assert "<|im_end|>" not in s["text"] and "<|im_start|>" not in s["text"]
            recomputed = teacher_forced(model, s["prompt_ids"], s["response_ids"])
            assert torch.allclose(recomputed, torch.tensor(s["logprobs"]), atol=1e-4), (recomputed, s["logprobs"])


def test_generate_seeded_and_greedy(engine, tiny_model, tmp_path):
    load(engine, "gen", tiny_model, tmp_path / "ck")
    req = dict(policy="gen", version=0, prompts=[PLAN_PROMPT], n=4, **GEN)
    a = engine.ok("generate", seed=123, **req)
    b = engine.ok("generate", seed=123, **req)
    c = engine.ok("generate", seed=124, **req)
    assert a == b
    assert [s["response_ids"] for s in a["samples"][0]] != [s["response_ids"] for s in c["samples"][0]]
    greedy = engine.ok("generate", seed=None, **{**req, "temperature": 0.0})
    assert len({tuple(s["response_ids"]) for s in greedy["samples"][0]}) == 1
    resp = engine.call("generate", seed=1, **{**req, "version": 3})
    assert resp["ok"] is False and resp["error"]["type"] == "VersionMismatch"


def test_generate_top_k_one_is_greedy(engine, tiny_model, tmp_path):
    load(engine, "gen", tiny_model, tmp_path / "ck")
    req = dict(policy="gen", version=0, prompts=[TOOL_PROMPT], n=2, max_new_tokens=8)
    topk = engine.ok("generate", seed=5, temperature=1.0, top_p=1.0, top_k=1, **req)
    greedy = engine.ok("generate", seed=5, temperature=0.0, top_p=1.0, top_k=-1, **req)
    assert [s["response_ids"] for s in topk["samples"][0]] == [s["response_ids"] for s in greedy["samples"][0]]


# ----------------------------------------------------------------------------- update

def test_update_raises_logprob_of_positive_sample(engine, tiny_model, tmp_path):
    root = tmp_path / "ck"
    load(engine, "train", tiny_model, root)
    sample = engine.ok("generate", policy="train", version=0, prompts=[PLAN_PROMPT], n=1, seed=3, **GEN)["samples"][0][0]
    before = sum(sample["logprobs"])
    empty = {"sample_id": "empty", "prompt_ids": sample["prompt_ids"], "response_ids": [], "logprobs": [], "advantage": -1.0}
    for v in range(3):
        resp = update(engine, "train", v, [as_train(sample, 1.0), empty], root)
        assert resp["ok"], resp
        r = resp["result"]
        assert r["version"] == v + 1 and r["replayed"] is False
        assert r["samples"] == 1 and r["tokens"] == len(sample["response_ids"])
        assert r["grad_norm"] > 0 and r["clip_fraction"] == 0 and r["approx_kl"] == pytest.approx(0, abs=1e-6)
        # On-policy: the recomputed log-probs equal the rollout's, so ratio = 1 and loss = -mean(A).
        assert r["logprob_gap"] < 1e-4 and r["loss"] == pytest.approx(-1.0, abs=1e-4)
        assert r["checkpoint"] == str(root / f"v{v + 1:06d}")
        # Next "rollout": the sample's log-probs under the checkpoint just written.
        model, _ = load_hf(r["checkpoint"] + "/model")
        sample = {**sample, "logprobs": teacher_forced(model, sample["prompt_ids"], sample["response_ids"]).tolist()}
    after = sum(sample["logprobs"])
    assert after > before + 0.1, (before, after)


def test_micro_batching_matches_full_batch(engine, tiny_model, tmp_path):
    for name in ("mb1", "mb4"):
        load(engine, name, tiny_model, tmp_path / name)
    groups = engine.ok("generate", policy="mb1", version=0, prompts=[PLAN_PROMPT, TOOL_PROMPT], n=2, seed=11, **GEN)
    samples = [as_train(s, adv, f"s{i}") for i, (s, adv) in
               enumerate(zip(groups["samples"][0] + groups["samples"][1], [1.0, -0.5, 0.7, -1.2]))]
    r1 = update(engine, "mb1", 0, samples, tmp_path / "mb1", micro_batch_size=1)["result"]
    r4 = update(engine, "mb4", 0, samples, tmp_path / "mb4", micro_batch_size=4)["result"]
    for key in ("loss", "grad_norm", "approx_kl", "logprob_gap"):
        assert r1[key] == pytest.approx(r4[key], rel=1e-4, abs=1e-6), key
    probe = dict(version=1, prompts=[PLAN_PROMPT], n=1, seed=0, temperature=0.0, top_p=1.0, top_k=-1, max_new_tokens=8)
    a = engine.ok("generate", policy="mb1", **probe)["samples"][0][0]["logprobs"]
    b = engine.ok("generate", policy="mb4", **probe)["samples"][0][0]["logprobs"]
    assert torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-4)
    for name in ("mb1", "mb4"):
        engine.ok("unload", policy=name)


def test_update_idempotent_and_checkpoint_roundtrip(engine, tiny_model, tmp_path):
    root = tmp_path / "ck"
    load(engine, "idem", tiny_model, root)
    sample = engine.ok("generate", policy="idem", version=0, prompts=[TOOL_PROMPT], n=1, seed=9, **GEN)["samples"][0][0]
    first = update(engine, "idem", 0, [as_train(sample, 1.0)], root)["result"]
    probe = dict(policy="idem", version=1, prompts=[PLAN_PROMPT], n=2, seed=42, **GEN)
    gen_v1 = engine.ok("generate", **probe)

    # Same from_version again: recorded result, no step (weights unchanged).
    again = update(engine, "idem", 0, [as_train(sample, 1.0)], root)
    assert again["ok"] and again["result"]["replayed"] is True
    assert {k: v for k, v in again["result"].items() if k != "replayed"} == {k: v for k, v in first.items() if k != "replayed"}
    assert engine.ok("generate", **probe) == gen_v1
    assert engine.ok("ping")["policies"]["idem"] == 1
    resp = update(engine, "idem", 5, [as_train(sample, 1.0)], root)
    assert resp["ok"] is False and resp["error"]["type"] == "VersionMismatch"

    # Checkpoint layout.
    ck = root / "v000001"
    assert (ck / "model" / "config.json").is_file() and (ck / "model" / "model.safetensors").is_file()
    assert (ck / "model" / "tokenizer.json").is_file() and (ck / "optimizer.pt").is_file()
    state = json.loads((ck / "state.json").read_text())
    assert state["version"] == 1 and state["update_result"]["loss"] == first["loss"] and "created_at" in state
    assert not [p for p in os.listdir(root) if p.startswith(".tmp")]

    # An incomplete folder (no state.json) is ignored; reload picks v000001 with identical logits.
    (root / "v000002").mkdir()
    engine.ok("unload", policy="idem")
    loaded = load(engine, "idem", tiny_model, root)
    assert loaded["version"] == 1 and loaded["source"] == str(ck / "model")
    assert engine.ok("generate", **probe) == gen_v1
    model, _ = load_hf(str(ck / "model"))
    s = gen_v1["samples"][0][0]
    assert torch.allclose(teacher_forced(model, s["prompt_ids"], s["response_ids"]), torch.tensor(s["logprobs"]), atol=1e-4)

    # After a restart the replay comes from state.json; training continues from the restored optimizer.
    replay = update(engine, "idem", 0, [as_train(sample, 1.0)], root)["result"]
    assert replay["replayed"] is True and replay["version"] == 1
    second = update(engine, "idem", 1, [as_train(sample, 1.0)], root)
    assert second["ok"] and second["result"]["version"] == 2 and (root / "v000002" / "state.json").is_file()
    engine.ok("unload", policy="idem")
