"""Build a tiny, fully offline chat LM for the move-list puzzles (Plan-Path and Sokoban).

    python make_tiny_model.py --corpus FILE.jsonl --out DIR [--seed 0] [--sft-steps N]
        [--reading-corpus FILE.jsonl ... --reading-steps N --reading-mix P]

Phases (each timed on stderr):
  1. corpus: JSONL transcripts {"messages": [..., {"role": "assistant", ...}]} written by
     services/engine/corpus/demos.ts with the environments' real prompts, answered right
     about half the time, so the warm-started model is in format but imperfect (RL needs
     diverse rewards);
  2. byte-level BPE tokenizer (tokenizers library, vocab 1024) trained on that corpus,
     with ChatML special tokens, wrapped in transformers.PreTrainedTokenizerFast;
  3. a tiny LlamaForCausalLM (hidden 128, 4 layers, ~0.9M parameters) initialised from --seed;
  4. with --reading-corpus (demos.ts --reading plan|tool: the same prompts of one role, answered
     by copying what the prompt hands over, e.g. the tool agent's move list), reading stages
     first, one per corpus in the order given, each --reading-steps at --reading-lr on its corpus
     and the ones before it (drawn equally): long enough for the phase change after which the
     model copies. A short warm start on the task corpus alone never gets there (the models learn
     the format, not to read), nor does one stage of two roles' copies (bench/notes/learning-reads.md,
     "a reading stage before the warm start");
  5. a short supervised warm start (loss on the assistant reply only), with a --reading-mix share
     of its examples from the reading corpora, so that the copying survives it;
  6. save_pretrained of model + tokenizer + generation_config into --out.

Everything is seeded: the same arguments give the same weights (on the same machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

EOT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"

# ChatML. The generation prompt is "<|im_start|>assistant\n"; the model ends a turn with <|im_end|>.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)

# Plain English filler, mixed into the tokenizer corpus only, so that prompts worded
# differently from the corpus still tokenize into sensible pieces.
FILLER = """the a an and or of to in on at for with from by is are was be been it this that these
those you your we our they their he she his her as not no yes if then else when while which who
what where why how all any each every some many more most other such only own same so than too
very can will just should would could may might must do does did done have has had having make
made use used using find found give given take taken move moved moving step steps path paths
route plan planning goal start position current cell cells grid row rows column columns wall
walls free blocked open left right up down above below next previous first last final answer
answers list lists action actions agent agents team tool tools code python print output result
results reward rewards turn turns message messages user assistant system think reason check
verify correct wrong valid invalid shortest longest distance count number one two three four
five six seven eight nine ten reach reached reaching return returns value values state states
environment observation observations task tasks solve solved solution please format example
following respond response short brief explain explanation proposal proposed feedback update
updated because since therefore first second third finally however instead already again""".split()


# ----------------------------------------------------------------------------- task data

def corpus_examples(path: str, rng: random.Random):
    """Endless shuffled stream from a JSONL corpus of {"messages": [..., {"role": "assistant", ...}]}."""
    items = []
    with open(path) as f:
        for line in f:
            if line.strip():
                msgs = json.loads(line)["messages"]
                assert msgs[-1]["role"] == "assistant", "the last message of each transcript must be the assistant's"
                items.append((msgs[:-1], msgs[-1]["content"]))
    while True:
        order = list(range(len(items)))
        rng.shuffle(order)
        for i in order:
            yield items[i]


def mixed(a, b, share: float, rng: random.Random):
    """Endless stream: the next item of b with probability `share`, else of a."""
    while True:
        yield next(b) if rng.random() < share else next(a)


def union(streams, rng: random.Random):
    """Endless stream: the next item of one of `streams`, each as likely."""
    while True:
        yield next(streams[rng.randrange(len(streams))])


# ----------------------------------------------------------------------------- tokenizer

def build_tokenizer(corpus, vocab_size):
    tok = Tokenizer(models.BPE())
    # Grid cells ('.', '#', and S/G when not starting a word) always become their own
    # tokens, so the model "sees" every cell.
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"[.#]|[SG](?![a-z])"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=1,
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=EOT, eos_token=IM_END, pad_token=EOT, unk_token=None,
        additional_special_tokens=[IM_START],
        chat_template=CHAT_TEMPLATE,
        model_max_length=2048,
    )


def encode_example(tokenizer, messages, reply):
    """prompt ids exactly as the engine renders them, response ids = reply + <|im_end|>."""
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    r = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.convert_tokens_to_ids(IM_END)]
    return p, r


# ----------------------------------------------------------------------------- model + SFT

def build_model(tokenizer, seed):
    eot, im_end = tokenizer.convert_tokens_to_ids(EOT), tokenizer.convert_tokens_to_ids(IM_END)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=128, intermediate_size=384,
        num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=2048, rope_theta=10000.0, tie_word_embeddings=True,
        bos_token_id=eot, eos_token_id=[im_end, eot], pad_token_id=eot,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=eot, eos_token_id=[im_end, eot], pad_token_id=eot, do_sample=True, temperature=1.0,
        top_p=1.0, top_k=0, max_new_tokens=64,
    )
    return model


def sft(model, tokenizer, examples, steps, batch_size=8, lr=3e-3):
    """Plain next-token cross-entropy on the assistant tokens, linear warmup + cosine decay.
    `examples` is an endless iterator of (messages, assistant reply)."""
    if steps <= 0:
        return
    pad = tokenizer.pad_token_id
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    model.train()
    warmup = max(1, steps // 10)
    t0 = time.time()
    for step in range(steps):
        batch = [encode_example(tokenizer, *next(examples)) for _ in range(batch_size)]
        T = max(len(p) + len(r) for p, r in batch)
        ids = torch.full((batch_size, T), pad, dtype=torch.long)
        labels = torch.full((batch_size, T), -100, dtype=torch.long)
        mask = torch.zeros((batch_size, T), dtype=torch.long)
        for i, (p, r) in enumerate(batch):
            ids[i, : len(p) + len(r)] = torch.tensor(p + r)
            labels[i, len(p): len(p) + len(r)] = torch.tensor(r)  # HF shifts labels internally
            mask[i, : len(p) + len(r)] = 1
        frac = step / max(1, steps - 1)
        cur_lr = lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + torch.cos(torch.tensor(frac * torch.pi)).item()))
        for g in opt.param_groups:
            g["lr"] = cur_lr
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            log(f"  sft step {step:4d}/{steps} loss {loss.item():.3f} lr {cur_lr:.2e} ({time.time() - t0:.1f}s)")
    model.eval()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sft-steps", type=int, default=400)
    ap.add_argument("--vocab-size", type=int, default=1024)
    ap.add_argument("--corpus-size", type=int, default=3000, help="transcripts used to train the tokenizer")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--corpus", required=True, help="JSONL of {\"messages\": [...]} transcripts (last message = "
                    "the assistant's reply), e.g. from services/engine/corpus/demos.ts")
    ap.add_argument("--reading-corpus", action="append", default=[], help="JSONL transcripts of one role whose answers "
                    "copy from their prompts (services/engine/corpus/demos.ts --reading plan|tool); one reading stage "
                    "each, in order; unset: none")
    ap.add_argument("--reading-steps", type=int, default=2500, help="steps of each reading stage")
    ap.add_argument("--reading-lr", type=float, default=1e-3)
    ap.add_argument("--reading-mix", type=float, default=0.25, help="share of the warm start's examples from the reading corpora")
    args = ap.parse_args(argv)
    if os.environ.get("TANDEM_TORCH_THREADS"):
        torch.set_num_threads(int(os.environ["TANDEM_TORCH_THREADS"]))

    timings = {}
    t = time.time()
    def stream(seed):
        rng = random.Random(seed)
        return corpus_examples(args.corpus, rng)

    examples, filler_rng = stream(args.seed), random.Random(args.seed)
    corpus = []
    for _ in range(args.corpus_size):
        messages, reply = next(examples)
        corpus.append("".join(f"{m['role']}\n{m['content']}\n" for m in messages) + "assistant\n" + reply)
        corpus.append(" ".join(filler_rng.choice(FILLER) for _ in range(12)).capitalize() + ".")
    timings["corpus"] = time.time() - t

    t = time.time()
    tokenizer = build_tokenizer(corpus, args.vocab_size)
    timings["tokenizer"] = time.time() - t

    t = time.time()
    model = build_model(tokenizer, args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    timings["init"] = time.time() - t
    log(f"model: {n_params:,} parameters, vocab {len(tokenizer)}")

    warm = stream(args.seed + 1)
    if args.reading_corpus:
        t = time.time()
        reading = [corpus_examples(path, random.Random(args.seed + 2 + i)) for i, path in enumerate(args.reading_corpus)]
        for stage in range(len(reading)):
            sft(model, tokenizer, union(reading[: stage + 1], random.Random(args.seed + 100 + stage)), args.reading_steps,
                batch_size=args.batch_size, lr=args.reading_lr)
        timings["reading"] = time.time() - t
        warm = mixed(warm, union(reading, random.Random(args.seed + 99)), args.reading_mix, random.Random(args.seed + 98))

    t = time.time()
    sft(model, tokenizer, warm, args.sft_steps, batch_size=args.batch_size, lr=args.lr)
    timings["sft"] = time.time() - t

    t = time.time()
    hf_logging.disable_progress_bar()
    os.makedirs(args.out, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    ensure_chat_template_in_config(args.out)
    timings["save"] = time.time() - t

    for k, v in timings.items():
        log(f"phase {k:9s} {v:7.2f}s")
    log(f"total {sum(timings.values()):.2f}s -> {args.out}")
    return {"params": n_params, "timings": timings, "vocab": len(tokenizer)}


def ensure_chat_template_in_config(folder):
    """Recent transformers write the template to chat_template.jinja; also keep it in
    tokenizer_config.json so older loaders (and humans) find it there."""
    path = os.path.join(folder, "tokenizer_config.json")
    with open(path) as f:
        cfg = json.load(f)
    if cfg.get("chat_template") != CHAT_TEMPLATE:
        cfg["chat_template"] = CHAT_TEMPLATE
        with open(path, "w") as f:
            json.dump(cfg, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
