"""Model files: validating a model path (`inspect`), loading it, and the `Backbone` that wraps a
loaded causal LM + tokenizer (chat rendering and teacher-forced log-probs).

A model path is either a local Hugging Face folder (config.json, weights, tokenizer files) or a
single `.gguf` file, which transformers reads through `gguf_file=` and dequantizes into an
ordinary dense model (so it can be trained and saved like any other).
"""

from __future__ import annotations

import glob
import json
import os
import re

import torch
import torch.utils.checkpoint

from .errors import EngineError
from .kv_cache import kv_bytes_per_token

# Response positions whose vocabulary-sized logits a checkpointed pass makes at once.
LOGIT_CHUNK = 1024

TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")  # vocab.json needs merges.txt too
WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json")


def load_error(path: str, reason: str) -> EngineError:
    return EngineError("LoadError", f"model_path {path!r}: {reason}")


def inspect(path: str) -> dict:
    """Check that `path` looks loadable without reading any weights.

    -> {"ok": True, "kind": "hf"|"gguf", "architecture": "LlamaForCausalLM" | model_type}
    Raises LoadError naming the path and the reason.
    """
    if not isinstance(path, str) or not path:
        raise EngineError("LoadError", "model_path is empty")
    if not os.path.exists(path):
        built = re.search(r"(?:^|/)\.tools/models/([^/]+)/?$", path)
        raise load_error(path, "does not exist" + (f"; it is one of the project's models: `bash infra/models.sh {built.group(1)}` builds it"
                                                   if built else ""))
    if os.path.isfile(path):
        if not path.endswith(".gguf"):
            raise load_error(path, "is a file but not a .gguf file (expected a Hugging Face folder or a .gguf file)")
        return _inspect_gguf(path)
    if not os.path.isdir(path):
        raise load_error(path, "is neither a folder nor a file")
    cfg_path = os.path.join(path, "config.json")
    if not os.path.isfile(cfg_path):
        raise load_error(path, "is not a Hugging Face model folder (no config.json)")
    try:
        with open(cfg_path) as f:
            cfg = json.load(f)
        if not isinstance(cfg, dict) or "model_type" not in cfg:
            raise ValueError("no model_type")
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(path, local_files_only=True)  # reads config.json only
    except Exception as e:  # noqa: BLE001
        raise load_error(path, f"malformed config.json ({type(e).__name__}: {e})") from e
    has_tok = any(os.path.isfile(os.path.join(path, f)) for f in TOKENIZER_FILES[:2]) or (
        os.path.isfile(os.path.join(path, "vocab.json")) and os.path.isfile(os.path.join(path, "merges.txt")))
    if not has_tok:
        raise load_error(path, "no tokenizer files (tokenizer.json, tokenizer.model or vocab.json + merges.txt)")
    if not any(glob.glob(os.path.join(path, p)) for p in WEIGHT_PATTERNS):
        raise load_error(path, "no weight files (*.safetensors or pytorch_model*.bin)")
    return {"ok": True, "kind": "hf", "architecture": _architecture(config)}


def _inspect_gguf(path: str) -> dict:
    try:
        from transformers import AutoConfig
        from transformers.integrations.gguf import read_gguf_metadata

        metadata, _ = read_gguf_metadata(path)
        config = AutoConfig.from_pretrained(os.path.dirname(path) or ".", gguf_file=os.path.basename(path),
                                            local_files_only=True)
    except Exception as e:  # noqa: BLE001
        raise load_error(path, f"transformers cannot read this GGUF file ({type(e).__name__}: {e})") from e
    if "tokenizer.ggml.model" not in metadata:
        raise load_error(path, "the GGUF file has no tokenizer (tokenizer.ggml.* metadata)")
    return {"ok": True, "kind": "gguf", "architecture": _architecture(config)}


def _architecture(config) -> str:
    archs = getattr(config, "architectures", None)
    return archs[0] if archs else config.model_type


