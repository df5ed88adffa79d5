"""`update`: learning, gradient accumulation, LR schedule, KL / dual clip, idempotency, validation."""

from __future__ import annotations

import json
import math
import os

import pytest
import torch

from conftest import LORA, ON_GPU, OPTIM, PLAN_PROMPT, TOOL_PROMPT, UPDATE, as_train
from tandem_engine import server
from tandem_engine.policy import lr_factor
from test_lora import logprobs_under


@pytest.mark.fp32
def test_l1_shared_policy_learns_from_both_agents(eng, tiny_model, tmp_path):
    root = tmp_path / "shared"
    eng.load_full("shared", tiny_model, root, optim={**OPTIM, "lr": 3e-3})
    plan = eng.gen("shared", PLAN_PROMPT, n=2, seed=1, max_new_tokens=10)
    tool = eng.gen("shared", TOOL_PROMPT, n=2, seed=2, max_new_tokens=10)
    positives = [plan[0], tool[0]]
    batch = [as_train(plan[0], 1.0, "p+"), as_train(plan[1], -1.0, "p-"),
             as_train(tool[0], 1.0, "t+"), as_train(tool[1], -1.0, "t-")]
    before = [logprobs_under(eng, "shared", s).sum().item() for s in positives]
    for v in range(3):
        r = eng.update("shared", v, batch, root)
        assert r["ok"], r
        r = r["result"]
        assert r["samples"] == 4 and r["tokens"] == sum(len(s["response_ids"]) for s in plan + tool)
        if v == 0:  # on-policy: recomputed == rollout log-probs, so the ratio is 1 and pg_loss = -mean(A)
            assert r["logprob_gap"] < 1e-4 and r["approx_kl"] == pytest.approx(0, abs=1e-7)
            assert r["clip_fraction"] == 0 and r["kl"] is None and r["lr"] == pytest.approx(3e-3)
            assert r["entropy"] > 0 and r["grad_norm"] > 0
        assert r["loss"] == pytest.approx(r["pg_loss"], abs=1e-7)
    after = [logprobs_under(eng, "shared", s).sum().item() for s in positives]
    assert after[0] > before[0] + 0.5 and after[1] > before[1] + 0.5, (before, after)


@pytest.mark.parametrize("loss_agg", ["token-mean", "seq-mean-token-mean"])
@pytest.mark.fp32
def test_micro_batches_equal_full_batch(eng, tiny_model, tmp_path, loss_agg):
    for name in ("small", "big"):
        eng.load_full(name, tiny_model, tmp_path / name, optim={**OPTIM, "lr": 1e-2})
    samples = eng.gen("small", PLAN_PROMPT, n=2, seed=11, max_new_tokens=8) + \
        eng.gen("small", TOOL_PROMPT, n=2, seed=12, max_new_tokens=5)
    # Two epochs: the old log-probs are fixed (by a pass that is micro-batched too) before the first
    # step, so the second sees ratios away from 1 and clipping, dual clip and KL all take part. The
    # rollout log-probs are off the policy's so that the gap is not 0.
    train = []
    for i, (s, adv) in enumerate(zip(samples, [1.0, -0.5, 0.7, -1.2])):
        x = as_train(s, adv, f"s{i}")
        x["logprobs"] = [lp + 0.3 * math.sin(3 * j + i) for j, lp in enumerate(x["logprobs"])]
        train.append(x)
    kw = dict(loss_agg=loss_agg, ppo_epochs=2, dual_clip_c=1.5, kl_coef=0.1)
    eng.update("small", 0, train, tmp_path / "small", micro_batch_tokens=1, **kw)  # one sample per micro-batch
    r1 = eng.update("small", 1, train, tmp_path / "small", micro_batch_tokens=1, **kw)["result"]
    eng.update("big", 0, train, tmp_path / "big", micro_batch_tokens=100_000, **kw)
    r4 = eng.update("big", 1, train, tmp_path / "big", micro_batch_tokens=100_000, **kw)["result"]
    for key in ("loss", "pg_loss", "kl", "grad_norm", "approx_kl", "clip_fraction", "entropy", "logprob_gap"):
        assert r1[key] == pytest.approx(r4[key], rel=1e-4, abs=1e-6), key
    assert r1["kl"] > 0 and 0 < r1["clip_fraction"] < 1
    a = logprobs_under(eng, "small", samples[0])
    b = logprobs_under(eng, "big", samples[0])
    assert torch.allclose(a, b, atol=1e-4)


