"""A new version to rollout engines by file against by broadcast (placement.<base>.rollout.weights), on
this machine: a trainer engine in this process and `--engines` rollout engine processes (engine.py, as
policy workers run them), each on `TANDEM_TORCH_THREADS` threads. Each version alternates: by file, every
rollout engine's `sync` reads the checkpoint the trainer just wrote (from the page cache: the same host)
at once; by broadcast, one round (the trainer's `publish`, each rollout engine's `sync` with `broadcast`,
gloo over loopback), which also checks every engine's weights against the trainer's. Figures per kind
(a full model, a LoRA adapter): the weights' bytes, each way's wall seconds for all engines to hold the
version (best / median / worst), the round's phases on the trainer's engine (joining the group and
agreeing, the broadcast, the checksums), and the ratio of the medians. On a CPU host gloo copies through loopback and the file comes from the page
cache, so neither time says what NCCL between GPUs or a shared filesystem would take (docs/DEPLOYMENT.md).

    .venv/bin/python bench/engine_broadcast.py --model-dir .tools/models/smollm2-135m-instruct [--engines 2] [--versions 6]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

import engine_common as ec


class Process:
    """A rollout engine process: JSON lines in and out (PROTOCOL.md)."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(ec.ENGINE_DIR, "engine.py"), "--device", "cpu"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                     env={**os.environ, "TANDEM_TORCH_THREADS": str(ec.torch_threads())})
        json.loads(self.proc.stdout.readline())  # its ready line
        self.next_id = 0

    def send(self, op: str, **req) -> None:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "op": op, **req}) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict:
        r = json.loads(self.proc.stdout.readline())
        assert r["ok"], r
        return r["result"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(kind: str, model: str, engines: int, versions: int) -> dict:
    root = ec.tempdir("bench-broadcast-")
    trainer = ec.engine()
    ec.load(trainer, "p", kind, model, root, base="b")
    spec = dict(kind=kind, role="rollout", model_path=model, checkpoint_root=root, optim=ec.OPTIM, dtype=ec.DTYPE,
                **({"base": "b", "lora": ec.LORA} if kind == "lora" else {}))
    rollouts = [Process() for _ in range(engines)]
    times: dict[str, list[float]] = {"file": [], "broadcast": []}
    sent, phases = 0, []
    try:
        for r in rollouts:
            r.send("load", policy="p", **spec)
        for r in rollouts:
            r.answer()
        vocab = trainer.policies["p"].backbone.vocab_size
        for v in range(1, versions + 1):
            ec.update(trainer, "p", v - 1, ec.random_samples(vocab, 2, 32, seed=v), root, keep_last=2)
            way = "file" if v % 2 else "broadcast"
            t0 = time.perf_counter()
            if way == "file":
                for r in rollouts:
                    r.send("sync", policy="p", version=v, **spec)
            else:
                group = {"world_size": engines + 1, "store": f"127.0.0.1:{free_port()}", "group": f"bench/v{v}",
                         "timeout_s": 600, "join_timeout_s": 60}
                for i, r in enumerate(rollouts):
                    r.send("sync", policy="p", version=v, broadcast={**group, "rank": i + 1}, **spec)
                published = ec.call(trainer, "publish", policy="p", version=v, broadcast={**group, "rank": 0})
                sent = published["bytes"]
                phases.append([published["join_s"], published["send_s"], published["check_s"]])
            got = [r.answer() for r in rollouts]
            times[way].append(time.perf_counter() - t0)
            assert all(g["installed"] and g["version"] == v for g in got), got
    finally:
        for r in rollouts:
            r.close()
    # The round's phases on the trainer's engine, the median of each.
    median = [sorted(p[i] for p in phases)[len(phases) // 2] for i in range(3)]
    return {"kind": kind, "bytes": sent, "file": times["file"], "broadcast": times["broadcast"], "phases": median}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ec.add_model_args(ap)
    ap.add_argument("--engines", type=int, default=2, help="rollout engine processes")
    ap.add_argument("--versions", type=int, default=6, help="versions, alternately by file and by broadcast")
    args = ap.parse_args()
    model, n_params, desc = ec.bench_model(args)
    rows = []
    for kind in ("full", "lora"):
        r = run(kind, model, args.engines, args.versions)
        f, b = ec.stats(r["file"]), ec.stats(r["broadcast"])
        join, send, check = r["phases"]
        rows.append(f"| {kind} | {r['bytes'] / 1e6:.1f} | {ec.spread(r['file'])} | {ec.spread(r['broadcast'])} | "
                    f"{join:.3f} / {send:.3f} / {check:.3f} | {f['median'] / b['median']:.2f}x |")
    ec.write_section(ec.section("engine_broadcast", args), [
        f"Model: {desc}; {args.engines} rollout engine processes and the trainer in one, {ec.torch_threads()} torch "
        f"thread(s) each, float32; {args.versions} versions alternately by file (page cache) and by broadcast (gloo, "
        f"loopback); {ec.machine()}; {ec.versions('torch')}.",
        f"Command: `.venv/bin/python bench/engine_broadcast.py {' '.join(sys.argv[1:])}`.",
        "",
        "| kind | bytes sent, MB | by file, s (all engines hold it) | by broadcast, s (the round) | the round's join / send / check, s (median) | file / broadcast |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "Neither time carries over to GPUs: gloo copies through loopback here, and the file comes from the page cache "
        "(a rollout engine on another host reads it from a shared filesystem, a full 8B model's 32 GB of float32 masters "
        "against 16 GB of bf16 weights broadcast once: docs/DEPLOYMENT.md). The round also checks every engine's weights "
        "against the trainer's (its checksums), which the file path does not. An adapter's few megabytes go as well by file.",
    ])


if __name__ == "__main__":
    main()
