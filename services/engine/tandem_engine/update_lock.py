"""The host's update lock: engines given one lock file (TANDEM_UPDATE_LOCK) run their updates one at a
time, so that their activation peaks never add up.

A CPU update's peak is many times its model (SmolLM2-135M's LoRA updates over 1.5k-token prompts
reached 11-13 GB of resident memory, where the model is 0.5 GB), and it is transient: the engine hands
the memory back when the update ends (server.free_memory). Two engines on one 24 GB host whose
updates overlapped filled it and thrashed (2026-12-02). With the lock, an engine's update waits for
the other's to end and its memory to be handed back; generation is not held: an update with
`overlap` lets its rows decode while it waits. The lock is the kernel's (flock), so an engine that
dies holding it frees it. Replicas of one policy never take it (their steps wait on each other's
collectives: one of them waiting for the lock while another holds it would deadlock).
"""

from __future__ import annotations

import fcntl
import os
import time

from .errors import EngineError

PATH = os.environ.get("TANDEM_UPDATE_LOCK") or None


class Held:
    """The lock, held: release() once the update's memory is handed back. `waited_s`: the wait for it."""

    def __init__(self, fd: int, waited_s: float):
        self.fd, self.waited_s = fd, waited_s

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def acquire(wait):
    """A generator that returns the lock held (None when no lock file is set). `wait`: None to block
    until it is free (an update alone: nothing else runs in its engine meanwhile); else a generator
    function run between two attempts (an update with overlap: its engine's rows decode meanwhile)."""
    if PATH is None:
        return None
    try:
        fd = os.open(PATH, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise EngineError("UpdateLock", f"TANDEM_UPDATE_LOCK={PATH}: cannot open it ({e.strerror})") from e
    t0 = time.perf_counter()
    try:
        if wait is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    yield from wait()
    except BaseException:
        os.close(fd)
        raise
    return Held(fd, time.perf_counter() - t0)