@pytest.mark.fp32
def test_samples_of_advantage_zero_skip_their_passes_and_the_step_is_the_same(eng, tiny_model, tmp_path, monkeypatch):
    """Without a KL term a sample of advantage 0 adds exactly 0 to every gradient
    (ppo.samples_to_forward): its passes (the old log-probs' and the step's, and a group's prompt
    pass when all of it is 0) are skipped, its tokens still count in the normaliser, and the update
    moves the weights and AdamW's state as the one forwarding every sample does. A batch whose samples
    all have advantage 0 forwards only its shortest and still takes its (zero-gradient) step."""
    import tandem_engine.policy as policy

    for name in ("skip", "every"):
        eng.load_full(name, tiny_model, tmp_path / name, optim={**OPTIM, "lr": 1e-2})
    gen = eng.gen("skip", PLAN_PROMPT, n=3, seed=11, max_new_tokens=8) + \
        eng.gen("skip", TOOL_PROMPT, n=3, seed=12, max_new_tokens=6)
    batch = []
    for i, (s, adv) in enumerate(zip(gen, [1.0, 0.0, -0.5, 0.0, 0.0, 0.0])):  # the tool group all 0
        x = as_train(s, adv, f"s{i}")
        x["logprobs"] = [lp + 0.2 * math.sin(3 * j + i) for j, lp in enumerate(x["logprobs"])]
        batch.append(x)
    backbone = eng.engine.policies["skip"].backbone
    forwarded, real = [], backbone.logprobs

    def spy(prompts, responses, **kw):
        forwarded.extend(tuple(r) for r in responses)
        return real(prompts, responses, **kw)

    monkeypatch.setattr(backbone, "logprobs", spy)

    def update(version, xs):  # -> the two policies' results, "every" forwarding every sample
        r = eng.update("skip", version, xs, tmp_path / "skip", ppo_epochs=2)["result"]
        with monkeypatch.context() as m:
            m.setattr(policy, "samples_to_forward", lambda mb, kl_coef: list(mb))
            return r, eng.update("every", version, xs, tmp_path / "every", ppo_epochs=2)["result"]

    def assert_same_policy():  # to float rounding. AdamW divides each gradient by its own scale, so an
        # element of tiny gradient (|m| ~ 1e-7) turns the passes' different summation orders into a visible
        # weight difference: 3e-6 on an AMD EPYC, up to 1.2e-4 in 1-3 of 49,152 elements a matrix on an
        # Intel Xeon (its float32 kernels), where the moments agree to 7e-6 of their norm. A step moves ~1e-2 (lr).
        a, b = (dict(eng.engine.policies[n].backbone.model.named_parameters()) for n in ("skip", "every"))
        for k in a:
            d = (a[k] - b[k]).abs()
            assert d.max() < 1e-3 and (d > 2e-5).float().mean() < 1e-3, (k, d.max().item(), (d > 2e-5).sum().item())
        sa, sb = (eng.engine.policies[n].optimizer.state for n in ("skip", "every"))
        for pa, pb in zip(sa.values(), sb.values()):
            for m in ("exp_avg", "exp_avg_sq"):  # as a whole: a tiny element's relative error is rounding's
                # (seen up to 7e-6 of the norm; a sample's gradient left out moves it by ~1e-1)
                assert (pa[m] - pb[m]).norm() <= 1e-4 * pb[m].norm(), m

    skip, every = update(0, batch)
    moving = {tuple(batch[i]["response_ids"]) for i in (0, 2)}
    assert set(forwarded) == moving and len(forwarded) == 3 * 2  # the old pass, then two steps
    assert skip["samples"] == every["samples"] == 6 and skip["tokens"] == every["tokens"]
    assert skip["samples_forwarded"] == 2 and every["samples_forwarded"] == 6
    assert skip["optimizer_steps"] == every["optimizer_steps"] == 2
    for key in ("loss", "pg_loss", "grad_norm"):
        assert skip[key] == pytest.approx(every[key], rel=1e-5, abs=1e-8), key
    assert_same_policy()

    before = logprobs_under(eng, "skip", gen[0])
    forwarded.clear()
    zeros = [{**x, "advantage": 0.0} for x in batch]
    skip, every = update(1, zeros)
    shortest = min(batch, key=lambda x: len(x["prompt_ids"]) + len(x["response_ids"]))
    assert forwarded == [tuple(shortest["response_ids"])] * 3 and skip["samples_forwarded"] == 1
    assert skip["optimizer_steps"] == 2 and skip["grad_norm"] == 0.0 and skip["loss"] == 0.0
    assert not torch.allclose(logprobs_under(eng, "skip", gen[0]), before)  # AdamW's moments still moved it
    assert_same_policy()

    forwarded.clear()  # with a KL term, every sample has a gradient
    r = eng.update("skip", 2, zeros, tmp_path / "skip", kl_coef=0.1)["result"]
    assert r["samples_forwarded"] == 6 and set(forwarded) == {tuple(x["response_ids"]) for x in zeros}


