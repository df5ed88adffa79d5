"""Shared helpers of the tensor-engine benchmarks (bench/engine_*.py, bench/gpu/): a local random-init
model, prompts, an in-process engine with complete load / generate / update requests, timing
statistics and the bench/RESULTS.md writer.

Nothing here touches the Hugging Face hub: the model is built from a LlamaConfig, with the
project's own ChatML tokenizer (services/engine/make_tiny_model.py on the corpus fixture).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE_DIR = os.path.join(ROOT, "services", "engine")
CORPUS = os.path.join(ENGINE_DIR, "tests", "fixtures", "planpath_corpus.jsonl")
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")
sys.path.insert(0, ENGINE_DIR)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Llama shapes (vocab 1024: the project tokenizer). "small" is the default of every benchmark:
# big enough that the matmuls, not Python, dominate a decoding step on 2 CPU cores.
SIZES = {
    "tiny": dict(hidden_size=128, intermediate_size=384, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2),  # the engine tests' model, ~0.9M parameters
    "small": dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=8, num_attention_heads=8,
                  num_key_value_heads=4),  # 25.7M parameters
}
# Complete requests (PROTOCOL.md: the engine keeps no defaults for what a run configures, so every
# field is sent; a missing one is a BadRequest naming it). The values are the engine's former
# defaults, with lr 1e-5 and LoRA rank 8 / alpha 16 all-linear; a bench that sets a field passes it
# to load / request / update below, which send these with its values on top.
LORA = {"rank": 8, "alpha": 16.0, "dropout": 0.0, "target_modules": "all-linear"}
OPTIM = {"lr": 1e-5, "weight_decay": 0.0, "betas": [0.9, 0.999], "warmup_steps": 0, "total_steps": 0,
         "min_lr_ratio": 0.0, "warmup_start": "fraction"}
# A generate request's fields besides policy, version, messages: sampling at temperature 1, no top-k/top-p,
# no stop (ignore_eos: every row generates exactly max_new_tokens).
SAMPLING = dict(newer_within=0, n=1, temperature=1.0, top_p=1.0, top_k=-1, min_p=0.0, repetition_penalty=1.0,
                max_new_tokens=128, stop=[], ignore_eos=True, seed=None, enable_thinking=None, max_prompt_tokens=None,
                truncation="error")
# The dtype `load` asks for (precision.py): float32, what the CPU benches have always measured; the
# GPU check and engine_dtype.py set it ("auto": bf16 on a GPU and on a CPU with bf16 units).
DTYPE = "float32"
# An update's fields besides policy, from_version, samples, checkpoint_root (one PPO step, no KL).
UPDATE = dict(clip_low=0.2, clip_high=0.2, dual_clip_c=None, loss_agg="token-mean", kl_coef=0.0, max_grad_norm=1.0,
              micro_batch_tokens=8192, ppo_mini_batch_size=None, ppo_epochs=1, gradient_checkpointing=False,
              keep_last=None, keep_every=None, behaviour_weight_cap=None, overlap=False)


TEMP_TAG = "tandem-bench-"  # the benches' temp folders: <tmp>/tandem-bench-<pid>-<prefix>XXXXXXXX


def tempdir(prefix: str) -> str:
    """A fresh temp folder, removed when this process exits; first, the folders of bench processes that
    died without removing theirs (killed: a full model's checkpoints are gigabytes each)."""
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        m = re.match(rf"{TEMP_TAG}(\d+)-", name)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
    path = tempfile.mkdtemp(prefix=f"{TEMP_TAG}{os.getpid()}-{prefix}")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def build_model(size: str = "small", seed: int = 0) -> tuple[str, int]:
    """A random-init LlamaForCausalLM of `size` with the project tokenizer, saved to a temp folder
    (removed when this process exits). -> (folder, number of parameters)."""
    import torch
    from transformers import AutoTokenizer

    import make_tiny_model

    out = tempdir(f"bench-model-{size}-")
    make_tiny_model.main(["--corpus", CORPUS, "--out", out, "--seed", str(seed), "--sft-steps", "0",
                          "--corpus-size", "600"])
    tokenizer = AutoTokenizer.from_pretrained(out, local_files_only=True)
    tiny = make_tiny_model.build_model(tokenizer, seed)  # the tokenizer's special ids and generation config
    config = tiny.config
    for k, v in SIZES[size].items():
        setattr(config, k, v)
    config.head_dim = config.hidden_size // config.num_attention_heads
    torch.manual_seed(seed)
    model = type(tiny)(config)
    model.generation_config = tiny.generation_config
    model.save_pretrained(out)
    return out, sum(p.numel() for p in model.parameters())


def add_model_args(ap) -> None:
    """--size (a random-init Llama, the default) or --model-dir (a local HF folder, e.g. the SmolLM2
    folder the set-up converts: .tools/models/smollm2-135m-instruct)."""
    ap.add_argument("--size", default="small", choices=sorted(SIZES))
    ap.add_argument("--model-dir", help="a local HF folder to measure instead of a random-init model")


def bench_model(args) -> tuple[str, int, str]:
    """The benchmark's model. -> (folder, number of parameters, a description for RESULTS.md)."""
    if not args.model_dir:
        path, n_params = build_model(args.size)
        return path, n_params, model_desc(args.size, n_params)
    from transformers import AutoConfig, AutoModelForCausalLM

    path = os.path.abspath(args.model_dir)
    config = AutoConfig.from_pretrained(path, local_files_only=True)
    n_params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(path, local_files_only=True).parameters())
    return path, n_params, (f"{os.path.basename(path)} ({config.architectures[0]}, {n_params / 1e6:.1f}M parameters, "
                            f"{config.num_hidden_layers} layers, hidden {config.hidden_size}, vocab {config.vocab_size}), fp32")


