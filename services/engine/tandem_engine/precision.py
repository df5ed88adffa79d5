"""Which dtype a policy's weights take (`load`'s `dtype`), and float32 master weights for bf16 training.

`dtype` is "auto", "float32" or "bfloat16" (the run config's placement.<base model>.dtype):

* auto: bfloat16 on CUDA (where the GPU has it); float32 on a CPU, and elsewhere, and the engine says
  why once in its log and in the load's answer (`dtype_note`), which `tandem status` shows. On a CPU
  with bf16 units (avx512_bf16, an AMD EPYC without AMX) bf16 trained the learning bench's SmolLM2
  run only about 1.15x faster a token (0.96-1.32x over three alternating pairs), and learned less:
  validation at iteration 30 87.5 and 81.3% against float32's 93.8 and 93.8% (seeds 0 and 1;
  bench/RESULTS.md, "learning in bf16"): not a default worth its risk there. With AMX (amx_bf16) the
  engine alone gains more at one torch thread (generation 1.82x, a full update step 1.62x; engine_dtype),
  its learning no better known: `bfloat16` asks for it.
* bfloat16 on a CPU without those units is refused, naming the missing flags: it would run emulated,
  several times slower than float32 (SmolLM2 on an AMD EPYC without them: generation 3x, the update
  step 10x; bench/RESULTS.md, engine_dtype). TANDEM_ALLOW_EMULATED_BF16=1 allows it: the engine's
  tests run the GPU's dtype path that way on any CPU.

Mixed precision (what a bf16 policy trains with):

* The model's weights are bf16: generation, the update's forward and its backward all run on them, so
  the rollout's and the trainer's log-probs come from the same arithmetic; the logits' log-softmax is
  float32 in both (models.py, generation.py).
* Every trained parameter has a float32 master (`Masters`): AdamW's state and steps are the masters',
  each micro-batch's bf16 gradient is added into the master's float32 gradient, and after a step the
  bf16 weight is the master rounded. Without masters, AdamW's steps on bf16 weights round away: one
  step at lr 1e-6 changes about 0.2% of SmolLM2's bf16 weights (the issue that asked for this).
* A LoRA adapter is float32 already (PEFT's default over a bf16 base; `as_float32` makes sure), so it
  is its own master, over a frozen bf16 base.
* A full policy's checkpoint holds the masters (an HF folder in float32), so that a resumed run goes
  on with exactly the weights it had; any dtype loads it.
"""

from __future__ import annotations

import os

import torch

from .errors import EngineError

DTYPES = ("auto", "float32", "bfloat16")
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
CPU_NOTE = ("a CPU (its bf16 units trained about 1.15x faster and learned less in bench/RESULTS.md's runs; "
            "dtype bfloat16 uses them)")
_said: set[str] = set()  # notes already logged


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags (/proc/cpuinfo), or None where they cannot be read."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def resolve(asked: str, device: torch.device, flags: set[str] | None = None, log=None) -> tuple[torch.dtype, str | None]:
    """(the dtype a policy asked as `asked` takes on `device`, a note when auto fell back to float32).
    `flags`: the CPU's (read when None). A note is logged once per engine (`log`)."""
    if asked not in DTYPES:
        raise EngineError("BadRequest", f"dtype must be one of {list(DTYPES)}, not {asked!r}")
    if asked == "float32":
        return torch.float32, None
    missing = _missing_bf16(device, flags)
    if asked == "bfloat16":
        if missing is None or (device.type == "cpu" and os.environ.get("TANDEM_ALLOW_EMULATED_BF16") == "1"):
            return torch.bfloat16, None
        raise EngineError("BadRequest", f"dtype bfloat16: {missing}; use dtype auto or float32"
                          + (" (or TANDEM_ALLOW_EMULATED_BF16=1 to run it emulated)" if device.type == "cpu" else ""))
    if missing is None and device.type != "cpu":
        return torch.bfloat16, None
    note = f"auto chose float32: {missing or CPU_NOTE}"
    if log is not None and note not in _said:
        _said.add(note)
        log(f"[engine] dtype {note}")
    return torch.float32, note


