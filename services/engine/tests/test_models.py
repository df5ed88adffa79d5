"""Model paths: `inspect` on good and bad paths, and GGUF files (full policy and LoRA base)."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from conftest import LORA, OPTIM, PLAN_PROMPT, as_train, load_hf, teacher_forced


def test_inspect_good_paths(eng, tiny_model, tiny_gguf):
    assert eng.ok("inspect", model_path=tiny_model) == {"ok": True, "kind": "hf", "architecture": "LlamaForCausalLM"}
    assert eng.ok("inspect", model_path=tiny_gguf) == {"ok": True, "kind": "gguf", "architecture": "llama"}


def test_inspect_bad_paths(eng, tiny_model, tmp_path):
    def broken(name, drop=(), edit=None):
        folder = tmp_path / name
        shutil.copytree(tiny_model, folder)
        for f in drop:
            os.remove(folder / f)
        if edit:
            (folder / edit[0]).write_text(edit[1])
        return folder

    empty = tmp_path / "empty"
    empty.mkdir()
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + os.urandom(64))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    cases = {
        tmp_path / "missing": "does not exist",
        # one of the project's models, not built yet: how to build it
        tmp_path / ".tools" / "models" / "tandem-tiny-sokoban": "`bash infra/models.sh tandem-tiny-sokoban` builds it",
        empty: "no config.json",
        broken("no-tokenizer", drop=["tokenizer.json"]): "no tokenizer files",
        broken("no-weights", drop=["model.safetensors"]): "no weight files",
        broken("bad-config", edit=("config.json", "{not json")): "malformed config.json",
        broken("unknown-arch", edit=("config.json", '{"model_type": "no-such-arch"}')): "malformed config.json",
        garbage: "cannot read this GGUF file",
        text: "not a .gguf file",
    }
    for path, reason in cases.items():
        resp = eng.call("inspect", model_path=str(path))
        assert resp["ok"] is False and resp["error"]["type"] == "LoadError", resp
        assert str(path) in resp["error"]["message"] and reason in resp["error"]["message"], resp
        # load reports the same error (before loading anything).
        resp = eng.call("load", policy="bad", kind="full", model_path=str(path), optim=OPTIM, checkpoint_root="")
        assert resp["error"]["type"] == "LoadError" and reason in resp["error"]["message"]
    assert eng.call("inspect")["error"]["type"] == "BadRequest"
    assert "bad" not in eng.ok("ping")["policies"]


@pytest.mark.fp32
def test_gguf_full_policy_generates_trains_and_saves_hf(eng, tiny_model, tiny_gguf, tmp_path):
    root = tmp_path / "ck"
    assert eng.load_full("g", tiny_gguf, root, optim={**OPTIM, "lr": 1e-2}) == {
        "policy": "g", "version": 0, "source": tiny_gguf, "dtype": "float32", "dtype_note": None, "role": "trainer"}
    samples = eng.gen("g", PLAN_PROMPT, n=2, seed=3, max_new_tokens=10)
    # Same weights as the HF model the file was written from: same log-probs for the same ids.
    hf_model, _ = load_hf(tiny_model)
    for s in samples:
        assert len(s["response_ids"]) >= 1
        assert torch.allclose(teacher_forced(hf_model, s["prompt_ids"], s["response_ids"]),
                              torch.tensor(s["logprobs"]), atol=1e-4)
    r = eng.update("g", 0, [as_train(samples[0], 1.0)], root)["result"]
    assert r["grad_norm"] > 0
    ck = os.path.join(r["checkpoint"], "model")
    assert eng.ok("inspect", model_path=ck)["kind"] == "hf"  # the checkpoint is a plain HF folder
    model, _ = load_hf(ck)
    probe = eng.gen("g", PLAN_PROMPT, version=1, seed=4, max_new_tokens=6)[0]
    assert torch.allclose(teacher_forced(model, probe["prompt_ids"], probe["response_ids"]),
                          torch.tensor(probe["logprobs"]), atol=1e-4)


def test_gguf_as_lora_base(eng, tiny_gguf, tmp_path):
    eng.ok("load", policy="gl", kind="lora", model_path=tiny_gguf, base="gguf-base", lora=LORA,
           optim={**OPTIM, "lr": 1e-2}, checkpoint_root=str(tmp_path / "ck"))
    s = eng.gen("gl", PLAN_PROMPT, seed=1, max_new_tokens=6)[0]
    r = eng.update("gl", 0, [as_train(s, 1.0)], tmp_path / "ck")["result"]
    assert r["grad_norm"] > 0 and os.path.isfile(os.path.join(r["checkpoint"], "adapter", "adapter_config.json"))
    assert eng.gen("gl", PLAN_PROMPT, version=1, seed=1, max_new_tokens=6)[0]["prompt_ids"] == s["prompt_ids"]