def test_lr_schedule_warmup_then_cosine(eng, tiny_model, tmp_path):
    optim = {**OPTIM, "lr": 1e-3, "warmup_steps": 2, "total_steps": 6, "min_lr_ratio": 0.1}
    eng.load_lora("sched", tiny_model, tmp_path / "ck", optim=optim)
    lrs = [eng.update("sched", v, [], tmp_path / "ck")["result"]["lr"] for v in range(8)]
    expected = [1e-3 * lr_factor(s, 2, 6, 0.1) for s in range(8)]
    assert lrs == pytest.approx(expected, rel=1e-9)
    assert lrs[:3] == pytest.approx([5e-4, 1e-3, 1e-3]) and lrs[6] == lrs[7] == pytest.approx(1e-4)
    assert lrs[3] == pytest.approx(1e-4 + 0.9e-3 * 0.5 * (1 + math.cos(math.pi / 4)))


def test_lr_schedule_warmup_from_min_lr_as_verl(eng, tiny_model, tmp_path):
    # verl's get_cosine_schedule_with_warmup (the reference's): the warm-up rises from lr * min_lr_ratio
    # at update 0 to lr at update warmup_steps. lr 1e-3, warm-up 2, total 6, min ratio 0.1:
    # 0.1e-3, 0.55e-3, then the same cosine as the default schedule.
    optim = {**OPTIM, "lr": 1e-3, "warmup_steps": 2, "total_steps": 6, "min_lr_ratio": 0.1, "warmup_start": "min_lr"}
    eng.load_lora("verl", tiny_model, tmp_path / "ck", optim=optim)
    lrs = [eng.update("verl", v, [], tmp_path / "ck")["result"]["lr"] for v in range(8)]
    assert lrs[:3] == pytest.approx([1e-4, 5.5e-4, 1e-3])
    assert lrs[3] == pytest.approx(1e-4 + 0.9e-3 * 0.5 * (1 + math.cos(math.pi / 4)))
    assert lrs[6] == lrs[7] == pytest.approx(1e-4)
    bad = eng.call("load", policy="bad", kind="lora", model_path=tiny_model, base="base", lora=LORA,
                   optim={**OPTIM, "warmup_start": "zero"}, checkpoint_root=str(tmp_path / "ck2"))
    assert bad["error"]["type"] == "BadRequest" and "warmup_start" in bad["error"]["message"]


