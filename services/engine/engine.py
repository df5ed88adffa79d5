"""Tandem tensor engine: a long-running JSON-lines server (stdin -> stdout).

    python services/engine/engine.py --device cpu|cuda|cuda:N

Prints {"ready": true, "device": ..., "torch": ...} once, then answers one JSON line per
request line, in the order they finish (generate requests are decoded together as they arrive).
stdout carries protocol lines only; every log goes to stderr.
Env: TANDEM_TORCH_THREADS (torch intra-op threads), TANDEM_GEN_BATCH (max rows decoded together),
TANDEM_PREFILL_TOKENS (max prompt tokens prefilled between two decoding steps), TANDEM_KV_CACHE_GB (the
decode batches' KV cache, in all; default 45% of the memory free), TANDEM_UPDATE_LOCK (a file: engines given
the same one run their updates one at a time; tandem_engine/update_lock.py).
See PROTOCOL.md for the ops.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading

# Never touch the Hugging Face hub: models are loaded from local folders only.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> int:
    ap = argparse.ArgumentParser(description="Tandem tensor engine (JSON lines on stdin/stdout)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = ap.parse_args()

    # Keep the real stdout for protocol lines and point fd 1 at stderr, so that stray prints
    # (ours, libraries', even C code's) can never corrupt the protocol stream.
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    import torch

    if os.environ.get("TANDEM_TORCH_THREADS"):
        torch.set_num_threads(int(os.environ["TANDEM_TORCH_THREADS"]))
    if args.device.startswith("cuda"):
        if not torch.cuda.is_available():
            print(f"[engine] --device {args.device} requested but CUDA is not available", file=sys.stderr)
            return 2
    elif args.device != "cpu":
        print(f"[engine] unsupported --device {args.device!r} (use cpu, cuda or cuda:N)", file=sys.stderr)
        return 2

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tandem_engine.server import Engine, error

    engine = Engine(args.device)

    def send(obj: dict) -> None:
        try:
            line = json.dumps(obj, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError) as e:  # e.g. a NaN slipped into a result
            line = json.dumps(error(obj.get("id"), "InternalError", f"unserialisable response: {e}"))
        proto.write(line + "\n")
        proto.flush()

    send({"ready": True, "device": str(engine.device), "torch": torch.__version__})
    print(f"[engine] ready on {engine.device} (torch {torch.__version__}, {torch.get_num_threads()} threads)",
          file=sys.stderr, flush=True)
    # A reader thread queues the request lines, so that requests arriving while the engine decodes
    # join the running batch at its next step (continuous batching: tandem_engine/batching.py).
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            if line.strip():
                lines.put(line)
        lines.put(None)  # stdin closed: finish what was asked, then exit

    threading.Thread(target=read, daemon=True, name="stdin").start()
    open_ = True
    while open_ or engine.busy():
        try:
            line = lines.get(block=open_ and not engine.busy())
            while True:
                if line is None:
                    open_ = False
                    break
                engine.submit_line(line, send)
                line = lines.get_nowait()
        except queue.Empty:
            pass
        engine.tick()
    return 0


if __name__ == "__main__":
    sys.exit(main())
