"""Request dispatch: one JSON object in -> one JSON object out. See PROTOCOL.md."""

from __future__ import annotations

import gc
import json
import math
import os
import secrets
import sys
import time
import traceback
import zlib

import torch

from . import checkpoint, models
from .errors import EngineError
from .generation import Row, generate
from .models import Backbone
from .policy import Policy, attach_adapter, detach_adapter
from .ppo import LOSS_AGGS

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
        self.bases: dict[str, Backbone] = {}  # shared frozen bases of lora policies, by `base` key
        self.adapters_made = 0  # adapter names inside a PeftModel: policy1, policy2, ...
        self.ops = {"ping": self.ping, "inspect": self.inspect, "load": self.load, "unload": self.unload,
                    "generate": self.generate, "update": self.update}

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

    def policy(self, key: str) -> Policy:
        if key not in self.policies:
            raise EngineError("PolicyNotLoaded", f"policy {key!r} is not loaded")
        return self.policies[key]

    # ------------------------------------------------------------------ ops

    def ping(self, req):
        return {"pong": True, "policies": {k: p.version for k, p in self.policies.items()}}

    def inspect(self, req):
        return models.inspect(field(req, "model_path", str))

    def load(self, req):
        key = field(req, "policy", str)
        if key not in self.policies:
            self.policies[key] = self._load(key, req)
        p = self.policies[key]
        return {"policy": key, "version": p.version, "source": p.source}

    def _load(self, key: str, req: dict) -> Policy:
        kind = field(req, "kind", str)
        if kind not in ("full", "lora"):
            raise EngineError("BadRequest", f"kind must be 'full' or 'lora', not {kind!r}")
        model_path = field(req, "model_path", str)
        root = field(req, "checkpoint_root", str, "")
        optim = parse_optim(field(req, "optim", dict))
        models.inspect(model_path)  # LoadError naming the path and the reason, before loading anything
        ckpts = checkpoint.list_complete(root)
        folder = ckpts[-1][1] if ckpts else None  # newest complete checkpoint, if any

        if kind == "full":
            source = os.path.join(folder, "model") if folder else model_path
            model, tokenizer = models.load_pretrained(source, self.dtype, self.device)
            return Policy(key, "full", Backbone(model, tokenizer, model_path, self.device), None, optim, root,
                          folder, self.device)

        base_key = field(req, "base", str)
        lora = parse_lora(field(req, "lora", dict))
        adapter_dir = os.path.join(folder, "adapter") if folder else None
        if adapter_dir and not os.path.isfile(os.path.join(adapter_dir, "adapter_config.json")):
            raise EngineError("LoadError", f"checkpoint {folder!r} has no adapter/adapter_config.json "
                              "(was it written by a full policy?)")
        bb = self.bases.get(base_key)
        if bb is None:
            model, tokenizer = models.load_pretrained(model_path, self.dtype, self.device)
            bb = Backbone(model, tokenizer, model_path, self.device)
        elif os.path.realpath(bb.model_path) != os.path.realpath(model_path):
            raise EngineError("BadRequest", f"base {base_key!r} is already loaded from {bb.model_path!r}, "
                              f"not {model_path!r}")
        self.adapters_made += 1
        name = f"policy{self.adapters_made}"
        try:
            attach_adapter(bb, name, lora, adapter_dir, seed=zlib.crc32(key.encode()))
            p = Policy(key, "lora", bb, name, optim, root, folder, self.device)
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

    def generate(self, req):
        requests = field(req, "requests", list)
        # Rows of every request, grouped by backbone: all lora policies of one base decode together.
        batches: dict[int, tuple[Backbone, list[Row], list[tuple[int, int]]]] = {}
        generators, results = {}, []
        for i, r in enumerate(requests):
            if not isinstance(r, dict):
                raise EngineError("BadRequest", f"requests[{i}] is not an object")
            p = self.policy(field(r, "policy", str))
            version = field(r, "version", int)
            if version != p.version:
                raise EngineError("VersionMismatch",
                                  f"policy {p.key!r} is at version {p.version}, request wants {version}")
            messages = field(r, "messages", list)
            if not messages or not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                                       and isinstance(m.get("content"), str) for m in messages):
                raise EngineError("BadRequest", f"requests[{i}].messages must be a non-empty list of "
                                  "{role, content} strings")
            n = field(r, "n", int, 1)
            stop = field(r, "stop", list, [])
            row = Row(prompt_ids=p.backbone.render(messages, field(r, "enable_thinking", bool, None)), group=i,
                      adapter=p.adapter, temperature=field(r, "temperature", float, 1.0),
                      top_p=field(r, "top_p", float, 1.0), top_k=field(r, "top_k", int, -1),
                      min_p=field(r, "min_p", float, 0.0), max_new_tokens=field(r, "max_new_tokens", int, 256),
                      stop=stop)
            if (n < 1 or row.max_new_tokens < 0 or row.temperature < 0 or not 0 < row.top_p <= 1
                    or not 0 <= row.min_p <= 1 or not all(isinstance(s, str) and s for s in stop)):
                raise EngineError("BadRequest", f"requests[{i}]: need n >= 1, max_new_tokens >= 0, temperature >= 0, "
                                  "0 < top_p <= 1, 0 <= min_p <= 1, stop = non-empty strings")
            seed = field(r, "seed", int, None)
            generators[i] = torch.Generator(device=self.device)
            generators[i].manual_seed(seed if seed is not None else secrets.randbits(63))
            bb, rows, where = batches.setdefault(id(p.backbone), (p.backbone, [], []))
            for k in range(n):
                rows.append(row)
                where.append((i, k))
            results.append({"policy": p.key, "version": p.version, "samples": [None] * n})
        for bb, rows, where in batches.values():
            for (i, k), sample in zip(where, generate(bb, rows, generators)):
                results[i]["samples"][k] = sample
        return {"results": results}

    def update(self, req):
        p = self.policy(field(req, "policy", str))
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
        samples = [check_sample(s, i, p.backbone.vocab_size) for i, s in enumerate(field(req, "samples", list))]
        args = dict(
            clip_low=field(req, "clip_low", float, 0.2),
            clip_high=field(req, "clip_high", float, 0.2),
            dual_clip_c=field(req, "dual_clip_c", float, None),
            loss_agg=field(req, "loss_agg", str, "token-mean"),
            kl_coef=field(req, "kl_coef", float, 0.0),
            max_grad_norm=field(req, "max_grad_norm", float, 1.0),
            micro_batch_tokens=field(req, "micro_batch_tokens", int, 8192),
            old_logprobs=field(req, "old_logprobs", str, "recompute"),
        )
        if args["loss_agg"] not in LOSS_AGGS:
            raise EngineError("BadRequest", f"loss_agg must be one of {list(LOSS_AGGS)}")
        if args["old_logprobs"] not in ("recompute", "rollout"):
            raise EngineError("BadRequest", "old_logprobs must be 'recompute' or 'rollout'")
        if args["dual_clip_c"] is not None and args["dual_clip_c"] <= 1.0:
            raise EngineError("BadRequest", "dual_clip_c must be > 1 (or null = off)")
        if args["micro_batch_tokens"] < 1 or args["kl_coef"] < 0 or args["clip_low"] < 0 or args["clip_high"] < 0:
            raise EngineError("BadRequest", "need micro_batch_tokens >= 1, kl_coef >= 0, clip_low/clip_high >= 0")
        try:
            result = p.update(samples, checkpoint_root=root, **args)
        except Exception:
            if p.dirty:  # weights moved but were not saved: forget them, the caller reloads the last checkpoint
                log(f"[engine] update of {p.key!r} failed after the optimizer step; unloading it")
                self.unload({"policy": p.key})
            raise
        return {**result, "replayed": False}


