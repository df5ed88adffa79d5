"""Teacher-forced log-probs: samples sharing a prompt share one pass over it (models.Backbone.logprobs),
and that gives the same values and the same gradient as running every sample on its own; so does
the checkpointed pass, and so do both with the vocabulary's log-softmax made in small chunks."""

from __future__ import annotations

import pytest
import torch

from conftest import PLAN_PROMPT, TOOL_PROMPT
from tandem_engine.policy import pack


def _rows(bb):
    plan, tool = bb.render(PLAN_PROMPT), bb.render(TOOL_PROMPT)
    g = torch.Generator().manual_seed(0)
    resp = [torch.randint(0, bb.vocab_size, (n,), generator=g).tolist() for n in (7, 3, 1, 5, 4)]
    # plan x3 (lengths 7, 3, 1), tool x1, plan again: groups of 4 and 1, interleaved in the input order.
    return [plan, plan, plan, tool, plan], resp


def _one_by_one(model, prompts, responses):
    """Reference: each prompt + response as its own unpadded sequence, [B, Tr] zero-padded."""
    width = max(len(r) for r in responses)
    out = []
    for p, r in zip(prompts, responses):
        logits = model(input_ids=torch.tensor([p + r], device=model.device)).logits[0].float()
        pos = torch.arange(len(r)) + len(p) - 1
        lp = torch.log_softmax(logits[pos], dim=-1)[torch.arange(len(r)), torch.tensor(r)]
        out.append(torch.nn.functional.pad(lp, (0, width - len(r))))
    return torch.stack(out)


def _grads(model, loss):
    model.zero_grad(set_to_none=True)
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("chunk", [1024, 2])  # 2: a chunk splits a row, the last one is ragged
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.fp32
def test_shared_prompt_logprobs_and_gradient_equal_per_sample(eng, tiny_model, tmp_path, monkeypatch, chunk, checkpointing):
    import tandem_engine.models as models

    monkeypatch.setattr(models, "LOGIT_CHUNK", chunk)
    eng.load_full("lp", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["lp"].backbone
    bb.model.train()  # as in an update (HF checkpoints layers in training mode only); no dropout in this model
    prompts, responses = _rows(bb)
    logp, mask, ent = bb.logprobs(prompts, responses, entropy=True, checkpointing=checkpointing)
    ref = _one_by_one(bb.model, prompts, responses)

    assert logp.shape == mask.shape == ent.shape == (5, 7)
    assert torch.equal(mask.sum(-1).cpu(), torch.tensor([7.0, 3, 1, 5, 4]))
    assert torch.allclose(logp, ref, atol=1e-5), (logp - ref).abs().max()
    assert (logp[mask == 0] == 0).all() and (ent[mask == 0] == 0).all() and (ent[mask == 1] > 0).all()

    weights = torch.linspace(0.5, 1.5, 5, device=bb.device)[:, None]  # distinct per row: a row mix-up changes the gradient
    mine = _grads(bb.model, (bb.logprobs(prompts, responses, checkpointing=checkpointing)[0] * weights).sum())
    theirs = _grads(bb.model, (_one_by_one(bb.model, prompts, responses) * weights).sum())
    bb.model.eval()
    assert mine.keys() == theirs.keys() and len(mine) > 0
    for name in mine:
        assert torch.allclose(mine[name], theirs[name], atol=1e-5, rtol=1e-4), name


@pytest.mark.fp32
def test_shared_prompt_logprobs_with_a_lora_adapter(eng, tiny_model, tmp_path):
    eng.load_lora("a", tiny_model, tmp_path / "ck")
    policy = eng.engine.policies["a"]
    bb = policy.backbone
    # A nonzero adapter, so that the adapter's path matters.
    with torch.no_grad():
        for n, p in bb.model.named_parameters():
            if "lora_B" in n:
                p.add_(0.05 * torch.randn_like(p))
    bb.model.set_adapter(policy.adapter)
    prompts, responses = _rows(bb)
    with torch.no_grad():
        logp = bb.logprobs(prompts, responses)[0]
        ref = _one_by_one(bb.model, prompts, responses)
    assert torch.allclose(logp, ref, atol=1e-5), (logp - ref).abs().max()


def test_pack_counts_each_prompt_once_and_keeps_groups_together():
    def s(prompt, n):
        return {"prompt_ids": list(prompt), "response_ids": [7] * n}

    a, b = range(100), range(200, 260)
    samples = [s(a, 10), s(b, 5), s(a, 10), s(b, 5), s(a, 10)]
    # Everything fits: 100 + 3*10 + 60 + 2*5 = 200 tokens, grouped by prompt.
    assert [[len(x["prompt_ids"]) for x in mb] for mb in pack(samples, 200)] == [[100, 100, 100, 60, 60]]
    # 130 tokens: group a (130) fills a micro-batch, group b (70) the next.
    assert [len(mb) for mb in pack(samples, 130)] == [3, 2]
    # 120: group a splits (100 + 10 + 10, then 100 + 10), each part counting its prompt.
    assert [len(mb) for mb in pack(samples, 120)] == [2, 1, 2]
    # A sample larger than the budget goes alone.
    assert [len(mb) for mb in pack(samples, 1)] == [1] * 5
