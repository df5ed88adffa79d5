"""Write a (tiny) Hugging Face Llama folder as an F32 GGUF file with the `gguf` package's GGUFWriter,
using llama.cpp's tensor names and metadata keys, so that transformers' `gguf_file=` loader reads it
back. Test helper: `python tests/tiny_gguf.py HF_FOLDER OUT.gguf`.
"""

from __future__ import annotations

import json
import sys

import gguf
import torch


def permute_qk(w, n_head):
    """llama.cpp stores q/k rows with the two rotary halves interleaved per head (transformers undoes this)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_llama_gguf(src: str, out: str) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
    c = model.config
    assert c.model_type == "llama", c.model_type
    rope_theta = (getattr(c, "rope_parameters", None) or {}).get("rope_theta") or c.rope_theta

    w = gguf.GGUFWriter(out, "llama")
    w.add_name("tandem-tiny")
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_block_count(c.num_hidden_layers)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    w.add_rope_freq_base(rope_theta)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_vocab_size(c.vocab_size)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    # Byte-level BPE vocabulary ("gpt2" in llama.cpp terms): tokens, merges, special ids, template.
    spec = json.loads(tok.backend_tokenizer.to_str())
    tokens = [None] * c.vocab_size
    for t, i in spec["model"]["vocab"].items():
        tokens[i] = t
    special = {a["id"] for a in spec["added_tokens"]}
    for a in spec["added_tokens"]:
        tokens[a["id"]] = a["content"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL if i in special else gguf.TokenType.NORMAL for i in range(len(tokens))])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    w.add_bos_token_id(tok.bos_token_id)
    w.add_eos_token_id(tok.eos_token_id)
    w.add_pad_token_id(tok.pad_token_id)
    w.add_chat_template(tok.chat_template)

    sd = {k: v.numpy() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    if not c.tie_word_embeddings:
        w.add_tensor("output.weight", sd["lm_head.weight"])
    names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn_v": "self_attn.v_proj",
             "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
             "ffn_down": "mlp.down_proj"}
    for i in range(c.num_hidden_layers):
        p = f"model.layers.{i}."
        for g, h in names.items():
            w.add_tensor(f"blk.{i}.{g}.weight", sd[p + h + ".weight"])
        w.add_tensor(f"blk.{i}.attn_q.weight", permute_qk(sd[p + "self_attn.q_proj.weight"], c.num_attention_heads))
        w.add_tensor(f"blk.{i}.attn_k.weight", permute_qk(sd[p + "self_attn.k_proj.weight"], c.num_key_value_heads))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    write_llama_gguf(sys.argv[1], sys.argv[2])
