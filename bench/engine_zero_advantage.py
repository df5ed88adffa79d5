"""Benchmark: an update's time against how many of its groups have advantage 0 (GRPO groups whose
rewards were all equal), the engine skipping their passes (ppo.samples_to_forward) against the
same update forwarding every sample (as the engine did before 2026-12-02), on CPU.

    .venv/bin/python bench/engine_zero_advantage.py [--model-dir DIR | --size small] [--groups 4] [--k 4]
        [--prompt 256] [--response 64] [--zero-groups 0,2,4] [--repeat 2]

One in-process engine, one LoRA policy (the learning tables' family) on the bench model, one optimizer
step an update. A batch is --groups groups of --k samples, each group one prompt of --prompt random
tokens and --k responses of --response tokens; a learning group's advantages are +1/-1 in turn, a
group of equal rewards has 0 in every sample. For each count in --zero-groups, the two variants are
timed round-robin (ec.measure: undisturbed runs), the policy stepping on from version to version
(the weights it starts from do not change the time). Writes its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse

import engine_common as ec


def main() -> None:
    ap = argparse.ArgumentParser()
    ec.add_model_args(ap)
    ap.add_argument("--groups", type=int, default=4)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--prompt", type=int, default=256)
    ap.add_argument("--response", type=int, default=64)
    ap.add_argument("--zero-groups", default="0,2,4", help="counts of groups of advantage 0 to measure")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    counts = [int(x) for x in args.zero_groups.split(",")]
    if any(not 0 <= c <= args.groups for c in counts):
        ap.error(f"--zero-groups: each count must be within 0..--groups ({args.groups}): {args.zero_groups}")

    import torch
    import tandem_engine.policy as policy

    path, _, desc = ec.bench_model(args)
    eng = ec.engine()
    root = ec.tempdir("bench-zero-adv-")
    ec.load(eng, "p", "lora", path, root, base="b")
    vocab = eng.policies["p"].backbone.vocab_size
    g = torch.Generator().manual_seed(0)

    def batch(zero: int) -> list[dict]:
        out = []
        for i in range(args.groups):
            prompt = torch.randint(3, vocab, (args.prompt,), generator=g).tolist()
            for j in range(args.k):
                adv = 0.0 if i < zero else (1.0 if j % 2 else -1.0)
                out.append({"sample_id": f"{i}.{j}", "prompt_ids": prompt, "advantage": adv,
                            "response_ids": torch.randint(3, vocab, (args.response,), generator=g).tolist(),
                            "logprobs": [-1.0] * args.response})
        return out

    version = [0]
    real = policy.samples_to_forward

    def step(samples: list[dict], skip: bool):
        def run():
            policy.samples_to_forward = real if skip else (lambda mb, kl_coef: list(mb))
            try:
                r = ec.update(eng, "p", version[0], samples, root, micro_batch_tokens=4096)
            finally:
                policy.samples_to_forward = real
            version[0] += 1
            return r["samples_forwarded"]
        return run

    step(batch(0), True)()  # AdamW's state made, not timed
    rows, discarded = [], {}
    for zero in counts:
        samples = batch(zero)
        times, forwarded, disc = ec.measure({"skip": step(samples, True), "every": step(samples, False)}, args.repeat)
        discarded.update({f"{k} ({zero} zero)": v for k, v in disc.items()})
        s, e = ec.stats(times["skip"])["median"], ec.stats(times["every"])["median"]
        rows.append(f"| {zero} of {args.groups} | {forwarded['skip'][0]} / {forwarded['every'][0]} | "
                    f"{ec.spread(times['skip'])} | {ec.spread(times['every'])} | **{s / e:.2f}x** |")
        print(rows[-1], flush=True)

    ec.write_section(ec.section("engine_zero_advantage", args), [
        f"Machine: {ec.machine()}. {ec.versions('torch', 'transformers', 'peft')}.",
        f"Model: {desc}; a LoRA policy (rank {ec.LORA['rank']}), one optimizer step an update.",
        f"A batch of {args.groups} groups x {args.k} samples, each group one prompt of {args.prompt} tokens and "
        f"{args.k} responses of {args.response}; a group of equal rewards has advantage 0 in every sample. "
        f"{ec.runs_note(args.repeat, discarded)}. Seconds best / median / worst; the ratio of the medians.",
        "",
        "| groups of advantage 0 | samples forwarded (skip / every) | skip (s) | every sample (s) | skip / every |",
        "|---|---|---|---|---|",
        *rows,
    ])


if __name__ == "__main__":
    main()
