"""Two host computations at once: one in a worker thread, one in the caller's.

numpy's sorts, copies and jax's device-to-host copies release the GIL, so on a machine with two
or more cores the two sides of a pilot (x and x') can be sorted side by side: a streamed bound's
two pilots of 2^16 float32 draws are sorted in 1.4 ms rather than 2.8 ms on the 2-core CPU of
``benchmarks/LOG.md`` ("Odd inputs and a faster pilot"). One worker thread,
made on first use and kept for the process; below :data:`MIN_ITEMS` values a side the thread's
hand-off costs more than it saves and both run here.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["MIN_ITEMS", "both"]

T = TypeVar("T")
U = TypeVar("U")

MIN_ITEMS = 2**14
"""Values a side below which :func:`both` runs both calls in the caller's thread."""

_CORES = os.cpu_count() or 1  # read once: the call takes 0.1 ms
_lock = threading.Lock()
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_local = threading.local()  # ``inside`` is set in the worker: a nested call runs inline


def _mark_worker() -> None:
    _local.inside = True


def _worker() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="rdpjax-host", initializer=_mark_worker
            )
        return _pool


def _forget_worker() -> None:
    # A forked child has the pool object but not its thread: it makes its own on first use.
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_worker)


def both(fn: Callable[[T], U], a: T, b: T, *, items: int) -> tuple[U, U]:
    """``(fn(a), fn(b))``, ``fn(a)`` in the worker thread when ``items`` (per call) is large.

    Exceptions propagate as from ``(fn(a), fn(b))`` (``fn(a)``'s if both raise). Only for pure
    ``fn`` whose heavy part releases the GIL; on one core (``os.cpu_count()``) nothing is
    gained, and both run here, as they do when ``fn`` itself calls :func:`both` (the one
    worker would wait on itself).
    """
    if items < MIN_ITEMS or _CORES < 2 or getattr(_local, "inside", False):
        return fn(a), fn(b)
    future = _worker().submit(fn, a)
    try:
        second = fn(b)
    finally:
        first = future.result()
    return first, second