@pytest.mark.parametrize("kind", ["lora", "full"])
@pytest.mark.fp32
def test_kl_to_reference(eng, tiny_model, tmp_path, kind):
    root = tmp_path / "ck"
    optim = {**OPTIM, "lr": 2e-2}
    eng.load_lora("k", tiny_model, root, optim=optim) if kind == "lora" else eng.load_full("k", tiny_model, root, optim=optim)
    p = eng.engine.policies["k"]
    sample = eng.gen("k", TOOL_PROMPT, seed=3, max_new_tokens=8)[0]
    r0 = eng.update("k", 0, [as_train(sample, 1.0)], root)["result"]
    assert p.ref_model is None  # kl_coef = 0: no reference copy
    assert r0["kl"] is None
    r1 = eng.update("k", 1, [as_train(sample, 1.0)], root, kl_coef=0.5)["result"]
    r2 = eng.update("k", 2, [as_train(sample, 1.0)], root, kl_coef=0.5)["result"]
    assert (p.ref_model is not None) == (kind == "full")
    assert 0 < r1["kl"] < r2["kl"] and r2["loss"] == pytest.approx(r2["pg_loss"] + 0.5 * r2["kl"], abs=1e-6)
    # The reference is the initial model: its log-probs are the version-0 rollout's.
    ref = p.reference_logprobs([sample["prompt_ids"]], [sample["response_ids"]])[0]
    assert torch.allclose(ref.cpu(), torch.tensor(sample["logprobs"]), atol=1e-5)


def test_old_logprobs_are_the_trainers_and_the_clip_settings_reach_the_loss(eng, tiny_model, tmp_path, monkeypatch):
    """The ratio's old log-probs are the trainer's own, not the rollout's: rollout log-probs 2 below
    the policy's change the gap only (one step: ratio 1, pg_loss = -A, nothing clipped). The request's
    clip settings are the loss's (ppo.policy_loss, whose dual clip test_loss_trl.py checks by hand)."""
    import tandem_engine.policy as policy

    calls, real = [], policy.policy_loss

    def spy(*args, **kw):
        calls.append({k: kw[k] for k in ("clip_low", "clip_high", "dual_clip_c", "loss_agg", "kl_coef")})
        return real(*args, **kw)

    monkeypatch.setattr(policy, "policy_loss", spy)
    eng.load_full("dc", tiny_model, tmp_path / "a")
    s = eng.gen("dc", PLAN_PROMPT, seed=5, max_new_tokens=6)[0]
    x = {**as_train(s, -1.0), "logprobs": [lp - 2.0 for lp in s["logprobs"]]}
    r = eng.update("dc", 0, [x], tmp_path / "a", clip_low=0.1, clip_high=0.3, dual_clip_c=3.0,
                   loss_agg="seq-mean-token-mean", kl_coef=0.0)["result"]
    assert r["pg_loss"] == pytest.approx(1.0, abs=1e-6) and r["clip_fraction"] == 0
    assert r["approx_kl"] == pytest.approx(0, abs=1e-7) and r["logprob_gap"] == pytest.approx(2.0, abs=1e-4)
    assert calls == [dict(clip_low=0.1, clip_high=0.3, dual_clip_c=3.0, loss_agg="seq-mean-token-mean", kl_coef=0.0)]


def test_behaviour_weight_cap_weights_stale_samples_and_reports_them(eng, tiny_model, tmp_path):
    """With behaviour_weight_cap, samples whose rollout log-probs lie log(4) below the policy's on
    their first two tokens and log(2) above it elsewhere (as if an older version generated them)
    get weights min(4, 2) = 2 and 0.5; one step, ratio 1: pg_loss = -A x the mean weight.
    Null: the on-policy result, the same as with weights left out."""
    eng.load_full("st", tiny_model, tmp_path / "a")
    s = eng.gen("st", PLAN_PROMPT, seed=5, max_new_tokens=6)[0]
    n = len(s["response_ids"])
    assert n >= 3
    shift = [math.log(4.0)] * 2 + [-math.log(2.0)] * (n - 2)
    x = {**as_train(s, 1.0), "logprobs": [lp - d for lp, d in zip(s["logprobs"], shift)]}
    r = eng.update("st", 0, [x], tmp_path / "a", behaviour_weight_cap=2.0)["result"]
    mean_w = (2 * 2.0 + (n - 2) * 0.5) / n
    assert r["is_weight_mean"] == pytest.approx(mean_w, rel=1e-4)
    assert r["is_weight_max"] == pytest.approx(4.0, rel=1e-4)
    assert r["is_truncated_fraction"] == pytest.approx(2 / n)
    assert r["pg_loss"] == pytest.approx(-mean_w, rel=1e-4)
    eng.load_full("on", tiny_model, tmp_path / "b")
    plain = eng.update("on", 0, [x], tmp_path / "b", behaviour_weight_cap=None)["result"]
    assert plain["pg_loss"] == pytest.approx(-1.0, abs=1e-6) and "is_weight_mean" not in plain
    bad = eng.update("on", 1, [x], tmp_path / "b", behaviour_weight_cap=0.5)
    assert not bad["ok"] and "behaviour_weight_cap must be >= 1" in bad["error"]["message"]