def model_desc(size: str, n_params: int) -> str:
    s = SIZES[size]
    return (f"random-init Llama \"{size}\" ({n_params / 1e6:.1f}M parameters: hidden {s['hidden_size']}, "
            f"{s['num_hidden_layers']} layers, MLP {s['intermediate_size']}, {s['num_attention_heads']} heads / "
            f"{s['num_key_value_heads']} KV heads, vocab 1024, tied embeddings), fp32")


def prompts(k: int) -> list[list[dict]]:
    """The first k transcripts of the corpus fixture without the assistant's reply (real Plan-Path prompts)."""
    out = []
    with open(CORPUS) as f:
        for line in f:
            if line.strip() and len(out) < k:
                out.append(json.loads(line)["messages"][:-1])
    return out


def engine():
    """An in-process engine (tandem_engine.server.Engine: the JSON-lines server minus the pipe)."""
    from tandem_engine.server import Engine

    torch_threads()
    return Engine("cpu")


def call(eng, op: str, **req) -> dict:
    r = eng.handle({"op": op, **req})
    assert r["ok"], r
    return r["result"]


def load(eng, policy: str, kind: str, model_path: str, checkpoint_root: str = "", base: str | None = None,
         dtype: str | None = None) -> dict:
    """A complete `load` op: OPTIM, `dtype` (default DTYPE), and for kind "lora" LORA on the shared base `base`."""
    extra = {"base": base, "lora": LORA} if kind == "lora" else {}
    return call(eng, "load", policy=policy, kind=kind, model_path=model_path, checkpoint_root=checkpoint_root,
                optim=OPTIM, dtype=dtype or DTYPE, **extra)


def request(policy: str, messages: list[dict], **kw) -> dict:
    """A complete generate request at version 0: SAMPLING, then `kw`."""
    return {"policy": policy, "version": 0, "messages": messages, **SAMPLING, **kw}


def update(eng, policy: str, from_version: int, samples: list[dict], checkpoint_root: str, **kw) -> dict:
    """A complete `update` op: UPDATE, then `kw`."""
    return call(eng, "update", policy=policy, from_version=from_version, samples=samples,
                checkpoint_root=checkpoint_root, **{**UPDATE, **kw})


