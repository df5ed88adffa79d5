"""LoRA policies on a shared base: one base instance, mixed-adapter batches, isolation, PEFT layout."""

from __future__ import annotations

import re

import pytest
import torch

from conftest import LORA, OPTIM, PLAN_PROMPT, TOOL_PROMPT, as_train, load_hf, request, same_tokens, teacher_forced

FAST = {**OPTIM, "lr": 2e-2}


def weights(module) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in module.named_parameters()}


def split(named: dict, adapter: str):
    mine = re.compile(rf"\.{adapter}(\.|$)")
    return {n: t for n, t in named.items() if mine.search(n)}


def train(eng, policy, prompt, root, steps=3, advantage=1.0, seed=0):
    """A few on-policy updates pushing up one fixed sample; returns (sample, last result)."""
    sample = eng.gen(policy, prompt, seed=seed, max_new_tokens=10)[0]
    for v in range(steps):
        r = eng.update(policy, v, [as_train(sample, advantage)], root)
        assert r["ok"], r
    return sample, r["result"]


def logprobs_under(eng, policy, sample):
    """Teacher-forced log-probs of a sample under a policy, through the engine's own code path."""
    p = eng.engine.policies[policy]
    with torch.no_grad():
        if p.kind == "lora":
            p.backbone.model.set_adapter(p.adapter)
        return p.backbone.logprobs([sample["prompt_ids"]], [sample["response_ids"]])[0][0]


@pytest.mark.fp32
def test_shared_base_mixed_batch_equals_separate_calls(eng, tiny_model, tmp_path):
    for name in ("a", "b", "c"):
        eng.load_lora(name, tiny_model, tmp_path / name, optim=FAST)
    engine = eng.engine
    assert engine.policies["a"].backbone is engine.policies["b"].backbone is engine.policies["c"].backbone
    # Make the adapters differ (a fresh adapter is the identity: lora_B = 0).
    train(eng, "a", PLAN_PROMPT, tmp_path / "a", steps=2)
    train(eng, "b", TOOL_PROMPT, tmp_path / "b", steps=2)

    reqs = [request("a", PLAN_PROMPT, version=2, n=2, temperature=0.0, max_new_tokens=12),
            request("b", TOOL_PROMPT, version=2, n=1, temperature=0.0, max_new_tokens=7),
            request("c", PLAN_PROMPT, version=0, n=1, temperature=0.0, max_new_tokens=12),
            request("b", PLAN_PROMPT, version=2, n=1, temperature=0.0, max_new_tokens=12)]
    # One forward per decoding step for all four requests (they share the base).
    calls = []
    hook = engine.policies["a"].backbone.model.register_forward_pre_hook(lambda m, a, k: calls.append(1),
                                                                         with_kwargs=True)
    try:
        mixed = eng.ok("generate", requests=reqs)["results"]
    finally:
        hook.remove()
    assert len(calls) <= 12
    separate = [eng.ok("generate", requests=[r])["results"][0] for r in reqs]
    for m, s in zip(mixed, separate):
        for x, y in zip(m["samples"], s["samples"]):
            assert same_tokens(x["response_ids"], y["response_ids"])
            if x["response_ids"] == y["response_ids"]:  # always on the CPU (same_tokens)
                assert x["logprobs"] == pytest.approx(y["logprobs"], abs=1e-5)
    # The adapters do make a difference: a vs c (untrained) on the same prompt.
    assert mixed[0]["samples"][0]["logprobs"] != pytest.approx(mixed[2]["samples"][0]["logprobs"], abs=1e-3)
    # And an untrained adapter is exactly the base model.
    base_model, _ = load_hf(tiny_model)
    s = mixed[2]["samples"][0]
    assert torch.allclose(teacher_forced(base_model, s["prompt_ids"], s["response_ids"]),
                          torch.tensor(s["logprobs"]), atol=1e-5)


def test_update_isolation_bit_identical(eng, tiny_model, tmp_path):
    for name in ("a", "b"):
        eng.load_lora(name, tiny_model, tmp_path / name, optim=FAST)
    eng.load_full("f", tiny_model, tmp_path / "f", optim=FAST)
    pa, pb, pf = (eng.engine.policies[k] for k in "abf")
    train(eng, "b", TOOL_PROMPT, tmp_path / "b", steps=1)  # b is non-trivial before a trains

    before = weights(pa.backbone.model)
    full_before = weights(pf.backbone.model)
    sample, result = train(eng, "a", PLAN_PROMPT, tmp_path / "a", steps=2)
    assert result["grad_norm"] > 0
    after = weights(pa.backbone.model)
    a_before, a_after = split(before, pa.adapter), split(after, pa.adapter)
    assert a_before and any(not torch.equal(a_before[n], a_after[n]) for n in a_before)  # a moved
    for n, t in before.items():  # the base and adapter b did not move by a single bit
        if n not in a_before:
            assert torch.equal(t, after[n]), n
    assert split(before, pb.adapter)
    assert all(torch.equal(t, weights(pf.backbone.model)[n]) for n, t in full_before.items())

    # Updating the full model leaves the lora base and both adapters untouched too.
    lora_before = weights(pa.backbone.model)
    train(eng, "f", PLAN_PROMPT, tmp_path / "f", steps=1)
    assert all(torch.equal(t, weights(pa.backbone.model)[n]) for n, t in lora_before.items())
    assert any(not torch.equal(t, weights(pf.backbone.model)[n]) for n, t in full_before.items())


