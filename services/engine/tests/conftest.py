"""Fixtures: tiny models built once per session, an in-process Engine, and one engine process.

Most tests drive `tandem_engine.server.Engine` in-process (same code path as the JSON-lines server
minus the pipe), so they can also look at the weights directly; test_protocol.py talks to a real
`engine.py` child process.

The engine runs on TANDEM_TEST_DEVICE (default cpu; bench/gpu/check.py sets cuda on a GPU machine),
its policies loaded in the device's usual dtype there (`load`'s dtype: float32 on cpu, bfloat16 on
cuda; TANDEM_TEST_DTYPE=bfloat16 runs the whole suite in bf16 on the CPU, emulated where it has no
bf16 units); test_bf16.py runs the bf16 path on every run. The tests' references stay fp32 on the
CPU. On the CPU in fp32 every test asserts what it always did. Elsewhere: a test marked `fp32` (its
tolerances are float32's) loads its policies in float32 on any device; `same_tokens` compares only
the shape of tokens sampled by differently composed batches (or against the CPU) on a GPU and in
bf16, where they may differ (PROTOCOL.md, "Reproducibility"); tests that cannot apply on one GPU
skip, saying why.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

import pytest
import torch

ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ENGINE_DIR)
sys.path.insert(0, TESTS_DIR)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# bfloat16 on a CPU without bf16 units runs emulated (slow) instead of being refused (precision.py):
# the tests run the GPU's dtype path on any CPU, in-process and in the engine processes they start.
os.environ["TANDEM_ALLOW_EMULATED_BF16"] = "1"

PLAN_PROMPT = [
    {"role": "system", "content": "You are plan_agent in a team solving a Plan-Path grid task. "
                                  "Give the moves after '####' as a JSON list."},
    {"role": "user", "content": "Grid:\nS..#\n.#..\n...G\n....\nFind the moves that take S to G."},
]
TOOL_PROMPT = [
    {"role": "system", "content": "You are tool_call_agent. Write a Python code block that prints the moves."},
    {"role": "user", "content": "Grid:\n.S..\n.##.\n...G\nWhat actions reach the goal?"},
]
# Complete requests: the engine keeps no defaults for what a run configures (PROTOCOL.md; the
# TypeScript side sends what the run config resolved), so the tests send every field too.
OPTIM = {"lr": 1e-3, "weight_decay": 0.0, "betas": [0.9, 0.999], "warmup_steps": 0, "total_steps": 0,
         "min_lr_ratio": 0.0, "warmup_start": "fraction"}
LORA = {"rank": 4, "alpha": 8.0, "dropout": 0.0, "target_modules": "all-linear"}
# An update's fields besides policy, from_version, samples and checkpoint_root.
UPDATE = dict(clip_low=0.2, clip_high=0.28, dual_clip_c=None, loss_agg="token-mean", kl_coef=0.0,
              max_grad_norm=1.0, micro_batch_tokens=4096, ppo_mini_batch_size=None, ppo_epochs=1,
              gradient_checkpointing=False, keep_last=None, keep_every=None, behaviour_weight_cap=None, overlap=False)
# A generate request's fields besides policy, version and messages.
SAMPLING = dict(newer_within=0, n=1, temperature=1.0, top_p=1.0, top_k=-1, min_p=0.0, repetition_penalty=1.0,
                max_new_tokens=256, stop=[], ignore_eos=False, seed=None, enable_thinking=None, max_prompt_tokens=None,
                truncation="error")


def request(policy: str, messages: list[dict], version: int = 0, **kw) -> dict:
    """One complete request of a generate op: SAMPLING, then `kw`."""
    return {"policy": policy, "version": version, "messages": messages, **SAMPLING, **kw}

# Torch's threads in this process (the in-process engines) and in the engines the tests start:
# TANDEM_TORCH_THREADS, as for the engine (engine.py); infra/test.sh sets 1, since the tests share
# the machine with the stack's lane. (A tiny model's small matmuls on two threads of a busy 2-core
# machine ran 8x slower than on one: 17.4 s against 2.1 s for 8 rows of 120 tokens, 2026-11-29.)
if os.environ.get("TANDEM_TORCH_THREADS"):
    torch.set_num_threads(int(os.environ["TANDEM_TORCH_THREADS"]))
DEVICE = os.environ.get("TANDEM_TEST_DEVICE") or "cpu"  # cpu | cuda | cuda:N
ON_GPU = torch.device(DEVICE).type != "cpu"
# The dtype the tests' policies load in (`load`'s dtype): the device's usual one unless set.
DTYPE = getattr(torch, os.environ.get("TANDEM_TEST_DTYPE") or ("bfloat16" if ON_GPU else "float32"))
# A batch's composition changes a GPU's kernels, and a CPU's bf16 ones, and so the last bits of the
# logits: sampled tokens may then differ from those of the same rows decoded alone (PROTOCOL.md,
# "Reproducibility").
BATCH_INVARIANT = not ON_GPU and DTYPE == torch.float32


def pytest_configure(config):
    config.addinivalue_line("markers", "fp32: the test's tolerances are float32's: its engine runs in float32 on "
                                       "every device (the others: in the device's dtype, bf16 on cuda)")


@pytest.fixture(autouse=True)
def engine_dtype(request):
    """The dtype the in-process engine's loads take in this test: float32 for a test marked fp32, else DTYPE."""
    if "local" in request.fixturenames:
        fp32 = request.node.get_closest_marker("fp32") is not None
        request.getfixturevalue("local").dtype = torch.float32 if fp32 else DTYPE


