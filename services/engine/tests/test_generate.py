"""`generate`: shapes, log-probs, seeding, per-request sampling parameters, stop strings, templates."""

from __future__ import annotations

import math
import shutil

import pytest
import torch

from conftest import PLAN_PROMPT, SAMPLING, TOOL_PROMPT, load_hf, request, same_tokens, teacher_forced


@pytest.mark.fp32
def test_shapes_order_and_logprobs(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    reqs = [request("gen", PLAN_PROMPT, n=3, seed=7, max_new_tokens=16),
            request("gen", TOOL_PROMPT, n=2, seed=8, max_new_tokens=5, temperature=0.7)]
    res = eng.ok("generate", requests=reqs)["results"]
    assert [(r["policy"], r["version"], len(r["samples"])) for r in res] == [("gen", 0, 3), ("gen", 0, 2)]
    model, tok = load_hf(tiny_model)
    stop_ids = {tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")}
    for req, r in zip(reqs, res):
        rendered = tok.apply_chat_template(req["messages"], tokenize=False, add_generation_prompt=True)
        assert rendered.endswith("<|im_start|>assistant\n")
        for s in r["samples"]:
            assert s["prompt_ids"] == tok(rendered, add_special_tokens=False)["input_ids"]
            assert 1 <= len(s["response_ids"]) == len(s["logprobs"]) <= req["max_new_tokens"]
            assert s["finish_reason"] in ("stop", "length")
            if s["finish_reason"] == "stop":
                assert s["response_ids"][-1] in stop_ids
            else:
                assert len(s["response_ids"]) == req["max_new_tokens"]
            assert "<|im_end|>" not in s["text"] and "<|im_start|>" not in s["text"]
            # Plain-softmax log-probs of the sampled tokens (temperature does not enter them).
            recomputed = teacher_forced(model, s["prompt_ids"], s["response_ids"])
            assert torch.allclose(recomputed, torch.tensor(s["logprobs"]), atol=1e-4)


def test_ignore_eos_generates_to_the_length_limit(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    kw = dict(n=8, seed=4, max_new_tokens=120)
    # The tiny model answers and stops well before 120 tokens in some samples; with ignore_eos
    # the same rows (same seed) go on past their stop token to the limit.
    plain = eng.gen("gen", PLAN_PROMPT, **kw)
    assert any(s["finish_reason"] == "stop" for s in plain)
    for p, s in zip(plain, eng.gen("gen", PLAN_PROMPT, ignore_eos=True, **kw)):
        assert s["finish_reason"] == "length"
        assert len(s["response_ids"]) == len(s["logprobs"]) == 120
        assert s["response_ids"][: len(p["response_ids"])] == p["response_ids"]
        assert "<|im_end|>" not in s["text"]


def test_prompt_longer_than_max_prompt_tokens_keeps_the_system_prompt_keeps_its_last_tokens_or_fails(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")

    def one(**kw):
        return eng.ok("generate", requests=[request("gen", PLAN_PROMPT, **{"n": 2, "temperature": 0.0, "max_new_tokens": 4, **kw})])["results"][0]

    whole = one()
    full = whole["samples"][0]["prompt_ids"]
    assert whole["truncated_from"] is None
    assert one(max_prompt_tokens=len(full))["truncated_from"] is None
    r = eng.call("generate", requests=[request("gen", PLAN_PROMPT, max_new_tokens=2, max_prompt_tokens=len(full) - 1)])
    assert not r["ok"] and r["error"]["type"] == "PromptTooLong"
    assert f"{len(full)} tokens, more than the {len(full) - 1} allowed" in r["error"]["message"]
    left = one(max_prompt_tokens=20, truncation="left")
    assert left["truncated_from"] == len(full) and all(s["prompt_ids"] == full[-20:] for s in left["samples"])
    # The reference's: the system message's tokens as the template renders them, then the last ones.
    system = eng_render(tiny_model, PLAN_PROMPT[:1])
    assert full[:len(system)] == system
    limit = len(system) + 12
    kept = one(max_prompt_tokens=limit, truncation="keep_system")
    assert kept["truncated_from"] == len(full)
    assert all(s["prompt_ids"] == system + full[-12:] for s in kept["samples"])
    # A system prompt as long as the limit leaves no room: the last tokens alone, as "left".
    assert one(max_prompt_tokens=len(system), truncation="keep_system")["samples"][0]["prompt_ids"] == full[-len(system):]
    bad = eng.call("generate", requests=[request("gen", PLAN_PROMPT, truncation="right")])
    assert not bad["ok"] and bad["error"]["type"] == "BadRequest"


def eng_render(model_dir, messages):
    """The messages as the model's chat template renders them, without a generation prompt."""
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(model_dir)
    return tok(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=False), add_special_tokens=False)["input_ids"]


@pytest.mark.fp32
def test_seeded_greedy_top_k_and_min_p(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")

    def run(**kw):
        return [s["response_ids"] for s in eng.gen("gen", PLAN_PROMPT, n=4, max_new_tokens=10, **kw)]

    assert run(seed=123) == run(seed=123) != run(seed=124)
    greedy = run(temperature=0.0)
    assert all(r == greedy[0] for r in greedy)
    assert run(seed=5, top_k=1) == greedy          # top-k 1 is greedy
    assert run(seed=5, min_p=1.0) == greedy        # min-p 1 keeps only the most likely token
    assert run(seed=5, top_p=1e-6) == greedy       # so does a tiny top-p
    # min-p 0.5: every sampled token has p >= 0.5 * p_max under the (temperature-1) distribution.
    model, _ = load_hf(tiny_model)
    for s in eng.gen("gen", PLAN_PROMPT, n=3, max_new_tokens=10, seed=3, min_p=0.5):
        ids = torch.tensor([s["prompt_ids"] + s["response_ids"]])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0], dim=-1)
        pos = torch.arange(len(s["response_ids"])) + len(s["prompt_ids"]) - 1
        best = logp[pos].max(dim=-1).values
        assert (torch.tensor(s["logprobs"]) >= best + math.log(0.5) - 1e-5).all()


def test_requests_keep_their_own_parameters_in_one_batch(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    greedy = request("gen", TOOL_PROMPT, n=2, temperature=0.0, max_new_tokens=6)
    hot = request("gen", PLAN_PROMPT, n=2, temperature=1.5, seed=1, max_new_tokens=9)
    both = eng.ok("generate", requests=[hot, greedy])["results"]
    alone = eng.ok("generate", requests=[greedy])["results"][0]
    assert same_tokens([s["response_ids"] for s in both[1]["samples"]], [s["response_ids"] for s in alone["samples"]])
    assert all(len(s["response_ids"]) <= 6 for s in both[1]["samples"])
    assert all(len(s["response_ids"]) <= 9 for s in both[0]["samples"])


def test_stop_strings(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    req = dict(n=1, seed=11, max_new_tokens=24)
    full = eng.gen("gen", PLAN_PROMPT, **req)[0]
    text = full["text"]
    # A plain-ASCII piece that this very sample spells (random tokens may also spell partial UTF-8).
    stop = next(text[i: i + 3] for i in range(3, len(text) - 3) if text[i: i + 3].isascii()
                and text[i: i + 3].isprintable())
    cut = eng.gen("gen", PLAN_PROMPT, stop=["never-appears", stop], **req)[0]
    assert cut["finish_reason"] == "stop"
    assert cut["text"] == text[: text.find(stop)] and stop not in cut["text"]
    # Same seed, same tokens up to the one that completed the stop string, then nothing more.
    n = len(cut["response_ids"])
    assert cut["response_ids"] == full["response_ids"][:n] and cut["logprobs"] == pytest.approx(full["logprobs"][:n])
    assert n < len(full["response_ids"])
    assert eng.gen("gen", PLAN_PROMPT, stop=["never-appears"], **req)[0]["response_ids"] == full["response_ids"]


def test_enable_thinking_reaches_the_template(eng, tiny_model, tmp_path):
    folder = tmp_path / "thinking-model"
    shutil.copytree(tiny_model, folder)
    # A Qwen3-style template: enable_thinking=false pre-fills an empty think block.
    (folder / "chat_template.jinja").write_text(
        "{%- for m in messages -%}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}"
        "{%- if enable_thinking is defined and enable_thinking is false -%}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif -%}"
        "{%- endif -%}")
    import json
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    eng.load_full("think", str(folder), tmp_path / "ck")
    on = eng.gen("think", TOOL_PROMPT, max_new_tokens=1, enable_thinking=True)[0]["prompt_ids"]
    off = eng.gen("think", TOOL_PROMPT, max_new_tokens=1, enable_thinking=False)[0]["prompt_ids"]
    default = eng.gen("think", TOOL_PROMPT, max_new_tokens=1, enable_thinking=None)[0]["prompt_ids"]
    assert on == default and len(off) > len(on) and off[: len(on)] == on


def test_bad_requests(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    base = request("gen", PLAN_PROMPT)
    for bad, kind in [({"version": 3}, "VersionMismatch"), ({"policy": "nope"}, "PolicyNotLoaded"),
                      ({"n": 0}, "BadRequest"), ({"min_p": 2.0}, "BadRequest"), ({"stop": [""]}, "BadRequest"),
                      ({"messages": []}, "BadRequest"), ({"top_p": 0.0}, "BadRequest")]:
        resp = eng.call("generate", requests=[{**base, **bad}])
        assert resp["ok"] is False and resp["error"]["type"] == kind, (bad, resp)
    assert eng.ok("generate", requests=[]) == {"results": []}
    # Every field is required (the caller sends what its run config resolved); a missing one is named
    # with its request. seed, enable_thinking and max_prompt_tokens may be null, but not left out.
    for name in ("policy", "version", *SAMPLING):
        resp = eng.call("generate", requests=[base, {k: v for k, v in base.items() if k != name}])
        assert resp["ok"] is False and resp["error"]["type"] == "BadRequest", (name, resp)
        assert resp["error"]["message"].startswith(f"generate: missing field 'requests[1].{name}'"), resp
    for name in ("seed", "enable_thinking", "max_prompt_tokens"):
        assert eng.gen("gen", PLAN_PROMPT, max_new_tokens=1, **{name: None})
    resp = eng.call("generate", requests=[{**base, "n": None}])
    assert resp["error"]["message"] == "generate: missing field 'requests[0].n'", resp
    zero = eng.gen("gen", PLAN_PROMPT, max_new_tokens=0)[0]
    assert zero["response_ids"] == [] and zero["finish_reason"] == "length" and zero["text"] == ""