def random_samples(vocab: int, count: int, length: int, seed: int) -> list[dict]:
    """`count` samples of `length` tokens each (a quarter prompt, the rest response), each with its own
    prompt, random token ids and advantages of alternating sign."""
    import torch

    g = torch.Generator().manual_seed(seed)
    P = length // 4
    out = []
    for i in range(count):
        ids = torch.randint(3, vocab, (length,), generator=g).tolist()
        out.append({"sample_id": f"s{i}", "prompt_ids": ids[:P], "response_ids": ids[P:], "logprobs": [0.0] * (length - P),
                    "advantage": 1.0 if i % 2 else -1.0})
    return out


def generating_engine(args):
    """The generation benches' set-up: an in-process engine with the bench model loaded as the full
    policy "gen" (no stop token), and --prompts Plan-Path prompts as generate requests of --n rows and
    --tokens new tokens each (temperature 1, seeded by index). -> (engine, its backbone, the requests,
    the model's description)."""
    path, _, desc = bench_model(args)
    eng = engine()
    load(eng, "gen", "full", path)
    no_stop_tokens(eng)
    reqs = [request("gen", m, n=args.n, temperature=1.0, seed=i, max_new_tokens=args.tokens, stop=[])
            for i, m in enumerate(prompts(args.prompts))]
    return eng, eng.policies["gen"].backbone, reqs, desc


def no_stop_tokens(eng) -> None:
    """Benchmarks only: no stop token ends a row, so every row generates exactly max_new_tokens.
    (A random model samples <|im_end|> at some point; HF generate gets eos_token_id=None likewise.)"""
    for p in eng.policies.values():
        p.backbone.stop_ids = set()