def test_idempotent_by_version(eng, tiny_model, tmp_path):
    root = tmp_path / "ck"
    eng.load_lora("idem", tiny_model, root, optim={**OPTIM, "lr": 1e-2})
    sample = eng.gen("idem", TOOL_PROMPT, seed=9, max_new_tokens=8)[0]
    first = eng.update("idem", 0, [as_train(sample, 1.0)], root)["result"]
    probe = dict(version=1, seed=42, max_new_tokens=8, n=2)
    gen_v1 = eng.gen("idem", PLAN_PROMPT, **probe)

    again = eng.update("idem", 0, [as_train(sample, 1.0)], root)["result"]  # same from_version: replayed
    assert again["replayed"] is True and {**again, "replayed": False} == first
    assert eng.gen("idem", PLAN_PROMPT, **probe) == gen_v1 and eng.ok("ping")["policies"]["idem"] == 1
    resp = eng.update("idem", 5, [as_train(sample, 1.0)], root)
    assert resp["ok"] is False and resp["error"]["type"] == "VersionMismatch"

    # After a restart the replay comes from state.json.
    eng.ok("unload", policy="idem")
    assert eng.load_lora("idem", tiny_model, root)["version"] == 1
    replay = eng.update("idem", 0, [as_train(sample, 1.0)], root)["result"]
    assert replay["replayed"] is True and {**replay, "replayed": False} == first  # the checkpoint path too
    # Another writer got to v000002 first: refused, nothing trained.
    (root / "v000002").mkdir()
    (root / "v000002" / "state.json").write_text(json.dumps({"version": 2}))
    resp = eng.update("idem", 1, [as_train(sample, 1.0)], root)
    assert resp["ok"] is False and resp["error"]["type"] == "VersionMismatch"


def test_update_validation(eng, tiny_model, tmp_path):
    eng.load_full("v", tiny_model, tmp_path / "ck")
    s = as_train(eng.gen("v", PLAN_PROMPT, seed=1, max_new_tokens=3)[0], 1.0)
    for bad in [dict(loss_agg="sum"), dict(dual_clip_c=0.5), dict(micro_batch_tokens=0), dict(kl_coef=-1.0),
                dict(samples=[{**s, "logprobs": [0.0]}]),
                dict(samples=[{**s, "response_ids": [10**9]}])]:
        kw = dict(bad)
        samples = kw.pop("samples", [s])
        resp = eng.update("v", 0, samples, tmp_path / "ck", **kw)
        assert resp["ok"] is False and resp["error"]["type"] == "BadRequest", (bad, resp)
    # Every field is required (the caller sends what its run config resolved), each named when missing;
    # dual_clip_c, ppo_mini_batch_size, keep_last and keep_every may be null, but not left out.
    full = dict(policy="v", from_version=0, samples=[s], checkpoint_root=str(tmp_path / "ck"), **UPDATE)
    for name in ("checkpoint_root", *UPDATE):
        resp = eng.call("update", **{k: v for k, v in full.items() if k != name})
        assert resp["ok"] is False and resp["error"]["type"] == "BadRequest", (name, resp)
        assert resp["error"]["message"].startswith(f"update: missing field '{name}'"), resp
    resp = eng.call("update", **{**full, "micro_batch_tokens": None})
    assert resp["error"]["message"] == "update: missing field 'micro_batch_tokens'", resp
    assert eng.ok("ping")["policies"]["v"] == 0, "nothing was trained"
    resp = eng.call("load", policy="x", kind="lora", model_path=tiny_model, base="b", optim=OPTIM,
                    checkpoint_root="")  # no lora
    assert resp["ok"] is False and resp["error"] == {"type": "BadRequest", "message": "load: missing field 'lora'"}
    for name in LORA:
        lora = {k: v for k, v in LORA.items() if k != name}
        resp = eng.call("load", policy="x", kind="lora", model_path=tiny_model, base="b", optim=OPTIM, lora=lora,
                        checkpoint_root="")
        assert resp["error"] == {"type": "BadRequest", "message": f"load: missing field 'lora.{name}'"}, resp
    resp = eng.call("load", policy="x", kind="lora", model_path=tiny_model, base="b", optim=OPTIM,
                    lora={**LORA, "target_modules": ["no_such_module"]}, checkpoint_root="")
    assert resp["ok"] is False and "x" not in eng.ok("ping")["policies"]
    assert eng.engine.bases == {}


