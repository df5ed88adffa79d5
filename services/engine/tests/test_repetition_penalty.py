"""`repetition_penalty` (vLLM's and HF's): the penalised logits on a hand-built row, the seen-token masks
as rows join and leave a batch, greedy decoding against HF's processor, and the request's checks."""

from __future__ import annotations

import pytest
import torch

from conftest import PLAN_PROMPT, TOOL_PROMPT, load_hf, request, same_tokens, teacher_forced
from tandem_engine.generation import Row, SamplingParams, penalize, row_generator
from test_batching import LONG_PROMPT, assert_joining_gets_what_alone_gets

# One hand-built row of 6 logits. Prompt [0, 4], response so far [1, 3]: token 0 and 4 are in the
# prompt only, 1 and 3 were generated, 2 and 5 are unseen. With p = 2 a seen positive logit halves
# and a seen negative one doubles:
LOGITS = [2.0, -1.0, 1.75, 3.0, -0.5, 0.25]
PENALISED = [1.0, -2.0, 1.75, 1.5, -1.0, 0.25]  # greedy: token 3 (3.0) before, token 2 (1.75) after
SEEN = [True, True, False, True, True, False]


def hand_rows(*penalties, temperature=0.0):
    return [Row([0, 4], row_generator("cpu", 0, k), temperature=temperature, repetition_penalty=p, resp=[1, 3])
            for k, p in enumerate(penalties)]


def test_penalised_logits_and_the_greedy_choice_by_hand():
    logits, seen = torch.tensor([LOGITS, LOGITS]), torch.tensor([SEEN, SEEN])
    out = penalize(logits, seen, torch.tensor([2.0, 1.0]))
    assert out[0].tolist() == PENALISED
    assert torch.equal(out[1], logits[1])  # p = 1: the logits bit for bit, seen tokens included
    params = SamplingParams(hand_rows(2.0, 1.0), "cpu")  # the same rows: seen = their prompt and response
    assert params.sample(logits).tolist() == [2, 3]  # the penalty moves the greedy choice; p = 1 does not
    seen[0, 2] = True  # each row's new token is seen from now on (row 1's token 3 already was)
    assert torch.equal(params.seen, seen)
    assert SamplingParams(hand_rows(1.0, 1.0), "cpu").penalized is False  # nothing made when all are off


def test_rows_with_p_1_sample_exactly_as_before_beside_penalised_rows():
    g = torch.Generator().manual_seed(0)
    steps = [torch.randn(3, 50, generator=g) * 3 for _ in range(20)]

    def draws(penalties):
        params = SamplingParams(hand_rows(*penalties, temperature=0.8), "cpu")
        return [params.sample(x).tolist() for x in steps]

    plain, mixed = draws([1.0, 1.0, 1.0]), draws([1.0, 1.3, 1.0])
    assert [[t[0], t[2]] for t in mixed] == [[t[0], t[2]] for t in plain]
    assert [t[1] for t in mixed] != [t[1] for t in plain]


def test_masks_carry_over_when_the_rows_change():
    """A new set of rows takes the kept rows' masks from the previous params (also through params that
    never sampled) and makes the newcomers'; the same as making every mask from the token ids."""
    V = 40
    a, b, c = (Row(list(range(k, k + 5)), row_generator("cpu", 0, k), repetition_penalty=1.2) for k in (0, 10, 20))
    first = SamplingParams([a, b], "cpu")
    g = torch.Generator().manual_seed(1)
    for _ in range(6):
        for r, t in zip([a, b], first.sample(torch.randn(2, V, generator=g)).tolist()):
            r.resp.append(t)  # what sample_next does
    unsampled = SamplingParams([b, c], "cpu", prev=first)
    carried = SamplingParams([c, b], "cpu", prev=unsampled)
    fresh = SamplingParams([c, b], "cpu")
    assert torch.equal(carried._seen_masks(V, "cpu"), fresh._seen_masks(V, "cpu"))
    assert carried._prev is None  # the old masks are let go


@pytest.mark.fp32
def test_greedy_generation_matches_hf_repetition_penalty(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    model, _ = load_hf(tiny_model)
    plain = eng.gen("gen", PLAN_PROMPT, temperature=0.0, max_new_tokens=24)[0]
    for p in (3.0, 0.8):
        s = eng.gen("gen", PLAN_PROMPT, temperature=0.0, max_new_tokens=24, repetition_penalty=p)[0]
        with torch.no_grad():
            ref = model.generate(torch.tensor([s["prompt_ids"]]), do_sample=False, repetition_penalty=p,
                                 max_new_tokens=24, top_k=None, top_p=None, temperature=None)
        assert same_tokens(s["response_ids"], ref[0, len(s["prompt_ids"]):].tolist())
        # p = 3 breaks the plain greedy's loop (one token over and over); p < 1 keeps it.
        assert (s["response_ids"] != plain["response_ids"]) == (p > 1)
        # The recorded log-probs stay the plain softmax (no penalty), what the update recomputes.
        recomputed = teacher_forced(model, s["prompt_ids"], s["response_ids"])
        assert torch.allclose(recomputed, torch.tensor(s["logprobs"]), atol=1e-4)


def test_penalised_rows_joining_mid_decode_get_the_tokens_they_get_alone(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    reqs = [dict(policy="gen", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=30),
            dict(policy="gen", messages=TOOL_PROMPT, n=3, seed=5, max_new_tokens=6, repetition_penalty=2.0),
            dict(policy="gen", messages=LONG_PROMPT, n=1, temperature=0.0, max_new_tokens=12, repetition_penalty=3.0),
            dict(policy="gen", messages=TOOL_PROMPT, n=2, seed=9, top_k=20, max_new_tokens=9, repetition_penalty=1.2)]
    assert_joining_gets_what_alone_gets(eng, reqs)


def test_bad_repetition_penalty_is_refused_naming_the_field(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    base = request("gen", PLAN_PROMPT, max_new_tokens=2)
    for bad in (0, -1.2, "1.2", True):
        resp = eng.call("generate", requests=[{**base, "repetition_penalty": bad}])
        assert resp["ok"] is False and resp["error"]["type"] == "BadRequest", (bad, resp)
        assert "repetition_penalty" in resp["error"]["message"], resp
    assert len(eng.gen("gen", PLAN_PROMPT, max_new_tokens=2, repetition_penalty=1)) == 1  # an int is a number
