"""Fixtures: a tiny model built once per session, and one engine process per session."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

import pytest

ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ENGINE_DIR)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    import make_tiny_model

    out = str(tmp_path_factory.mktemp("tiny-model"))
    # A few SFT steps only, so the model sometimes emits <|im_end|> (both finish reasons occur).
    # The corpus fixture is 60 lines of services/engine/corpus/planpath.ts (count 60, seed 7).
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "planpath_corpus.jsonl")
    make_tiny_model.main(["--corpus", corpus, "--out", out, "--seed", "0", "--sft-steps", "10", "--batch-size", "4", "--corpus-size", "600"])
    return out


class EngineClient:
    """Talks to `engine.py` over JSON lines; each call waits for the matching response."""

    def __init__(self, timeout: float = 60.0):
        env = dict(os.environ, TANDEM_TORCH_THREADS=os.environ.get("TANDEM_TORCH_THREADS", "2"))
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ENGINE_DIR, "engine.py"), "--device", "cpu"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, text=True, env=env, bufsize=1,
        )
        self.timeout = timeout
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.ready = self.read()
        self.next_id = 0

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # EOF: the process died

    def read(self) -> dict:
        line = self.lines.get(timeout=self.timeout)
        assert line is not None, f"engine exited (code {self.proc.poll()})"
        return json.loads(line)

    def send_raw(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def call(self, op: str, **params) -> dict:
        self.next_id += 1
        resp = self.send_raw(json.dumps({"id": self.next_id, "op": op, **params}))
        assert resp["id"] == self.next_id
        return resp

    def ok(self, op: str, **params) -> dict:
        resp = self.call(op, **params)
        assert resp["ok"], resp
        return resp["result"]

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="session")
def engine():
    client = EngineClient()
    yield client
    client.close()
