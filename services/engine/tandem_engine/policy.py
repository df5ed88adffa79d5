"""A trainable policy at an integer version: either

* kind "full": its own Backbone (HF model + tokenizer), every weight trainable; or
* kind "lora": a named LoRA adapter inside a shared Backbone whose model is a PeftModel over a
  frozen base. Several lora policies naming the same `base` key share that one PeftModel.

Each policy has its own AdamW (over its trainable parameters only, through their float32 masters:
precision.py), LR schedule, private RNG stream (dropout) and checkpoints. Updating one policy never
writes another's weights: the optimizer only holds this policy's parameters, and a frozen base gets
no optimizer at all.
Over replicas with `shard_optimizer` (replicas.py), AdamW's state is split over the replicas by
torch's ZeroRedundancyOptimizer (ZeRO stage 1); its checkpoint is the same AdamW state_dict.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import re
import time
import warnings
import zlib
from contextlib import contextmanager

import torch

from . import checkpoint
from .errors import EngineError
from .models import Backbone, load_pretrained
from .ppo import behaviour_weights, policy_loss, samples_to_forward
from .precision import Masters, as_float32, clip_, name


def lr_factor(step: int, warmup: int, total: int, min_ratio: float, warmup_start: str = "fraction") -> float:
    """LR multiplier for optimizer step `step` (0-based): linear warm-up over `warmup` steps, then
    cosine decay from lr at step `warmup` to lr*min_ratio at step `total`, constant afterwards.
    The warm-up starts at lr/warmup (`fraction`: step 0 already uses lr/warmup, step warmup-1 the
    full lr), or at lr*min_ratio (`min_lr`: verl's cosine schedule, the reference's, reaching the
    full lr at step `warmup`)."""
    if step < warmup:
        if warmup_start == "min_lr":
            return min_ratio + (1.0 - min_ratio) * step / warmup
        return (step + 1) / warmup
    if total <= warmup:
        return 1.0
    progress = min(1.0, (step - warmup) / (total - warmup))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


class Policy:
    role = "trainer"  # it trains; a policy on a rollout engine is a RolloutPolicy (rollout.py)

    def __init__(self, key: str, kind: str, backbone: Backbone, adapter: str | None, optim: dict,
                 checkpoint_root: str, folder: str | None, device: torch.device,
                 masters: dict[int, torch.Tensor] | None = None, dtype_note: str | None = None):
        """`folder`: the checkpoint whose weights the backbone/adapter were loaded from (optimizer,
        scheduler, RNG and version are restored from it too), or None for version 0. `masters`: the
        float32 masters of a full bf16 model's weights (precision.Masters.take); `dtype_note`: why
        the policy's dtype is not the one asked (precision.resolve)."""
        self.key, self.kind, self.backbone, self.adapter = key, kind, backbone, adapter
        self.model_path, self.checkpoint_root, self.device = backbone.model_path, checkpoint_root, device
        self.optim = optim
        self.results: dict[int, dict] = {}  # from_version -> update result (idempotent replays)
        self.ref_model = None  # full policies with kl_coef > 0: frozen copy of the initial weights
        self.dirty = False  # weights stepped but not checkpointed (after a failed save)
        self.seed = zlib.crc32(key.encode())
        self.zero = None  # ZeroRedundancyOptimizer, from the first step with shard_optimizer on
        self.saved_optimizer_state = None  # a checkpoint's AdamW state (on the CPU), until the next step

        params = self.trainable_parameters()
        if not params:
            raise EngineError("LoadError", f"policy {key!r} has no trainable parameters (check lora.target_modules)")
        if kind == "lora":
            as_float32(params)  # an adapter is its own master, over a base of any dtype
        self.masters = Masters(params, masters)
        self.dtype = name(backbone.dtype)  # the weights generation and the forward passes use
        self.dtype_note = dtype_note
        self.optimizer = torch.optim.AdamW(self.masters.params, lr=optim["lr"], betas=tuple(optim["betas"]), eps=1e-8,
                                           weight_decay=optim["weight_decay"])
        sched = (optim["warmup_steps"], optim["total_steps"], optim["min_lr_ratio"], optim["warmup_start"])
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda step: lr_factor(step, *sched))
        self.rng = self._initial_rng()
        self.version, self.source = 0, backbone.model_path
        if folder:
            self._restore(folder)

    # ------------------------------------------------------------------ parameters, RNG, reference

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        if self.kind == "full":
            return [p for p in self.backbone.model.parameters() if p.requires_grad]
        # PEFT names adapter weights "...lora_A.<adapter>.weight"; pick exactly this adapter's.
        mine = re.compile(rf"\.{re.escape(self.adapter)}(\.|$)")
        return [p for n, p in self.backbone.model.named_parameters() if mine.search(n)]

    def _cuda(self) -> list:
        return [self.device] if self.device.type == "cuda" else []

    def _initial_rng(self) -> dict:
        with torch.random.fork_rng(devices=self._cuda()):
            torch.manual_seed(self.seed)
            return self._capture_rng(random.Random(self.seed).getstate())

    def _capture_rng(self, python_state) -> dict:
        return {"torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state(self.device) if self._cuda() else None,
                "python": python_state}

    @contextmanager
    def rng_scope(self):
        """Run with this policy's own RNG streams (dropout masks), leaving the global ones untouched,
        so that a policy's training is reproducible whatever other policies do in between."""
        outer_python = random.getstate()
        with torch.random.fork_rng(devices=self._cuda()):
            torch.set_rng_state(self.rng["torch"])
            if self._cuda() and self.rng.get("cuda") is not None:
                torch.cuda.set_rng_state(self.rng["cuda"], self.device)
            random.setstate(self.rng["python"])
            try:
                yield
            finally:
                self.rng = self._capture_rng(random.getstate())
                random.setstate(outer_python)

    def reference_logprobs(self, prompts, responses):
        """Log-probs under the reference policy: the base without adapter (lora) or the initial
        weights (full; loaded from model_path on first use and kept on the same device)."""
        bb = self.backbone
        with torch.no_grad():
            if self.kind == "lora":
                with bb.model.disable_adapter():
                    return bb.logprobs(prompts, responses)[0]
            if self.ref_model is None:
                self.ref_model, _ = load_pretrained(self.model_path, next(bb.model.parameters()).dtype, self.device)
                self.ref_model.requires_grad_(False)
            return bb.logprobs(prompts, responses, model=self.ref_model)[0]

    # ------------------------------------------------------------------ checkpoints

    def _restore(self, folder: str) -> None:
        state = checkpoint.read_state(folder)
        self.version = int(state["version"])
        self.source = os.path.join(folder, "adapter" if self.kind == "lora" else "model")
        if state.get("update_result"):
            # state.json is written before the folder has its final name: the path is added here.
            self.results[self.version - 1] = {**state["update_result"], "checkpoint": folder}
        # Kept on the CPU until the next step knows which optimizer takes it (_stepper): over replicas
        # with shard_optimizer each keeps only its part, never the whole state on its device.
        self.saved_optimizer_state = checkpoint.load_torch(folder, "optimizer.pt", "cpu", mmap=True)
        sched_state = checkpoint.load_torch(folder, "scheduler.pt", "cpu")
        if sched_state is not None:
            self.scheduler.load_state_dict(sched_state)
        rng = checkpoint.load_torch(folder, "rng.pt", "cpu")
        if rng is not None:
            self.rng = rng
        self.scheduler.base_lrs = [self.optim["lr"]]
        self._apply_hyperparameters(self.optimizer)

    def _apply_hyperparameters(self, optimizer) -> None:
        """Moments and step counts come from the checkpoint, hyperparameters from the load request."""
        o = self.optim
        for g in optimizer.param_groups:
            g.update(initial_lr=o["lr"], betas=tuple(o["betas"]), weight_decay=o["weight_decay"],
                     lr=o["lr"] * lr_factor(self.scheduler.last_epoch, o["warmup_steps"], o["total_steps"],
                                            o["min_lr_ratio"], o["warmup_start"]))

    def _stepper(self, group):
        """The optimizer that takes this step. Without `shard_optimizer`: the policy's AdamW. With it:
        torch's ZeroRedundancyOptimizer over the same parameters, on the step's group; each replica
        keeps the AdamW state of its part of the parameters (assigned by size) and steps only those,
        then the new weights are broadcast from their owners. A bf16 model's float32 masters are split
        the same way: each replica keeps its part's only, and broadcasts their rounded weights
        (precision.Masters.shard). The policy's AdamW then never steps (it holds no state); it keeps
        the parameter groups the LR schedule writes."""
        sharded = bool(group and group.shard_optimizer)
        if sharded != (self.zero is not None) and (self.zero is not None or self.optimizer.state):
            raise EngineError("BadRequest", f"policy {self.key!r} was stepped {'with' if self.zero else 'without'} "
                              "shard_optimizer; unload and load it to change that")
        if sharded and self.zero is None:
            from .replicas import owners, zero_optimizer

            o = self.optim
            mixed = self.masters.mixed  # float32 masters of bf16 weights: each kept by its stepper only
            self.zero = zero_optimizer(self.masters.params, sync_params=not mixed, lr=o["lr"],
                                       betas=tuple(o["betas"]), eps=1e-8, weight_decay=o["weight_decay"])
            if mixed:
                self.masters.shard(owners(self.zero, self.masters.params), group.rank)
        if sharded:
            if self.zero.world_size != group.world:
                raise EngineError("BadRequest", f"policy {self.key!r} shards its optimizer over {self.zero.world_size} "
                                  f"replicas, not {group.world}; unload and load it to change that")
            import torch.distributed as dist

            self.zero.process_group = dist.group.WORLD  # this step's group (the same ranks as before)
        opt = self.zero if sharded else self.optimizer
        if self.saved_optimizer_state is not None:
            opt.load_state_dict(self.saved_optimizer_state)  # ZeRO keeps only its own part
            self.saved_optimizer_state = None
            self._apply_hyperparameters(opt)
        if sharded:  # the schedule writes the policy's AdamW's groups
            for g in opt.param_groups:
                g["lr"] = self.optimizer.param_groups[0]["lr"]
        return opt

    def _write_weights(self, folder: str, full_masters: list | None = None) -> None:
        """The weights into a checkpoint's folder; `full_masters`: a sharded bf16 model's masters,
        gathered (precision.Masters.gathered)."""
        model = self.backbone.model
        if self.kind == "full":
            out = os.path.join(folder, "model")
            if not self.masters.mixed:
                model.save_pretrained(out)
            else:  # the float32 masters, so that a resumed run goes on with exactly these weights
                model.save_pretrained(out, state_dict=self.masters.state_dict_of(model, full_masters))
                say_float32(os.path.join(out, "config.json"))
            self.backbone.tokenizer.save_pretrained(out)
            return
        # PEFT layout, loadable with PeftModel.from_pretrained(base, folder/adapter). (PeftModel's own
        # save_pretrained would put a non-"default" adapter into a subfolder named after it.)
        from peft import get_peft_model_state_dict
        from safetensors.torch import save_file

        out = os.path.join(folder, "adapter")
        os.makedirs(out)
        config = copy.deepcopy(model.peft_config[self.adapter])
        config.inference_mode, config.base_model_name_or_path = True, self.model_path
        config.save_pretrained(out)
        weights = get_peft_model_state_dict(model, adapter_name=self.adapter, save_embedding_layers=False)
        save_file({k: v.detach().cpu().contiguous() for k, v in weights.items()},
                  os.path.join(out, "adapter_model.safetensors"), metadata={"format": "pt"})

    def recorded_result(self, from_version: int, checkpoint_root: str):
        """Result of the update that went from `from_version` to `from_version + 1`, if any."""
        if from_version in self.results:
            return self.results[from_version]
        for root in (checkpoint_root, self.checkpoint_root):
            folder = checkpoint.version_dir(root, from_version + 1) if root else None
            if folder and os.path.isfile(os.path.join(folder, "state.json")):
                recorded = checkpoint.read_state(folder).get("update_result")
                return {**recorded, "checkpoint": folder} if recorded else None
        return None

    # ------------------------------------------------------------------ update

    def update_steps(self, samples, *, clip_low, clip_high, dual_clip_c, loss_agg, kl_coef, max_grad_norm,
                     micro_batch_tokens, checkpoint_root, mini_batch_size, epochs, gradient_checkpointing,
                     behaviour_weight_cap, group=None):
        """A generator: it yields after each micro-batch's forward (and backward) with the model in eval
        mode, so that its driver may decode other rows in between (server.py, an update with `overlap`),
        and returns the update's result. The weights move only at the optimizer steps; whatever runs
        between two yields, the update computes the same numbers.

        PPO on `samples`: `epochs` passes over them, in mini-batches of about `mini_batch_size`
        samples (None: all of them), one optimizer step per mini-batch (the reference's
        ppo_mini_batch_size and ppo_epochs), then one checkpoint: a version counts updates, not
        optimizer steps, and so does the LR schedule. With `group` (replicas.StepGroup), `samples`
        are this replica's share: every replica cuts its share into the same number of mini-batches
        (from the whole batch's count), and each step is the whole mini-batch's (see replicas.py).
        With `behaviour_weight_cap` (asynchronous training: samples from older versions), the loss is
        decoupled PPO's (ppo.py): the ratio against the weights at the update's start, each token
        weighted by min(pi_start / pi_rollout, cap); None: the on-policy loss, as before it existed."""
        started = time.perf_counter()
        samples = [s for s in samples if len(s["response_ids"]) > 0]
        n_tokens, n_seqs = self._batch_counts(samples, group)
        per_epoch = max(1, math.ceil(n_seqs / mini_batch_size)) if mini_batch_size else 1
        mini_batches = split(samples, per_epoch)
        # Each step forwards only the samples that can move its gradient (ppo.samples_to_forward: not
        # those of advantage 0 without a KL term); the others' tokens still count in its normaliser.
        forwarded = [samples_to_forward(mb, kl_coef) for mb in mini_batches]
        moving = [x for f in forwarded for x in f]
        opt = self.optimizer
        stepper = self._stepper(group)
        lr = opt.param_groups[0]["lr"]
        # The old policy's log-probs, fixed before the first step: the trainer's own (teacher-forced,
        # no dropout) under the weights before the update, by one pass before stepping; with a single
        # step, that step's own forward gives the same values (ratio = 1 in value: the plain policy
        # gradient), and the pass is skipped. The samples' own log-probs (the rollout's) only
        # measure the gap between trainer and rollout log-probs.
        steps = per_epoch * epochs
        trainer = (yield from self._logprobs_of(moving, micro_batch_tokens)) if steps > 1 else None
        old = trainer  # None with one step: the step's own forward, detached

        sums = dict.fromkeys(STEP_SUMS, 0.0)
        norms, is_max, mismatch = [], 0.0, None
        for _ in range(epochs):
            for mb, fwd in zip(mini_batches, forwarded):
                norm, st = yield from self._step(mb, fwd, group, stepper, old, micro_batch_tokens, max_grad_norm,
                                      dict(clip_low=clip_low, clip_high=clip_high, dual_clip_c=dual_clip_c,
                                           loss_agg=loss_agg, kl_coef=kl_coef), gradient_checkpointing,
                                      behaviour_weight_cap)
                if norm is not None:
                    norms.append(norm)
                for k in sums:
                    sums[k] += st[k]
                is_max = max(is_max, st["is_max"])
                mismatch = st["mismatch"]  # (used with one step only: its forward is the trainer's)
        with warnings.catch_warnings():  # the schedule counts updates, also those whose step was skipped
            warnings.simplefilter("ignore")
            self.scheduler.step()

        from_version, seen = self.version, max(sums["tokens"], 1)
        # Trainer against rollout log-probs, under the weights before the update: from the pass, or
        # from the single step's own forward.
        mism = mismatch if trainer is None else self._rollout_mismatch(moving, trainer, group)
        n_forwarded = torch.tensor([float(len(moving))], dtype=torch.float64)
        if group:
            group.sum_(n_forwarded)
        result = {
            "version": from_version + 1,
            # loss, pg_loss, kl: the mean over the steps of each step's (mini-batch's) value.
            "loss": sums["loss"] / steps,
            "pg_loss": sums["pg_loss"] / steps,
            "kl": sums["kl"] / steps if kl_coef > 0 else None,
            # per token, over the tokens every step forwarded
            "clip_fraction": sums["clipped"] / seen,
            "approx_kl": sums["approx_kl"] / seen,
            "entropy": sums["entropy"] / seen,
            "grad_norm": sum(norms) / len(norms) if norms else None,  # the mean over the steps taken
            "optimizer_steps": len(norms),
            "skipped_step": not norms,  # no tokens, or non-finite gradients
            "tokens": n_tokens,
            "samples": n_seqs,
            "samples_forwarded": int(n_forwarded.item()),  # the rest: advantage 0, no KL term, no gradient
            "lr": lr,
            "dtype": self.dtype,
            "dtype_note": self.dtype_note,
            **mismatch_stats(mism),
        }
        if behaviour_weight_cap is not None:
            # Decoupled PPO's weights over the tokens every step forwarded: the mean after truncation, the largest
            # before it, and the share of tokens truncated.
            result.update(is_weight_mean=sums["is_weight"] / seen, is_weight_max=is_max,
                          is_truncated_fraction=sums["is_truncated"] / seen)
        if group:  # the weights every replica holds (a sharded bf16 policy's masters are split)
            result["checksum"] = group.check_identical([p for p, _ in self.masters.pairs])
            result["replicas"] = group.world
        # What this engine holds of AdamW's state (with shard_optimizer, about 1/replicas of it).
        local = stepper.optim.state if stepper is not opt else opt.state
        result["optimizer_state_mb"] = sum(t.numel() * t.element_size() for st in local.values()
                                           for t in st.values() if torch.is_tensor(t)) / 2**20
        result["masters_mb"] = self.masters.masters_bytes() / 2**20  # a bf16 model's float32 masters held here
        result["update_s"] = time.perf_counter() - started  # the steps, before the checkpoint is written
        if group:
            result["sync_s"] = group.sync_s  # of which in collectives with the other replicas
        result["checkpoint"] = self._save(checkpoint_root, from_version + 1, result, group, stepper)
        self.version = from_version + 1
        self.dirty = False
        self.results[from_version] = result
        return result

    def _activate(self) -> None:
        """Before each forward of an update: a lora policy's forwards run base + its adapter only (set
        again each time: between two micro-batches, other work on the shared model may have changed it)."""
        if self.kind == "lora":
            self.backbone.model.set_adapter(self.adapter)

    @staticmethod
    def _batch_counts(samples, group) -> tuple[int, int]:
        """(response tokens, samples) of the whole batch: summed over the replicas with a group,
        so that each replica's loss is its share of the whole batch's (the same normalisers)."""
        counts = torch.tensor([sum(len(s["response_ids"]) for s in samples), len(samples)], dtype=torch.float64)
        if group:
            group.sum_(counts)
        return int(counts[0]), int(counts[1])

    @staticmethod
    def _rollout_mismatch(samples, trainer: dict, group) -> torch.Tensor:
        """`mismatch_sums` of the batch (over the replicas' too) from the trainer pass's log-probs."""
        out = torch.zeros(len(MISMATCH), dtype=torch.float64)
        for x in samples:
            t = trainer[id(x)]
            out = merge_mismatch(out, mismatch_sums(t, torch.tensor(x["logprobs"], dtype=torch.float32), torch.ones_like(t)))
        return reduce_mismatch(out, group)

    def _logprobs_of(self, samples, micro_batch_tokens):
        """(A generator, yielding after each micro-batch.) -> {id(sample): its response's log-probs [T]}
        under the current weights, no dropout."""
        out = {}
        for mb in pack(samples, micro_batch_tokens):
            self._activate()
            with torch.no_grad():
                logp, _, _ = self.backbone.logprobs([x["prompt_ids"] for x in mb], [x["response_ids"] for x in mb])
            for row, x in zip(logp.cpu(), mb):
                out[id(x)] = row[: len(x["response_ids"])]
            yield
        return out

    def _step(self, samples, forwarded, group, stepper, old, micro_batch_tokens, max_grad_norm, loss_args,
              checkpointing, behaviour_weight_cap):
        """One optimizer step on one mini-batch (this replica's part of it, with a group), normalised
        over all its `samples`, forwarding only `forwarded` (ppo.samples_to_forward); with
        `checkpointing`, the gradient pass bounds each sample's memory (Backbone.logprobs); with
        `behaviour_weight_cap`, decoupled PPO's behaviour weights (ppo.behaviour_weights).
        (A generator, yielding after each micro-batch's backward, the model back in eval mode.)
        -> (the gradient norm, or None if no step was taken; the step's statistics: token sums, and
        "is_max", the largest behaviour weight before truncation)."""
        model, opt = self.backbone.model, self.optimizer
        n_tokens, n_seqs = self._batch_counts(samples, group)
        opt.zero_grad(set_to_none=True)
        sums = dict.fromkeys(STEP_SUMS, 0.0)
        is_max = torch.zeros(1, dtype=torch.float64)
        mism = torch.zeros(len(MISMATCH), dtype=torch.float64)
        for mb in pack(forwarded, micro_batch_tokens):
            self._activate()
            model.train()  # dropout (e.g. lora_dropout) is on while computing the gradient
            try:
                with self.rng_scope():  # (left between micro-batches: the same stream as one scope)
                    prompts, responses = [x["prompt_ids"] for x in mb], [x["response_ids"] for x in mb]
                    new_logp, mask, ent = self.backbone.logprobs(prompts, responses, entropy=True, checkpointing=checkpointing)
                    width = new_logp.shape[1]
                    rollout = pad_rows([x["logprobs"] for x in mb], width).to(self.device)
                    before = new_logp.detach() if old is None else pad_rows([old[id(x)] for x in mb], width).to(self.device)
                    ref = self.reference_logprobs(prompts, responses) if loss_args["kl_coef"] > 0 else None
                    adv = torch.tensor([float(x["advantage"]) for x in mb], device=self.device)
                    weight = None
                    if behaviour_weight_cap is not None:
                        weight, w_st = behaviour_weights(before, rollout, mask.to(before.dtype), behaviour_weight_cap)
                        sums["is_weight"] += w_st["is_weight"]
                        sums["is_truncated"] += w_st["is_truncated"]
                        is_max[0] = max(is_max.item(), w_st["is_max"])
                    loss, st = policy_loss(new_logp, before, adv, mask, ref_logp=ref, num_tokens=n_tokens,
                                           num_seqs=n_seqs, behaviour_weight=weight, **loss_args)
                    loss.backward()  # (a bf16 weight's gradient goes into its float32 one: precision.Masters)
                    sums["loss"] += loss.item()
                    sums["pg_loss"] += st["pg_loss"]
                    sums["kl"] += st["kl"] or 0.0
                    sums["clipped"] += st["clipped"]
                    sums["approx_kl"] += st["approx_kl"]
                    sums["entropy"] += ent.sum().item()
                    mism = merge_mismatch(mism, mismatch_sums(new_logp.detach(), rollout, mask))
                    sums["tokens"] += st["tokens"]
            finally:
                model.eval()
            yield

        grads = self.masters.gradients(fill=bool(group))  # float32; with a group, zeros where none
        if group:
            group.sum_grads(grads)
            totals = group.sum_(torch.tensor(list(sums.values()), dtype=torch.float64))
            sums = dict(zip(sums, totals.tolist()))
            if behaviour_weight_cap is not None:
                group.max_(is_max)
        mism = reduce_mismatch(mism, group)
        norm = None
        if n_tokens > 0:
            total = clip_(grads, max_grad_norm if max_grad_norm > 0 else float("inf"))
            if torch.isfinite(total):
                norm = total.item()
                self.dirty = True  # from here on, memory differs from the last checkpoint
                self.masters.to_optimizer()
                if stepper is opt:
                    opt.step()
                else:  # the sharded step broadcasts the new weights: a collective
                    group.collective("sharded optimizer step", stepper.step)
                self.masters.copy_to_weights()  # a bf16 model's weights: the masters rounded
                if self.masters.owner is not None:  # sharded masters: each weight from its stepper
                    group.collective("weights broadcast", self.masters.broadcast_weights)
        opt.zero_grad(set_to_none=True)
        self.masters.clear()
        return norm, {**sums, "is_max": is_max.item(), "mismatch": mism}

    def _save(self, root: str, version: int, result: dict, group, stepper) -> str:
        """Writes the checkpoint (only rank 0 of a replica group does); with a group, every replica
        returns only once all know it was written, and raises if it was not. A sharded optimizer's
        state is first gathered to rank 0's CPU (one part at a time) and written as one AdamW state."""
        if not group:
            return checkpoint.save(root, version, self.kind, self._write_weights, self.optimizer, self.scheduler,
                                   self.rng, result)
        full = None
        if stepper is not self.optimizer:
            group.collective("optimizer state gathering", lambda: stepper.consolidate_state_dict(to=0))
            box: list = []
            group.collective("masters gathering", lambda: box.append(self.masters.gathered(to=0)))
            full = box[0]
        failure = None
        if group.rank == 0:
            try:
                checkpoint.save(root, version, self.kind, lambda folder: self._write_weights(folder, full), stepper,
                                self.scheduler, self.rng, result)
            except Exception as e:  # noqa: BLE001 - the others must hear of it before it is raised
                failure = e
        if not group.all_ok(failure is None):
            raise failure or EngineError("ReplicaGroupFailed", f"rank 0 of group {group.group_id} did not write "
                                         f"checkpoint v{version}")
        return checkpoint.version_dir(root, version)


