"""Weights by broadcast (broadcast.py): a trainer engine's `publish` and its rollout engines' `sync` with
`broadcast` install the trainer's version on every rollout engine in one round, the same weights a sync
from the checkpoint installs; a round where no one needs them sends nothing; a rollout engine already
past the version keeps its own (and is not compared); a trainer at another
version, or a rollout engine whose weights differ in shape, fails the round on every rank before any
weight moves; a rollout engine that never comes fails the others after the join timeout; and a round
that fails after a rollout engine's install began leaves no unchecked weights serving."""

from __future__ import annotations

from typing import Callable

import pytest
import torch

from conftest import LORA, ON_GPU, OPTIM, PLAN_PROMPT, TOOL_PROMPT, EngineClient, as_train, fresh, request
from test_replicas import answer, free_port, send

FAST = {**OPTIM, "lr": 2e-2}  # the update must visibly change the greedy tokens
GREEDY = dict(temperature=0.0, max_new_tokens=40, ignore_eos=True)

pytestmark = [pytest.mark.fp32, pytest.mark.skipif(ON_GPU, reason="a broadcast group takes one GPU per rank")]


def load_spec(kind: str, model: str, root, role: str, lora=LORA) -> dict:
    spec = dict(kind=kind, model_path=model, dtype="float32", optim=FAST, checkpoint_root=str(root), role=role)
    return {**spec, "base": "base", "lora": lora} if kind == "lora" else spec


def group_of(port: int, name: str, world: int, join_timeout_s: int = 60) -> Callable[[int], dict]:
    """-> rank -> the `broadcast` field of that rank's request."""
    return lambda rank: {"rank": rank, "world_size": world, "store": f"127.0.0.1:{port}", "group": name,
                         "timeout_s": 60, "join_timeout_s": join_timeout_s}


@pytest.fixture(scope="module")
def processes():
    """Three engine processes in float32 for the file's tests: a trainer and two rollout engines."""
    procs = [EngineClient(timeout=120) for _ in range(3)]
    for c in procs:
        c.dtype = torch.float32
    yield procs
    for c in procs:
        c.close()


@pytest.fixture
def engines(processes):
    """The three engines, emptied after each test."""
    yield processes
    for c in processes:
        for key in c.ok("ping")["policies"]:
            c.ok("unload", policy=key)


def version_one(kind: str, model: str, root):
    """Version 1 of policy p, trained by an in-process engine into `root`: -> that engine (its reference)."""
    ref = fresh()
    ref.ok("load", policy="p", **load_spec(kind, model, root, "trainer"))
    s = ref.gen("p", PLAN_PROMPT, seed=0, max_new_tokens=10)[0]
    samples = [as_train(s, adv, f"s{i}") for i, adv in enumerate([1.0, -0.5, 0.7, -1.0])]
    assert ref.update("p", 0, samples, root, ppo_mini_batch_size=1)["ok"]
    return ref


def round_of(trainer, rollouts, version: int, group, kind, model, root, spec=None):
    """One round: each rollout engine's sync with `broadcast` sent first, then the trainer's publish.
    -> the trainer's answer and the rollout engines' answers (envelopes)."""
    ids = [send(r, "sync", policy="p", version=version, broadcast=group(i + 1), **(spec or load_spec(kind, model, root, "rollout")))
           for i, r in enumerate(rollouts)]
    published = trainer.call("publish", policy="p", version=version, broadcast=group(0))
    return published, [answer(r, rid) for r, rid in zip(rollouts, ids)]


def greedy(eng, version: int) -> dict:
    return eng.ok("generate", requests=[request("p", TOOL_PROMPT, version, **GREEDY)])["results"][0]["samples"][0]


