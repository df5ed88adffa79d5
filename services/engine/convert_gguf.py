"""Convert a .gguf model file into an ordinary Hugging Face folder (config, fp32 safetensors, tokenizer
with its chat template), so that every later load is a plain `from_pretrained(folder)`.

    python services/engine/convert_gguf.py --gguf FILE.gguf --out FOLDER

transformers dequantizes the GGUF tensors into a dense model on load (`gguf_file=`). The result is
kept in float32: a dequantized 4-bit weight is a scale times an integer plus an offset, which float32
holds exactly and bfloat16 (8 bits of mantissa) does not; the engine computes in float32 on a CPU
anyway, and casts to bfloat16 itself on a GPU. The loaded model still carries the GGUF quantizer
object, which would make `save_pretrained` write quantization settings no loader can use: it is
dropped before saving (the weights are already dense).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")  # set-up logs stay one line per step

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402


def convert(gguf: str, out: str) -> dict:
    t0 = time.time()
    folder, name = os.path.dirname(os.path.abspath(gguf)), os.path.basename(gguf)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.hf_quantizer = None  # the weights are dense now; see the module comment
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return {
        "architecture": type(model).__name__,
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab": len(tok),
        "chat_template": bool(tok.chat_template),
        "seconds": round(time.time() - t0, 1),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", required=True, help="the .gguf file")
    ap.add_argument("--out", required=True, help="the HF folder to write (replaced whole)")
    a = ap.parse_args()
    print(json.dumps(convert(a.gguf, a.out)))