@pytest.mark.fp32
def test_ppo_mini_batches_and_epochs(eng, tiny_model, tmp_path):
    """ppo_mini_batch_size / ppo_epochs: several optimizer steps per update, old log-probs fixed
    before the first, so the later steps see ratios away from 1 and the clip acts; one version and
    one LR-schedule step per update; the idempotent replay as before."""
    root = tmp_path / "ppo"
    eng.load_full("ppo", tiny_model, root, optim={**OPTIM, "lr": 3e-3})
    gen = eng.gen("ppo", PLAN_PROMPT, n=3, seed=1, max_new_tokens=8) + eng.gen("ppo", TOOL_PROMPT, n=3, seed=2, max_new_tokens=8)
    batch = [as_train(s, a, f"s{i}") for i, (s, a) in enumerate(zip(gen, [1.0, -1.0, 0.5, -0.5, 1.0, -1.0]))]
    r = eng.update("ppo", 0, batch, root, ppo_mini_batch_size=2, ppo_epochs=3)["result"]
    assert r["optimizer_steps"] == 9 and r["version"] == 1 and r["samples"] == 6
    assert r["clip_fraction"] > 0 and r["approx_kl"] > 0
    assert r["logprob_gap"] < 1e-4  # the first pass is on-policy
    sched = torch.load(root / "v000001" / "scheduler.pt", weights_only=True)
    assert sched["last_epoch"] == 1  # the LR schedule counts updates
    opt_state = torch.load(root / "v000001" / "optimizer.pt", weights_only=True)
    assert {float(s["step"]) for s in opt_state["state"].values()} == {9.0}  # AdamW counts steps
    again = eng.update("ppo", 0, batch, root, ppo_mini_batch_size=2, ppo_epochs=3)["result"]
    assert again["replayed"] and again["optimizer_steps"] == 9
    # A mini-batch larger than the batch is one step, as before.
    one = eng.update("ppo", 1, batch, root, ppo_mini_batch_size=256)["result"]
    assert one["optimizer_steps"] == 1 and one["clip_fraction"] == 0
    for bad in (dict(ppo_mini_batch_size=0), dict(ppo_epochs=0)):
        resp = eng.update("ppo", 2, batch, root, **bad)
        assert resp["ok"] is False and "ppo_" in resp["error"]["message"], resp


