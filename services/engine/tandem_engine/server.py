"""Request dispatch: one JSON object in -> one JSON object out. See PROTOCOL.md."""

from __future__ import annotations

import gc
import json
import math
import os
import sys
import time
import traceback

import torch

from . import checkpoint
from .errors import EngineError
from .policy import Policy

REQUIRED = object()


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def field(req: dict, name: str, kind, default=REQUIRED):
    """req[name] checked against `kind` (a type or tuple of types); `default` if absent/null."""
    value = req.get(name)
    if value is None:
        if default is REQUIRED:
            raise EngineError("BadRequest", f"missing field {name!r}")
        return default
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise EngineError("BadRequest", f"field {name!r} has the wrong type ({type(value).__name__})")
    if isinstance(value, float) and not math.isfinite(value):
        raise EngineError("BadRequest", f"field {name!r} must be finite")
    return value


class Engine:
    def __init__(self, device: str):
        self.device = torch.device(device)
        self.dtype = torch.bfloat16 if self.device.type == "cuda" else torch.float32
        self.policies: dict[str, Policy] = {}
        self.ops = {"load": self.load, "generate": self.generate, "update": self.update,
                    "unload": self.unload, "ping": self.ping}

    # ------------------------------------------------------------------ plumbing

    def handle_line(self, line: str) -> dict:
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            return error(None, "BadRequest", f"invalid JSON: {e}")
        if not isinstance(req, dict):
            return error(None, "BadRequest", "a request must be a JSON object")
        return self.handle(req)

    def handle(self, req: dict) -> dict:
        rid, op = req.get("id"), req.get("op")
        t0 = time.time()
        try:
            if op not in self.ops:
                raise EngineError("UnknownOp", f"unknown op {op!r}; expected one of {sorted(self.ops)}")
            resp = {"id": rid, "ok": True, "result": self.ops[op](req)}
        except EngineError as e:
            resp = error(rid, e.type, str(e))
        except Exception as e:  # noqa: BLE001 - a failing request must never kill the engine
            log(traceback.format_exc())
            resp = error(rid, type(e).__name__, str(e) or repr(e))
        log(f"[engine] id={rid!r} op={op} ok={resp['ok']} {time.time() - t0:.3f}s"
            + ("" if resp["ok"] else f" {resp['error']['type']}: {resp['error']['message']}"))
        return resp

    def policy(self, req: dict) -> Policy:
        key = field(req, "policy", str)
        if key not in self.policies:
            raise EngineError("PolicyNotLoaded", f"policy {key!r} is not loaded")
        return self.policies[key]

    # ------------------------------------------------------------------ ops

    def ping(self, req):
        return {"pong": True, "policies": {k: p.version for k, p in self.policies.items()}}

    def load(self, req):
        key = field(req, "policy", str)
        if key not in self.policies:
            self.policies[key] = Policy(key, field(req, "model_path", str), field(req, "checkpoint_root", str, ""),
                                        self.device, self.dtype)
        p = self.policies[key]
        return {"policy": key, "version": p.version, "source": p.source}

    def unload(self, req):
        key = field(req, "policy", str)
        existed = self.policies.pop(key, None) is not None
        free_memory()
        return {"policy": key, "unloaded": existed}

    def generate(self, req):
        p = self.policy(req)
        version = field(req, "version", int)
        if version != p.version:
            raise EngineError("VersionMismatch", f"policy {p.key!r} is at version {p.version}, request wants {version}")
        prompts = field(req, "prompts", list)
        for msgs in prompts:
            if not isinstance(msgs, list) or not msgs or not all(
                    isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                    for m in msgs):
                raise EngineError("BadRequest", "each prompt must be a non-empty list of {role, content} strings")
        n = field(req, "n", int, 1)
        temperature = field(req, "temperature", float, 1.0)
        top_p = field(req, "top_p", float, 1.0)
        top_k = field(req, "top_k", int, -1)
        max_new_tokens = field(req, "max_new_tokens", int, 256)
        seed = field(req, "seed", int, None)
        if n < 1 or max_new_tokens < 0 or temperature < 0 or not 0 < top_p <= 1:
            raise EngineError("BadRequest", "need n >= 1, max_new_tokens >= 0, temperature >= 0, 0 < top_p <= 1")
        samples = p.generate(prompts, n, temperature, top_p, top_k, max_new_tokens, seed) if prompts else []
        return {"version": p.version, "samples": samples}

    def update(self, req):
        p = self.policy(req)
        from_version = field(req, "from_version", int)
        root = field(req, "checkpoint_root", str, p.checkpoint_root)
        if p.version > from_version:
            recorded = p.recorded_result(from_version, root)
            if recorded is not None:
                return {**recorded, "replayed": True}
        if p.version != from_version:
            raise EngineError("VersionMismatch", f"policy {p.key!r} is at version {p.version}, update is from {from_version}")
        if not root:
            raise EngineError("BadRequest", "missing field 'checkpoint_root'")
        if os.path.isfile(os.path.join(checkpoint.version_dir(root, from_version + 1), "state.json")):
            raise EngineError("VersionMismatch", f"{checkpoint.version_dir(root, from_version + 1)} already exists; "
                              "another writer got there first: unload and load the policy again")
        samples = [check_sample(s, i, p.vocab_size) for i, s in enumerate(field(req, "samples", list))]
        args = dict(
            lr=field(req, "lr", float),
            clip_low=field(req, "clip_low", float, 0.2),
            clip_high=field(req, "clip_high", float, 0.2),
            max_grad_norm=field(req, "max_grad_norm", float, 1.0),
            micro_batch_size=field(req, "micro_batch_size", int, 8),
        )
        if args["micro_batch_size"] < 1 or args["lr"] < 0:
            raise EngineError("BadRequest", "need micro_batch_size >= 1 and lr >= 0")
        try:
            result = p.update(samples, checkpoint_root=root, **args)
        except Exception:
            if p.dirty:  # weights moved but were not saved: forget them, the caller reloads the last checkpoint
                log(f"[engine] update of {p.key!r} failed after the optimizer step; unloading it")
                self.policies.pop(p.key, None)
                free_memory()
            raise
        return {**result, "replayed": False}


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


def free_memory():
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