# What each optimizer step sums over its tokens (is_*: decoupled PPO's behaviour weights, ppo.py).
STEP_SUMS = ("loss", "pg_loss", "kl", "clipped", "approx_kl", "entropy", "tokens", "is_weight", "is_truncated")

# The rollout/trainer mismatch under the weights before the update, per response token t:
# d_t = trainer log-prob - rollout log-prob, w_t = exp(d_t) = pi_trainer / pi_rollout (the importance
# weight a bf16 rollout and a mixed-precision update create even at max_staleness 0; with older
# samples it holds their staleness too). Its sums over tokens: their count, |d|, w, w^2; and the
# largest w and -w.
MISMATCH = ("tokens", "abs_gap", "weight", "weight_sq", "weight_max", "neg_weight_min")
SUMS = 4  # the first four add up; the last two are extremes


def mismatch_sums(trainer: torch.Tensor, rollout: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The MISMATCH values of one batch of rows ([B, T] or [T] log-probs, mask 1 on response tokens)."""
    with torch.no_grad():
        m = mask.to(torch.float64).cpu()
        d = (trainer.to(torch.float64).cpu() - rollout.to(torch.float64).cpu()) * m
        w = torch.exp(d)
        on = m > 0
        if not on.any():
            return torch.zeros(len(MISMATCH), dtype=torch.float64)
        return torch.stack([m.sum(), d.abs().sum(), (w * m).sum(), (w * w * m).sum(), w[on].max(), -w[on].min()])


def merge_mismatch(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Two MISMATCH vectors as one: sums add, extremes take the larger (an all-zero vector is empty)."""
    if not b.any():
        return a
    if not a.any():
        return b
    return torch.cat([a[:SUMS] + b[:SUMS], torch.maximum(a[SUMS:], b[SUMS:])])


def reduce_mismatch(x: torch.Tensor, group) -> torch.Tensor:
    """The MISMATCH vector over the replicas (an empty replica's extremes do not count)."""
    if not group:
        return x
    sums = group.sum_(x[:SUMS].clone())
    ext = group.max_(torch.where(x[0] > 0, x[SUMS:], torch.full_like(x[SUMS:], -float("inf"))).clone())
    return torch.cat([sums, ext])


def mismatch_stats(x: torch.Tensor | None) -> dict:
    """The update result's view of a MISMATCH vector: logprob_gap (mean |d|) and the weights' mean,
    standard deviation, smallest and largest, over its tokens (None without tokens)."""
    if x is None or x[0].item() == 0:
        return {"logprob_gap": 0.0, "rollout_weight_mean": None, "rollout_weight_std": None,
                "rollout_weight_min": None, "rollout_weight_max": None}
    n = x[0].item()
    mean = x[2].item() / n
    return {"logprob_gap": x[1].item() / n, "rollout_weight_mean": mean,
            "rollout_weight_std": max(x[3].item() / n - mean * mean, 0.0) ** 0.5,
            "rollout_weight_min": -x[5].item(), "rollout_weight_max": x[4].item()}


def say_float32(config_path: str) -> None:
    """config.json of a checkpoint whose weights are float32 masters says so (transformers writes the
    model's own dtype): a plain from_pretrained then loads them as they are."""
    with open(config_path) as f:
        cfg = json.load(f)
    for key in ("dtype", "torch_dtype"):
        if key in cfg:
            cfg[key] = "float32"
    with open(config_path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def pack(samples: list[dict], budget: int) -> list[list[dict]]:
    """Micro-batches of at most `budget` tokens as the forward pass sees them: each distinct prompt
    once plus every response (Backbone.logprobs runs a prompt once for all its samples). Samples with
    the same prompt stay together unless their group alone exceeds the budget; a sample larger than
    the budget goes alone."""
    groups: dict[tuple[int, ...], list[dict]] = {}
    for s in samples:
        groups.setdefault(tuple(s["prompt_ids"]), []).append(s)
    batches, cur, used = [], [], 0
    for prompt, members in groups.items():
        counted = False  # is this prompt already counted in the current micro-batch?
        for s in members:
            cost = len(s["response_ids"]) + (0 if counted else len(prompt))
            if cur and used + cost > budget:
                batches.append(cur)
                cur, used, cost = [], 0, len(s["response_ids"]) + len(prompt)
            cur.append(s)
            used += cost
            counted = True
    return batches + ([cur] if cur else [])


def split(samples: list[dict], n: int) -> list[list[dict]]:
    """`samples` cut into n consecutive mini-batches whose sizes differ by at most one (some may be
    empty when there are fewer samples than n: a replica still takes part in every step)."""
    size, extra = divmod(len(samples), n)
    out, at = [], 0
    for i in range(n):
        take = size + (1 if i < extra else 0)
        out.append(samples[at: at + take])
        at += take
    return out


def pad_rows(rows, width: int) -> torch.Tensor:
    """Rows (lists or 1-d tensors) of log-probs, zero-padded to [len(rows), width]."""
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.as_tensor(r, dtype=torch.float32)
    return out


# ---------------------------------------------------------------------- LoRA adapters on shared bases

def attach_adapter(backbone: Backbone, name: str, lora: dict | None, folder: str | None, seed: int) -> None:
    """Add adapter `name` to the backbone (wrapping its model in a PeftModel on first use): loaded
    from `folder` (PEFT layout) if given, else freshly initialised from `lora` (seeded)."""
    from peft import LoraConfig, PeftModel, get_peft_model

    model = backbone.model
    config = None if folder else LoraConfig(
        r=lora["rank"], lora_alpha=lora["alpha"], lora_dropout=lora["dropout"],
        target_modules=lora["target_modules"], bias="none", task_type="CAUSAL_LM")
    cuda = [backbone.device] if backbone.device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*")  # peft <-> transformers 5 noise
        torch.manual_seed(seed)  # deterministic lora_A init (lora_B starts at zero)
        if not isinstance(model, PeftModel):
            model = (PeftModel.from_pretrained(model, folder, adapter_name=name, is_trainable=True) if folder
                     else get_peft_model(model, config, adapter_name=name))
        elif folder:
            model.load_adapter(folder, adapter_name=name, is_trainable=True)
        else:
            model.add_adapter(name, config)
    backbone.model = model.eval()
    model.set_adapter(name)


def detach_adapter(backbone: Backbone, name: str) -> None:
    model = backbone.model
    configs = getattr(model, "peft_config", {})
    if name not in configs:
        return
    others = [a for a in configs if a != name]
    if others:  # PEFT only honours adapter_names=[...] while some adapter is active
        model.set_adapter(others[0])
    model.delete_adapter(name)