def with_dtype(op: str, params: dict, dtype: torch.dtype) -> dict:
    """A request's params with `dtype` in its load (a `load` op, or each generate request's `load`) where
    the test did not give one: the test's dtype (engine_dtype) is the one place that chooses it."""
    name = str(dtype).removeprefix("torch.")
    if op in ("load", "sync"):
        return {"dtype": name, **params}
    if op == "generate" and isinstance(params.get("requests"), list):
        reqs = [{**r, "load": {"dtype": name, **r["load"]}} if isinstance(r, dict) and isinstance(r.get("load"), dict)
                else r for r in params["requests"]]
        return {**params, "requests": reqs}
    return params


def same_tokens(got, want) -> bool:
    """Sampled tokens equal, where the engine promises it on this device; on a GPU only their shape
    (how many requests, samples, ...) is compared, see BATCH_INVARIANT."""
    return got == want if BATCH_INVARIANT else _shape(got) == _shape(want)


def _shape(x):
    """x with every list of token ids replaced by "tokens"."""
    if isinstance(x, list) and x and all(isinstance(t, int) for t in x):
        return "tokens"
    return [_shape(y) for y in x] if isinstance(x, list) else x


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    """A random-init tiny Llama (hidden 128, 4 layers, vocab 1024) with the project's ChatML
    tokenizer trained on the Plan-Path corpus fixture (60 lines of services/engine/corpus/planpath.ts,
    count 60, seed 7). No SFT: the tests only need a model, not a good one, and this takes < 1 s."""
    import make_tiny_model

    out = str(tmp_path_factory.mktemp("tiny-model"))
    corpus = os.path.join(TESTS_DIR, "fixtures", "planpath_corpus.jsonl")
    make_tiny_model.main(["--corpus", corpus, "--out", out, "--seed", "0", "--sft-steps", "0", "--corpus-size", "600"])
    return out


@pytest.fixture(scope="session")
def tiny_gguf(tiny_model, tmp_path_factory) -> str:
    from tiny_gguf import write_llama_gguf

    out = str(tmp_path_factory.mktemp("gguf") / "tiny-f32.gguf")
    write_llama_gguf(tiny_model, out)
    return out


class LocalEngine:
    """The request handler in this process: .ok(op, **params) -> result, .call(...) -> envelope."""

    def __init__(self):
        from tandem_engine.server import Engine

        self.engine = Engine(DEVICE)
        self.dtype = DTYPE  # of the policies it loads (with_dtype)

    def call(self, op: str, **params) -> dict:
        req = {"id": 1, "op": op, **with_dtype(op, params, self.dtype)}
        return json.loads(json.dumps(self.engine.handle(req)))  # JSON round trip

    def ok(self, op: str, **params) -> dict:
        resp = self.call(op, **params)
        assert resp["ok"], resp
        return resp["result"]

    # helpers shared by the test files
    def load_full(self, policy, model_path, root, optim=OPTIM):
        return self.ok("load", policy=policy, kind="full", model_path=model_path, optim=optim,
                       checkpoint_root=str(root))

    def load_lora(self, policy, model_path, root, base="base", lora=LORA, optim=OPTIM):
        return self.ok("load", policy=policy, kind="lora", model_path=model_path, base=base, lora=lora,
                       optim=optim, checkpoint_root=str(root))

    def gen(self, policy, messages, version=0, **kw):
        """The samples of one request: SAMPLING with 12 new tokens, then `kw`."""
        return self.ok("generate", requests=[request(policy, messages, version, **{"max_new_tokens": 12, **kw})])["results"][0]["samples"]

    def update(self, policy, from_version, samples, root, **kw):
        return self.call("update", policy=policy, from_version=from_version, samples=samples,
                         checkpoint_root=str(root), **{**UPDATE, **kw})

    def unload_all(self):
        for key in list(self.engine.policies):
            self.ok("unload", policy=key)


