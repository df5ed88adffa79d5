"""An update with `overlap` (asynchronous training) runs beside the decoding: the policy's rows, those in
flight when it starts and those that start during it, are served by a copy of the weights it trains
(serving.py) and answered with that version; the update's weights are bit for bit those of the same
update run alone; the copy is gone once its rows finish. A full model whose copy does not fit runs
alone, and says why."""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import load_file

from conftest import (BATCH_INVARIANT, DEVICE, ON_GPU, OPTIM, PLAN_PROMPT, TOOL_PROMPT, UPDATE, LocalEngine, Run, as_train,
                      fresh, greedy_under, load_hf, request)
from tandem_engine import server, serving

FAST = {**OPTIM, "lr": 2e-2}  # the update must visibly change the greedy tokens
LONG = dict(temperature=0.0, max_new_tokens=160, ignore_eos=True)  # rows that outlast the update


def step_clock(monkeypatch) -> None:
    """The engine's clock for its fair share (Engine.tick) counts calls instead of seconds, so that an
    update step and a decode step cost alike: the interleaving no longer depends on the machine's load
    (on a busy CI machine one slow update step let the decoding catch up and finish every row first;
    a 1.5 s sleep in each optimizer step reproduces it)."""
    calls = itertools.count()
    monkeypatch.setattr(server, "time", SimpleNamespace(time=time.time, perf_counter=lambda: float(next(calls))))


def load(eng: LocalEngine, kind: str, model: str, root):
    if kind == "lora":
        return eng.load_lora("p", model, root, optim=FAST)
    return eng.load_full("p", model, root, optim=FAST)


def training_samples(eng: LocalEngine) -> list[dict]:
    s = eng.gen("p", PLAN_PROMPT, seed=0, max_new_tokens=10)[0]
    return [as_train(s, adv, f"s{i}") for i, adv in enumerate([1.0, -0.5, 0.7, -1.0])]


def weights_file(root, kind: str) -> dict[str, torch.Tensor]:
    if kind == "lora":
        return load_file(str(root / "v000001" / "adapter" / "adapter_model.safetensors"))
    return load_file(str(root / "v000001" / "model" / "model.safetensors"))


UPDATE_ARGS = {**UPDATE, "ppo_mini_batch_size": 1}  # four optimizer steps: the weights move mid-update