@pytest.mark.parametrize("kind", ["full", "lora"])
@pytest.mark.fp32
def test_gradient_checkpointing_gives_the_same_logprobs_and_gradients(eng, tiny_model, tmp_path, kind, monkeypatch):
    """gradient_checkpointing: each sample on its own, its layers and its logits (a few positions at
    a time here) made again in the backward pass; the same log-probs, entropies and gradients as the
    group-shared pass, to float rounding, and an update's step reports the same figures."""
    import tandem_engine.models as models

    monkeypatch.setattr(models, "LOGIT_CHUNK", 3)  # chunks of the responses' logits, and a ragged last one
    load = eng.load_lora if kind == "lora" else eng.load_full
    load("k", tiny_model, tmp_path / "k")
    plan = eng.gen("k", PLAN_PROMPT, n=3, seed=1, max_new_tokens=10)
    tool = eng.gen("k", TOOL_PROMPT, n=2, seed=2, max_new_tokens=7)
    samples = [as_train(s, a, f"s{i}") for i, (s, a) in enumerate(zip(plan + tool, [1.0, -0.5, -0.5, 0.7, -0.7]))]

    p = eng.engine.policies["k"]
    params = [q for g in p.optimizer.param_groups for q in g["params"]]
    weights = torch.tensor([s["advantage"] for s in samples], device=p.device)[:, None]
    got = {}
    p.backbone.model.train()
    for checkpointing in (False, True):
        for q in params:
            q.grad = None
        logp, mask, ent = p.backbone.logprobs([s["prompt_ids"] for s in samples], [s["response_ids"] for s in samples],
                                              entropy=True, checkpointing=checkpointing)
        (logp * mask * weights).sum().backward()
        got[checkpointing] = (logp.detach(), mask, ent, [q.grad.clone() for q in params])
    p.backbone.model.eval()
    (logp0, mask0, ent0, grads0), (logp1, mask1, ent1, grads1) = got[False], got[True]
    assert torch.equal(mask0, mask1)
    torch.testing.assert_close(logp1, logp0, rtol=0, atol=2e-5)
    torch.testing.assert_close(ent1, ent0, rtol=0, atol=2e-5)
    for g0, g1 in zip(grads0, grads1):
        torch.testing.assert_close(g1, g0, rtol=1e-4, atol=1e-5)

    # An update's step (its figures are computed before the optimizer moves anything).
    results = {}
    for checkpointing in (False, True):  # one policy key: the same adapter initialisation both times
        eng.ok("unload", policy="k")
        load("k", tiny_model, tmp_path / str(checkpointing), optim={**OPTIM, "lr": 1e-2})
        results[checkpointing] = eng.update("k", 0, samples, tmp_path / str(checkpointing), kl_coef=0.05,
                                            gradient_checkpointing=checkpointing)["result"]
    for key in ("loss", "pg_loss", "kl", "entropy", "grad_norm", "logprob_gap"):
        assert results[True][key] == pytest.approx(results[False][key], rel=1e-5, abs=1e-6), key


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="reads Linux's /proc/self")
def test_an_update_hands_its_activations_back_to_the_system(eng, tiny_model, tmp_path):
    # Activations of long prompts, freed at the end of the update: the engine's resident memory returns
    # to about where it was (free_memory's malloc_trim) instead of staying at the update's peak.
    if server._MALLOC_TRIM is None or ON_GPU:
        pytest.skip("the C heap's trim is glibc's, and only a CPU update's activations live there")
    eng.load_full("mem", tiny_model, tmp_path)
    g = torch.Generator().manual_seed(0)
    samples = [{"sample_id": f"m{i}", "prompt_ids": torch.randint(3, 1000, (1500,), generator=g).tolist(),
                "response_ids": torch.randint(3, 1000, (64,), generator=g).tolist(), "logprobs": [-1.0] * 64,
                "advantage": 1.0 - 2 * (i % 2)} for i in range(8)]
    server.free_memory()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM, the peak, to the resident memory now
    before = _status_mb("VmRSS")
    assert eng.update("mem", 0, samples, tmp_path, micro_batch_tokens=4096)["ok"]
    grew, kept = _status_mb("VmHWM") - before, _status_mb("VmRSS") - before
    assert grew > 100, f"the update's peak was only {grew:.0f} MB above the start: nothing to hand back"
    assert kept < 0.25 * grew, f"{kept:.0f} MB of the update's {grew:.0f} MB peak still resident"
