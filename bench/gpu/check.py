"""The engine on a GPU in one prepared check: its test suite on the device, generate against
transformers and the memory-bandwidth bound, update steps, a rollout engine's sync, a mixed-adapter
batch. See bench/README.md.

    python3 bench/gpu/check.py --out DIR [--wheels .tools/wheels] [--budget-s 420]   # on a CUDA machine
    .venv/bin/python bench/gpu/check.py --smoke --out DIR                            # on the CPU, tiny shapes
    .venv/bin/python bench/gpu/check.py --fetch-wheels .tools/wheels                 # here, before a device run

Stages, in order, each timed and each failure recorded (a failed stage does not stop the next ones):
environment (device, versions against the project's pins, copy bandwidth), pytest (the engine's
suite with TANDEM_TEST_DEVICE set to the device), generate, update, sync, mixed_adapters. Writes
summary.json and summary.md (the table it prints) into --out, with pytest.log and pytest.xml, and
exits 1 naming the first stage that failed. The stages keep to --budget-s in all: each measurement
that would start too late is skipped and named in the summary.
"""

from __future__ import annotations

import argparse
import atexit
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
PINNED = ("torch", "transformers", "peft")
WHEELS = ("transformers", "peft", "gguf")  # pure-Python wheels carried to the device (--fetch-wheels)
_OWN_GEN_BATCH = "TANDEM_GEN_BATCH" not in os.environ
os.environ.setdefault("TANDEM_GEN_BATCH", "256")  # the engine decodes up to 256 rows together (default 64)


class Ctx:
    """What the stages share: the device, the engine, the sizes of this mode and the time left."""

    def __init__(self, args, device):
        import torch

        self.args, self.device, self.smoke, self.out = args, device, args.smoke, args.out
        self.cuda = device.type == "cuda"
        self.start = time.perf_counter()
        self.end = self.start + args.budget_s
        self.stage_end = self.end
        self.engine = self.figures = None
        self.bandwidth = 0.0
        self.tokens = 8 if self.smoke else 128
        self.rows = (2, 4) if self.smoke else (8, 64, 256)
        self.cb_rows = self.rows[1:2]  # HF's generate_batch at one row count (its first call can take long)
        self.shapes = ("smollm2-135m", "qwen3-1.7b", "llama-8b")
        self.update_configs = (("full", "qwen3-1.7b", 8192), ("lora", "llama-8b", 4096))
        self.update_lengths = (64, 128) if self.smoke else (1024, 4096)
        self.update_samples = 2 if self.smoke else 8
        self.group_shape = "smollm2-135m"
        self.sync_configs = (("lora", "llama-8b"), ("full", "smollm2-135m"))
        self.min_sync_s = 1.0 if self.smoke else 6.0
        self.mixed_shape, self.mixed_rows = "qwen3-1.7b", 2 if self.smoke else 16
        self.min_step_s = 1.0 if self.smoke else 20.0  # no measurement starts with less left in its stage
        # Engine log-probs against a plain forward pass (set with the dtype, environment stage): 1e-3 in
        # fp32; 0.5 in bf16, where a decode step and a whole-sequence pass round differently (a wrong
        # cache or row would be off by about a logit's spread).
        self.logprob_tol = 1e-3
        self.torch = torch

    def left(self) -> float:
        return self.stage_end - time.perf_counter()

    def no_room(self, kv_bytes: int) -> str | None:
        """Why rows needing `kv_bytes` of KV cache won't fit on the device, or None: twice that must be
        free (the engine's buffers with spare columns, or HF's cache beside its whole-batch prefill)."""
        if not self.cuda:
            return None
        free, _ = self.torch.cuda.mem_get_info(self.device)
        if 2 * kv_bytes > free:
            return f"needs 2 x {kv_bytes / 2**30:.1f} GiB of KV cache, {free / 2**30:.1f} GiB free"
        return None

    def reset_peak(self) -> None:
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats(self.device)

    def peak_gb(self) -> float | None:
        return round(self.torch.cuda.max_memory_allocated(self.device) / 1e9, 2) if self.cuda else None


# ---------------------------------------------------------------------- stages

