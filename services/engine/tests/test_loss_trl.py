"""The engine's loss equals TRL's GRPO loss (trl 1.16, GRPOTrainer._compute_loss) for the same
per-token log-probs, advantages and clip settings, in value and in gradient.

TRL's code runs unchanged on a stand-in `self` carrying only the attributes _compute_loss reads;
its per-token log-prob function is stubbed to return our tensor. Mapping:
  token-mean          <-> loss_type "bnpo" (and "dapo" with num_items_in_batch = #tokens)
  seq-mean-token-mean <-> loss_type "grpo"
  dual_clip_c = c     <-> args.delta = c  (TRL's upper clamp of the unclipped ratio; for c > 1+eps_high
                          it changes only A<0 tokens, capping their loss at c|A|: the dual clip)
  kl_coef             <-> beta (k3 estimator against ref_per_token_logps)
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from tandem_engine.ppo import policy_loss

trl_grpo = pytest.importorskip("trl.trainer.grpo_trainer")


class _Accelerator:
    num_processes = 1
    is_main_process = True

    @staticmethod
    def reduce(x, reduction="sum"):
        return x

    @staticmethod
    def gather(x):
        return x

    gather_for_metrics = gather


def trl_loss(new_logp, old_logp, adv, mask, loss_type, eps_low, eps_high, delta=None, beta=0.0, ref_logp=None):
    """TRL's own loss code on our tensors. Returns (loss, metrics)."""
    metrics = defaultdict(lambda: defaultdict(list))
    stand_in = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *a, **k: (new_logp, torch.zeros_like(new_logp), None),
        aux_loss_enabled=False, top_entropy_quantile=1.0, off_policy_mask_threshold=None,
        importance_sampling_level="token", beta=beta, loss_type=loss_type, epsilon_low=eps_low,
        epsilon_high=eps_high, use_vllm=False, vllm_importance_sampling_correction=False,
        model=SimpleNamespace(training=True), current_gradient_accumulation_steps=1,
        _entropy_bonus_enabled=False, _metrics=metrics, accelerator=_Accelerator(),
        args=SimpleNamespace(delta=delta, use_bias_correction_kl=False, steps_per_generation=1),
    )
    B, T = new_logp.shape
    inputs = {
        "prompt_ids": torch.zeros((B, 1), dtype=torch.long), "prompt_mask": torch.ones((B, 1), dtype=torch.long),
        "completion_ids": torch.zeros((B, T), dtype=torch.long), "completion_mask": mask.long(),
        "advantages": adv, "old_per_token_logps": old_logp, "num_items_in_batch": mask.sum(),
    }
    if beta:
        inputs["ref_per_token_logps"] = ref_logp
    return trl_grpo.GRPOTrainer._compute_loss(stand_in, None, inputs), metrics["train"]


def batch(seed=0, B=6, T=9):
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(B, T, generator=g, dtype=torch.float64).float() * 3 - 0.05
    # Ratios spread over ~[0.37, 2.7] so that both clip branches (and the dual clip) are active somewhere.
    new = old + (torch.rand(B, T, generator=g) * 2 - 1)
    ref = old + (torch.rand(B, T, generator=g) - 0.5) * 0.6
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    lengths[0] = T
    mask = (torch.arange(T)[None, :] < lengths[:, None]).float()
    adv = torch.randn(B, generator=g)
    adv[0], adv[1] = 1.5, -1.5
    return new, old, ref, adv, mask


CASES = [  # (loss_agg, trl loss_type, clip_low, clip_high, dual_clip_c, kl_coef)
    ("token-mean", "bnpo", 0.2, 0.2, None, 0.0),
    ("token-mean", "dapo", 0.2, 0.28, None, 0.0),
    ("seq-mean-token-mean", "grpo", 0.2, 0.2, None, 0.0),
    ("seq-mean-token-mean", "grpo", 0.1, 0.3, None, 0.0),
    ("token-mean", "bnpo", 0.2, 0.28, 3.0, 0.0),
    ("seq-mean-token-mean", "grpo", 0.2, 0.28, 1.5, 0.0),
    ("token-mean", "bnpo", 0.2, 0.28, None, 0.05),
    ("seq-mean-token-mean", "grpo", 0.2, 0.28, 3.0, 0.1),
]


@pytest.mark.parametrize("loss_agg,loss_type,clip_low,clip_high,dual_c,kl", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_loss_and_gradient_equal_trl(loss_agg, loss_type, clip_low, clip_high, dual_c, kl, seed):
    new, old, ref, adv, mask = batch(seed)
    ours_new = new.clone().requires_grad_(True)
    ours, stats = policy_loss(ours_new, old, adv, mask, clip_low, clip_high, dual_c, loss_agg,
                              ref_logp=ref if kl else None, kl_coef=kl)
    ours.backward()
    theirs_new = new.clone().requires_grad_(True)
    theirs, metrics = trl_loss(theirs_new, old, adv, mask, loss_type, clip_low, clip_high, delta=dual_c, beta=kl,
                               ref_logp=ref)
    theirs.backward()
    assert ours.item() == pytest.approx(theirs.item(), abs=1e-6)
    assert torch.allclose(ours_new.grad, theirs_new.grad * mask, atol=1e-6)
    # The clip and KL statistics agree with TRL's logged metrics too.
    if dual_c is None:
        assert stats["clipped"] / mask.sum().item() == pytest.approx(metrics["clip_ratio/region_mean"][0], abs=1e-6)
    if kl and loss_agg == "token-mean":
        assert stats["kl"] == pytest.approx(metrics["kl"][0], abs=1e-6)
    assert 0 < stats["clipped"] < mask.sum().item()  # the cases do exercise clipping


def test_dual_clip_caps_negative_advantage_loss():
    old = torch.zeros(1, 3)
    new = torch.log(torch.tensor([[5.0, 2.0, 1.1]])).requires_grad_(True)  # ratios 5, 2, 1.1
    loss, stats = policy_loss(new, old, torch.tensor([-2.0]), torch.ones(1, 3), 0.2, 0.2, dual_clip_c=3.0)
    # per token: min(r|A|, c|A|) = min(10, 6) = 6, 4, 2.2 -> mean 4.0667; the capped token gets no gradient.
    assert loss.item() == pytest.approx((6 + 4 + 2.2) / 3, abs=1e-5)
    loss.backward()
    assert new.grad[0, 0] == 0 and new.grad[0, 1] != 0 and stats["clipped"] == 1


@pytest.mark.parametrize("loss_agg", ["token-mean", "seq-mean-token-mean"])
def test_micro_batches_sum_to_full_batch(loss_agg):
    new, old, ref, adv, mask = batch(3)
    full, fs = policy_loss(new, old, adv, mask, 0.2, 0.28, 3.0, loss_agg, ref, 0.1)
    n_tok, n_seq = mask.sum().item(), mask.shape[0]
    parts = [policy_loss(new[i:i + 2], old[i:i + 2], adv[i:i + 2], mask[i:i + 2], 0.2, 0.28, 3.0, loss_agg,
                         ref[i:i + 2], 0.1, num_tokens=n_tok, num_seqs=n_seq) for i in range(0, 6, 2)]
    assert sum(p[0].item() for p in parts) == pytest.approx(full.item(), abs=1e-6)
    assert sum(p[1]["kl"] for p in parts) == pytest.approx(fs["kl"], abs=1e-6)
    assert sum(p[1]["pg_loss"] for p in parts) == pytest.approx(fs["pg_loss"], abs=1e-6)
