"""Request dispatch: one JSON object in -> one JSON object out. See PROTOCOL.md."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import math
import os
import secrets
import sys
import time
import traceback
import zlib
from collections import deque
from typing import NamedTuple

import torch

from . import broadcast, checkpoint, models, precision, serving, update_lock
from .errors import EngineError
from .batching import Scheduler
from .generation import Row, row_generator, sample_of
from .models import Backbone
from .policy import Policy, attach_adapter, detach_adapter
from .rollout import RolloutPolicy
from .replicas import StepGroup
from .samples_file import read_samples
from .ppo import LOSS_AGGS

REQUIRED = object()  # given, not null
NULLABLE = object()  # given; null is one of its values (PROTOCOL.md says what it means: off, no limit, ...)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def field(req: dict, name: str, kind, default=REQUIRED, at: str = ""):
    """req[name] checked against `kind` (a type or tuple of types). The engine keeps no defaults of its
    own for what the caller configures (the TypeScript side sends what the run config resolved):
    `default` is REQUIRED (given and not null), NULLABLE (given; null -> None), or, for the few
    optional fields of the protocol (`load`, `distributed`, `samples_file`, `broadcast`), the value when absent or
    null. `at`: where `req` sits in the request ("optim.", "requests[0]."), for the messages, which
    Engine.submit prefixes with the op."""
    path = at + name
    value = req.get(name)
    if value is None:
        if default is REQUIRED or (default is NULLABLE and name not in req):
            raise EngineError("BadRequest", f"missing field {path!r}" + (" (null allowed)" if default is NULLABLE else ""))
        return None if default is NULLABLE else default
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise EngineError("BadRequest", f"field {path!r} has the wrong type ({type(value).__name__})")
    if isinstance(value, float) and not math.isfinite(value):
        raise EngineError("BadRequest", f"field {path!r} must be finite")
    return value


class Started(NamedTuple):
    """One request of a generate op, started: its policy's key, the version and backbone generating
    (the policy's own, or its serving copy during an update), and its rows."""
    key: str
    version: int
    backbone: Backbone
    rows: list[Row]
    truncated_from: int | None  # the rendered prompt's tokens when it was cut to max_prompt_tokens


class Job:
    """One `generate` op: its requests, their rows once started, answered when every row has finished."""

    def __init__(self, rid, requests: list[dict], answer):
        self.rid, self.requests, self.answer = rid, requests, answer
        self.started: list[Started] = []  # per request: what generates its rows, and the rows
        self.left = 0  # rows not finished yet


class UpdateTask:
    """An `update` with `overlap` in progress: its steps (Policy.update_steps inside Engine._update),
    driven by Engine.tick between decoding steps, and what answers it."""

    def __init__(self, key: str, steps, rid, answer):
        self.key, self.steps, self.rid, self.answer = key, steps, rid, answer
        self.alone = False  # no serving copy (a full model's did not fit): nothing starts until it ends
        self.seconds = 0.0  # spent in its steps
        self.decode_seconds = 0.0  # spent decoding while it ran (its fair share of tick)
        self.waiting_decode_seconds = 0.0  # spent decoding while it waited at the host's update lock


IMMEDIATE = ("ping", "inspect", "stats", "cancel")  # answered at once, also while generating
NOT_DONE = object()  # an update task's step that did not finish it


class Engine:
    """Ops in, answers out (see PROTOCOL.md). `submit` takes a request and a callback for its answer;
    `tick` does one step of work. Generate requests join the running decode batches (batching.py);
    load, unload and update run in arrival order, each once no rows are decoding, and the requests that
    arrived after one of them wait for it; but an update with `overlap` starts at once and runs beside
    the decoding, a step at a time, the policy's rows served by a copy of its weights (serving.py).
    ping, inspect, stats and cancel are answered at once."""

    def __init__(self, device: str):
        self.device = torch.device(device)
        self.policies: dict[str, Policy] = {}
        self.bases: dict[str, Backbone] = {}  # shared frozen bases of lora policies, by `base` key
        self.adapters_made = 0  # adapter names inside a PeftModel: policy1, policy2, ...
        self.scheduler = Scheduler()
        self.pending: deque = deque()  # Jobs and (op, req, run, answer) in arrival order, not started yet
        self.running: list[Job] = []
        self.task: UpdateTask | None = None  # the update with overlap in progress
        self.serving: dict[str, serving.ServingCopy] = {}  # by policy key: the copy its update's rows use
        self.retired: list[serving.ServingCopy] = []  # copies of finished updates, until their rows finish
        self.update_seconds = 0.0  # in update ops, since start (stats)
        self.ops = {"ping": self.ping, "inspect": self.inspect, "load": self.load, "unload": self.unload,
                    "update": self.update, "sync": self.sync, "publish": self.publish, "stats": self.stats, "cancel": self.cancel,
                    "generate": None}

    # ------------------------------------------------------------------ plumbing

    def submit_line(self, line: str, reply) -> None:
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            return reply(error(None, "BadRequest", f"invalid JSON: {e}"))
        if not isinstance(req, dict):
            return reply(error(None, "BadRequest", "a request must be a JSON object"))
        self.submit(req, reply)

    def submit(self, req: dict, reply) -> None:
        """Take one request; `reply(response)` is called once, now or from a later `tick`."""
        rid, op, t0 = req.get("id"), req.get("op"), time.time()

        def answer(resp: dict) -> None:
            if not resp["ok"] and resp["error"]["type"] == "BadRequest" and op in self.ops:
                resp["error"]["message"] = f"{op}: {resp['error']['message']}"  # which request it was
            log(f"[engine] id={rid!r} op={op} ok={resp['ok']} {time.time() - t0:.3f}s"
                + ("" if resp["ok"] else f" {resp['error']['type']}: {resp['error']['message']}"))
            reply(resp)

        def run(fn) -> None:
            answer(outcome(rid, fn))

        if op not in self.ops:
            return answer(error(rid, "UnknownOp", f"unknown op {op!r}; expected one of {sorted(self.ops)}"))
        if op in IMMEDIATE:
            return run(lambda: self.ops[op](req))
        if op == "generate":
            try:
                self.pending.append(Job(rid, parse_generate(req), answer))
            except EngineError as e:
                return answer(error(rid, e.type, str(e)))
        else:
            self.pending.append((op, req, run, answer))
        self.advance()

    def handle(self, req: dict) -> dict:
        """Submit one request and work until it is answered (in-process use and tests)."""
        box: list[dict] = []
        self.submit(req, box.append)
        while not box:
            self.tick()
        return box[0]

    def busy(self) -> bool:
        return bool(self.pending) or self.scheduler.busy() or self.task is not None

    def advance(self) -> None:
        """Start what may start, in arrival order: generate requests at once (but one naming a policy not
        loaded yet once no rows are decoding, and one that the version of a policy in training cannot
        serve once its update is done); load, unload and update once no rows are decoding and no update
        runs, an update with `overlap` once no other update runs."""
        while self.pending:
            head = self.pending[0]
            if isinstance(head, Job):
                if not self._may_start(head):
                    return
                self.pending.popleft()
                self._start(head)
                continue
            op, req, run, answer = head
            beside = op == "update" and req.get("overlap") is True and req.get("distributed") is None
            if self.task is not None or (not beside and not self._syncs_beside(op, req) and self.scheduler.busy()):
                return
            self.pending.popleft()
            if beside:
                self._begin_update(req, answer)
            else:
                t0 = time.perf_counter()
                run(lambda: self.ops[op](req))
                self.update_seconds += (time.perf_counter() - t0) * (op == "update")

    def _syncs_beside(self, op: str, req: dict) -> bool:
        """A sync of a loaded rollout policy runs while rows decode: its rows in flight move onto a serving
        copy (a full model's only if the copy fits; else the sync waits for the rows, as a load does)."""
        p = self.policies.get(req.get("policy")) if op == "sync" else None
        return isinstance(p, RolloutPolicy) and (p.kind == "lora" or not self._rows_of(p) or serving.fits(p) is None)

    def _rows_of(self, p) -> list:
        """The policy's rows in flight (on a shared base, those of its own adapter)."""
        return [r for r in self.scheduler.rows_of(p.backbone) if r.adapter == p.adapter]

    def _may_start(self, job: Job) -> bool:
        if self.task is not None and self.task.alone:
            return False
        for r in job.requests:
            if r["policy"] not in self.policies and (self.scheduler.busy() or self.task is not None):
                return False  # loads it: an exclusive op
            if self.task is not None and r["policy"] == self.task.key:
                served = self.serving.get(r["policy"])
                if served is None or not r["version"] <= served.version <= r["version"] + r["newer_within"]:
                    return False  # the version it asks for comes with the update
        return True

    def tick(self) -> None:
        """One step of work: with an update running beside the decoding, a step of whichever of the two
        has had less time since the update began (each gets half the device while both have work);
        then answers what finished."""
        self.advance()
        task = self.task
        if task is not None and (not self.scheduler.busy() or task.seconds <= task.decode_seconds):
            self._update_step(task)
        else:
            t0 = time.perf_counter()
            self._decode_step()
            if task is not None:
                task.decode_seconds += time.perf_counter() - t0
        self._drop_retired()
        self.advance()

    def _decode_step(self) -> None:
        try:
            finished = self.scheduler.tick()
        except Exception as e:  # noqa: BLE001 - e.g. out of memory in a forward: the rows in flight fail, not the engine
            log(traceback.format_exc())
            self.scheduler.drop_all()
            jobs, self.running = self.running, []
            for job in jobs:
                job.answer(error(job.rid, type(e).__name__, str(e) or repr(e)))
            free_memory()
            return
        for row in finished:
            job = row.owner
            job.left -= 1
            if job.left == 0:
                self._finish(job)

    def _begin_update(self, req: dict, answer) -> None:
        """An update with overlap: its first step now (the checks, and a replayed result answers it at
        once), the others from tick."""
        task = UpdateTask(req.get("policy"), self._update(req, beside=True), req.get("id"), answer)
        self.task = task
        self._update_step(task)

    def _update_step(self, task: UpdateTask) -> None:
        t0 = time.perf_counter()
        self.scheduler.unhook()  # the decode batches' adapter hooks are not the update's
        resp = outcome(task.rid, lambda: step(task.steps))
        task.seconds += time.perf_counter() - t0
        self.update_seconds += time.perf_counter() - t0
        if resp["ok"] and resp["result"] is NOT_DONE:
            return
        self.task = None
        task.answer(resp)

    def _drop_retired(self) -> None:
        """Free the serving copies of finished updates that no row uses any more."""
        for served in [c for c in self.retired if not serving.in_use(c, self.scheduler)]:
            self.retired.remove(served)
            serving.drop(served)
            if served.kind == "model":
                free_memory()  # the model copy, referenced by nothing now

    def _start(self, job: Job) -> None:
        try:
            for r in job.requests:
                key = r["policy"]
                if key not in self.policies and r["load"] is not None:
                    self._ensure_loaded(key, r["load"])
                p = self.policy(key)
                if isinstance(p, RolloutPolicy) and p.version < r["version"] and self._syncs_beside("sync", r):
                    # A rollout engine behind the version asked for (a sync it missed): install that one.
                    self._install(p, r["version"], *p.read_checkpoint(r["version"]))
                # During the policy's update (overlap): its serving copy, the version before the update.
                served = self.serving.get(key)
                version, bb, adapter = (served.version, served.backbone, served.adapter) if served else (
                    p.version, p.backbone, p.adapter)
                # The version asked for, or (asynchronous training) a newer one within newer_within;
                # never an older one. The answer names the version that generated.
                if not r["version"] <= version <= r["version"] + r["newer_within"]:
                    wants = r["version"] if r["newer_within"] == 0 else f"{r['version']} to {r['version'] + r['newer_within']}"
                    raise EngineError("VersionMismatch", f"policy {p.key!r} is at version {version}, request wants {wants}")
                seed = r["seed"] if r["seed"] is not None else secrets.randbits(63)
                rendered = bb.render(r["messages"], r["enable_thinking"])
                prompt = fit_prompt(rendered, r["max_prompt_tokens"], r["truncation"],
                                    lambda: bb.system_prefix(r["messages"], rendered, r["enable_thinking"]))
                self._check_fits(bb, len(prompt), r["max_new_tokens"])
                rows = [Row(prompt, row_generator(self.device, seed, k), adapter=adapter, owner=job,
                            **{f: r[f] for f in SAMPLING}) for k in range(r["n"])]
                job.started.append(Started(key, version, bb, rows, len(rendered) if len(prompt) < len(rendered) else None))
        except Exception as e:  # noqa: BLE001
            if not isinstance(e, EngineError):
                log(traceback.format_exc())
            job.answer(error(job.rid, e.type if isinstance(e, EngineError) else type(e).__name__, str(e)))
            return
        job.left = sum(len(s.rows) for s in job.started)
        if job.left == 0:
            return self._finish(job)
        self.running.append(job)
        for s in job.started:
            self.scheduler.add(s.backbone, s.rows)

    def _check_fits(self, bb: Backbone, prompt_tokens: int, new_tokens: int) -> None:
        """KvCacheTooSmall if one row of this many tokens needs more KV cache than the whole budget."""
        need, budget = (prompt_tokens + new_tokens) * bb.kv_bytes_per_token, self.scheduler.kv_budget(bb.device)
        if need > budget:
            raise EngineError("KvCacheTooSmall", f"one sample of {prompt_tokens} prompt + {new_tokens} new tokens needs "
                              f"{need / 2**30:.2f} GB of KV cache, more than the budget of {budget / 2**30:.2f} GB "
                              "(TANDEM_KV_CACHE_GB, or a share of the memory free): shorten the prompt or "
                              "max_new_tokens, or give the cache more memory")

    def _finish(self, job: Job) -> None:
        if job in self.running:
            self.running.remove(job)
        results = [{"policy": s.key, "version": s.version, "truncated_from": s.truncated_from,
                    "samples": [sample_of(s.backbone, r) for r in s.rows]} for s in job.started]
        job.answer({"id": job.rid, "ok": True, "result": {"results": results}})

    def policy(self, key: str) -> Policy:
        if key not in self.policies:
            raise EngineError("PolicyNotLoaded", f"policy {key!r} is not loaded")
        return self.policies[key]

    # ------------------------------------------------------------------ ops

    def ping(self, req):
        return {"pong": True, "policies": {k: p.version for k, p in self.policies.items()}}

    def stats(self, req):
        """Counters since start (busy_seconds: time spent prefilling and decoding), the rows now, and the KV
        cache's buffers now and their budget (bytes)."""
        return {**self.scheduler.stats, **self.scheduler.counts(), "pending_ops": len(self.pending),
                "update_seconds": self.update_seconds,
                "kv_cache_bytes": self.scheduler.kv_bytes(), "kv_budget_bytes": self.scheduler.kv_budget(self.device)}

    def cancel(self, req):
        """Drop the generate op whose id is `target`: its rows stop and it is answered `Cancelled`."""
        target = req.get("target")
        for job in [j for j in self.pending if isinstance(j, Job)] + self.running:
            if job.rid == target and target is not None:
                if job in self.pending:
                    self.pending.remove(job)
                else:
                    self.running.remove(job)
                    self.scheduler.cancel([r for s in job.started for r in s.rows])
                job.answer(error(job.rid, "Cancelled", "cancelled by request"))
                return {"cancelled": True}
        return {"cancelled": False}

    def inspect(self, req):
        return models.inspect(field(req, "model_path", str))

    def load(self, req):
        return self._ensure_loaded(field(req, "policy", str), parse_load(req))

    def _ensure_loaded(self, key: str, spec: dict) -> dict:
        if key not in self.policies:
            self.policies[key] = self._load(key, spec)
        p = self.policies[key]
        if p.role != spec["role"]:
            raise EngineError("BadRequest", f"policy {key!r} is loaded here as its {p.role}, not as its {spec['role']}: "
                              "a policy's trainer and rollout engines are different engines")
        return {"policy": key, "version": p.version, "source": p.source, "dtype": p.dtype, "dtype_note": p.dtype_note,
                "role": p.role}

    def _load(self, key: str, spec: dict) -> Policy | RolloutPolicy:
        kind, model_path, root, optim = spec["kind"], spec["model_path"], spec["checkpoint_root"], spec["optim"]
        rollout = spec["role"] == "rollout"
        dtype, note = precision.resolve(spec["dtype"], self.device, log=log)  # BadRequest naming what is missing
        models.inspect(model_path)  # LoadError naming the path and the reason, before loading anything
        ckpts = checkpoint.list_complete(root)
        folder = ckpts[-1][1] if ckpts else None  # newest complete checkpoint, if any

        if kind == "full":
            source = os.path.join(folder, "model") if folder else model_path
            # Loaded in float32, whose weights become the masters of a bf16 model's (precision.py); a rollout
            # policy's are rounded the same way, and no master is kept.
            model, tokenizer = models.load_pretrained(source, torch.float32, self.device)
            masters = precision.Masters.take(model, dtype)
            bb = Backbone(model, tokenizer, model_path, self.device)
            if rollout:
                return RolloutPolicy(key, "full", bb, None, root, folder, dtype_note=note)
            return Policy(key, "full", bb, None, optim, root, folder, self.device, masters=masters, dtype_note=note)

        base_key, lora = spec["base"], spec["lora"]
        adapter_dir = os.path.join(folder, "adapter") if folder else None
        if adapter_dir and not os.path.isfile(os.path.join(adapter_dir, "adapter_config.json")):
            raise EngineError("LoadError", f"checkpoint {folder!r} has no adapter/adapter_config.json "
                              "(was it written by a full policy?)")
        bb = self.bases.get(base_key)
        if bb is None:
            model, tokenizer = models.load_pretrained(model_path, dtype, self.device)
            bb = Backbone(model, tokenizer, model_path, self.device)
        elif os.path.realpath(bb.model_path) != os.path.realpath(model_path):
            raise EngineError("BadRequest", f"base {base_key!r} is already loaded from {bb.model_path!r}, "
                              f"not {model_path!r}")
        elif bb.dtype != dtype:
            raise EngineError("BadRequest", f"base {base_key!r} is already loaded in {precision.name(bb.dtype)}, "
                              f"not {precision.name(dtype)}")
        self.adapters_made += 1
        name = f"policy{self.adapters_made}"
        try:
            attach_adapter(bb, name, lora, adapter_dir, seed=zlib.crc32(key.encode()))
            p = (RolloutPolicy(key, "lora", bb, name, root, folder, dtype_note=note) if rollout
                 else Policy(key, "lora", bb, name, optim, root, folder, self.device, dtype_note=note))
        except Exception:
            detach_adapter(bb, name)
            raise
        self.bases[base_key] = bb
        bb.users.add(key)
        return p

    def unload(self, req):
        key = field(req, "policy", str)
        p = self.policies.pop(key, None)
        existed = p is not None
        if existed and p.kind == "lora":
            detach_adapter(p.backbone, p.adapter)
            p.backbone.users.discard(key)
            if not p.backbone.users:  # last adapter gone: free the base too
                self.bases = {k: b for k, b in self.bases.items() if b is not p.backbone}
        del p
        free_memory()
        return {"policy": key, "unloaded": existed}

    def sync(self, req):
        """Installs version `version` of a rollout policy (loading the policy first if need be): from its
        trainer's checkpoint, or with `broadcast` as its trainer engine sends it (broadcast.py). Idempotent by
        version: a policy at that version or past it stays as it is. The policy's rows in flight finish on
        the version they started with (rollout.py)."""
        key, version = field(req, "policy", str), field(req, "version", int)
        spec = parse_load(req)
        group = field(req, "broadcast", dict, None)  # absent: from the checkpoint
        if spec["role"] != "rollout":
            raise EngineError("BadRequest", "role must be 'rollout' (a trainer's versions come from its updates)")
        self._ensure_loaded(key, spec)
        p = self.policies[key]
        t0 = time.perf_counter()
        if group is not None:
            installed, copy = self._receive(p, version, group)
        elif p.version >= version:
            installed, copy = False, None
        else:
            installed, copy = True, self._install(p, version, *p.read_checkpoint(version))
        done = {"seconds": time.perf_counter() - t0} if installed else {}
        return {"policy": key, "version": p.version, "installed": installed, "copy": copy, **done}

    def _receive(self, p: RolloutPolicy, version: int, group: dict) -> tuple[bool, str | None]:
        """Version `version` of `p` as its trainer engine broadcasts it (broadcast.receive). A round that fails
        once the install began unloads the policy: its weights were not checked against the trainer's."""
        began = []

        def install(weights, source):
            began.append(True)
            return self._install(p, version, weights, source)

        try:
            return broadcast.receive(p, version, group, install)
        except Exception:
            if began and p.key in self.policies:
                log(f"[engine] the broadcast of version {version} of {p.key!r} failed after its install began; unloading it")
                self.unload({"policy": p.key})
            raise

    def publish(self, req):
        """The trainer engine's side of a broadcast of weights: sends the version its policy holds to the
        policy's rollout engines (broadcast.publish)."""
        p = self.policy(field(req, "policy", str))
        if isinstance(p, RolloutPolicy):
            raise EngineError("BadRequest", f"policy {p.key!r} is loaded here for rollout: its trainer engine publishes its weights")
        return broadcast.publish(p, field(req, "version", int), field(req, "broadcast", dict))

    def _install(self, p: RolloutPolicy, version: int, weights: dict, source: str) -> str | None:
        """Version `version` of rollout policy `p` (its `weights`, from `source`), its rows in flight moved onto
        a serving copy of theirs first (-> the copy's kind, or None: no rows). A failure while copying unloads
        the policy, so that no half-installed weights serve (the next request loads it again)."""
        served = serving.make(p, self.scheduler) if self._rows_of(p) else None
        if isinstance(served, str):  # (callers install beside rows only when the copy fits: _syncs_beside)
            raise EngineError("BadRequest", f"install of {p.key!r}: {served}")
        if served is not None:
            self.retired.append(served)  # dropped once its rows finish (_drop_retired)
        try:
            p.install(version, weights, source)
        except Exception:
            log(f"[engine] installing version {version} of {p.key!r} failed; unloading it (the next request loads it again)")
            self.unload({"policy": p.key})
            raise
        return served.kind if served else None

    def update(self, req):
        """The `update` op run alone (no rows decode meanwhile): its steps, one after the other."""
        steps = self._update(req, beside=False)
        while (result := step(steps)) is NOT_DONE:
            pass
        return result

    def _update(self, req, beside: bool):
        """An update as a generator (yielding between micro-batches, returning the result): the checks,
        a replay, or PPO on the samples (Policy.update_steps); `beside`: it runs beside the decoding
        (overlap), the policy's rows served by a copy of the weights being trained (serving.py)."""
        p = self.policy(field(req, "policy", str))
        if isinstance(p, RolloutPolicy):
            raise EngineError("BadRequest", f"policy {p.key!r} is loaded here for rollout (no optimizer): "
                              "its updates run on its trainer engine")
        from_version = field(req, "from_version", int)
        root = field(req, "checkpoint_root", str)
        keep = retention(req)
        spec = field(req, "distributed", dict, None)  # absent: this engine alone
        asked = field(req, "overlap", bool)
        if p.version > from_version:
            recorded = p.recorded_result(from_version, root)
            if recorded is not None:
                return {**recorded, "replayed": True, **self._retain(root, keep, spec)}
        if p.version != from_version:
            raise EngineError("VersionMismatch", f"policy {p.key!r} is at version {p.version}, update is from {from_version}")
        if not root:
            raise EngineError("BadRequest", "checkpoint_root is empty: an update writes a checkpoint")
        if os.path.isfile(os.path.join(checkpoint.version_dir(root, from_version + 1), "state.json")):
            raise EngineError("VersionMismatch", f"{checkpoint.version_dir(root, from_version + 1)} already exists; "
                              "another writer got there first: unload and load the policy again")
        samples = update_samples(req, p.backbone.vocab_size)
        args = dict(
            clip_low=field(req, "clip_low", float),
            clip_high=field(req, "clip_high", float),
            dual_clip_c=field(req, "dual_clip_c", float, NULLABLE),
            loss_agg=field(req, "loss_agg", str),
            kl_coef=field(req, "kl_coef", float),
            max_grad_norm=field(req, "max_grad_norm", float),
            micro_batch_tokens=field(req, "micro_batch_tokens", int),
            mini_batch_size=field(req, "ppo_mini_batch_size", int, NULLABLE),
            epochs=field(req, "ppo_epochs", int),
            gradient_checkpointing=field(req, "gradient_checkpointing", bool),
            behaviour_weight_cap=field(req, "behaviour_weight_cap", float, NULLABLE),
        )
        if args["behaviour_weight_cap"] is not None and args["behaviour_weight_cap"] < 1.0:
            raise EngineError("BadRequest", "update: behaviour_weight_cap must be >= 1 (or null: the on-policy loss)")
        if args["loss_agg"] not in LOSS_AGGS:
            raise EngineError("BadRequest", f"loss_agg must be one of {list(LOSS_AGGS)}")
        if args["dual_clip_c"] is not None and args["dual_clip_c"] <= 1.0:
            raise EngineError("BadRequest", "dual_clip_c must be > 1 (or null = off)")
        if (args["mini_batch_size"] is not None and args["mini_batch_size"] < 1) or args["epochs"] < 1:
            raise EngineError("BadRequest", "need ppo_mini_batch_size >= 1 (or null: the whole batch) and ppo_epochs >= 1")
        if args["micro_batch_tokens"] < 1 or args["kl_coef"] < 0 or args["clip_low"] < 0 or args["clip_high"] < 0:
            raise EngineError("BadRequest", "need micro_batch_tokens >= 1, kl_coef >= 0, clip_low/clip_high >= 0")
        overlap = None if not asked else {"copy": None, "copy_mb": 0.0, "reason": None, "decode_s": 0.0}
        if asked and spec is not None:
            overlap["reason"] = "a step over replicas runs alone (its collectives would wait on the peers' decoding)"
        served = None
        if beside:
            served = serving.make(p, self.scheduler)
            if isinstance(served, str):  # a full model whose copy does not fit: alone, as without overlap
                overlap["reason"], served = served, None
                self.task.alone = True
                log(f"[engine] update of {p.key!r}: {overlap['reason']}")
                while self.scheduler.busy():
                    yield  # (tick: no other work than decoding while this waits)
            else:
                self.serving[p.key] = served
                overlap.update(copy=served.kind, copy_mb=served.bytes / 2**20)
        lock = None
        try:
            # The host's update lock (update_lock.py), when one is set; replicas step together and take none.
            if spec is None:
                lock = yield from update_lock.acquire(self._rows_wait if beside else None)
            if spec is None:
                result = yield from p.update_steps(samples, checkpoint_root=root, **args)
            else:
                with StepGroup(spec, self.device) as group:
                    result = yield from p.update_steps(samples, checkpoint_root=root, group=group, **args)
        except Exception:
            if p.dirty:  # weights moved but were not saved: forget them, the caller reloads the last checkpoint
                log(f"[engine] update of {p.key!r} failed after the optimizer step; unloading it")
                self.unload({"policy": p.key})
            raise
        finally:
            if served is not None:  # new rows use the new weights; the copy's rows finish with it
                self.serving.pop(p.key, None)
                self.retired.append(served)
            free_memory()  # the steps' activations, back to the system (free_memory)
            if lock is not None:  # after the memory is back: the next engine's update may take it
                lock.release()
        if lock is not None:
            result = {**result, "update_lock_wait_s": lock.waited_s}
        if overlap is not None and beside:
            task = self.task
            overlap["decode_s"] = task.decode_seconds + task.waiting_decode_seconds if task is not None else 0.0
        return {**result, "replayed": False, **({"overlap": overlap} if overlap is not None else {}),
                **self._retain(root, keep, spec)}

    def _rows_wait(self):
        """Between two attempts of an update with overlap at the host's update lock: a decoding step of
        the rows in flight, here, so that the wait costs them nothing (counted as the update's time, it
        keeps the fair share of tick even, and reported in the overlap's decode_s), or with no rows 10 ms
        of sleep; then back to tick."""
        if self.scheduler.busy():
            t0 = time.perf_counter()
            self._decode_step()
            self.task.waiting_decode_seconds += time.perf_counter() - t0
        else:
            time.sleep(0.01)
        yield

    @staticmethod
    def _retain(root: str, keep: tuple[int | None, int | None], spec: dict | None) -> dict:
        """Applies the retention to the policy's checkpoints (their writer does: rank 0 of replicas),
        also after a replayed update (the attempt that wrote it may have died before pruning).
        -> the versions left on disk, when a retention is set."""
        keep_last, keep_every = keep
        if keep_last is None or (spec is not None and spec.get("rank") != 0):
            return {}
        try:
            checkpoint.prune(root, keep_last, keep_every)
        except OSError as e:  # the checkpoint is written: the next update tries again
            log(f"[engine] pruning checkpoints under {root} failed: {e}")
        return {"kept_versions": [v for v, _ in checkpoint.list_complete(root)]}


def step(steps):
    """One step of a generator: NOT_DONE, or the value it returned."""
    try:
        next(steps)
        return NOT_DONE
    except StopIteration as done:
        return done.value


def outcome(rid, fn) -> dict:
    """The response to request `rid`: fn's result, or the error it raised (a failing request must never
    kill the engine)."""
    try:
        return {"id": rid, "ok": True, "result": fn()}
    except EngineError as e:
        return error(rid, e.type, str(e))
    except Exception as e:  # noqa: BLE001
        log(traceback.format_exc())
        return error(rid, type(e).__name__, str(e) or repr(e))


def retention(req: dict) -> tuple[int | None, int | None]:
    """(keep_last, keep_every) of an update: which checkpoint versions stay (checkpoint.prune)."""
    keep_last, keep_every = field(req, "keep_last", int, NULLABLE), field(req, "keep_every", int, NULLABLE)
    if (keep_last is not None and keep_last < 1) or (keep_every is not None and keep_every < 1):
        raise EngineError("BadRequest", "keep_last and keep_every must be >= 1 (or null: keep all, none extra)")
    return keep_last, keep_every


SAMPLING = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_new_tokens", "stop", "ignore_eos")


TRUNCATIONS = ("keep_system", "left", "error")


def fit_prompt(ids: list[int], limit: int | None, truncation: str, system_prefix=lambda: 0) -> list[int]:
    """The rendered prompt within `limit` tokens. Longer, by `truncation`:
      keep_system  the reference's (PettingLLMs convert_prompt_to_dpr): the system prompt's tokens
                   (system_prefix(), when shorter than the limit) then the last tokens that fit;
      left         its last `limit` tokens (the system prompt and the conversation's start go first);
      error        PromptTooLong."""
    if limit is None or len(ids) <= limit:
        return ids
    if truncation == "error":
        raise EngineError("PromptTooLong", f"the prompt has {len(ids)} tokens, more than the {limit} allowed")
    head = system_prefix() if truncation == "keep_system" else 0
    return ids[:head] + ids[len(ids) - (limit - head):] if 0 < head < limit else ids[-limit:]


def parse_generate(req: dict) -> list[dict]:
    """The requests of a generate op, checked (no policy needed yet)."""
    out = []
    for i, r in enumerate(field(req, "requests", list)):
        if not isinstance(r, dict):
            raise EngineError("BadRequest", f"requests[{i}] is not an object")
        at = f"requests[{i}]."
        messages = field(r, "messages", list, at=at)
        if not messages or not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                                   and isinstance(m.get("content"), str) for m in messages):
            raise EngineError("BadRequest", f"requests[{i}].messages must be a non-empty list of "
                              "{role, content} strings")
        load = field(r, "load", dict, None, at=at)  # absent: the policy must be loaded already
        q = dict(policy=field(r, "policy", str, at=at), version=field(r, "version", int, at=at),
                 newer_within=field(r, "newer_within", int, at=at), messages=messages,
                 n=field(r, "n", int, at=at), temperature=field(r, "temperature", float, at=at),
                 top_p=field(r, "top_p", float, at=at), top_k=field(r, "top_k", int, at=at),
                 min_p=field(r, "min_p", float, at=at), repetition_penalty=field(r, "repetition_penalty", float, at=at),
                 max_new_tokens=field(r, "max_new_tokens", int, at=at),
                 stop=field(r, "stop", list, at=at), ignore_eos=field(r, "ignore_eos", bool, at=at),
                 max_prompt_tokens=field(r, "max_prompt_tokens", int, NULLABLE, at=at),
                 truncation=field(r, "truncation", str, at=at),
                 seed=field(r, "seed", int, NULLABLE, at=at),
                 enable_thinking=field(r, "enable_thinking", bool, NULLABLE, at=at),
                 load=None if load is None else parse_load(load, at=f"{at}load."))
        if (q["n"] < 1 or q["newer_within"] < 0 or q["max_new_tokens"] < 0 or q["temperature"] < 0 or not 0 < q["top_p"] <= 1
                or not 0 <= q["min_p"] <= 1 or q["repetition_penalty"] <= 0
                or not all(isinstance(s, str) and s for s in q["stop"])
                or (q["max_prompt_tokens"] is not None and q["max_prompt_tokens"] < 1)
                or q["truncation"] not in TRUNCATIONS):
            raise EngineError("BadRequest", f"requests[{i}]: need n >= 1, newer_within >= 0, max_new_tokens >= 0, temperature >= 0, "
                              "0 < top_p <= 1, 0 <= min_p <= 1, repetition_penalty > 0, stop = non-empty strings, "
                              "max_prompt_tokens >= 1, truncation = keep_system | left | error")
        out.append(q)
    return out