def parse_optim(o: dict) -> dict:
    out = {
        "lr": field(o, "lr", float),
        "weight_decay": field(o, "weight_decay", float, 0.0),
        "betas": field(o, "betas", list, [0.9, 0.999]),
        "warmup_steps": field(o, "warmup_steps", int, 0),
        "total_steps": field(o, "total_steps", int, 0),
        "min_lr_ratio": field(o, "min_lr_ratio", float, 0.0),
    }
    b = out["betas"]
    if not (len(b) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1 for x in b)):
        raise EngineError("BadRequest", "optim.betas must be [b1, b2] with 0 <= b < 1")
    if out["lr"] < 0 or out["weight_decay"] < 0 or out["warmup_steps"] < 0 or out["total_steps"] < 0 \
            or not 0 <= out["min_lr_ratio"] <= 1:
        raise EngineError("BadRequest", "optim: need lr, weight_decay, warmup_steps, total_steps >= 0 and "
                          "0 <= min_lr_ratio <= 1")
    return out


def parse_lora(o: dict) -> dict:
    out = {
        "rank": field(o, "rank", int),
        "alpha": field(o, "alpha", float),
        "dropout": field(o, "dropout", float, 0.0),
        "target_modules": field(o, "target_modules", (list, str), "all-linear"),
    }
    t = out["target_modules"]
    if out["rank"] < 1 or out["alpha"] <= 0 or not 0 <= out["dropout"] < 1 or not (
            t == "all-linear" or (isinstance(t, list) and t and all(isinstance(x, str) and x for x in t))):
        raise EngineError("BadRequest", "lora: need rank >= 1, alpha > 0, 0 <= dropout < 1, "
                          "target_modules = 'all-linear' or a non-empty list of module names")
    return out


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
