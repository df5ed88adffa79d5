"""Rollout engines (rollout.py): a policy loaded for rollout holds no optimizer; `sync` installs the
version its trainer engine wrote, idempotent by version; once synced it generates the trainer's tokens
at that version; its rows in flight finish on the version they started with; a restarted rollout engine
loads the newest checkpoint; one asked for a version it lacks installs it; a sync that fails midway
leaves no half-installed weights; and it refuses what only a trainer does."""

from __future__ import annotations

import pytest
import torch

from conftest import (BATCH_INVARIANT, DEVICE, OPTIM, PLAN_PROMPT, TOOL_PROMPT, LORA, Run, as_train, fresh, greedy_under,
                      load_hf, request)

FAST = {**OPTIM, "lr": 2e-2}  # the update must visibly change the greedy tokens
GREEDY = dict(temperature=0.0, max_new_tokens=40, ignore_eos=True)
LONG = dict(temperature=0.0, max_new_tokens=160, ignore_eos=True)  # rows that outlast a sync


def load_spec(kind: str, model: str, root, role: str) -> dict:
    spec = dict(kind=kind, model_path=model, dtype="float32", optim=FAST, checkpoint_root=str(root), role=role)
    return {**spec, "base": "base", "lora": LORA} if kind == "lora" else spec


def trainer_and_rollout(kind: str, model: str, root):
    """Two in-process engines on one checkpoint folder: the policy's trainer, and a rollout engine."""
    trainer, rollout = fresh(), fresh()
    trainer.ok("load", policy="p", **load_spec(kind, model, root, "trainer"))
    loaded = rollout.ok("load", policy="p", **load_spec(kind, model, root, "rollout"))
    assert loaded["role"] == "rollout" and loaded["version"] == 0
    return trainer, rollout


def train_one_version(trainer, root) -> None:
    s = trainer.gen("p", PLAN_PROMPT, seed=0, max_new_tokens=10)[0]
    samples = [as_train(s, adv, f"s{i}") for i, adv in enumerate([1.0, -0.5, 0.7, -1.0])]
    assert trainer.update("p", 0, samples, root, ppo_mini_batch_size=1)["ok"]


def sync(eng, kind: str, model: str, root, version: int) -> dict:
    return eng.ok("sync", policy="p", version=version, **load_spec(kind, model, root, "rollout"))


@pytest.mark.fp32
@pytest.mark.parametrize("kind", ["lora", "full"])
def test_a_synced_rollout_engine_generates_its_trainers_tokens(kind, tiny_model, tmp_path):
    trainer, rollout = trainer_and_rollout(kind, tiny_model, tmp_path)
    policy = rollout.engine.policies["p"]
    assert not hasattr(policy, "optimizer") and not hasattr(policy, "masters"), "a rollout policy holds no optimizer"
    assert not any(p.requires_grad for p in policy.backbone.model.parameters())
    v0 = rollout.gen("p", TOOL_PROMPT, **GREEDY)[0]
    assert v0["response_ids"] == trainer.gen("p", TOOL_PROMPT, **GREEDY)[0]["response_ids"]

    train_one_version(trainer, tmp_path)
    first = sync(rollout, kind, tiny_model, tmp_path, 1)
    assert first["version"] == 1 and first["installed"] is True and first["copy"] is None  # no rows were in flight
    want = trainer.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]
    got = rollout.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]
    assert got["response_ids"] != v0["response_ids"], "the update changed the greedy tokens"
    assert got["response_ids"] == want["response_ids"]
    assert got["logprobs"] == pytest.approx(want["logprobs"], abs=1e-5)

    # Idempotent by version, and only forwards.
    assert sync(rollout, kind, tiny_model, tmp_path, 1) == {"policy": "p", "version": 1, "installed": False, "copy": None}
    assert sync(rollout, kind, tiny_model, tmp_path, 0)["version"] == 1
    missing = rollout.call("sync", policy="p", version=2, **load_spec(kind, tiny_model, tmp_path, "rollout"))
    assert missing["error"]["type"] == "CheckpointMissing" and "v000002" in missing["error"]["message"]
    assert rollout.engine.policies["p"].version == 1, "a failed sync leaves the policy as it was"

    # A rollout engine that starts afresh loads the newest checkpoint; a sync loads the policy if need be.
    restarted = fresh()
    assert sync(restarted, kind, tiny_model, tmp_path, 1) == {"policy": "p", "version": 1, "installed": False, "copy": None}
    assert restarted.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]["response_ids"] == want["response_ids"]