def parse_load(req: dict, at: str = "") -> dict:
    """The fields of a `load` op (or of a generate request's `load`, `at` "requests[i].load."), checked:
    kind, model_path, dtype, checkpoint_root, optim, and for lora base and lora."""
    kind = field(req, "kind", str, at=at)
    if kind not in ("full", "lora"):
        raise EngineError("BadRequest", f"{at}kind must be 'full' or 'lora', not {kind!r}")
    if field(req, "dtype", str, at=at) not in precision.DTYPES:
        raise EngineError("BadRequest", f"{at}dtype must be one of {list(precision.DTYPES)}, not {req['dtype']!r}")
    role = field(req, "role", str, "trainer", at=at)  # absent: a trainer (the colocated default)
    if role not in ("trainer", "rollout"):
        raise EngineError("BadRequest", f"{at}role must be 'trainer' or 'rollout', not {role!r}")
    spec = dict(kind=kind, role=role, model_path=field(req, "model_path", str, at=at), dtype=field(req, "dtype", str, at=at),
                checkpoint_root=field(req, "checkpoint_root", str, at=at),  # "": no checkpoint to start from
                optim=parse_optim(field(req, "optim", dict, at=at), f"{at}optim."))
    if kind == "lora":
        spec.update(base=field(req, "base", str, at=at), lora=parse_lora(field(req, "lora", dict, at=at), f"{at}lora."))
    return spec


