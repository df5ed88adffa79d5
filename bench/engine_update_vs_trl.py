"""Benchmark: one GRPO update step in the engine against TRL's GRPOTrainer step, same model and batch.

    .venv/bin/python bench/engine_update_vs_trl.py [--size small] [--prompts 4] [--n 4] [--response 128]
                                                   [--repeat 5]

Batch: --prompts Plan-Path prompts x --n samples, each with a random --response-token completion
(fixed seed) and a random advantage; identical token ids on both sides. Loss: token-mean
(TRL loss_type "dapo", its default, = the engine's token-mean: tests/test_loss_trl.py), clip 0.2/0.2,
no KL (beta 0), old log-probs = the recomputed ones (TRL: no old_per_token_logps, the engine's
"recompute"), grad-norm clip 1.0, one AdamW step (lr 1e-5, betas 0.9/0.999, eps 1e-8, no decay),
the whole batch in one forward/backward on both sides. Timed:
  engine: Engine.handle({"op": "update", ...}) in-process: sample validation, teacher-forced
          log-probs + entropy, loss, backward, clip, AdamW step, scheduler step, and the
          checkpoint it writes (model + optimizer state, fsynced) -- reported with and without it;
  TRL:    the body of one Trainer optimisation step on a prepared batch (generation and reward
          excluded): trainer.compute_loss (GRPOTrainer._compute_loss: fused-LM-head log-probs +
          entropy, loss, metrics) + accelerator.backward + accelerator.clip_grad_norm_ +
          optimizer.step + lr_scheduler.step + model.zero_grad. Gradient checkpointing off (TRL's
          default is on; the engine has none), AdamW = TRL's default optim (adamw_torch_fused).
The two models are separate copies of the same weights. Runs alternate engine / TRL.
Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import glob
import shutil
import time

import engine_common as ec


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--n", type=int, default=4, help="samples per prompt")
    ap.add_argument("--response", type=int, default=128, help="response tokens per sample")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from tandem_engine import checkpoint

    path, n_params, desc = ec.bench_model(args)
    eng = ec.engine()
    ec.load(eng, "p", "full", path)
    policy = eng.policies["p"]
    bb = policy.backbone

    g = torch.Generator().manual_seed(0)
    prompt_ids = [bb.render(m) for m in ec.prompts(args.prompts) for _ in range(args.n)]
    B, R = len(prompt_ids), args.response
    responses = torch.randint(3, bb.vocab_size, (B, R), generator=g)  # 0-2 are the special tokens
    advantages = torch.randn(B, generator=g)
    samples = [{"sample_id": str(i), "prompt_ids": p, "response_ids": responses[i].tolist(), "logprobs": [0.0] * R,
                "advantage": advantages[i].item()} for i, p in enumerate(prompt_ids)]
    P = max(map(len, prompt_ids))
    total = B * (P + R)

    # ---- engine: the update op; its checkpoint write and AdamW step timed by wrapping them
    root = ec.tempdir("bench-update-ckpt-")
    phase = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phase[name] = time.perf_counter() - t
        return wrapper

    checkpoint.save = timed("checkpoint", checkpoint.save)  # policy.py calls checkpoint.save(...)
    policy.optimizer.step = timed("adamw", policy.optimizer.step)

    def engine_update():
        r = ec.update(eng, "p", policy.version, samples, root, clip_low=0.2, clip_high=0.2, loss_agg="token-mean",
                      kl_coef=0.0, max_grad_norm=1.0, micro_batch_tokens=total)
        assert r["tokens"] == B * R and not r["skipped_step"], r
        return dict(phase)

    def engine_setup():  # drop the previous checkpoints (not timed)
        for d in glob.glob(f"{root}/v*"):
            shutil.rmtree(d)

    # ---- TRL: GRPOTrainer on its own copy of the model, its step on the prepared batch
    trl_model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    config = GRPOConfig(
        output_dir=ec.tempdir("bench-trl-"), report_to="none", use_cpu=True, bf16=False,
        per_device_train_batch_size=B, num_generations=args.n, gradient_accumulation_steps=1,
        max_completion_length=R, loss_type="dapo", epsilon=0.2, beta=0.0, max_grad_norm=1.0,
        learning_rate=ec.OPTIM["lr"], lr_scheduler_type="constant", weight_decay=0.0, activation_checkpointing=False,
        save_strategy="no", logging_steps=10**9)
    trainer = GRPOTrainer(model=trl_model, reward_funcs=lambda completions, **kw: [0.0] * len(completions),
                          args=config, train_dataset=Dataset.from_list([{"prompt": "x"}] * B),
                          processing_class=tokenizer)
    trainer.create_optimizer_and_scheduler(num_training_steps=1000)
    model = trainer.model
    assert not model.is_activation_checkpointing
    trainer.current_gradient_accumulation_steps = 1  # set by Trainer's training loop for each step
    inputs = {
        "prompt_ids": torch.tensor([[bb.pad_id] * (P - len(p)) + p for p in prompt_ids]),  # left-padded, as TRL's
        "prompt_mask": torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompt_ids]),
        "completion_ids": responses.clone(),
        "completion_mask": torch.ones((B, R), dtype=torch.long),
        "advantages": advantages.clone(),
        "num_items_in_batch": torch.tensor(float(B * R)),
    }

    def trl_step():
        t = time.perf_counter()
        model.train()
        with trainer.compute_loss_context_manager():
            loss = trainer.compute_loss(model, inputs, num_items_in_batch=inputs["num_items_in_batch"])
        trainer.accelerator.backward(loss)
        t1 = time.perf_counter()
        trainer.accelerator.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        t2 = time.perf_counter()
        trainer.optimizer.step()
        t3 = time.perf_counter()
        trainer.lr_scheduler.step()
        model.zero_grad()
        return {"fwd_bwd": t1 - t, "clip": t2 - t1, "adamw": t3 - t2}

    engine_update(), trl_step()  # warm-up: AdamW state allocation, first-call costs
    engine_setup()
    times, phases, discarded = ec.measure({"engine": engine_update, "trl": trl_step}, args.repeat,
                                          setup={"engine": engine_setup})
    no_ckpt = [t - ph["checkpoint"] for t, ph in zip(times["engine"], phases["engine"])]

    def med(xs):
        return ec.stats(xs)["median"]

    med_phase = {side: {k: med([p[k] for p in phases[side]]) for k in phases[side][0]} for side in phases}
    optim_name = type(trainer.optimizer.optimizer if hasattr(trainer.optimizer, "optimizer") else trainer.optimizer)
    fused = (trainer.optimizer.param_groups[0].get("fused"), policy.optimizer.param_groups[0].get("fused"),
             policy.optimizer.param_groups[0].get("foreach"))
    engine_tokens = sum(len(p) for p in {tuple(p) for p in prompt_ids}) + B * R
    trl_tokens = B * (P + R)
    lines = [
        f"Machine: {ec.machine()}. {ec.versions('transformers', 'trl')}.",
        f"Model: {desc}; full fine-tuning (every weight trainable) on both sides.",
        f"Batch: {args.prompts} Plan-Path prompts ({min(map(len, prompt_ids))}-{P} tokens) x n={args.n} = {B} samples, "
        f"{R} random response tokens each ({B * R} loss tokens), random advantages; token-mean (TRL `dapo`), clip "
        f"0.2, no KL, recomputed old log-probs, grad clip 1.0, one AdamW step, no micro-batching on either side.",
        "Engine: the in-process `update` op (validation, log-probs + entropy, loss, backward, clip, AdamW, "
        "scheduler, checkpoint write). TRL: `compute_loss` + `accelerator.backward` + `clip_grad_norm_` + "
        f"`optimizer.step` + `lr_scheduler.step` + `zero_grad` of GRPOTrainer on the same batch, prepared "
        f"(no generation); gradient checkpointing off; TRL's default optimizer ({optim_name.__name__}, "
        f"fused={fused[0]}); the engine's is torch AdamW with fused={fused[1]}, foreach={fused[2]}.",
        f"{args.repeat} undisturbed runs each, alternating (discarded and re-run because another process used "
        f">= 0.15 cores: engine {discarded['engine']}, TRL {discarded['trl']}).",
        "",
        "| side | wall s best / median / worst |",
        "|---|---|",
        f"| engine `update` op, with its checkpoint write | {ec.spread(times['engine'])} |",
        f"| engine `update` op without the checkpoint write | {ec.spread(no_ckpt)} |",
        f"| TRL GRPOTrainer step | {ec.spread(times['trl'])} |",
        "",
        f"Median phases: engine checkpoint write {med_phase['engine']['checkpoint']:.3f} s, AdamW step "
        f"{med_phase['engine']['adamw']:.3f} s, the rest (validation, forward, backward, clip) "
        f"{med(no_ckpt) - med_phase['engine']['adamw']:.3f} s; TRL forward+backward "
        f"{med_phase['trl']['fwd_bwd']:.3f} s, clip {med_phase['trl']['clip']:.3f} s, AdamW step "
        f"{med_phase['trl']['adamw']:.3f} s.",
        "",
        f"**engine / TRL time: {med(no_ckpt) / med(times['trl']):.2f} without the checkpoint write, "
        f"{med(times['engine']) / med(times['trl']):.2f} with it (medians)**; target <= 1.0.",
        "",
        f"Why: the {args.n} samples of a prompt share the engine's pass over the prompt (its keys and values are "
        f"repeated for the group's responses and the gradient flows back through them; "
        f"services/engine/tests/test_logprobs.py checks values and gradients against one pass per sample), so the "
        f"engine's forward and backward see {engine_tokens} tokens; TRL runs every prompt + completion row in full, "
        f"{trl_tokens} tokens (prompts left-padded to the longest).",
    ]
    ec.write_section(ec.section("engine_update_vs_trl", args), lines)


if __name__ == "__main__":
    main()