@pytest.mark.fp32
@pytest.mark.parametrize("kind", ["lora", "full"])
def test_rows_in_flight_finish_on_the_version_they_started_with(kind, tiny_model, tmp_path):
    trainer, rollout = trainer_and_rollout(kind, tiny_model, tmp_path)
    before = rollout.gen("p", TOOL_PROMPT, **LONG)[0]  # version 0, decoded alone
    train_one_version(trainer, tmp_path)
    after = trainer.gen("p", TOOL_PROMPT, version=1, **LONG)[0]

    run = Run(rollout.engine)
    in_flight = run.submit("generate", requests=[request("p", TOOL_PROMPT, 0, **LONG)])
    run.tick(3)
    synced = run.submit("sync", policy="p", version=1, **load_spec(kind, tiny_model, tmp_path, "rollout"))
    later = run.submit("generate", requests=[request("p", TOOL_PROMPT, 1, **LONG)])
    first, result, second = run.until(in_flight, synced, later)

    assert result["installed"] is True and result["copy"] == ("adapter" if kind == "lora" else "model")
    assert synced[1]["live_rows"] > 0 and run.order.index(synced[0]) < run.order.index(in_flight[0]), \
        "the sync did not wait for the rows in flight"
    assert first["results"][0]["version"] == 0 and second["results"][0]["version"] == 1
    old = first["results"][0]["samples"][0]
    assert greedy_under(load_hf(tiny_model)[0].to(DEVICE), old["prompt_ids"], old["response_ids"]), "version 0's greedy choices"
    new = second["results"][0]["samples"][0]
    if BATCH_INVARIANT:
        assert old["response_ids"] == before["response_ids"] and new["response_ids"] == after["response_ids"]
    assert rollout.engine.retired == [], "the serving copy is dropped once its rows finish"
    if kind == "lora":
        assert list(rollout.engine.policies["p"].backbone.model.peft_config) == [rollout.engine.policies["p"].adapter]


def test_a_rollout_policy_refuses_an_update_and_a_trainer_refuses_a_sync(eng, tiny_model, tmp_path):
    eng.ok("load", policy="r", **load_spec("lora", tiny_model, tmp_path / "r", "rollout"))
    eng.ok("load", policy="t", **load_spec("lora", tiny_model, tmp_path / "t", "trainer"))
    resp = eng.update("r", 0, [], tmp_path / "r")
    assert resp["error"]["type"] == "BadRequest" and "no optimizer" in resp["error"]["message"]
    resp = eng.call("sync", policy="t", version=1, **load_spec("lora", tiny_model, tmp_path / "t", "trainer"))
    assert resp["error"] == {"type": "BadRequest", "message": "sync: role must be 'rollout' (a trainer's versions come from its updates)"}
    resp = eng.call("load", policy="t", **load_spec("lora", tiny_model, tmp_path / "t", "rollout"))
    assert resp["error"]["type"] == "BadRequest" and "loaded here as its trainer" in resp["error"]["message"]
    resp = eng.call("load", policy="x", **{**load_spec("lora", tiny_model, tmp_path / "x", "rollout"), "role": "reader"})
    assert resp["error"] == {"type": "BadRequest", "message": "load: role must be 'trainer' or 'rollout', not 'reader'"}


@pytest.mark.fp32
def test_a_sync_that_fails_midway_leaves_no_half_installed_weights(tiny_model, tmp_path, monkeypatch):
    """A sync that dies while copying weights (as a kill would leave them) unloads the policy: the next
    request loads the newest checkpoint whole, and generates its trainer's tokens."""
    from tandem_engine import rollout as rollout_module

    trainer, rollout = trainer_and_rollout("lora", tiny_model, tmp_path)
    train_one_version(trainer, tmp_path)
    real = rollout_module.RolloutPolicy._install_adapter

    def half_then_fail(self, weights, source):
        params = self.adapter_parameters()
        with torch.no_grad():
            for p in params[: len(params) // 2]:
                p.add_(1.0)  # some tensors changed, the rest not
        raise OSError("the disk went away")

    monkeypatch.setattr(rollout_module.RolloutPolicy, "_install_adapter", half_then_fail)
    failed = rollout.call("sync", policy="p", version=1, **load_spec("lora", tiny_model, tmp_path, "rollout"))
    assert failed["error"]["type"] == "OSError" and "p" not in rollout.engine.policies
    monkeypatch.setattr(rollout_module.RolloutPolicy, "_install_adapter", real)
    load = load_spec("lora", tiny_model, tmp_path, "rollout")
    got = rollout.ok("generate", requests=[request("p", TOOL_PROMPT, 1, load=load, **GREEDY)])["results"][0]
    assert got["version"] == 1
    assert got["samples"][0]["response_ids"] == trainer.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]["response_ids"]


@pytest.mark.fp32
def test_a_rollout_engine_behind_the_version_asked_for_installs_it(tiny_model, tmp_path):
    """A turn that asks a rollout engine for a version it lacks (a sync it missed: a worker started
    beyond the configured engines, say) gets that version, installed from its checkpoint."""
    trainer, rollout = trainer_and_rollout("lora", tiny_model, tmp_path)
    train_one_version(trainer, tmp_path)
    got = rollout.ok("generate", requests=[request("p", TOOL_PROMPT, 1, **GREEDY)])["results"][0]
    assert got["version"] == 1 and rollout.engine.policies["p"].version == 1
    assert got["samples"][0]["response_ids"] == trainer.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]["response_ids"]
    missing = rollout.call("generate", requests=[request("p", TOOL_PROMPT, 2, **GREEDY)])
    assert missing["error"]["type"] == "CheckpointMissing"