@pytest.mark.parametrize("kind", ["lora", "full"])
def test_a_round_installs_the_trainers_version_on_every_rollout_engine(kind, engines, tiny_model, tmp_path):
    trainer, *rollouts = engines
    for r in rollouts:
        assert r.ok("load", policy="p", **load_spec(kind, tiny_model, tmp_path, "rollout"))["version"] == 0
    v0 = greedy(rollouts[0], 0)
    ref = version_one(kind, tiny_model, tmp_path)
    assert trainer.ok("load", policy="p", **load_spec(kind, tiny_model, tmp_path, "trainer"))["version"] == 1

    group = group_of(free_port(), "t/p/v1/a", world=3)
    published, synced = round_of(trainer, rollouts, 1, group, kind, tiny_model, tmp_path)
    assert published["ok"], published
    assert published["result"]["sent"] is True and published["result"]["engines"] == 2 and published["result"]["bytes"] > 0
    for s in synced:
        assert s["ok"], s
        assert s["result"]["version"] == 1 and s["result"]["installed"] is True
    # The trainer's weights, bit for bit: the same tokens and log-probabilities as the engine that trained them.
    want = ref.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]
    assert want["response_ids"] != v0["response_ids"], "the update changed the greedy tokens"
    for r in rollouts:
        got = greedy(r, 1)
        assert got["response_ids"] == want["response_ids"] and got["logprobs"] == want["logprobs"]

    # Everyone holds version 1: a second round sends nothing and installs nothing (a retried sync).
    published, synced = round_of(trainer, rollouts, 1, group_of(free_port(), "t/p/v1/b", world=3), kind, tiny_model, tmp_path)
    assert published["ok"] and published["result"]["sent"] is False, published
    assert all(s["ok"] and s["result"]["installed"] is False and s["result"]["version"] == 1 for s in synced), synced


def test_a_rollout_engine_past_the_version_takes_part_and_keeps_its_own(engines, tiny_model, tmp_path):
    """One rollout engine loaded a newer checkpoint (another folder's version 2, standing in for one that
    restarted later): the round installs version 1 on the other, and leaves this one at 2, unchecked."""
    trainer, behind, ahead = engines
    behind.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path / "run", "rollout"))
    ref = version_one("lora", tiny_model, tmp_path / "run")
    newer = version_one("lora", tiny_model, tmp_path / "newer")
    s = newer.gen("p", TOOL_PROMPT, seed=1, max_new_tokens=10, version=1)[0]
    assert newer.update("p", 1, [as_train(s, 1.0, "a")], tmp_path / "newer", ppo_mini_batch_size=1)["ok"]
    assert ahead.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path / "newer", "rollout"))["version"] == 2
    trainer.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path / "run", "trainer"))
    group = group_of(free_port(), "t/p/v1/a", world=3)
    ids = [send(behind, "sync", policy="p", version=1, broadcast=group(1), **load_spec("lora", tiny_model, tmp_path / "run", "rollout")),
           send(ahead, "sync", policy="p", version=1, broadcast=group(2), **load_spec("lora", tiny_model, tmp_path / "newer", "rollout"))]
    published = trainer.call("publish", policy="p", version=1, broadcast=group(0))
    assert published["ok"] and published["result"]["sent"] is True, published
    got_behind, got_ahead = (answer(r, rid) for r, rid in zip([behind, ahead], ids))
    assert got_behind["result"]["installed"] is True and got_behind["result"]["version"] == 1, got_behind
    assert got_ahead["result"]["installed"] is False and got_ahead["result"]["version"] == 2, got_ahead
    assert greedy(behind, 1)["response_ids"] == ref.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]["response_ids"]
    v2 = newer.gen("p", TOOL_PROMPT, version=2, **GREEDY)[0]
    assert greedy(ahead, 2)["logprobs"] == v2["logprobs"] != greedy(behind, 1)["logprobs"], "version 2's weights differ from 1's, and stayed"



def test_a_trainer_at_another_version_fails_the_round_everywhere_and_changes_nothing(engines, tiny_model, tmp_path):
    trainer, *rollouts = engines
    for r in rollouts:
        r.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "rollout"))
    version_one("lora", tiny_model, tmp_path)
    trainer.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "trainer"))
    published, synced = round_of(trainer, rollouts, 2, group_of(free_port(), "t/p/v2/a", world=3), "lora", tiny_model, tmp_path)
    for resp in [published, *synced]:
        assert resp["error"]["type"] == "VersionMismatch", resp
        assert "holds version 1, not 2" in resp["error"]["message"]
    assert all(r.ok("ping")["policies"] == {"p": 0} for r in rollouts)