def load_pretrained(path: str, dtype: torch.dtype, device: torch.device):
    """(model in eval mode on `device`, tokenizer) from an HF folder or a .gguf file; LoadError on failure."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    kind = inspect(path)["kind"]
    try:
        if kind == "gguf":
            from transformers import GgufConfig

            folder, name = os.path.dirname(path) or ".", os.path.basename(path)
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
            # dequantize=True: plain nn.Linear weights (trainable, saveable), whatever the file's quant type.
            model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=dtype, local_files_only=True,
                                                         quantization_config=GgufConfig(dequantize=True))
            model.hf_quantizer = None  # the weights are dense now; don't let the quantizer block save_pretrained
        else:
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, local_files_only=True)
    except Exception as e:  # noqa: BLE001
        raise load_error(path, f"cannot load ({type(e).__name__}: {e})") from e
    return model.to(device).eval(), tokenizer


class Backbone:
    """A causal LM (plain HF model, or a PeftModel holding several named LoRA adapters) + tokenizer."""

    def __init__(self, model, tokenizer, model_path: str, device: torch.device):
        self.model, self.tokenizer, self.model_path, self.device = model, tokenizer, model_path, device
        self.users: set[str] = set()  # lora bases: keys of the policies that have an adapter here
        # Token ids that end a response: eos of tokenizer and generation config, plus ChatML/Llama-3 markers.
        vocab = tokenizer.get_vocab()
        stops = {tokenizer.eos_token_id}
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        stops.update(gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos])
        stops.update(vocab[t] for t in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>") if t in vocab)
        self.stop_ids = {int(t) for t in stops if t is not None}
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else min(self.stop_ids)
        self.vocab_size = model.get_input_embeddings().weight.shape[0]
        self.dtype = model.get_input_embeddings().weight.dtype  # the weights' (precision.py)
        self.kv_bytes_per_token = kv_bytes_per_token(model)  # one row's keys and values per token, all layers
        self.thinking_template = "enable_thinking" in str(tokenizer.chat_template or "")

    def render(self, messages: list[dict], enable_thinking: bool | None = None, generation_prompt=True) -> list[int]:
        kwargs = {}
        if enable_thinking is not None and self.thinking_template:  # e.g. Qwen3's template reads it
            kwargs["enable_thinking"] = enable_thinking
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt,
                                                  **kwargs)
        # The template already contains every special token it wants (bos etc.).
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def system_prefix(self, messages: list[dict], rendered: list[int], enable_thinking: bool | None = None) -> int:
        """How many tokens the system message takes at the start of `rendered` (the messages
        rendered): the system message rendered alone, when `rendered` starts with exactly it (some
        templates render a lone system message otherwise); 0 when there is none or it does not line up."""
        system = [m for m in messages[:1] if m.get("role") == "system"]
        if not system:
            return 0
        alone = self.render(system, enable_thinking, generation_prompt=False)
        return len(alone) if rendered[:len(alone)] == alone else 0

    def logprobs(self, prompts: list[list[int]], responses: list[list[int]], model=None, entropy=False,
                 checkpointing=False):
        """Teacher-forced log p(response_t | prompt, response_<t) under the plain softmax.

        Samples with the same prompt (the K candidates of a GRPO group) share one pass over it: the
        prompt runs once, its keys and values are repeated for the group's rows, and the responses run
        on top of them. The gradient flows back through the repeat into the prompt pass, so the result
        equals running each prompt + response row on its own, while the prompt tokens are processed
        once per group instead of once per sample. The log-softmax over the vocabulary is made a chunk
        of positions at a time (_logprobs_by_chunks), so that its float32 copy never exists whole.
        Returns (logp [B, Tr] float32, mask [B, Tr], entropy [B, Tr] or None); logp is
        differentiable w.r.t. the weights when grad is enabled. `model` defaults to self.model
        (the reference model for a full policy's KL term is another one). `checkpointing`: each
        sample on its own with its memory bounded (_checkpointed_logprobs), for long sequences.
        """
        model = self.model if model is None else model
        if checkpointing:
            return self._checkpointed_logprobs(model, prompts, responses, entropy)
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, p in enumerate(prompts):
            groups.setdefault(tuple(p), []).append(i)
        B, Tr = len(prompts), max(len(r) for r in responses)
        logp = torch.zeros((B, Tr), device=self.device)
        mask = torch.zeros((B, Tr), device=self.device)
        ent = torch.zeros((B, Tr), device=self.device) if entropy else None
        for prompt, rows in groups.items():
            g_logp, g_mask, g_ent = self._group_logprobs(model, list(prompt), [responses[i] for i in rows], entropy)
            at, T = torch.tensor(rows, device=self.device), g_logp.shape[1]
            logp[at, :T] = g_logp  # an in-place copy: the gradient flows through it into g_logp
            mask[at, :T] = g_mask
            if entropy:
                ent[at, :T] = g_ent
        return logp, mask, ent

    def _checkpointed_logprobs(self, model, prompts, responses, entropy: bool):
        """logprobs() with a long sequence's memory bounded, for the gradient pass. Each decoder layer
        keeps only its input and is run again in the backward pass (gradient checkpointing), and the
        vocabulary-sized logits are made LOGIT_CHUNK positions at a time and made again likewise: a
        sample keeps about (layers + 1) x hidden values per token instead of every layer's
        activations and its [tokens, vocabulary] log-softmax. Each sample runs prompt + response on
        its own (HF's checkpointed layers keep no cache to share a prompt through), so the prompt is
        processed once per sample rather than once per group. The same values, to float rounding."""
        hf = model.get_base_model() if hasattr(model, "get_base_model") else model
        plain_head = not any(getattr(hf.config, k, None) for k in ("final_logit_softcapping", "logit_scale"))
        B, Tr = len(prompts), max(len(r) for r in responses)
        logp = torch.zeros((B, Tr), device=self.device)
        mask = torch.zeros((B, Tr), device=self.device)
        ent = torch.zeros((B, Tr), device=self.device) if entropy else None
        hf.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        try:
            for i, (prompt, response) in enumerate(zip(prompts, responses)):
                ids = torch.tensor([prompt + response[:-1]], device=self.device)
                targets = torch.tensor(response, device=self.device)
                P, R = len(prompt), len(response)
                if plain_head:  # logits = lm_head(final hidden states), made chunk by chunk below
                    hidden = hf.get_decoder()(input_ids=ids, use_cache=False).last_hidden_state[0, P - 1:]
                    head = hf.get_output_embeddings()
                else:  # a model that post-processes its logits: the whole [tokens, vocabulary] at once
                    hidden, head = model(input_ids=ids, use_cache=False).logits[0, P - 1:], _as_is
                row_logp, row_ent = _logprobs_by_chunks(head, hidden, targets, entropy)
                logp[i, :R] = row_logp  # an in-place copy: the gradient flows through it
                if entropy:
                    ent[i, :R] = row_ent
                mask[i, :R] = 1
        finally:
            hf.activation_checkpointing_disable()  # the backward pass reruns what the forward recorded
        return logp, mask, ent

    def _group_logprobs(self, model, prompt: list[int], responses: list[list[int]], entropy: bool):
        """[n, T] log-probs, mask (and entropies) of n responses to one prompt, T the longest; 0 past a response's end."""
        n, T = len(responses), max(len(r) for r in responses)
        out = model(input_ids=torch.tensor([prompt], device=self.device), use_cache=True, logits_to_keep=1)
        targets = torch.full((n, T), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, T), dtype=torch.float32)
        for i, r in enumerate(responses):
            targets[i, : len(r)] = torch.tensor(r, dtype=torch.long)
            mask[i, : len(r)] = 1
        targets, mask = targets.to(self.device), mask.to(self.device)
        # The prompt's last position predicts response token 0.
        lp, en = _logprobs_by_chunks(_as_is, out.logits[:, -1].expand(n, -1), targets[:, 0], entropy)
        logps, ents = [lp[:, None]], [en[:, None]] if entropy else []
        if T > 1:
            # Response tokens 0..T-2 predict tokens 1..T-1; right padding, so a real token never sees a pad.
            cache = out.past_key_values
            cache.batch_repeat_interleave(n)
            rest = model(input_ids=targets[:, :-1], past_key_values=cache, use_cache=True).logits
            lp, en = _logprobs_by_chunks(_as_is, rest.reshape(n * (T - 1), -1), targets[:, 1:].reshape(-1), entropy)
            logps.append(lp.view(n, T - 1))
            if entropy:
                ents.append(en.view(n, T - 1))
        logp = torch.cat(logps, dim=1) * mask
        ent = torch.cat(ents, dim=1) * mask if entropy else None
        return logp, mask, ent


def _as_is(logits: torch.Tensor) -> torch.Tensor:
    """The head of positions given as logits already."""
    return logits


def _logprobs_by_chunks(head, x: torch.Tensor, targets: torch.Tensor, entropy: bool):
    """[N] log p(target) (and, without gradient, the entropies) of N positions, from their final
    hidden states (`head` the output embedding) or their logits (`head` _as_is), LOGIT_CHUNK
    positions at a time: the float32 log-softmax over the vocabulary exists for one chunk at once.
    With gradient, each chunk is made again in the backward pass (checkpointed) rather than kept."""
    parts = []
    for a in range(0, x.shape[0], LOGIT_CHUNK):
        args = (head, x[a:a + LOGIT_CHUNK], targets[a:a + LOGIT_CHUNK], entropy)
        parts.append(torch.utils.checkpoint.checkpoint(_token_logprobs, *args, use_reentrant=False)
                     if torch.is_grad_enabled() else _token_logprobs(*args))
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts]) if entropy else None


def _token_logprobs(head, hidden: torch.Tensor, targets: torch.Tensor, entropy: bool):
    """log p(target) at each position from its final hidden state (or logits), and (no gradient) the entropy."""
    logp_all = torch.log_softmax(head(hidden).float(), dim=-1)
    logp = torch.gather(logp_all, -1, targets[:, None])[:, 0]
    ent = None
    if entropy:
        with torch.no_grad():
            ent = -(logp_all.exp() * logp_all).sum(-1)
    return logp, ent
