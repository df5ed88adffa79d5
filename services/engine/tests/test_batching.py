"""Continuous batching (tandem_engine/batching.py): requests join the running decode batch between steps
and are answered when their own rows finish; ops that change a policy wait for the rows in flight."""

from __future__ import annotations

import pytest
import torch

from conftest import OPTIM, PLAN_PROMPT, SAMPLING, TOOL_PROMPT, UPDATE, request, same_tokens

LONG_PROMPT = [{"role": "user", "content": "Grid:\n" + "\n".join(["S.#.G.#."] * 6) + "\nWhich moves reach G? " * 3}]


def submit(eng, rid, **req):
    """Submit one generate op in the in-process engine; -> the box its answer lands in."""
    box = []
    eng.engine.submit({"id": rid, "op": "generate", "requests": [{**SAMPLING, "version": 0, **req}]}, box.append)
    return box


def ticks_until(eng, *boxes, limit=500):
    n = 0
    while not all(boxes):
        eng.engine.tick()
        n += 1
        assert n < limit, "never answered"
    return n


def tokens(box):
    assert box[0]["ok"], box[0]
    return [s["response_ids"] for s in box[0]["result"]["results"][0]["samples"]]


def assert_joining_gets_what_alone_gets(eng, reqs):
    """Each request sampled alone, then all of them again, each joining the running decode two steps
    after the previous one: every request gets the same tokens both ways."""
    alone = [tokens(submit_and_wait(eng, r)) for r in reqs]
    boxes = []
    for r in reqs:
        boxes.append(submit(eng, len(boxes), **r))
        eng.engine.tick()
        eng.engine.tick()
    ticks_until(eng, *boxes)
    assert same_tokens([tokens(b) for b in boxes], alone)


def test_requests_joining_mid_decode_get_the_tokens_they_get_alone(eng, tiny_model, tmp_path):
    """Greedy and seeded rows, of different prompt lengths and lengths, joining at different steps (merges,
    compactions, trimmed columns) sample exactly what each samples alone."""
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    reqs = [dict(policy="gen", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=30),
            dict(policy="gen", messages=TOOL_PROMPT, n=3, seed=5, max_new_tokens=4),
            dict(policy="gen", messages=LONG_PROMPT, n=1, temperature=0.0, max_new_tokens=12),
            dict(policy="gen", messages=TOOL_PROMPT, n=2, seed=9, top_k=20, max_new_tokens=9)]
    assert_joining_gets_what_alone_gets(eng, reqs)
    assert not eng.engine.busy()


def submit_and_wait(eng, req):
    box = submit(eng, "alone", **req)
    ticks_until(eng, box)
    return box


def test_mixed_adapters_joining_mid_decode(eng, tiny_model, tmp_path):
    for name in ("a", "b"):
        eng.load_lora(name, tiny_model, tmp_path / name)
    model = eng.engine.policies["a"].backbone.model
    with torch.no_grad():  # distinct non-zero adapters (a fresh one has lora_B = 0)
        torch.manual_seed(0)
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn_like(p) * 0.1)
    reqs = [dict(policy="a", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=20),
            dict(policy="b", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=20)]
    alone = [tokens(submit_and_wait(eng, r)) for r in reqs]
    assert alone[0] != alone[1]  # the adapters differ
    first = submit(eng, 1, **reqs[0])
    for _ in range(5):
        eng.engine.tick()
    second = submit(eng, 2, **reqs[1])
    ticks_until(eng, first, second)
    assert same_tokens([tokens(first), tokens(second)], alone)


