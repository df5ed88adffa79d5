"""`update` with `samples_file`: the same step as the samples inline; a bad file is refused, naming
the file and what is wrong; a large iteration reads in a fraction of its JSON's time."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from conftest import OPTIM, PLAN_PROMPT, TOOL_PROMPT, UPDATE, as_train
from tandem_engine.samples_file import read_samples


def write_samples_file(path, samples, **replace) -> str:
    """The layout infra/engine/samplesFile.ts writes (each distinct prompt once); `replace`
    swaps a tensor or the metadata for a test of a bad file."""
    prompts: dict[tuple, tuple[int, int]] = {}
    prompt_tokens, response_tokens, logprobs, prompt_spans, response_spans = [], [], [], [], []
    for s in samples:
        key = tuple(s["prompt_ids"])
        if key not in prompts:
            prompts[key] = (len(prompt_tokens), len(prompt_tokens) + len(key))
            prompt_tokens += key
        prompt_spans.append(prompts[key])
        response_spans.append((len(response_tokens), len(response_tokens) + len(s["response_ids"])))
        response_tokens += s["response_ids"]
        logprobs += s["logprobs"]
    tensors = {
        "prompt_tokens": torch.tensor(prompt_tokens, dtype=torch.int32),
        "prompt_spans": torch.tensor(prompt_spans, dtype=torch.int64).reshape(-1, 2),
        "response_tokens": torch.tensor(response_tokens, dtype=torch.int32),
        "response_spans": torch.tensor(response_spans, dtype=torch.int64).reshape(-1, 2),
        "logprobs": torch.tensor(logprobs, dtype=torch.float32),
        "advantages": torch.tensor([s["advantage"] for s in samples], dtype=torch.float64),
    }
    metadata = {"sample_ids": json.dumps([s["sample_id"] for s in samples])}
    for name, value in replace.items():
        if name == "metadata":
            metadata = value
        elif value is None:
            del tensors[name]
        else:
            tensors[name] = value
    save_file(tensors, str(path), metadata=metadata)
    return str(path)


def test_a_samples_file_takes_the_same_step_as_inline_samples(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "gen")
    plan = eng.gen("gen", PLAN_PROMPT, n=3, seed=1, max_new_tokens=8)
    tool = eng.gen("gen", TOOL_PROMPT, n=2, seed=2, max_new_tokens=8)
    samples = [as_train(s, a, f"s{i}") for i, (s, a) in enumerate(zip(plan + tool, [1.0, -0.5, -0.5, 0.7, -0.7]))]
    path = write_samples_file(tmp_path / "samples.safetensors", samples)
    read = read_samples(path, 10**6)
    assert [{**s, "logprobs": pytest.approx(s["logprobs"])} for s in samples] == read
    assert read[0]["prompt_ids"] is read[2]["prompt_ids"], "samples of one prompt share its list"

    results = {}
    for how in ("inline", "file"):
        eng.load_full(how, tiny_model, tmp_path / how, optim={**OPTIM, "lr": 1e-2})
        if how == "file":
            r = eng.call("update", policy=how, from_version=0, samples_file=path, checkpoint_root=str(tmp_path / how), **UPDATE)
        else:
            r = eng.update(how, 0, samples, tmp_path / how)
        assert r["ok"], r
        results[how] = r["result"]
    for key in ("loss", "pg_loss", "entropy", "grad_norm", "tokens", "samples", "logprob_gap"):
        assert results["file"][key] == results["inline"][key], key
    probe = dict(version=1, n=2, seed=5, max_new_tokens=8)
    assert eng.gen("file", TOOL_PROMPT, **probe) == eng.gen("inline", TOOL_PROMPT, **probe)


def test_a_bad_samples_file_is_refused_naming_the_file_and_the_fault(eng, tiny_model, tmp_path):
    eng.load_full("p", tiny_model, tmp_path / "ck")
    s = eng.gen("p", TOOL_PROMPT, seed=3, max_new_tokens=4)[0]
    good = [as_train(s, 1.0, "a"), as_train(s, -1.0, "b")]
    vocab = eng.engine.policies["p"].backbone.vocab_size
    cases = {
        "missing": (None, "cannot be read"),
        "not safetensors": ("junk", "cannot be read"),
        "no advantages": (dict(advantages=None), "has no tensor 'advantages'"),
        "wrong dtype": (dict(logprobs=torch.zeros(len(s["response_ids"]) * 2, dtype=torch.float64)), "logprobs must be 1-d torch.float32"),
        "ids": (dict(metadata={"sample_ids": '["a"]'}), "sample_ids must be a JSON list of 2 strings"),
        "span": (dict(response_spans=torch.tensor([[0, 1], [0, 10**6]])), "response_spans must lie within"),
        "vocab": (dict(prompt_tokens=torch.full((len(s["prompt_ids"]),), vocab, dtype=torch.int32)), f"token ids < {vocab}"),
        "nan": (dict(advantages=torch.tensor([1.0, float("nan")], dtype=torch.float64)), "must be finite"),
    }
    for name, (replace, message) in cases.items():
        path = tmp_path / f"{name}.safetensors"
        if replace == "junk":
            path.write_bytes(b"not a safetensors file")
        elif replace is not None:
            write_samples_file(path, good, **replace)
        resp = eng.call("update", policy="p", from_version=0, samples_file=str(path), checkpoint_root=str(tmp_path / "ck"),
                        **UPDATE)
        assert resp["ok"] is False and resp["error"]["type"] == "BadRequest", name
        assert str(path) in resp["error"]["message"] and message in resp["error"]["message"], (name, resp["error"]["message"])
    both = eng.call("update", policy="p", from_version=0, samples=good, samples_file=str(tmp_path / "x"),
                    checkpoint_root=str(tmp_path / "ck"), **UPDATE)
    assert both["ok"] is False and "not both" in both["error"]["message"]
    assert eng.ok("ping")["policies"]["p"] == 0, "nothing was trained"