def _busy_seconds() -> float:
    """CPU seconds spent busy by the whole machine since boot (all cores, /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def wait_idle(max_busy: float = 0.15, quiet: float = 10.0, timeout: float = 1800.0) -> None:
    """Wait until other processes (e.g. a test stack) have used < max_busy cores in each 2 s of the
    last `quiet` seconds; give up waiting after `timeout` s (the run is then judged by measure)."""
    if os.environ.get("BENCH_NO_WAIT"):  # smoke tests of the scripts: no waiting, nothing discarded
        return
    end, calm = time.time() + timeout, 0.0
    while calm < quiet and time.time() < end:
        b0, o0, t0 = _busy_seconds(), _own_seconds(), time.time()
        time.sleep(2.0)
        busy = ((_busy_seconds() - b0) - (_own_seconds() - o0)) / (time.time() - t0)
        calm = calm + 2.0 if busy < max_busy else 0.0


FOREIGN_CORES: list[float] = []  # other processes' average core use during each kept run (see runs_note)
CPU_SECONDS: dict[str, list[float]] = {}  # name -> this process's CPU seconds (user + system) of each kept run


def runs_note(repeat: int, discarded: dict) -> str:
    """How the timed runs were kept, for RESULTS.md: undisturbed runs, or (BENCH_NO_WAIT=1) every run of
    a busy machine, with how many cores other processes used meanwhile."""
    if not os.environ.get("BENCH_NO_WAIT"):
        return (f"{repeat} undisturbed runs each, round-robin (runs during which other processes used >= 0.15 cores "
                f"were discarded and re-run: {', '.join(f'{k} {v}' for k, v in discarded.items())})")
    lo, med, hi = min(FOREIGN_CORES), statistics.median(FOREIGN_CORES), max(FOREIGN_CORES)
    return (f"{repeat} runs each, round-robin, on a busy machine (BENCH_NO_WAIT=1: no run discarded; other "
            f"processes used {lo:.2f} / {med:.2f} / {hi:.2f} of the 2 cores (min / median / max over the runs), "
            f"so the wall times are inflated and noisy; compare the sides run by run, not with other sections)")


def measure(fns: dict, repeat: int, setup: dict | None = None, max_foreign: float = 0.15, max_tries: int = 100):
    """Run each of `fns` (name -> callable), round-robin, until each has `repeat` undisturbed runs:
    other processes used < max_foreign cores on average while it ran (/proc/stat minus this
    process's own CPU time). Before each run: setup[name]() if given (not timed), then wait for an
    idle machine. -> ({name: wall times of the kept runs}, {name: their results}, {name: discarded runs})."""
    kept = {k: [] for k in fns}
    results, discarded = {k: [] for k in fns}, dict.fromkeys(fns, 0)
    for _ in range(max_tries):
        for name, fn in fns.items():
            if len(kept[name]) == repeat:
                continue
            if setup and name in setup:
                setup[name]()
            wait_idle()
            b0, o0, t0 = _busy_seconds(), _own_seconds(), time.perf_counter()
            result = fn()
            wall = time.perf_counter() - t0
            foreign = ((_busy_seconds() - b0) - (_own_seconds() - o0)) / wall
            ok = foreign < max_foreign or bool(os.environ.get("BENCH_NO_WAIT"))
            if ok:
                kept[name].append(wall)
                results[name].append(result)
                FOREIGN_CORES.append(foreign)
                CPU_SECONDS.setdefault(name, []).append(_own_seconds() - o0)
            discarded[name] += not ok
            print(f"  {name}: {wall:.3f}s, other processes {foreign:.2f} cores{'' if ok else ' -> discarded'}",
                  flush=True)
        if all(len(v) == repeat for v in kept.values()):
            return kept, results, discarded
    raise RuntimeError(f"too few undisturbed runs ({ {k: len(v) for k, v in kept.items()} }); the machine is busy")


def stats(times: list[float]) -> dict:
    return {"best": min(times), "median": statistics.median(times), "worst": max(times), "n": len(times)}


def spread(times: list[float]) -> str:
    """'best / median / worst' seconds."""
    s = stats(times)
    return f"{s['best']:.3f} / {s['median']:.3f} / {s['worst']:.3f}"


def torch_threads() -> int:
    """TANDEM_TORCH_THREADS torch threads where it is set, as engine.py does; the count in use."""
    import torch

    if os.environ.get("TANDEM_TORCH_THREADS"):
        torch.set_num_threads(int(os.environ["TANDEM_TORCH_THREADS"]))
    return torch.get_num_threads()


def machine() -> str:
    import torch

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{platform.machine()} ({_cpu_name()}), {os.cpu_count()} CPU cores, no GPU; Python "
            f"{platform.python_version()}, torch {torch.__version__} ({torch_threads()} threads), device cpu; "
            f"load average at the end {load}")


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def versions(*names: str) -> str:
    import importlib

    return ", ".join(f"{n} {importlib.import_module(n).__version__}" for n in names)


def section(name: str, args) -> str:
    """The RESULTS.md section of a benchmark: its own for a --model-dir, beside the random model's."""
    return f"{name}, {os.path.basename(os.path.abspath(args.model_dir))}" if args.model_dir else name


def write_section(name: str, lines: list[str]) -> None:
    """Print the section and replace `## name ...` in bench/RESULTS.md (appended if absent)."""
    body = "\n".join([f"## {name} ({time.strftime('%Y-%m-%d')})", "", *lines]).rstrip() + "\n"
    print(body)
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n"
    pattern = re.compile(rf"^## {re.escape(name)} \(.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: body + "\n", text, count=1)
    else:
        text = text.rstrip() + "\n\n" + body
    with open(RESULTS, "w") as f:
        f.write(text.rstrip() + "\n")


# ---------------------------------------------------------------- one measurement per fresh process

def status_mb(field: str) -> float:
    """A /proc/self/status figure (VmHWM, VmRSS) in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB -> MiB
    raise KeyError(field)


def parse_with_child(ap, child):
    """The benchmark's arguments. In the process run_child starts (hidden --child VARIANT --model
    PATH), runs child(variant, path, args), prints its JSON result and returns None instead."""
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.child:
        return args
    print(json.dumps(child(args.child, args.model, args)))
    return None


def run_child(script: str, variant: str, path: str, argv: list[str], env: dict | None = None) -> dict:
    """`script`'s child measurement of `variant` in a fresh Python process (memory peaks are per process)."""
    cmd = [sys.executable, os.path.abspath(script), "--child", variant, "--model", path, *argv]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env={**os.environ, **(env or {})})
    return json.loads(out.stdout.strip().splitlines()[-1])
