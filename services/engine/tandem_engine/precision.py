"""Which dtype a policy's weights take (`load`'s `dtype`), and float32 master weights for bf16 training.

`dtype` is "auto", "float32" or "bfloat16" (the run config's placement.<base model>.dtype):

* auto: bfloat16 on CUDA (where the GPU has it) and on CPUs whose flags show bf16 units
  (avx512_bf16 or amx_bf16); float32 elsewhere, and the engine says why once in its log and in the
  load's answer (`dtype_note`), which `tandem status` shows.
* bfloat16 on a CPU without those units is refused, naming the missing flags: it would run emulated,
  about 20-30x slower than float32 (bench/RESULTS.md). TANDEM_ALLOW_EMULATED_BF16=1 allows it: the
  engine's tests run the GPU's dtype path that way on any CPU.

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
    missing = _missing_bf16(device, cpu_flags() if flags is None and device.type == "cpu" else flags)
    if missing is None:
        return torch.bfloat16, None
    if asked == "bfloat16":
        if device.type == "cpu" and os.environ.get("TANDEM_ALLOW_EMULATED_BF16") == "1":
            return torch.bfloat16, None
        raise EngineError("BadRequest", f"dtype bfloat16: {missing}; use dtype auto or float32"
                          + (" (or TANDEM_ALLOW_EMULATED_BF16=1 to run it emulated)" if device.type == "cpu" else ""))
    note = f"auto chose float32: {missing}"
    if log is not None and note not in _said:
        _said.add(note)
        log(f"[engine] dtype {note}")
    return torch.float32, note


def _missing_bf16(device: torch.device, flags: set[str] | None) -> str | None:
    """Why bf16 would not run natively on `device`, or None."""
    if device.type == "cuda":
        return None if torch.cuda.is_bf16_supported(including_emulation=False) else \
            f"the GPU {torch.cuda.get_device_name(device)} has no native bfloat16"
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
    float32 already (a float32 model, a LoRA adapter), else a float32 copy made at load (`take`)."""

    def __init__(self, params: list[torch.nn.Parameter], masters: dict[int, torch.Tensor] | None = None):
        """`masters`: id(param) -> its float32 weights, for the parameters that are not float32."""
        masters = masters or {}
        self.pairs = []
        for p in params:
            if p.dtype == torch.float32:
                self.pairs.append((p, p))
            else:
                m = masters.get(id(p))
                if m is None:
                    raise EngineError("LoadError", f"a {name(p.dtype)} parameter of shape {tuple(p.shape)} has no "
                                      "float32 master (load the model in float32, then `take`)")
                self.pairs.append((p, torch.nn.Parameter(m, requires_grad=True)))

    @staticmethod
    def take(model, dtype: torch.dtype) -> dict[int, torch.Tensor]:
        """A float32 model's trainable weights become masters and the model's weights `dtype` (its
        other parameters too): -> id(param) -> master. Float32 stays as it is (-> {})."""
        if dtype == torch.float32:
            return {}
        masters = {id(p): p.data for p in model.parameters() if p.requires_grad and p.dtype == torch.float32}
        as_dtype(model, dtype)
        return masters

    @property
    def params(self) -> list[torch.nn.Parameter]:
        """What the optimizer steps."""
        return [m for _, m in self.pairs]

    @property
    def mixed(self) -> bool:
        return any(p is not m for p, m in self.pairs)

    def add_grads(self) -> None:
        """After a micro-batch's backward: each low-precision gradient added into its master's float32
        gradient (so that micro-batches accumulate in float32), and dropped."""
        for p, m in self.pairs:
            if p is m or p.grad is None:
                continue
            g = p.grad.float()
            m.grad = g if m.grad is None else m.grad.add_(g)
            p.grad = None

    @torch.no_grad()
    def copy_to_weights(self) -> None:
        """After an optimizer step: each weight its master rounded to the weight's dtype."""
        for p, m in self.pairs:
            if p is not m:
                p.copy_(m)

    def state_dict_of(self, model) -> dict[str, torch.Tensor]:
        """The model's state dict with each trained weight replaced by its float32 master (tied weights
        stay one tensor) and the other floating-point entries in float32: what a checkpoint holds."""
        by_id = {id(p): m.detach() for p, m in self.pairs}
        out = {}
        for k, t in model.state_dict(keep_vars=True).items():
            m = by_id.get(id(t))
            out[k] = m if m is not None else (t.detach().float() if t.is_floating_point() else t.detach())
        return out