@pytest.mark.fp32
@pytest.mark.parametrize("kind", ["lora", "full"])
def test_rows_decode_through_the_update_with_the_version_before_it(kind, tiny_model, tmp_path, monkeypatch):
    step_clock(monkeypatch)  # the update's few steps then end long before the rows' 160 tokens
    eng = fresh()
    load(eng, kind, tiny_model, tmp_path / "a")
    samples = training_samples(eng)
    before = eng.gen("p", TOOL_PROMPT, **LONG)[0]  # what version 0 answers, no update running

    run = Run(eng.engine)
    in_flight = run.submit("generate", requests=[request("p", TOOL_PROMPT, 0, **LONG)])
    run.tick(3)  # its rows decode
    assert len(in_flight) == 1
    update = run.submit("update", policy="p", from_version=0, samples=samples, checkpoint_root=str(tmp_path / "a"),
                        **{**UPDATE_ARGS, "overlap": True})
    during = run.submit("generate", requests=[request("p", TOOL_PROMPT, 0, newer_within=1, **LONG)])
    first, result, second = run.until(in_flight, update, during)

    assert result["version"] == 1 and result["optimizer_steps"] == 4
    assert result["overlap"]["copy"] == ("adapter" if kind == "lora" else "model")
    assert result["overlap"]["copy_mb"] > 0 and result["overlap"]["reason"] is None
    assert result["overlap"]["decode_s"] > 0
    assert update[1]["live_rows"] > 0, "the update ended while rows decoded"
    assert run.order.index(update[0]) < run.order.index(during[0])
    # Version 0's weights in the test process: the model as loaded (a fresh LoRA adds nothing: B = 0).
    v0 = load_hf(tiny_model)[0].to(DEVICE)
    for got in (first, second):  # both decoded with version 0 across the optimizer steps
        (res,) = got["results"]
        assert res["version"] == 0
        s = res["samples"][0]
        assert greedy_under(v0, s["prompt_ids"], s["response_ids"]), "every token version 0's greedy choice"
        if BATCH_INVARIANT:  # and here bit for bit the rows decoded alone
            assert s["response_ids"] == before["response_ids"]
            assert s["logprobs"] == pytest.approx(before["logprobs"], abs=1e-5)

    # The copy is gone; new requests get version 1, which answers differently.
    if kind == "lora":
        assert list(eng.engine.policies["p"].backbone.model.peft_config) == [eng.engine.policies["p"].adapter]
    assert eng.engine.serving == {} and eng.engine.retired == []
    after = eng.gen("p", TOOL_PROMPT, version=1, **LONG)[0]
    assert after["response_ids"] != before["response_ids"]
    assert not greedy_under(v0, after["prompt_ids"], after["response_ids"]), "the check above tells version 1 from 0"
    assert eng.call("generate", requests=[request("p", TOOL_PROMPT, 0)])["error"]["type"] == "VersionMismatch"

    # Bit for bit the update run alone (another engine, the same samples; on a GPU, whose kernels
    # need not repeat their last bits, to float tolerance).
    alone = fresh()
    load(alone, kind, tiny_model, tmp_path / "b")
    assert alone.update("p", 0, samples, tmp_path / "b", ppo_mini_batch_size=1)["ok"]
    a, b = weights_file(tmp_path / "a", kind), weights_file(tmp_path / "b", kind)
    assert a.keys() == b.keys()
    same = (lambda x, y: torch.allclose(x, y, rtol=1e-4, atol=1e-6)) if ON_GPU else torch.equal
    assert all(same(a[k], b[k]) for k in a)


@pytest.mark.fp32
def test_a_full_model_whose_copy_does_not_fit_updates_alone(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(serving, "COPY_FREE_SHARE", 0.0)
    eng = fresh()
    load(eng, "full", tiny_model, tmp_path)
    samples = training_samples(eng)
    before = eng.gen("p", TOOL_PROMPT, **LONG)[0]

    run = Run(eng.engine)
    in_flight = run.submit("generate", requests=[request("p", TOOL_PROMPT, 0, **LONG)])
    run.tick(3)
    update = run.submit("update", policy="p", from_version=0, samples=samples, checkpoint_root=str(tmp_path),
                        **{**UPDATE_ARGS, "overlap": True})
    later = run.submit("generate", requests=[request("p", TOOL_PROMPT, 0, newer_within=1, **LONG)])
    first, result, second = run.until(in_flight, update, later)

    assert result["overlap"]["copy"] is None and "the update ran alone" in result["overlap"]["reason"]
    assert run.order == [in_flight[0], update[0], later[0]]  # the rows in flight first, then the update, then the rest
    assert first["results"][0]["version"] == 0
    s = first["results"][0]["samples"][0]
    assert greedy_under(load_hf(tiny_model)[0].to(DEVICE), s["prompt_ids"], s["response_ids"]), "version 0's greedy choices"
    if BATCH_INVARIANT:
        assert s["response_ids"] == before["response_ids"]
    assert second["results"][0]["version"] == 1


def test_overlap_is_a_required_field_of_update(eng, tiny_model, tmp_path):
    eng.load_lora("p", tiny_model, tmp_path)
    args = {k: v for k, v in UPDATE.items() if k != "overlap"}
    resp = eng.call("update", policy="p", from_version=0, samples=[], checkpoint_root=str(tmp_path), **args)
    assert resp["error"] == {"type": "BadRequest", "message": "update: missing field 'overlap'"}
