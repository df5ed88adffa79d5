"""The host's update lock (TANDEM_UPDATE_LOCK, update_lock.py): an update waits while another engine
holds the lock (here: another open file of the same lock, as another process would hold it), says how
long, and releases it when done; an update with overlap lets its engine's rows decode while it waits
(and counts that decoding in its overlap's decode_s)."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest

from conftest import PLAN_PROMPT, TOOL_PROMPT, UPDATE, Run, as_train, request
from tandem_engine import update_lock


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = str(tmp_path / "updates.lock")
    monkeypatch.setattr(update_lock, "PATH", path)
    return path


def held_elsewhere(path: str):
    """Takes the lock as another engine would (its own open file description) -> its fd."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def is_free(path: str) -> bool:
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def samples_of(eng) -> list[dict]:
    s = eng.gen("p", PLAN_PROMPT, seed=0, max_new_tokens=8)[0]
    return [as_train(s, adv, f"s{i}") for i, adv in enumerate([1.0, -1.0])]


def test_an_update_waits_for_the_lock_and_releases_it(eng, tiny_model, tmp_path, lock_file):
    eng.load_full("p", tiny_model, tmp_path)
    samples = samples_of(eng)
    other = held_elsewhere(lock_file)
    threading.Timer(0.5, lambda: (fcntl.flock(other, fcntl.LOCK_UN), os.close(other))).start()
    t0 = time.perf_counter()
    r = eng.update("p", 0, samples, tmp_path)
    assert r["ok"], r
    assert time.perf_counter() - t0 >= 0.5 and r["result"]["update_lock_wait_s"] >= 0.45
    assert is_free(lock_file), "released once the update is done"
    # A replayed update (already applied) trains nothing and takes no lock.
    other = held_elsewhere(lock_file)
    try:
        replay = eng.update("p", 0, samples, tmp_path)["result"]
        assert replay["replayed"] and "update_lock_wait_s" not in replay
    finally:
        os.close(other)


def test_an_update_with_overlap_lets_rows_decode_while_it_waits(eng, tiny_model, tmp_path, lock_file):
    eng.load_lora("p", tiny_model, tmp_path)
    samples = samples_of(eng)
    other = held_elsewhere(lock_file)
    run = Run(eng.engine)
    try:
        update = run.submit("update", policy="p", from_version=0, samples=samples, checkpoint_root=str(tmp_path),
                            **{**UPDATE, "overlap": True})
        rows = run.submit("generate", requests=[request("p", TOOL_PROMPT, 0, max_new_tokens=16, ignore_eos=True)])
        t0 = time.perf_counter()
        for _ in range(200):
            if len(rows) == 2:
                break
            eng.engine.tick()
        rows_s = time.perf_counter() - t0
        assert len(rows) == 2 and rows[1]["ok"], ("the rows were answered while the update waited", rows)
        assert len(update) == 1, "the update waits for the lock"
    finally:
        os.close(other)  # released (closing the file description drops its flock)
    (result,) = run.until(update)
    assert result["version"] == 1 and result["update_lock_wait_s"] > 0
    # Every tick while it waited decoded (between two attempts at the lock, or as the tick's own
    # step): all of that is the overlap's decoding, not the half that the tick's own steps are.
    assert result["overlap"]["decode_s"] >= 0.8 * rows_s, (result["overlap"], rows_s)
    assert is_free(lock_file)


def test_no_lock_file_no_lock(eng, tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(update_lock, "PATH", None)
    eng.load_full("p", tiny_model, tmp_path)
    r = eng.update("p", 0, samples_of(eng), tmp_path)["result"]
    assert "update_lock_wait_s" not in r


def test_a_lock_file_that_cannot_be_opened_fails_the_update_by_name(eng, tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(update_lock, "PATH", str(tmp_path / "missing" / "updates.lock"))
    eng.load_lora("p", tiny_model, tmp_path)
    r = eng.update("p", 0, samples_of(eng), tmp_path, overlap=True)
    assert not r["ok"] and r["error"]["type"] == "UpdateLock" and "missing/updates.lock" in r["error"]["message"]
    assert eng.engine.serving == {}, "the serving copy made for the overlap is gone"
    monkeypatch.setattr(update_lock, "PATH", None)
    assert eng.update("p", 0, samples_of(eng), tmp_path)["ok"], "the policy is as it was"