def test_a_rollout_engine_whose_weights_differ_fails_the_round_before_any_weight_moves(engines, tiny_model, tmp_path):
    trainer, *rollouts = engines
    rollouts[0].ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "rollout"))
    wider = load_spec("lora", tiny_model, tmp_path, "rollout", lora={**LORA, "rank": 8})
    rollouts[1].ok("load", policy="p", **wider)
    version_one("lora", tiny_model, tmp_path)
    trainer.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "trainer"))
    group = group_of(free_port(), "t/p/v1/a", world=3)
    ids = [send(rollouts[0], "sync", policy="p", version=1, broadcast=group(1), **load_spec("lora", tiny_model, tmp_path, "rollout")),
           send(rollouts[1], "sync", policy="p", version=1, broadcast=group(2), **wider)]
    published = trainer.call("publish", policy="p", version=1, broadcast=group(0))
    for resp in [published, *(answer(r, rid) for r, rid in zip(rollouts, ids))]:
        assert resp["error"]["type"] == "WeightsMismatch" and "rank(s) [2]" in resp["error"]["message"], resp
    assert all(r.ok("ping")["policies"] == {"p": 0} for r in rollouts)


def test_a_rollout_engine_that_never_comes_fails_the_round_after_the_join_timeout(engines, tiny_model, tmp_path):
    trainer, rollout, _absent = engines
    rollout.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "rollout"))
    version_one("lora", tiny_model, tmp_path)
    trainer.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "trainer"))
    published, synced = round_of(trainer, [rollout], 1, group_of(free_port(), "t/p/v1/a", world=3, join_timeout_s=3),
                                 "lora", tiny_model, tmp_path)
    for resp in [published, *synced]:
        assert resp["error"]["type"] == "ReplicaGroupFailed", resp
    assert rollout.ok("ping")["policies"] == {"p": 0}, "a failed round installs nothing"
    # The run then syncs it from the checkpoint.
    assert rollout.ok("sync", policy="p", version=1, **load_spec("lora", tiny_model, tmp_path, "rollout"))["installed"] is True


def test_a_round_that_fails_after_the_install_began_unloads_the_policy(engines, tiny_model, tmp_path, monkeypatch):
    """The rollout engine here is in-process, its install failing halfway (as a kill would leave the
    weights): the trainer's round fails too, and the rollout engine's next request loads the newest
    checkpoint whole and generates the trainer's tokens."""
    from tandem_engine import rollout as rollout_module

    trainer = engines[0]
    rollout = fresh()
    spec = load_spec("lora", tiny_model, tmp_path, "rollout")
    rollout.ok("load", policy="p", **spec)
    ref = version_one("lora", tiny_model, tmp_path)
    trainer.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "trainer"))

    def half_then_fail(self, weights, source):
        params = self.adapter_parameters()
        with torch.no_grad():
            for p in params[: len(params) // 2]:
                p.add_(1.0)
        raise OSError("the device went away")

    monkeypatch.setattr(rollout_module.RolloutPolicy, "_install_adapter", half_then_fail)
    group = group_of(free_port(), "t/p/v1/a", world=2)
    rid = send(trainer, "publish", policy="p", version=1, broadcast=group(0))
    failed = rollout.call("sync", policy="p", version=1, broadcast=group(1), **spec)
    assert failed["error"]["type"] == "OSError" and "p" not in rollout.engine.policies
    assert answer(trainer, rid)["error"]["type"] == "ReplicaGroupFailed"
    monkeypatch.undo()
    got = rollout.ok("generate", requests=[request("p", TOOL_PROMPT, 1, load=spec, **GREEDY)])["results"][0]
    assert got["version"] == 1
    assert got["samples"][0]["response_ids"] == ref.gen("p", TOOL_PROMPT, version=1, **GREEDY)[0]["response_ids"]


def test_publish_is_the_trainers_and_a_rollout_engines_rank_is_not_zero(eng, tiny_model, tmp_path):
    eng.ok("load", policy="p", **load_spec("lora", tiny_model, tmp_path, "rollout"))
    refused = eng.call("publish", policy="p", version=0, broadcast=group_of(free_port(), "g", 2)(0))
    assert refused["error"]["type"] == "BadRequest" and "its trainer engine publishes" in refused["error"]["message"]
    wrong = eng.call("sync", policy="p", version=1, broadcast=group_of(free_port(), "g", 2, join_timeout_s=1)(0),
                     **load_spec("lora", tiny_model, tmp_path, "rollout"))
    assert wrong["error"]["type"] == "BadRequest" and "rank 0 is the trainer engine's" in wrong["error"]["message"], wrong
