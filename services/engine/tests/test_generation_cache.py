"""The decode loop's cache: one prefill per distinct prompt spread over its rows, preallocated KV buffers."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from conftest import PLAN_PROMPT, TOOL_PROMPT, load_hf, request, same_tokens
from tandem_engine.generation import Row, prefill
from tandem_engine.kv_cache import PreallocatedLayer, spread_prefill


@pytest.mark.fp32
def test_shared_prefill_equals_one_prefill_per_row(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["gen"].backbone
    plan, tool = bb.render(PLAN_PROMPT), bb.render(TOOL_PROMPT)
    assert len(plan) != len(tool)  # so that one of them is left-padded
    g = torch.Generator()
    rows = [Row(plan, g), Row(tool, g), Row(plan, g), Row(tool, g), Row(plan, g)]
    logits, cache, attn, src = prefill(bb, rows)  # two distinct prompts prefilled
    assert src.tolist() == [0, 1, 0, 1, 0] and attn.shape[0] == 2
    cache = spread_prefill(cache, src, 4)

    # Reference: every row prefilled on its own row of the batch (DynamicCache).
    P = max(len(plan), len(tool))
    ids = torch.tensor([[bb.pad_id] * (P - len(r.prompt_ids)) + r.prompt_ids for r in rows], device=bb.device)
    ref_attn = torch.tensor([[0] * (P - len(r.prompt_ids)) + [1] * len(r.prompt_ids) for r in rows], device=bb.device)
    ref_pos = (ref_attn.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        ref = bb.model(input_ids=ids, attention_mask=ref_attn, position_ids=ref_pos, past_key_values=DynamicCache(),
                       use_cache=True)
    assert torch.allclose(logits, ref.logits[:, -1].float(), atol=1e-5)
    assert torch.equal(attn[src], ref_attn)
    for mine, theirs in zip(cache.layers, ref.past_key_values.layers):
        assert isinstance(mine, PreallocatedLayer) and mine.get_seq_length() == P and mine.get_max_length() == P + 4
        assert torch.allclose(mine.keys[:, :, :P], theirs.keys, atol=1e-5)
        assert torch.allclose(mine.values[:, :, :P], theirs.values, atol=1e-5)


@torch.no_grad()
def _greedy_without_cache(model, prompt_ids, steps, stop_ids):
    """Greedy decoding recomputing the whole sequence at every step: no cache, no padding."""
    out = []
    for _ in range(steps):
        nxt = int(model(input_ids=torch.tensor([prompt_ids + out])).logits[0, -1].argmax())
        out.append(nxt)
        if nxt in stop_ids:
            break
    return out


@pytest.mark.fp32
def test_greedy_tokens_equal_decoding_without_cache(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    reqs = [request("gen", m, n=2, temperature=0.0, max_new_tokens=16) for m in (PLAN_PROMPT, TOOL_PROMPT)]
    res = eng.ok("generate", requests=reqs)["results"]
    model, _ = load_hf(tiny_model)
    stop_ids = eng.engine.policies["gen"].backbone.stop_ids
    for r in res:
        want = _greedy_without_cache(model, r["samples"][0]["prompt_ids"], 16, stop_ids)
        assert same_tokens([s["response_ids"] for s in r["samples"]], [want, want])


@pytest.mark.fp32
def test_seeded_samples_do_not_depend_on_batch_neighbours(eng, tiny_model, tmp_path):
    """A request's rows share one prefill; what they sample depends on its seed only, not on which other
    requests (and how many distinct prompts) are in the batch."""
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    req = request("gen", PLAN_PROMPT, n=3, seed=21, max_new_tokens=10)
    alone = eng.ok("generate", requests=[req])["results"][0]["samples"]
    other = request("gen", TOOL_PROMPT, n=2, seed=4, max_new_tokens=14)
    mixed = eng.ok("generate", requests=[other, req, {**req, "seed": 22}])["results"][1]["samples"]
    assert same_tokens([s["response_ids"] for s in mixed], [s["response_ids"] for s in alone])
    for x, y in zip(mixed, alone):
        if x["response_ids"] == y["response_ids"]:  # always on the CPU (same_tokens)
            assert x["logprobs"] == pytest.approx(y["logprobs"], abs=1e-5)
    assert len({tuple(s["response_ids"]) for s in alone}) > 1  # the rows do sample independently


def test_preallocated_layer_writes_in_place():
    keys, values = torch.zeros(2, 1, 5, 3), torch.zeros(2, 1, 5, 3)
    layer = PreallocatedLayer(keys, values, length=2)
    assert layer.get_mask_sizes(1) == (3, 0)
    k, v = torch.ones(2, 1, 1, 3), torch.full((2, 1, 1, 3), 2.0)
    got_k, got_v = layer.update(k, v)
    assert got_k.shape == (2, 1, 3, 3) and got_k.data_ptr() == keys.data_ptr()  # a view: no copy
    assert (keys[:, :, 2] == 1).all() and (values[:, :, 2] == 2).all() and layer.get_seq_length() == 3
    layer.update(torch.ones(2, 1, 2, 3), torch.ones(2, 1, 2, 3))
    with pytest.raises(RuntimeError, match="KV cache full"):
        layer.update(k, v)


def test_zero_new_tokens_does_no_forward(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["gen"].backbone
    calls = []
    hook = bb.model.register_forward_pre_hook(lambda m, a, k: calls.append(1), with_kwargs=True)
    try:
        out = eng.gen("gen", PLAN_PROMPT, max_new_tokens=0)
    finally:
        hook.remove()
    assert out[0]["response_ids"] == [] and calls == []


@pytest.mark.fp32
def test_one_pass_mixed_lora_equals_peft_adapter_names(eng, tiny_model, tmp_path):
    from tandem_engine.mixed_lora import lora_rows

    for name in ("a", "b", "c"):
        eng.load_lora(name, tiny_model, tmp_path / name)
    policies = eng.engine.policies
    model = policies["a"].backbone.model
    with torch.no_grad():  # distinct non-zero adapters (a fresh one has lora_B = 0)
        torch.manual_seed(0)
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn_like(p) * 0.1)
    names = [policies[k].adapter for k in ("a", "b", "a", "c")]
    ids = torch.randint(0, 1000, (1, 9)).expand(4, -1).to(model.device)  # one sequence: the rows differ by adapter only
    with torch.no_grad():
        want = model(input_ids=ids, adapter_names=names).logits
        with lora_rows(model, names) as kwargs:
            got = model(input_ids=ids, **kwargs).logits
        alone = model(input_ids=ids[1:2], adapter_names=names[1:2]).logits
        hooks = sum(len(m._forward_hooks) for m in model.modules())
    assert torch.allclose(got, want, atol=1e-5) and hooks == 0  # the hooks are gone after the block
    assert not torch.allclose(got[0], got[1], atol=1e-3) and torch.allclose(got[0], got[2], atol=1e-6)
    assert torch.allclose(got[1:2], alone, atol=1e-5)