def test_a_long_request_does_not_delay_a_short_one(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    long = submit(eng, "long", policy="gen", messages=LONG_PROMPT, n=4, seed=1, max_new_tokens=200)
    for _ in range(3):
        eng.engine.tick()
    short = submit(eng, "short", policy="gen", messages=PLAN_PROMPT, n=1, seed=2, max_new_tokens=3)
    # Admitted at the next step: its first token comes from the prefill, then one token per step.
    assert ticks_until(eng, short) <= 3
    assert not long, "the long request is still decoding"
    ticks_until(eng, long)


def test_cancel_stops_a_request_and_the_engine_goes_on(eng, tiny_model, tmp_path):
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    doomed = submit(eng, "doomed", policy="gen", messages=LONG_PROMPT, n=3, seed=1, max_new_tokens=500)
    other = submit(eng, "other", policy="gen", messages=PLAN_PROMPT, n=1, temperature=0.0, max_new_tokens=40)
    eng.engine.tick()
    assert eng.ok("cancel", target="doomed") == {"cancelled": True}
    assert doomed[0]["ok"] is False and doomed[0]["error"]["type"] == "Cancelled"
    assert eng.engine.scheduler.counts()["live_rows"] <= 1  # only `other` decodes on
    ticks_until(eng, other)
    assert same_tokens(tokens(other), tokens(submit_and_wait(eng, dict(policy="gen", messages=PLAN_PROMPT, n=1,
                                                                        temperature=0.0, max_new_tokens=40))))
    assert eng.ok("cancel", target="doomed") == {"cancelled": False}  # already gone: nothing to do
    assert not eng.engine.busy()


def test_ops_that_change_a_policy_wait_for_the_rows_in_flight(eng, tiny_model, tmp_path):
    """An update (or unload, or load) waits until no rows decode; requests that came after it wait for it;
    ping and stats are answered at once."""
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    first = submit(eng, 1, policy="gen", messages=PLAN_PROMPT, n=2, seed=3, max_new_tokens=15)
    eng.engine.tick()
    sample = {"sample_id": "s", "prompt_ids": [1, 2, 3], "response_ids": [4, 5], "logprobs": [-1.0, -1.0],
              "advantage": 1.0}
    update, later, ping = [], [], []
    eng.engine.submit({"id": "u", "op": "update", "policy": "gen", "from_version": 0, "samples": [sample],
                       "checkpoint_root": str(tmp_path / "ck"), **UPDATE}, update.append)
    later = submit(eng, 2, policy="gen", messages=PLAN_PROMPT, n=1, seed=3, max_new_tokens=5)  # wants version 0
    eng.engine.submit({"id": "p", "op": "ping"}, ping.append)
    assert ping and ping[0]["result"]["policies"] == {"gen": 0} and not update
    ticks_until(eng, first, update, later)
    assert first[0]["ok"] and update[0]["ok"] and update[0]["result"]["version"] == 1
    assert later[0]["ok"] is False and later[0]["error"]["type"] == "VersionMismatch"  # it came after the update
    # Asynchronous training: a request for version 0 that accepts one newer version is served by
    # version 1, and says so; a request ahead of the policy never is.
    newer = eng.ok("generate", requests=[request("gen", PLAN_PROMPT, version=0, newer_within=1, max_new_tokens=3, seed=3)])
    assert newer["results"][0]["version"] == 1
    for version, within in [(0, 0), (2, 5)]:
        resp = eng.call("generate", requests=[request("gen", PLAN_PROMPT, version=version, newer_within=within, max_new_tokens=3)])
        assert resp["ok"] is False and resp["error"]["type"] == "VersionMismatch", (version, within)
    assert "request wants 2 to 7" in resp["error"]["message"]
    bad = eng.call("generate", requests=[request("gen", PLAN_PROMPT, version=1, newer_within=-1)])
    assert bad["ok"] is False and "newer_within >= 0" in bad["error"]["message"]
    stats = eng.ok("stats")
    assert stats["live_rows"] == stats["waiting_rows"] == stats["pending_ops"] == 0
    assert stats["generated_tokens"] >= 2 and stats["steps"] > 0 and stats["busy_seconds"] > 0


def test_a_policy_loads_on_first_use(eng, tiny_model, tmp_path):
    load = dict(kind="full", model_path=tiny_model, checkpoint_root=str(tmp_path / "ck"), optim=OPTIM)
    res = eng.ok("generate", requests=[request("fresh", PLAN_PROMPT, max_new_tokens=3, load=load)])
    assert res["results"][0]["version"] == 0 and "fresh" in eng.engine.policies
    resp = eng.call("generate", requests=[request("fresh", PLAN_PROMPT, version=2, load=load)])
    assert resp["ok"] is False and resp["error"]["type"] == "VersionMismatch"
    resp = eng.call("generate", requests=[request("other", PLAN_PROMPT, load={**load, "kind": "sideways"})])
    assert resp["ok"] is False and resp["error"]["type"] == "BadRequest"


def test_a_wave_of_prompts_is_prefilled_over_several_steps(eng, tiny_model, tmp_path, monkeypatch):
    """With room for one prompt per prefill, three requests join one per step, decoding in between,
    and sample what they sample alone."""
    from tandem_engine import batching

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    reqs = [dict(policy="gen", messages=m, n=2, temperature=0.0, max_new_tokens=8)
            for m in (PLAN_PROMPT, TOOL_PROMPT, LONG_PROMPT)]
    alone = [tokens(submit_and_wait(eng, r)) for r in reqs]
    monkeypatch.setattr(batching, "PREFILL_TOKENS", 1)
    before = eng.ok("stats")
    boxes = [submit(eng, i, **r) for i, r in enumerate(reqs)]
    eng.engine.tick()
    assert eng.engine.scheduler.counts() == {"live_rows": 2, "waiting_rows": 4}  # one prompt (n = 2) joined
    ticks_until(eng, *boxes)
    after = eng.ok("stats")
    assert after["prefills"] - before["prefills"] == 3 and same_tokens([tokens(b) for b in boxes], alone)


def test_newcomers_join_in_free_slots_without_copying_the_batch(eng, tiny_model, tmp_path):
    """Rows join in the buffers' spare slots, then in the slot of a row that finished mid-batch: no copy of
    the live rows' cache, and every row samples what it samples alone."""
    eng.load_full("gen", tiny_model, tmp_path / "ck")
    long = dict(policy="gen", messages=LONG_PROMPT, n=2, temperature=0.0, max_new_tokens=40)
    short = dict(policy="gen", messages=PLAN_PROMPT, n=1, seed=4, max_new_tokens=3)
    mid = dict(policy="gen", messages=TOOL_PROMPT, n=1, temperature=0.0, max_new_tokens=30)
    late = dict(policy="gen", messages=TOOL_PROMPT, n=1, seed=8, max_new_tokens=10)
    alone = [tokens(submit_and_wait(eng, r)) for r in (long, short, mid, late)]
    copies = eng.ok("stats")["cache_copies"]
    boxes = [submit(eng, "long", **long)]
    eng.engine.tick()  # a batch of 2 rows, in buffers with 4 slots
    boxes += [submit(eng, "short", **short), submit(eng, "mid", **mid)]
    eng.engine.tick()  # short and mid take slots 2 and 3
    ticks_until(eng, boxes[1])
    batch = next(iter(eng.engine.scheduler.batches.values()))
    assert len(batch.rows) == 4 and batch.rows[2].finish is not None and batch.live == 3  # a dead row between live ones
    boxes.append(submit(eng, "late", **late))
    eng.engine.tick()  # late takes short's slot, between live rows
    assert batch.rows[2].finish is None and batch.live == 4
    ticks_until(eng, *boxes)
    assert same_tokens([tokens(b) for b in boxes], alone)
    assert eng.ok("stats")["cache_copies"] == copies


def test_rows_that_do_not_fit_keep_their_prefill(eng, tiny_model, tmp_path, monkeypatch):
    """With room for 3 rows, a request of 3 joining a batch of 2 is prefilled once: one row joins, two wait
    with their prefill and join as rows finish; all sample what they sample alone. Cancelling a request
    drops its waiting rows too."""
    from tandem_engine import batching

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    first = dict(policy="gen", messages=LONG_PROMPT, n=2, seed=3, max_new_tokens=12)
    second = dict(policy="gen", messages=PLAN_PROMPT, n=3, seed=6, max_new_tokens=10)
    alone = [tokens(submit_and_wait(eng, r)) for r in (first, second)]
    monkeypatch.setattr(batching, "GEN_BATCH_ROWS", 3)
    before = eng.ok("stats")
    boxes = [submit(eng, 1, **first)]
    eng.engine.tick()
    boxes.append(submit(eng, 2, **second))
    eng.engine.tick()
    assert eng.engine.scheduler.counts() == {"live_rows": 3, "waiting_rows": 2}
    ticks_until(eng, *boxes)
    after = eng.ok("stats")
    assert after["prefills"] - before["prefills"] == 2 and same_tokens([tokens(b) for b in boxes], alone)

    doomed = submit(eng, 3, policy="gen", messages=LONG_PROMPT, n=2, seed=1, max_new_tokens=50)
    eng.engine.tick()
    submit(eng, 4, policy="gen", messages=PLAN_PROMPT, n=3, seed=2, max_new_tokens=50)
    eng.engine.tick()
    assert eng.engine.scheduler.counts() == {"live_rows": 3, "waiting_rows": 2}
    assert eng.ok("cancel", target=4) == {"cancelled": True}
    assert eng.engine.scheduler.counts() == {"live_rows": 2, "waiting_rows": 0}
    ticks_until(eng, doomed)
    assert not eng.engine.busy()


def test_the_bytes_per_token_are_those_of_the_cache(eng, tiny_model, tmp_path):
    """The budget's unit, from the model's config, is what a prefill's cache takes per row and column."""
    from tandem_engine.generation import Row, row_generator, prefill

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["gen"].backbone
    rows = [Row(list(range(3, 3 + n)), row_generator(bb.device, 0, 0)) for n in (5, 9)]
    _, cache, attn, _ = prefill(bb, rows)
    total = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert total == attn.numel() * bb.kv_bytes_per_token


@pytest.mark.fp32
def test_the_kv_cache_stays_within_its_budget(eng, tiny_model, tmp_path, monkeypatch):
    """With a budget for about three rows, eight rows of four requests wait for memory, never take more than
    the budget between steps, and sample what they sample alone; the stats say what the cache took."""
    from tandem_engine import kv_cache

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["gen"].backbone
    reqs = [dict(policy="gen", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=30),
            dict(policy="gen", messages=TOOL_PROMPT, n=3, seed=5, max_new_tokens=20),
            dict(policy="gen", messages=LONG_PROMPT, n=1, temperature=0.0, max_new_tokens=12),
            dict(policy="gen", messages=TOOL_PROMPT, n=2, seed=9, top_k=20, max_new_tokens=25)]
    alone = [tokens(submit_and_wait(eng, r)) for r in reqs]
    longest = max(len(bb.render(r["messages"])) + r["max_new_tokens"] for r in reqs)
    budget = 3 * longest * bb.kv_bytes_per_token
    monkeypatch.setattr(kv_cache, "KV_CACHE_BYTES", budget)
    before = eng.ok("stats")
    boxes, peak = [], 0
    for r in reqs:
        boxes.append(submit(eng, len(boxes), **r))
        eng.engine.tick()
        peak = max(peak, eng.engine.scheduler.kv_bytes())
    while not all(boxes):
        eng.engine.tick()
        peak = max(peak, eng.engine.scheduler.kv_bytes())
        assert eng.engine.scheduler.kv_bytes() <= budget
    assert same_tokens([tokens(b) for b in boxes], alone)
    after = eng.ok("stats")
    assert after["memory_waits"] > before["memory_waits"] and 0 < peak <= budget
    assert after["kv_budget_bytes"] == budget and after["kv_cache_bytes"] == 0 and not eng.engine.busy()


def test_a_sample_larger_than_the_whole_budget_is_refused(eng, tiny_model, tmp_path, monkeypatch):
    """A request one row of which needs more KV cache than the budget fails at once, naming the sizes and
    the knob; the engine serves the next request."""
    from tandem_engine import kv_cache

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["gen"].backbone
    need = len(bb.render(PLAN_PROMPT)) + 40
    monkeypatch.setattr(kv_cache, "KV_CACHE_BYTES", (need - 1) * bb.kv_bytes_per_token)
    box = submit(eng, "big", policy="gen", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=40)
    assert box and not box[0]["ok"] and box[0]["error"]["type"] == "KvCacheTooSmall"
    assert "40 new tokens" in box[0]["error"]["message"] and "TANDEM_KV_CACHE_GB" in box[0]["error"]["message"]
    assert tokens(submit_and_wait(eng, dict(policy="gen", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=39)))


def test_the_budget_knob_is_checked(monkeypatch):
    from tandem_engine.kv_cache import _env_gb

    monkeypatch.setenv("TANDEM_KV_CACHE_GB", "1.5")
    assert _env_gb("TANDEM_KV_CACHE_GB") == 3 * 2**29
    for bad in ("0", "-2", "lots"):
        monkeypatch.setenv("TANDEM_KV_CACHE_GB", bad)
        with pytest.raises(ValueError, match=f"TANDEM_KV_CACHE_GB must be a positive number of GB, not '{bad}'"):
            _env_gb("TANDEM_KV_CACHE_GB")


def test_a_failing_step_fails_the_requests_in_flight_not_the_engine(eng, tiny_model, tmp_path, monkeypatch):
    """Out of memory in a decoding step: the requests with rows in flight fail with it, their rows are
    dropped, and the engine serves the next request."""
    from tandem_engine import batching

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    req = dict(policy="gen", messages=PLAN_PROMPT, n=2, temperature=0.0, max_new_tokens=20)
    alone = tokens(submit_and_wait(eng, req))
    boxes = [submit(eng, "a", **req)]
    eng.engine.tick()
    boxes.append(submit(eng, "b", **dict(req, messages=TOOL_PROMPT)))

    def oom(self):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with monkeypatch.context() as m:
        m.setattr(batching.DecodeBatch, "step", oom)
        eng.engine.tick()
    assert [b[0]["error"]["type"] for b in boxes] == ["OutOfMemoryError", "OutOfMemoryError"]
    assert not eng.engine.busy() and eng.engine.scheduler.kv_bytes() == 0
    assert tokens(submit_and_wait(eng, req)) == alone


def test_the_bytes_per_token_of_qwen3_8b():
    """The figure the docs give for Qwen3-8B's shape (36 layers, 8 KV heads of 128 dims, bf16): 144 KiB."""
    from types import SimpleNamespace

    from transformers import Qwen3Config

    from tandem_engine.kv_cache import kv_bytes_per_token

    cfg = Qwen3Config(hidden_size=4096, num_attention_heads=32, num_hidden_layers=36, num_key_value_heads=8, head_dim=128)
    emb = torch.nn.Embedding(4, 4, dtype=torch.bfloat16)
    assert kv_bytes_per_token(SimpleNamespace(config=cfg, get_input_embeddings=lambda: emb)) == 144 * 1024


def test_rows_waiting_for_memory_take_finished_rows_slots_one_by_one(eng, tiny_model, tmp_path, monkeypatch):
    """A batch of three rows fills a budget of three rows; a request of three waits for memory; when the
    shortest row finishes, its slot takes one of them at the next step, without a copy of the cache, and
    the others wait on; every row samples what it samples alone."""
    from tandem_engine import kv_cache

    eng.load_full("gen", tiny_model, tmp_path / "ck")
    bb = eng.engine.policies["gen"].backbone
    greedy = dict(policy="gen", temperature=0.0, ignore_eos=True)
    short, long = dict(greedy, messages=PLAN_PROMPT, n=1, max_new_tokens=5), dict(greedy, messages=LONG_PROMPT, n=2, max_new_tokens=30)
    late = dict(greedy, messages=TOOL_PROMPT, n=3, max_new_tokens=10)
    alone = [tokens(submit_and_wait(eng, r)) for r in (short, long, late)]
    width = max(len(bb.render(r["messages"])) for r in (short, long))
    monkeypatch.setattr(kv_cache, "KV_CACHE_BYTES", 3 * (width + 30) * bb.kv_bytes_per_token)
    before = eng.ok("stats")
    boxes = [submit(eng, "short", **short), submit(eng, "long", **long)]
    eng.engine.tick()  # one prefill, one batch of three rows at the budget
    boxes.append(submit(eng, "late", **late))
    eng.engine.tick()
    assert eng.engine.scheduler.counts() == {"live_rows": 3, "waiting_rows": 3}
    ticks_until(eng, boxes[0])
    eng.engine.tick()  # short's slot takes one of late's rows
    assert eng.engine.scheduler.counts() == {"live_rows": 3, "waiting_rows": 2}
    ticks_until(eng, *boxes)
    assert same_tokens([tokens(b) for b in boxes], alone)
    after = eng.ok("stats")
    assert after["memory_waits"] - before["memory_waits"] == 1 and after["cache_copies"] == before["cache_copies"]
