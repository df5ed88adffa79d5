"""The GRPO / PPO policy-gradient loss of one optimizer step (policy.py takes one per mini-batch).

Per response token t of sample i with advantage A_i (GRPO: one advantage per sample,
broadcast to all its tokens):

    ratio_t = exp(logp_new_t - logp_old_t)
    pg_t    = -min(ratio_t * A_i, clip(ratio_t, 1 - clip_low, 1 + clip_high) * A_i)
    pg_t    = min(pg_t, c * |A_i|)            if dual_clip_c = c is set and A_i < 0
    pg_t    = w_t * pg_t                       with behaviour weights w (decoupled PPO, below)
    kl_t    = exp(ref_t - new_t) - (ref_t - new_t) - 1     (k3 estimator of KL(new || ref))
    loss_t  = pg_t + kl_coef * kl_t

Dual clip (Ye et al. 2020, verl's `clip_ratio_c`): with A < 0 the PPO objective is unbounded in
the ratio (a token that became much *more* likely gets an ever larger penalty); it is capped at c|A|.

Decoupled PPO (Hilton et al. 2021; AReaL's, and verl's token-level truncated rollout correction):
when the samples came from a behaviour policy older than the weights at the update's start (the
proximal policy, `logp_old` above: asynchronous training, rollout.max_staleness > 0), the ratio and
its clip stay against the proximal policy and each token's term is weighted by
w_t = min(exp(logp_prox_t - logp_behav_t), cap), a constant (no gradient); the caller computes it.

Aggregation over the batch (this is what TRL calls loss_type "bnpo"/"dapo" and "grpo"):
    token-mean:            sum over all tokens / total number of tokens
    seq-mean-token-mean:   mean over sequences of (sum over the sequence's tokens / its length)
Micro-batches each contribute their share with the *mini-batch's* normaliser (`num_tokens` /
`num_seqs` of the whole mini-batch the step is on), so the accumulated gradient equals the one of
the mini-batch in one piece.

Samples whose passes are skipped (`samples_to_forward`): without a KL term, a sample of advantage
A_i = 0 has pg_t = -min(ratio_t * 0, clip(ratio_t) * 0) = 0 (also dual-clipped and weighted), so it
adds exactly 0 to the loss and to every gradient; only its tokens count, in the normaliser above.
"""

from __future__ import annotations

import torch

LOSS_AGGS = ("token-mean", "seq-mean-token-mean")


def aggregate(x, mask, loss_agg, num_tokens, num_seqs):
    if loss_agg == "token-mean":
        return (x * mask).sum() / max(float(num_tokens), 1.0)
    if loss_agg == "seq-mean-token-mean":
        per_seq = (x * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)
        return per_seq.sum() / max(float(num_seqs), 1.0)
    raise ValueError(f"unknown loss_agg {loss_agg!r}")


def samples_to_forward(samples: list[dict], kl_coef: float) -> list[dict]:
    """The samples of one optimizer step whose forward and backward passes can move its gradient:
    all of them with a KL term, else those of nonzero advantage (the module's head: a sample of
    advantage 0 adds exactly 0; the caller keeps the whole step's normaliser). GRPO gives advantage 0
    to every sample of a group whose rewards are all equal: 25-52% of the samples trained in this
    project's SmolLM2 arithmetic runs, 97% for an agent that never succeeds yet, and their prompt
    passes go with them. A step whose samples all have advantage 0 keeps its shortest one, so that
    it still takes its optimizer step with the same (zero) gradient on every parameter it had
    before (AdamW's moments and weight decay move as they would) and its metrics have tokens."""
    if kl_coef > 0:
        return list(samples)
    moving = [s for s in samples if s["advantage"] != 0]
    if moving or not samples:
        return moving
    return [min(samples, key=lambda s: len(s["prompt_ids"]) + len(s["response_ids"]))]


def behaviour_weights(prox_logp, behav_logp, mask, cap):
    """Decoupled PPO's token weights min(pi_prox / pi_behav, cap), 0 on padding, and their token
    sums: "is_weight" (of the truncated weights), "is_truncated" (tokens over the cap); "is_max"
    is the largest weight before truncation. All [B, T] in, detached."""
    with torch.no_grad():
        raw = torch.exp((prox_logp - behav_logp) * mask) * mask
        w = torch.clamp(raw, max=cap)
        stats = {"is_weight": w.sum().item(), "is_truncated": ((raw > cap).to(mask.dtype) * mask).sum().item(),
                 "is_max": raw.max().item() if raw.numel() else 0.0}
    return w, stats


def policy_loss(new_logp, old_logp, advantages, mask, clip_low=0.2, clip_high=0.2, dual_clip_c=None,
                loss_agg="token-mean", ref_logp=None, kl_coef=0.0, num_tokens=None, num_seqs=None,
                behaviour_weight=None):
    """Clipped surrogate (+ optional dual clip, behaviour weights and k3 KL penalty).

    new_logp, old_logp (the proximal policy's), mask (1 on response tokens), ref_logp,
    behaviour_weight (behaviour_weights' w; None: none, the on-policy loss): [B, T]; advantages: [B] or [B, T].
    num_tokens / num_seqs: full-batch normalisers (default: this batch's).
    Returns (loss, stats); stats hold detached values: "pg_loss", "kl" (aggregated like the loss),
    and token sums "clipped", "approx_kl", "tokens".
    """
    mask = mask.to(new_logp.dtype)
    num_tokens = mask.sum().item() if num_tokens is None else num_tokens
    num_seqs = new_logp.shape[0] if num_seqs is None else num_seqs
    if advantages.dim() == 1:
        advantages = advantages[:, None]
    advantages = advantages.to(new_logp.dtype).expand_as(new_logp)
    log_ratio = (new_logp - old_logp) * mask  # zero on padding so exp() stays finite
    ratio = torch.exp(log_ratio)
    pg = -torch.min(ratio * advantages, torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * advantages)
    if dual_clip_c is not None:
        pg = torch.where(advantages < 0, torch.min(pg, -dual_clip_c * advantages), pg)
    if behaviour_weight is not None:
        pg = pg * behaviour_weight
    per_token = pg
    kl = None
    if kl_coef and ref_logp is not None:
        delta = (ref_logp - new_logp) * mask
        kl = torch.exp(delta) - delta - 1.0
        per_token = pg + kl_coef * kl
    loss = aggregate(per_token, mask, loss_agg, num_tokens, num_seqs)

    with torch.no_grad():
        # "Clipped" = the token's gradient is cut by a clip: the PPO clip branch is the active one,
        # or (dual clip) the c|A| cap is.
        clipped = ((ratio < 1.0 - clip_low) & (advantages < 0)) | ((ratio > 1.0 + clip_high) & (advantages > 0))
        if dual_clip_c is not None:
            clipped |= (advantages < 0) & (ratio > dual_clip_c)
        stats = {
            "pg_loss": aggregate(pg, mask, loss_agg, num_tokens, num_seqs).item(),
            "kl": aggregate(kl, mask, loss_agg, num_tokens, num_seqs).item() if kl is not None else None,
            "clipped": (clipped.to(mask.dtype) * mask).sum().item(),
            # k3 estimator of KL(old || new): E[(r - 1) - log r] >= 0 (Schulman's blog), token sum.
            "approx_kl": (((ratio - 1.0) - log_ratio) * mask).sum().item(),
            "tokens": mask.sum().item(),
        }
    return loss, stats