class Run:
    """Requests submitted to an in-process engine, its ticks driven here; `order` lists the answers."""

    def __init__(self, engine):
        self.engine, self.order, self.next_id = engine, [], 1

    def submit(self, op: str, **params) -> list:
        """-> [id], and [id, answer] once answered (maybe at once: a sync that runs beside the decoding)."""
        rid = self.next_id
        box = [rid]
        self.next_id += 1

        def answer(resp):
            box.append({**resp, "live_rows": self.engine.scheduler.counts()["live_rows"]})
            self.order.append(rid)

        self.engine.submit({"id": rid, "op": op, **params}, answer)
        return box

    def tick(self, n: int) -> None:
        for _ in range(n):
            self.engine.tick()

    def until(self, *boxes) -> list[dict]:
        while not all(len(b) == 2 for b in boxes):
            self.engine.tick()
        for b in boxes:
            assert b[1]["ok"], b[1]
        return [b[1]["result"] for b in boxes]


def fresh() -> LocalEngine:
    """An in-process engine of its own (the session's would hold the other test's policies), in float32:
    for tests marked fp32."""
    eng = LocalEngine()
    eng.dtype = torch.float32
    return eng


@pytest.fixture(scope="session")
def local():
    return LocalEngine()


@pytest.fixture
def eng(local):
    """The session's in-process engine, emptied after each test."""
    yield local
    local.unload_all()


def as_train(sample, advantage, sample_id="s"):
    return {"sample_id": sample_id, "prompt_ids": sample["prompt_ids"], "response_ids": sample["response_ids"],
            "logprobs": sample["logprobs"], "advantage": advantage}


def load_hf(folder):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True).eval()
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


@torch.no_grad()
def teacher_forced(model, prompt_ids, response_ids):
    """log p(response_t | prefix) for one unpadded sequence, computed in the test process (on the
    model's device; the result on the CPU)."""
    ids = torch.tensor([prompt_ids + response_ids], device=model.device)
    logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1).cpu()
    pos = torch.arange(len(response_ids)) + len(prompt_ids) - 1
    return logp[pos, torch.tensor(response_ids)]


@torch.no_grad()
def greedy_under(model, prompt_ids, response_ids, tol: float = 1e-3) -> bool:
    """Whether every response token is the argmax of `model`'s logits at its position, to `tol`: a
    greedy decode by these weights on any device (a GPU's kernels may break a near-tie otherwise
    from one batch to the next, after which the decode still follows these weights' argmax)."""
    ids = torch.tensor([prompt_ids + response_ids], device=model.device)
    logits = model(input_ids=ids).logits[0].float().cpu()
    pos = torch.arange(len(response_ids)) + len(prompt_ids) - 1
    chosen = logits[pos, torch.tensor(response_ids)]
    return bool((logits[pos].max(dim=-1).values - chosen <= tol).all())


class EngineClient:
    """Talks to `engine.py` over JSON lines; each call waits for the matching response."""

    def __init__(self, timeout: float = 60.0):
        env = dict(os.environ, TANDEM_TORCH_THREADS=os.environ.get("TANDEM_TORCH_THREADS", "2"))
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ENGINE_DIR, "engine.py"), "--device", DEVICE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, text=True, env=env, bufsize=1,
        )
        self.timeout = timeout
        self.dtype = DTYPE  # of the policies it loads (with_dtype)
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
        resp = self.send_raw(json.dumps({"id": self.next_id, "op": op, **with_dtype(op, params, self.dtype)}))
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