def parse_optim(o: dict, at: str = "optim.") -> dict:
    out = {
        "lr": field(o, "lr", float, at=at),
        "weight_decay": field(o, "weight_decay", float, at=at),
        "betas": field(o, "betas", list, at=at),
        "warmup_steps": field(o, "warmup_steps", int, at=at),
        "total_steps": field(o, "total_steps", int, at=at),
        "min_lr_ratio": field(o, "min_lr_ratio", float, at=at),
        "warmup_start": field(o, "warmup_start", str, at=at),
    }
    b = out["betas"]
    if not (len(b) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1 for x in b)):
        raise EngineError("BadRequest", f"{at}betas must be [b1, b2] with 0 <= b < 1")
    if out["lr"] < 0 or out["weight_decay"] < 0 or out["warmup_steps"] < 0 or out["total_steps"] < 0 \
            or not 0 <= out["min_lr_ratio"] <= 1 or out["warmup_start"] not in ("fraction", "min_lr"):
        raise EngineError("BadRequest", f"{at.rstrip('.')}: need lr, weight_decay, warmup_steps, total_steps >= 0, "
                          "0 <= min_lr_ratio <= 1 and warmup_start = fraction | min_lr")
    return out


def parse_lora(o: dict, at: str = "lora.") -> dict:
    out = {
        "rank": field(o, "rank", int, at=at),
        "alpha": field(o, "alpha", float, at=at),
        "dropout": field(o, "dropout", float, at=at),
        "target_modules": field(o, "target_modules", (list, str), at=at),
    }
    t = out["target_modules"]
    if out["rank"] < 1 or out["alpha"] <= 0 or not 0 <= out["dropout"] < 1 or not (
            t == "all-linear" or (isinstance(t, list) and t and all(isinstance(x, str) and x for x in t))):
        raise EngineError("BadRequest", f"{at.rstrip('.')}: need rank >= 1, alpha > 0, 0 <= dropout < 1, "
                          "target_modules = 'all-linear' or a non-empty list of module names")
    return out


