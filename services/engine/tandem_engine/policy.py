"""One trainable policy: HF causal LM + tokenizer + (lazy) AdamW, at an integer version."""

from __future__ import annotations

import os
import secrets

import torch

from . import checkpoint
from .errors import EngineError
from .ppo import ppo_loss

GEN_BATCH_ROWS = int(os.environ.get("TANDEM_GEN_BATCH", "64"))  # max sequences sampled in parallel
LOGPROB_FLOOR = -1e4  # -inf is not valid JSON; a token this unlikely is effectively impossible


def check_model_folder(path: str) -> None:
    if not path:
        raise EngineError("LoadError", "model_path is empty")
    if not os.path.exists(path):
        raise EngineError("LoadError", f"model_path {path!r} does not exist")
    if not os.path.isdir(path):
        raise EngineError("LoadError", f"model_path {path!r} is not a directory")
    if not os.path.isfile(os.path.join(path, "config.json")):
        raise EngineError("LoadError", f"model_path {path!r} is not a Hugging Face model folder (no config.json)")


class Policy:
    def __init__(self, key: str, model_path: str, checkpoint_root: str, device: torch.device, dtype: torch.dtype):
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        self.key, self.model_path, self.checkpoint_root = key, model_path, checkpoint_root
        self.device, self.dtype = device, dtype
        check_model_folder(model_path)
        self.results: dict[int, dict] = {}  # from_version -> update result (idempotent replays)
        self.optimizer: torch.optim.Optimizer | None = None
        self.dirty = False  # weights stepped but not checkpointed (after a failed save)

        ckpts = checkpoint.list_complete(checkpoint_root)
        if ckpts:
            self.version, folder = ckpts[-1]
            self.source = os.path.join(folder, "model")
            check_model_folder(self.source)
            state = checkpoint.read_state(folder)
            self.version = int(state.get("version", self.version))
            if state.get("update_result"):
                self.results[self.version - 1] = state["update_result"]
        else:
            self.version, folder, self.source = 0, None, model_path

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.source, local_files_only=True)
            self.model = AutoModelForCausalLM.from_pretrained(self.source, dtype=dtype, local_files_only=True)
        except Exception as e:  # noqa: BLE001 - report which folder failed and why
            raise EngineError("LoadError", f"cannot load {self.source!r}: {type(e).__name__}: {e}") from e
        # No dropout: the update must recompute exactly the distribution we sampled from.
        self.model.to(device).eval()

        if folder and os.path.isfile(os.path.join(folder, "optimizer.pt")):
            state_dict = torch.load(os.path.join(folder, "optimizer.pt"), map_location=device, weights_only=True)
            self.get_optimizer().load_state_dict(state_dict)

        # Token ids that end a response: eos of tokenizer and generation config, plus ChatML markers.
        vocab = self.tokenizer.get_vocab()
        stops = {self.tokenizer.eos_token_id}
        gen_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        stops.update(gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos])
        stops.update(vocab[t] for t in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>") if t in vocab)
        self.stop_ids = {int(t) for t in stops if t is not None}
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else min(self.stop_ids)
        self.vocab_size = self.model.get_input_embeddings().weight.shape[0]

    # ------------------------------------------------------------------ helpers

    def get_optimizer(self) -> torch.optim.Optimizer:
        if self.optimizer is None:
            params = [p for p in self.model.parameters() if p.requires_grad]
            self.optimizer = torch.optim.AdamW(params, lr=1e-6, betas=(0.9, 0.999), weight_decay=0.0)
        return self.optimizer

    def render(self, messages: list[dict]) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        # The template already contains every special token it wants (bos etc.).
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def sequence_logprobs(self, prompts: list[list[int]], responses: list[list[int]]):
        """Teacher-forced log p(response_t | prompt, response_<t) under the plain softmax.

        Sequences are right-padded, so every real token sees exactly its own prefix.
        Returns (logp [B, Tr] float32, mask [B, Tr]); differentiable w.r.t. the weights.
        """
        B = len(prompts)
        lens = [len(p) + len(r) for p, r in zip(prompts, responses)]
        L, Tr = max(lens), max(len(r) for r in responses)
        ids = torch.full((B, L), self.pad_id, dtype=torch.long)
        attn = torch.zeros((B, L), dtype=torch.long)
        targets = torch.full((B, Tr), self.pad_id, dtype=torch.long)
        mask = torch.zeros((B, Tr), dtype=torch.float32)
        for i, (p, r) in enumerate(zip(prompts, responses)):
            ids[i, : lens[i]] = torch.tensor(p + r)
            attn[i, : lens[i]] = 1
            targets[i, : len(r)] = torch.tensor(r)
            mask[i, : len(r)] = 1
        # Only positions from the shortest prompt's last token onwards predict response tokens.
        first = min(len(p) for p in prompts) - 1
        keep = L - first
        logits = self.model(input_ids=ids.to(self.device), attention_mask=attn.to(self.device),
                            logits_to_keep=keep).logits  # [B, keep, V] for positions first..L-1
        # Row i's response token j is predicted at position len(p_i) - 1 + j.
        pos = torch.stack([torch.arange(Tr) + len(p) - 1 - first for p in prompts]).clamp(max=keep - 1)
        logits = torch.gather(logits, 1, pos.to(self.device)[:, :, None].expand(-1, -1, logits.shape[-1]))
        logp = torch.log_softmax(logits.float(), dim=-1)
        logp = torch.gather(logp, -1, targets.to(self.device)[:, :, None])[:, :, 0]
        return logp * mask.to(self.device), mask.to(self.device)

    # ------------------------------------------------------------------ generate

    @torch.no_grad()
    def generate(self, prompts, n, temperature, top_p, top_k, max_new_tokens, seed):
        prompt_ids = [self.render(m) for m in prompts]
        gen = torch.Generator(device=self.device)
        gen.manual_seed(int(seed) if seed is not None else secrets.randbits(63))
        rows = [p for p in prompt_ids for _ in range(n)]  # prompt-major: row = i * n + k
        out = []
        for s in range(0, len(rows), GEN_BATCH_ROWS):
            out += self._sample_batch(rows[s: s + GEN_BATCH_ROWS], temperature, top_p, top_k, max_new_tokens, gen)
        return [out[i * n: (i + 1) * n] for i in range(len(prompts))]

    def _sample_batch(self, rows, temperature, top_p, top_k, max_new_tokens, gen):
        B, P = len(rows), max(len(r) for r in rows)
        # Left-pad the prompts so that all rows append new tokens at the same column.
        ids = torch.full((B, P), self.pad_id, dtype=torch.long, device=self.device)
        attn = torch.zeros((B, P), dtype=torch.long, device=self.device)
        for i, r in enumerate(rows):
            ids[i, P - len(r):] = torch.tensor(r, device=self.device)
            attn[i, P - len(r):] = 1
        pos = (attn.cumsum(-1) - 1).clamp(min=0)  # RoPE positions ignore the padding
        resp = [[] for _ in range(B)]
        lps = [[] for _ in range(B)]
        done = [False] * B
        reason = ["length"] * B
        cache = None
        for step in range(max_new_tokens):
            out = self.model(input_ids=ids, attention_mask=attn, position_ids=pos, past_key_values=cache,
                             use_cache=True, logits_to_keep=1)
            cache = out.past_key_values
            logits = out.logits[:, -1, :].float()
            logp = torch.log_softmax(logits, dim=-1)  # plain softmax: what the update recomputes
            tok = sample(logits, temperature, top_p, top_k, gen)
            tok_lp = logp.gather(1, tok[:, None])[:, 0].nan_to_num(neginf=LOGPROB_FLOOR).clamp(min=LOGPROB_FLOOR)
            for i, (t, lp) in enumerate(zip(tok.tolist(), tok_lp.tolist())):
                if done[i]:
                    continue
                resp[i].append(t)
                lps[i].append(lp)
                if t in self.stop_ids:
                    done[i], reason[i] = True, "stop"
            if all(done):
                break
            # Feed the sampled token back (finished rows keep running; their output is ignored).
            ids = tok[:, None]
            attn = torch.cat([attn, torch.ones((B, 1), dtype=attn.dtype, device=self.device)], dim=1)
            pos = pos[:, -1:] + 1
        samples = []
        for i in range(B):
            body = resp[i][:-1] if reason[i] == "stop" else resp[i]
            samples.append({
                "text": self.tokenizer.decode(body, skip_special_tokens=True),
                "prompt_ids": rows[i],
                "response_ids": resp[i],  # includes the stop token, so PPO also learns to stop
                "logprobs": lps[i],
                "finish_reason": reason[i],
            })
        return samples

    # ------------------------------------------------------------------ update

    def update(self, samples, lr, clip_low, clip_high, max_grad_norm, micro_batch_size, checkpoint_root):
        samples = [s for s in samples if len(s["response_ids"]) > 0]
        n_tokens = sum(len(s["response_ids"]) for s in samples)
        opt = self.get_optimizer()
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)

        loss_sum = clipped = kl = gap = 0.0
        for s in range(0, len(samples), micro_batch_size):
            mb = samples[s: s + micro_batch_size]
            new_logp, mask = self.sequence_logprobs([x["prompt_ids"] for x in mb], [x["response_ids"] for x in mb])
            old_logp = pad_rows([x["logprobs"] for x in mb], new_logp.shape[1]).to(self.device)
            adv = torch.tensor([float(x["advantage"]) for x in mb], device=self.device)
            # Each micro-batch is normalised by the token count of the WHOLE batch, so the
            # summed gradients equal the gradient of the full-batch token-mean loss.
            loss, st = ppo_loss(new_logp, old_logp, adv, mask, clip_low, clip_high, num_tokens=n_tokens)
            loss.backward()
            loss_sum += loss.item()
            clipped += st["clipped"]
            kl += st["kl"]
            gap += ((new_logp.detach() - old_logp).abs() * mask).sum().item()

        params = [p for g in opt.param_groups for p in g["params"]]
        grad_norm = None
        if n_tokens > 0:
            norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm > 0 else float("inf"))
            if torch.isfinite(norm):
                grad_norm = norm.item()
                self.dirty = True  # from here on, memory differs from the last checkpoint
                opt.step()
        opt.zero_grad(set_to_none=True)

        from_version = self.version
        denom = max(n_tokens, 1)
        result = {
            "version": from_version + 1,
            "loss": loss_sum,
            "clip_fraction": clipped / denom,
            "approx_kl": kl / denom,
            "grad_norm": grad_norm,
            "skipped_step": grad_norm is None,  # no tokens, or a non-finite gradient
            "tokens": n_tokens,
            "samples": len(samples),
            "logprob_gap": gap / denom,
        }
        result["checkpoint"] = checkpoint.save(checkpoint_root, from_version + 1, self.model, self.tokenizer, opt, result)
        self.version = from_version + 1
        self.dirty = False
        self.results[from_version] = result
        return result

    def recorded_result(self, from_version: int, checkpoint_root: str):
        """Result of the update that went from `from_version` to `from_version + 1`, if any."""
        if from_version in self.results:
            return self.results[from_version]
        for root in (checkpoint_root, self.checkpoint_root):
            folder = checkpoint.version_dir(root, from_version + 1) if root else None
            if folder and os.path.isfile(os.path.join(folder, "state.json")):
                return checkpoint.read_state(folder).get("update_result")
        return None


def sample(logits, temperature, top_p, top_k, gen):
    """Next token from temperature / top-k / top-p filtered logits [B, V]; temperature 0 = greedy."""
    if temperature <= 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if 0 < top_p < 1:
        sorted_logits, idx = torch.sort(logits, descending=True, dim=-1)
        probs = torch.softmax(sorted_logits, dim=-1)
        # Drop a token if the tokens ranked above it already cover top_p (the top-1 always stays).
        drop = (probs.cumsum(dim=-1) - probs) > top_p
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, idx, sorted_logits)
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=gen)[:, 0]


def pad_rows(rows: list[list[float]], width: int) -> torch.Tensor:
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=torch.float32)
    return out
