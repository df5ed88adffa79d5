"""make_tiny_model.py's reading stage: the warm start's stream draws the reading corpus at its
share, and a build with --reading-corpus trains on it first, then on the task corpus."""

from __future__ import annotations

import json
import os
import random

import make_tiny_model
from conftest import TESTS_DIR


def test_mixed_draws_the_second_stream_at_its_share():
    a, b = iter(lambda: "a", None), iter(lambda: "b", None)
    assert {next(make_tiny_model.mixed(a, b, 0.0, random.Random(0))) for _ in range(50)} == {"a"}
    assert {next(make_tiny_model.mixed(a, b, 1.0, random.Random(0))) for _ in range(50)} == {"b"}
    stream = make_tiny_model.mixed(a, b, 0.25, random.Random(0))
    share = sum(next(stream) == "b" for _ in range(4000)) / 4000
    assert abs(share - 0.25) < 0.03, share


def test_a_build_with_a_reading_corpus_trains_the_reading_stage_first(tmp_path, monkeypatch):
    corpus = os.path.join(TESTS_DIR, "fixtures", "planpath_corpus.jsonl")
    # A reading corpus of one transcript, recognisable by its reply.
    reading = tmp_path / "reading.jsonl"
    with open(corpus) as f:
        messages = json.loads(f.readline())["messages"]
    reading.write_text(json.dumps({"messages": [*messages[:-1], {"role": "assistant", "content": "#### READ"}]}) + "\n")
    seen = []
    real_sft = make_tiny_model.sft

    def spy(model, tokenizer, examples, steps, **kw):
        taken = [next(examples) for _ in range(40)]
        seen.append((steps, kw["lr"], sum(reply == "#### READ" for _, reply in taken)))
        real_sft(model, tokenizer, iter(taken), min(steps, 1), **kw)

    monkeypatch.setattr(make_tiny_model, "sft", spy)
    out = make_tiny_model.main(["--corpus", corpus, "--out", str(tmp_path / "m"), "--corpus-size", "600", "--sft-steps", "3",
                                "--reading-corpus", str(reading), "--reading-steps", "5", "--reading-lr", "2e-3", "--reading-mix", "0.5"])
    (reading_steps, reading_lr, reading_items), (sft_steps, sft_lr, mixed_items) = seen
    assert (reading_steps, reading_lr, reading_items) == (5, 2e-3, 40), "the reading stage: the reading corpus alone, at its rate"
    assert (sft_steps, sft_lr) == (3, 3e-3) and 8 <= mixed_items <= 32, f"the warm start: {mixed_items} of 40 from the reading corpus"
    assert set(out["timings"]) >= {"reading", "sft"}