def environment(ctx) -> dict:
    import peft
    import torch
    import transformers

    import engine_common as ec
    import shapes

    fig = {"python": sys.version.split()[0], "torch": torch.__version__, "transformers": transformers.__version__,
           "peft": peft.__version__, "cuda": torch.version.cuda, "device": str(ctx.device),
           "transformers_from": os.path.dirname(os.path.dirname(transformers.__file__)),
           "wheels": os.environ.get("GPUCHECK_WHEELS", "none carried")}
    pins = pinned_versions()
    fig["pinned"] = pins
    fig["drift"] = [f"{k} {fig[k]} (pinned {pins[k]})" for k in PINNED if k in pins and not fig[k].startswith(pins[k])]
    if ctx.cuda:
        props = torch.cuda.get_device_properties(ctx.device)
        fig.update(name=props.name, memory_gb=props.total_memory / 1e9, multiprocessors=props.multi_processor_count)
    else:
        fig.update(name="cpu", threads=torch.get_num_threads())
    ctx.bandwidth = shapes.copy_bandwidth(ctx.device, ctx.smoke)
    fig["copy_bandwidth_gbs"] = ctx.bandwidth / 1e9
    from tandem_engine.server import Engine

    shapes.serve_random_weights()
    ctx.engine = Engine(str(ctx.device))
    # The policies' dtype: on a GPU a run's default (placement.<base>.dtype auto: bf16; precision.py).
    # In the CPU smoke mode bf16 where the CPU has bf16 units (auto would be float32 on a CPU), so
    # that the smoke runs the GPU's dtype path; float32 elsewhere, with auto's reason.
    from tandem_engine import precision

    cpu_bf16 = ctx.device.type == "cpu" and precision.native_bf16(ctx.device)
    ec.DTYPE = "bfloat16" if cpu_bf16 else "auto"
    dtype, note = precision.resolve(ec.DTYPE, ctx.device)
    fig["engine_dtype"], fig["dtype_note"] = precision.name(dtype), note
    ctx.logprob_tol = 1e-3 if dtype == torch.float32 else 0.5
    return fig


def pytest_stage(ctx) -> dict:
    """The engine's test suite on the device (TANDEM_TEST_DEVICE), in a child process limited to the
    stage's time. --smoke runs two of its tests only: the whole suite is in npm test already."""
    tests = os.path.join(ROOT, "services", "engine", "tests")
    select = ([f"{tests}/test_generation_cache.py::test_preallocated_layer_writes_in_place",
               f"{tests}/test_generate.py::test_bad_requests"] if ctx.smoke else [tests])
    xml, log = os.path.join(ctx.out, "pytest.xml"), os.path.join(ctx.out, "pytest.log")
    env = {**os.environ, "TANDEM_TEST_DEVICE": str(ctx.device)}
    if _OWN_GEN_BATCH:
        env.pop("TANDEM_GEN_BATCH")
    cmd = [sys.executable, "-m", "pytest", *select, "-q", "-rs", "-p", "no:cacheprovider", f"--junitxml={xml}"]
    t0 = time.perf_counter()
    with open(log, "w") as f:  # its own process group: on time out, its engine processes go with it
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=max(ctx.left(), 1))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
    ctx.figures = fig = {"selection": "two tests (smoke)" if ctx.smoke else "services/engine/tests", "rc": rc,
                         "seconds": time.perf_counter() - t0, **junit_counts(xml)}
    if rc is None:
        raise RuntimeError(f"the suite ran past the stage's {fig['seconds']:.0f} s (see pytest.log)")
    if rc != 0 or fig["failed"]:
        raise RuntimeError(f"{fig['failed']} of {fig['tests']} tests failed: {', '.join(fig['failures'][:5])}")
    return fig


def junit_counts(xml: str) -> dict:
    """Tests, passed, failed (errors included), skipped and the skip reasons (with counts) of a JUnit file."""
    import xml.etree.ElementTree as ET

    out = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "failures": [], "skip_reasons": {}}
    if not os.path.isfile(xml):
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        out["tests"] += 1
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        skip = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            out["failed"] += 1
            out["failures"].append(name)
        elif skip is not None:
            out["skipped"] += 1
            reason = (skip.get("message") or "").strip()[:160]
            out["skip_reasons"][reason] = out["skip_reasons"].get(reason, 0) + 1
        else:
            out["passed"] += 1
    return out


def pinned_versions() -> dict:
    pins = {}
    with open(os.path.join(ROOT, "services", "engine", "requirements.txt")) as f:
        for line in f:
            name, _, version = line.split("#")[0].strip().partition("==")
            if version:
                pins[name] = version
    return pins


# ---------------------------------------------------------------------- running, reporting

# name, seconds kept for the stages after it (device; --smoke keeps none)
STAGES = [("environment", 380), ("pytest", 190), ("generate", 70), ("update", 40), ("sync", 20), ("mixed_adapters", 0)]


def run_stages(ctx) -> list[dict]:
    import gen_bench
    import sync_bench
    import update_bench

    fns = {"environment": environment, "pytest": pytest_stage, "generate": gen_bench.generate,
           "update": update_bench.update, "sync": sync_bench.sync, "mixed_adapters": gen_bench.mixed_adapters}
    results = []
    for name, reserve in STAGES:
        ctx.stage_end = ctx.end - (0 if ctx.smoke else reserve)
        ctx.figures = None
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        r = {"name": name, "ok": False}
        if ctx.engine is None and name != "environment":
            r["error"] = "not run: the environment stage failed"
        elif ctx.left() <= 0:
            r["error"] = "not run: no time left in the budget"
        else:
            try:
                r["figures"] = fns[name](ctx)
                r["ok"] = True
            except Exception as e:  # noqa: BLE001 - recorded, then the next stage runs
                traceback.print_exc()
                r["error"] = f"{type(e).__name__}: {e}"[:600]
                r["figures"] = ctx.figures
            finally:
                free(ctx)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        print(f"   {name}: {'ok' if r['ok'] else 'FAILED: ' + r['error']} ({r['seconds']} s)", flush=True)
        results.append(r)
    return results


