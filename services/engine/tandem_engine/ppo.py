"""The PPO / GRPO policy-gradient step (one optimizer step per `update` request).

Per response token t of sample i with advantage A_i (GRPO: one advantage per sample,
broadcast to all its tokens):

    ratio_t = exp(logp_new_t - logp_old_t)
    loss_t  = -min(ratio_t * A_i, clip(ratio_t, 1 - clip_low, 1 + clip_high) * A_i)

and the batch loss is the token mean over *all* response tokens of the batch
(DAPO-style "token-level" aggregation). Micro-batches each contribute
sum(loss_t) / N_total_tokens, so the accumulated gradient equals the full-batch one.
"""

from __future__ import annotations

import torch


def ppo_loss(new_logp, old_logp, advantages, mask, clip_low=0.2, clip_high=0.2, num_tokens=None):
    """Clipped surrogate loss.

    new_logp, old_logp, mask: [B, T] (mask is 1 on response tokens); advantages: [B] or [B, T].
    num_tokens: normaliser (defaults to mask.sum()); pass the full-batch token count when
    accumulating over micro-batches.
    Returns (loss, stats) where stats are detached sums over the masked tokens.
    """
    mask = mask.to(new_logp.dtype)
    if advantages.dim() == 1:
        advantages = advantages[:, None]
    advantages = advantages.to(new_logp.dtype).expand_as(new_logp)
    log_ratio = (new_logp - old_logp) * mask  # zero on padding so exp() stays finite
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * advantages
    per_token = -torch.min(unclipped, clipped)
    denom = mask.sum() if num_tokens is None else num_tokens
    loss = (per_token * mask).sum() / max(float(denom), 1.0)

    with torch.no_grad():
        # A token is "clipped" when the clipped branch is the active one (its gradient is 0).
        is_clipped = ((ratio < 1.0 - clip_low) & (advantages < 0)) | ((ratio > 1.0 + clip_high) & (advantages > 0))
        # k3 estimator of KL(old || new): E[(r - 1) - log r], always >= 0 (Schulman's blog).
        kl = (ratio - 1.0) - log_ratio
        stats = {
            "clipped": (is_clipped.to(mask.dtype) * mask).sum().item(),
            "kl": (kl * mask).sum().item(),
            "tokens": mask.sum().item(),
        }
    return loss, stats