def test_two_l2_adapters_diverge_on_different_data(eng, tiny_model, tmp_path):
    eng.load_lora("plan", tiny_model, tmp_path / "plan", optim=FAST)
    eng.load_lora("tool", tiny_model, tmp_path / "tool", optim=FAST)
    s_plan = eng.gen("plan", PLAN_PROMPT, seed=1, max_new_tokens=10)[0]
    s_tool = eng.gen("tool", TOOL_PROMPT, seed=2, max_new_tokens=10)[0]
    start = {k: (logprobs_under(eng, k, s_plan).sum().item(), logprobs_under(eng, k, s_tool).sum().item())
             for k in ("plan", "tool")}
    for v in range(3):
        assert eng.update("plan", v, [as_train(s_plan, 1.0)], tmp_path / "plan")["ok"]
        assert eng.update("tool", v, [as_train(s_tool, 1.0)], tmp_path / "tool")["ok"]
    end = {k: (logprobs_under(eng, k, s_plan).sum().item(), logprobs_under(eng, k, s_tool).sum().item())
           for k in ("plan", "tool")}
    # Each adapter raised its own agent's sample far more than the other one did.
    gain = {k: (end[k][0] - start[k][0], end[k][1] - start[k][1]) for k in end}
    assert gain["plan"][0] > 1.0 and gain["tool"][1] > 1.0
    assert gain["plan"][0] > gain["tool"][0] + 0.5 and gain["tool"][1] > gain["plan"][1] + 0.5
    pp, pt = eng.engine.policies["plan"], eng.engine.policies["tool"]
    wp = split(weights(pp.backbone.model), pp.adapter)
    wt = split(weights(pt.backbone.model), pt.adapter)
    diff = max((wp[n] - wt[n.replace(f".{pp.adapter}.", f".{pt.adapter}.")]).abs().max().item() for n in wp)
    assert diff > 1e-3


@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing")
@pytest.mark.fp32
def test_saved_adapter_loads_with_peft_and_gives_engine_logits(eng, tiny_model, tmp_path):
    from peft import PeftModel

    eng.load_lora("a", tiny_model, tmp_path / "a", optim=FAST,
                  lora={**LORA, "target_modules": ["q_proj", "v_proj", "down_proj"]})
    sample, result = train(eng, "a", TOOL_PROMPT, tmp_path / "a", steps=2)
    ck = tmp_path / "a" / "v000002" / "adapter"
    assert result["checkpoint"] == str(tmp_path / "a" / "v000002")
    assert sorted(p.name for p in ck.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    base, _ = load_hf(tiny_model)
    peft_model = PeftModel.from_pretrained(base, str(ck)).eval()
    probe = eng.gen("a", PLAN_PROMPT, version=2, seed=4, max_new_tokens=10)[0]
    ids = torch.tensor([probe["prompt_ids"] + probe["response_ids"]])
    with torch.no_grad():
        theirs = torch.log_softmax(peft_model(input_ids=ids).logits[0], -1)
        p = eng.engine.policies["a"]
        p.backbone.model.set_adapter(p.adapter)
        ours = torch.log_softmax(p.backbone.model(input_ids=ids.to(p.device)).logits[0].float(), -1).cpu()
    assert torch.allclose(ours, theirs, atol=1e-5)
    assert teacher_forced(peft_model, probe["prompt_ids"], probe["response_ids"]).tolist() == pytest.approx(
        probe["logprobs"], abs=1e-4)
    # Only the requested modules carry LoRA weights.
    assert all(("q_proj" in n or "v_proj" in n or "down_proj" in n) for n in split(weights(p.backbone.model), p.adapter))


def test_unload_one_adapter_keeps_the_others_and_frees_the_base(eng, tiny_model, tmp_path):
    eng.load_lora("a", tiny_model, tmp_path / "a", optim=FAST)
    eng.load_lora("b", tiny_model, tmp_path / "b", optim=FAST)
    train(eng, "b", TOOL_PROMPT, tmp_path / "b", steps=1)
    before = eng.gen("b", PLAN_PROMPT, version=1, temperature=0.0)[0]
    assert eng.ok("unload", policy="a") == {"policy": "a", "unloaded": True}
    assert eng.gen("b", PLAN_PROMPT, version=1, temperature=0.0)[0] == before
    assert list(eng.engine.bases) == ["base"]
    eng.ok("unload", policy="b")
    assert eng.engine.bases == {}
    # Same base key, other model path: refused.
    eng.load_lora("c", tiny_model, tmp_path / "c")
    resp = eng.call("load", policy="d", kind="lora", model_path=str(tmp_path), base="base", lora=LORA, optim=OPTIM,
                    checkpoint_root="")
    assert resp["ok"] is False and resp["error"]["type"] in ("BadRequest", "LoadError")