def free(ctx) -> None:
    import gc

    gc.collect()
    if ctx.cuda:
        ctx.torch.cuda.empty_cache()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="folder for summary.json, summary.md, pytest.log, pytest.xml")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU (float32), a minute: npm test runs it")
    ap.add_argument("--device", help="default: cuda, or cpu with --smoke")
    ap.add_argument("--budget-s", type=float, help="time for all stages (default 420, --smoke 300)")
    ap.add_argument("--wheels", help="a folder of wheels to install (pip --target) and use, e.g. .tools/wheels")
    ap.add_argument("--fetch-wheels", metavar="DIR", help="download the pinned wheels to carry, then exit")
    args = ap.parse_args()
    if args.fetch_wheels:
        return fetch_wheels(args.fetch_wheels)
    if not args.out:
        ap.error("--out is required")
    if args.wheels and "GPUCHECK_WHEELS" not in os.environ:
        use_wheels(args.wheels)  # re-executes this script with them on the path, if they import
    if os.environ.get("GPUCHECK_SITE"):  # the wheels' folder, made by use_wheels before the re-execution
        atexit.register(shutil.rmtree, os.environ["GPUCHECK_SITE"], ignore_errors=True)
    args.budget_s = args.budget_s or (300.0 if args.smoke else 420.0)
    os.makedirs(args.out, exist_ok=True)
    import torch

    device = torch.device(args.device or ("cpu" if args.smoke else "cuda"))
    t0 = time.perf_counter()
    if device.type == "cuda" and not torch.cuda.is_available():
        results = [{"name": "environment", "ok": False, "seconds": 0.0, "error": "no CUDA device here "
                    "(torch.cuda.is_available() is False): use --smoke on a CPU"}]
    else:
        results = run_stages(Ctx(args, device))
    summary = {"mode": "smoke" if args.smoke else "device", "budget_s": args.budget_s,
               "wall_s": round(time.perf_counter() - t0, 1), "stages": results}
    failed = [r for r in results if not r["ok"]]
    summary["ok"] = not failed
    summary["first_failure"] = f"{failed[0]['name']}: {failed[0]['error']}" if failed else None
    import report

    table = report.table(summary)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(table)
    print("\n" + table, flush=True)
    if failed:
        print(f"FAILED: {summary['first_failure']}", flush=True)
        return 1
    print(f"OK: all {len(results)} stages passed in {summary['wall_s']} s", flush=True)
    return 0


# ---------------------------------------------------------------------- carried wheels

def fetch_wheels(folder: str) -> int:
    """Download the project's pinned transformers, peft and gguf (pure Python) for the device's Python."""
    pins = pinned_versions()
    os.makedirs(folder, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", folder,
           *[f"{n}=={pins[n]}" for n in WHEELS]]
    rc = subprocess.run(cmd).returncode
    for path in sorted(glob.glob(os.path.join(folder, "*.whl"))):
        print(f"{os.path.getsize(path) / 2**20:6.1f} MiB  {os.path.basename(path)}")
    return rc


def use_wheels(folder: str) -> None:
    """Install the wheels of `folder` into a fresh folder and re-run this script with it first on the
    Python path, if transformers and peft import from it; else go on with the installed ones and say why."""
    wheels = sorted(glob.glob(os.path.join(folder, "*.whl")))
    target = tempfile.mkdtemp(prefix="gpucheck-site-")
    note = "none carried"
    if wheels:
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                              "--target", target, *wheels], capture_output=True, text=True)
        path = os.pathsep.join([target, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        probe = subprocess.run([sys.executable, "-c", "import transformers, peft, gguf; print(transformers.__version__, "
                                "peft.__version__)"], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
        names = ", ".join(os.path.basename(w).split("-py3")[0] for w in wheels)
        if pip.returncode == 0 and probe.returncode == 0:
            os.environ.update(PYTHONPATH=path, GPUCHECK_WHEELS=f"carried and used: {names}", GPUCHECK_SITE=target)
            os.execv(sys.executable, [sys.executable, *sys.argv])
        shutil.rmtree(target, ignore_errors=True)
        why = (pip.stderr or probe.stderr).strip().splitlines()[-1:] or ["?"]
        note = f"carried ({names}) but not usable, so the installed versions run: {why[0][:300]}"
    os.environ["GPUCHECK_WHEELS"] = note


if __name__ == "__main__":
    sys.exit(main())