def native_bf16(device: torch.device, flags: set[str] | None = None) -> bool:
    """Whether `device` runs bf16 natively (a GPU with it, a CPU with bf16 units): `bfloat16` runs there."""
    return _missing_bf16(device, flags) is None


def _missing_bf16(device: torch.device, flags: set[str] | None) -> str | None:
    """Why bf16 would not run natively on `device`, or None. `flags`: the CPU's (read when None)."""
    if device.type == "cuda":
        return None if torch.cuda.is_bf16_supported(including_emulation=False) else \
            f"the GPU {torch.cuda.get_device_name(device)} has no native bfloat16"
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return "the CPU's flags cannot be read (/proc/cpuinfo), so its bf16 units cannot be told"
    if not flags & set(BF16_FLAGS):
        return "this CPU's flags show neither avx512_bf16 nor amx_bf16 (no bf16 units)"
    return None


def name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def as_dtype(model, dtype: torch.dtype) -> None:
    """Casts the model's floating-point parameters to `dtype` in place, as loading at that dtype would
    (buffers such as the rotary frequencies keep theirs)."""
    for p in model.parameters():
        if p.is_floating_point() and p.dtype != dtype:
            p.data = p.data.to(dtype)


def as_float32(params) -> None:
    """Trainable parameters that are their own masters (a LoRA adapter's) in float32."""
    for p in params:
        if p.dtype != torch.float32:
            p.data = p.data.float()