def update_samples(req: dict, vocab_size: int) -> list[dict]:
    """An update's samples: inline (`samples`), or from a file of flat arrays (`samples_file`,
    samples_file.py), which a large iteration needs."""
    path = field(req, "samples_file", str, None)
    if path is None:
        return [check_sample(s, i, vocab_size) for i, s in enumerate(field(req, "samples", list))]
    if req.get("samples") is not None:
        raise EngineError("BadRequest", "give samples or samples_file, not both")
    return read_samples(path, vocab_size)


def check_sample(s, i: int, vocab_size: int) -> dict:
    def ids_ok(xs, allow_empty):
        return isinstance(xs, list) and (allow_empty or xs) and all(
            isinstance(t, int) and not isinstance(t, bool) and 0 <= t < vocab_size for t in xs)

    if not isinstance(s, dict):
        raise EngineError("BadRequest", f"samples[{i}] is not an object")
    if not ids_ok(s.get("prompt_ids"), False) or not ids_ok(s.get("response_ids"), True):
        raise EngineError("BadRequest", f"samples[{i}]: prompt_ids/response_ids must be lists of token ids < {vocab_size}")
    lp, adv = s.get("logprobs"), s.get("advantage")
    if not isinstance(lp, list) or len(lp) != len(s["response_ids"]) or not all(
            isinstance(x, (int, float)) and math.isfinite(x) for x in lp):
        raise EngineError("BadRequest", f"samples[{i}]: logprobs must be finite numbers, one per response token")
    if not isinstance(adv, (int, float)) or isinstance(adv, bool) or not math.isfinite(adv):
        raise EngineError("BadRequest", f"samples[{i}]: advantage must be a finite number")
    return s


def error(rid, type_: str, message: str) -> dict:
    return {"id": rid, "ok": False, "error": {"type": type_, "message": message}}


# glibc's malloc_trim, where the C library has it (not musl, not macOS): None elsewhere.
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or None)
_MALLOC_TRIM = getattr(_LIBC, "malloc_trim", None)


def free_memory():
    """Hands memory freed by the work just done back to the system: Python's cycles, the GPU's cached
    blocks, and the C heap's free pages. A CPU update's activations are many tensors under glibc's
    dynamic mmap threshold (up to 32 MB), so they are carved from the heap, and once freed the heap
    keeps them: without the trim an engine's resident memory stays at its largest update's peak
    (SmolLM2-135M's LoRA updates over 1.5k-token prompts left 9.9 GB of heap in an engine,
    2026-12-02), memory that other processes and this engine's KV budget (free memory) then lack."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
