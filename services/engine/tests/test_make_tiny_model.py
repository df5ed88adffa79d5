"""make_tiny_model.py's reading stages: one per reading corpus, each on its corpus and the ones
before it, then the task warm start with the reading corpora at their share."""

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


def test_union_draws_each_stream_equally():
    streams = [iter(lambda: "a", None), iter(lambda: "b", None), iter(lambda: "c", None)]
    u = make_tiny_model.union(streams, random.Random(0))
    drawn = [next(u) for _ in range(3000)]
    assert all(abs(drawn.count(x) / 3000 - 1 / 3) < 0.03 for x in "abc"), {x: drawn.count(x) for x in "abc"}


def test_a_build_with_reading_corpora_trains_one_stage_each_then_the_warm_start(tmp_path, monkeypatch):
    corpus = os.path.join(TESTS_DIR, "fixtures", "planpath_corpus.jsonl")
    with open(corpus) as f:
        messages = json.loads(f.readline())["messages"]
    # Two reading corpora of one transcript each, recognisable by their replies.
    paths = []
    for name in ("PLAN", "TOOL"):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"messages": [*messages[:-1], {"role": "assistant", "content": name}]}) + "\n")
        paths.append(str(path))
    seen = []
    real_sft = make_tiny_model.sft

    def spy(model, tokenizer, examples, steps, **kw):
        taken = [reply for _, reply in (next(examples) for _ in range(200))]
        seen.append((steps, kw["lr"], {r: taken.count(r) for r in ("PLAN", "TOOL")}))
        real_sft(model, tokenizer, iter([(messages[:-1], r) for r in taken]), min(steps, 1), **kw)

    monkeypatch.setattr(make_tiny_model, "sft", spy)
    out = make_tiny_model.main(["--corpus", corpus, "--out", str(tmp_path / "m"), "--corpus-size", "600", "--sft-steps", "3",
                                "--reading-corpus", paths[0], "--reading-corpus", paths[1], "--reading-steps", "5",
                                "--reading-lr", "2e-3", "--reading-mix", "0.5"])
    first, second, warm = seen
    assert first == (5, 2e-3, {"PLAN": 200, "TOOL": 0}), "stage 1: the first corpus alone, at the reading rate"
    assert second[:2] == (5, 2e-3) and 70 <= second[2]["TOOL"] <= 130 and sum(second[2].values()) == 200, f"stage 2: both corpora, equally: {second}"
    assert warm[:2] == (3, 3e-3) and 60 <= sum(warm[2].values()) <= 140, f"the warm start: half from the reading corpora: {warm}"
    assert set(out["timings"]) >= {"reading", "sft"}