class Masters:
    """The float32 weights AdamW steps, one per trained parameter: the parameter itself where it is
    float32 already (a float32 model, a LoRA adapter), else a float32 copy made at load (`take`).

    A bf16 parameter's gradient is added into a float32 gradient of its own as soon as the backward
    pass has made it (a post-accumulate hook), and the bf16 gradient is dropped: micro-batches
    accumulate in float32, and no bf16 gradient of the whole model is kept. Over replicas with a
    sharded optimizer (`shard`), each replica keeps only the masters of the parameters whose AdamW
    state it keeps, steps those, and broadcasts their rounded weights (`broadcast_weights`)."""

    def __init__(self, params: list[torch.nn.Parameter], masters: dict[int, torch.Tensor] | None = None):
        """`masters`: id(param) -> its float32 weights, for the parameters that are not float32."""
        masters = masters or {}
        self.pairs = []
        self.grads: dict[int, torch.Tensor] = {}  # pair index -> float32 gradient of a bf16 parameter
        self.owner: list[int] | None = None  # sharded: the replica keeping each pair's master
        self.rank = 0
        for i, p in enumerate(params):
            if p.dtype == torch.float32:
                self.pairs.append((p, p))
                continue
            m = masters.get(id(p))
            if m is None:
                raise EngineError("LoadError", f"a {name(p.dtype)} parameter of shape {tuple(p.shape)} has no "
                                  "float32 master (load the model in float32, then `take`)")
            self.pairs.append((p, torch.nn.Parameter(m, requires_grad=True)))
            p.register_post_accumulate_grad_hook(self._accumulate(i))

    @staticmethod
    def take(model, dtype: torch.dtype) -> dict[int, torch.Tensor]:
        """A float32 model's trainable weights become masters and the model's weights `dtype` (its
        other parameters too): -> id(param) -> master. Float32 stays as it is (-> {})."""
        if dtype == torch.float32:
            return {}
        masters = {id(p): p.data for p in model.parameters() if p.requires_grad and p.dtype == torch.float32}
        as_dtype(model, dtype)
        return masters

    def _accumulate(self, i: int):
        def hook(p: torch.Tensor) -> None:
            g = self.grads.get(i)
            if g is None:
                self.grads[i] = p.grad.float()
            else:
                g.add_(p.grad)
            p.grad = None

        return hook

    @property
    def params(self) -> list[torch.nn.Parameter]:
        """What the optimizer steps."""
        return [m for _, m in self.pairs]

    @property
    def mixed(self) -> bool:
        return any(p is not m for p, m in self.pairs)

    def _held(self, i: int) -> bool:
        return self.owner is None or self.owner[i] == self.rank

    def gradients(self, fill: bool) -> list[torch.Tensor]:
        """Every trained parameter's float32 gradient, in order; `fill`: zeros where it has none (a
        replica's share of a step), else those are left out."""
        out = []
        for i, (p, m) in enumerate(self.pairs):
            g = p.grad if p is m else self.grads.get(i)
            if g is None and fill:
                g = torch.zeros(p.shape, dtype=torch.float32, device=p.device)
                if p is m:
                    p.grad = g
                else:
                    self.grads[i] = g
            if g is not None:
                out.append(g)
        return out

    def to_optimizer(self) -> None:
        """Before the optimizer step: the masters it steps hold their float32 gradients."""
        for i, (p, m) in enumerate(self.pairs):
            if p is not m and self._held(i):
                m.grad = self.grads.get(i)

    def clear(self) -> None:
        self.grads.clear()

    @torch.no_grad()
    def copy_to_weights(self) -> None:
        """After an optimizer step: each weight its master rounded to the weight's dtype (sharded: the
        masters this replica keeps; `broadcast_weights` brings the others')."""
        for i, (p, m) in enumerate(self.pairs):
            if p is not m and self._held(i):
                p.copy_(m)

    def shard(self, owner: list[int], rank: int) -> None:
        """Keep only the masters replica `rank` steps (`owner`: the replica of each pair): the others'
        float32 copies are freed."""
        self.owner, self.rank = owner, rank
        for i, (p, m) in enumerate(self.pairs):
            if p is not m and not self._held(i):
                m.data = torch.empty(0, dtype=m.dtype, device=m.device)

    def broadcast_weights(self) -> None:
        """Sharded, after a step: every weight from the replica that stepped its master (a collective)."""
        import torch.distributed as dist

        for i, (p, m) in enumerate(self.pairs):
            if p is not m:
                dist.broadcast(p.data, src=self.owner[i])

    def masters_bytes(self) -> int:
        """Bytes of the float32 masters this engine keeps besides the weights."""
        return sum(m.numel() * m.element_size() for p, m in self.pairs if p is not m)

    def gathered(self, to: int = 0) -> list[torch.Tensor] | None:
        """Sharded: every master, on the CPU of replica `to` (None on the others), one at a time from
        its owner (a collective). Not sharded: None."""
        if self.owner is None:
            return None
        import torch.distributed as dist

        out = []
        for i, (p, m) in enumerate(self.pairs):
            if p is m:
                out.append(m.detach())
                continue
            buf = m.detach() if self._held(i) else torch.empty(p.shape, dtype=torch.float32, device=p.device)
            dist.broadcast(buf, src=self.owner[i])  # (gloo and NCCL have no gather of one tensor to one rank)
            out.append(buf.cpu() if self.rank == to else None)
        return out if self.rank == to else None

    def state_dict_of(self, model, full: list[torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """The model's state dict with each trained weight replaced by its float32 master (tied weights
        stay one tensor) and the other floating-point entries in float32: what a checkpoint holds.
        `full`: the masters as `gathered` returned them (sharded)."""
        masters = full if full is not None else [m.detach() for _, m in self.pairs]
        by_id = {id(p): t for (p, _), t in zip(self.pairs, masters)}
        out = {}
        for k, t in model.state_dict(keep_vars=True).items():
            m = by_id.get(id(t))
            out[k] = m if m is not None else (t.detach().float() if t.is_floating_point() else t.detach())
        return out


def clip_(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """torch.nn.utils.clip_grad_norm_ on gradient tensors themselves (a sharded master may have none
    to hold its gradient): scales them in place to a total 2-norm of at most max_norm; -> the norm
    before. The same arithmetic as clip_grad_norm_ on one device."""
    total = torch.nn.utils.get_total_norm(grads)
    if grads:
        torch._foreach_mul_(grads, torch.clamp(max_norm / (total + 1e-6), max=1.0).to(grads[0].device))
    return total
