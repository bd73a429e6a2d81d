"""Progress reports from inside a compiled stream, through one fixed host callback.

``progress=`` (a callable ``progress(done, total)``) is called from inside the scan through one
module-level host callback (:func:`_forward_progress`) that forwards to the callables of the
runs under way (:class:`_ProgressRun`, registered by :func:`progress_run`), so the compiled
stream depends only on whether progress is on. Reports come every ``⌈b/u⌉`` of a device's ``b``
scan steps (``u = 64 / D`` updates per side and device, D devices), about 128 over a long run,
but no more often than every 2^22 draws of a device (:data:`_PROGRESS_MIN_DRAWS`), which keeps
their cost small on short runs (:func:`report_every`). The scan is then split into groups of
steps with a report after each (:func:`scan_with_reports`): the same steps in the same order,
so the same counts and bound as without progress.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

_PROGRESS_UPDATES = 64
"""Progress reports per side (over all devices together) of a long streamed run with
``progress``: about 128 calls of the user's ``progress`` over both sides."""

_PROGRESS_MIN_DRAWS = 2**22
"""Draws a device makes between two reports, at least (about 30 ms of work on the 2-core CPU).
A report stops the device for a host round trip: ~0.06 ms on that machine idle, ~2 ms when other
processes load it. With a report every 2^21 draws (96 reports at n = 1e8 per side on 2 devices), 1e8
per side took +0.8% longer with progress at load ≈ 2 and +3.9% at load 3–5 (median of 8 paired runs
each, ``benchmarks/performance/audit_memory.py``); with 2^22 (48 reports) −1.0%
at load 2.5–5, within noise. Reports on 2 devices: n = 1e7 per side 8, 1e8 48, 1e9 128."""


class _ProgressRun:
    """Host state of one streamed run with a ``progress`` callable.

    It holds the real chunks each device has reported done, per side. The reports may arrive
    from several runtime threads, in any order: each (side, device) keeps its largest count, so
    ``done`` never decreases.
    """

    def __init__(self, sink: Callable, sizes: tuple[int, int], chunk: int):
        self.sink, self.total, self.chunk = sink, sum(sizes), chunk
        self.chunks: dict[tuple[int, int], int] = {}
        self.reported = 0
        self.error: BaseException | None = None
        self.lock = threading.Lock()

    def update(self, side: int, first: int, chunks: int) -> None:
        with self.lock:
            key = (side, first)
            self.chunks[key] = max(self.chunks.get(key, 0), chunks)
            done = min(self.chunk * sum(self.chunks.values()), self.total)
            if done > self.reported:
                self.reported = done
                self._call(done)

    def finish(self) -> None:
        with self.lock:
            if self.reported < self.total:
                self.reported = self.total
                self._call(self.total)

    def _call(self, done: int) -> None:
        if self.error is not None:
            return
        try:
            self.sink(done, self.total)
        except BaseException as err:  # re-raised on the caller's thread, after the run
            self.error = err


_PROGRESS_RUNS: dict[int, _ProgressRun] = {}
_PROGRESS_IDS = itertools.count()


def _forward_progress(tag, first, chunks, _after=None) -> None:
    """The one host callback every compiled stream calls: a device's report to its run.

    It is one callback so that a new ``progress`` callable never recompiles it; it forwards a
    device's report to the run that ``tag // 2`` names. ``_after`` is only a data dependency
    (see :func:`scan_with_reports`).
    """
    run = _PROGRESS_RUNS.get(int(tag) // 2)
    if run is not None:
        run.update(int(tag) % 2, int(first), int(chunks))


def report_every(ids, chunk: int, mesh) -> int:
    """Scan steps of a device between two reports (static).

    That is ``⌈b / u⌉`` of its ``b`` steps, ``u = max(1, _PROGRESS_UPDATES // D)``, but at least
    ``⌈_PROGRESS_MIN_DRAWS / chunk⌉`` (and at most ``b``).
    """
    b = ids.shape[0]
    return max(
        -(-b // max(1, _PROGRESS_UPDATES // mesh.size)), min(-(-_PROGRESS_MIN_DRAWS // chunk), b)
    )


def scan_with_reports(step, carry, ids, tag, full: int, *, every: int):
    """``lax.scan(step, carry, ids)[0]`` with a progress report after every ``every`` steps.

    It is an outer scan over groups of ``every`` ids, each an inner scan of ``step`` followed by one
    host callback (:func:`_forward_progress`) with the device's real chunks done (padding chunks,
    ids ≥ ``full``, are not counted); the ``b mod every`` last ids are one more group. The steps run
    in the same order as in the plain scan, so the result is the same; the callback sits outside the
    inner loop, which a callback inside it (under a ``lax.cond``) had slowed by about 5% even when
    it fired only once per device (n = 3e7 per side on 2 CPU devices, median of 10 paired runs).
    """
    first = ids[0]
    groups, rest = divmod(ids.shape[0], every)

    def group(carry, group_ids):
        carry = lax.scan(step, carry, group_ids)[0]
        done = jnp.clip(jnp.minimum(group_ids[-1] + 1, full) - first, 0)
        # The carry's outside count as an operand: the report then waits for the group's
        # draws (an unordered callback on ids alone was run before them).
        jax.debug.callback(_forward_progress, tag, first, done, carry[1])
        return carry, None

    if groups:
        carry = lax.scan(group, carry, ids[: groups * every].reshape(groups, every))[0]
    if rest:
        carry = group(carry, ids[groups * every :])[0]
    return carry


@contextlib.contextmanager
def progress_run(progress: Callable | None, sizes: tuple[int, int], chunk: int):
    """Registers a run for the duration of the block; yields its id (0 without ``progress``).

    On leaving, it reports ``done = total`` once and re-raises what ``progress`` raised.
    """
    if progress is None:
        yield 0
        return
    run_id = next(_PROGRESS_IDS) % 2**30  # tag = 2 · id + side fits int32
    run = _PROGRESS_RUNS[run_id] = _ProgressRun(progress, sizes, chunk)
    try:
        yield run_id
        jax.effects_barrier()
    finally:
        del _PROGRESS_RUNS[run_id]
    run.finish()
    if run.error is not None:
        raise run.error


LOG_INTERVAL = 30.0
"""Seconds between two progress lines when stderr is not a terminal (a CI log, a file)."""


class _Lines:
    """A stream for tqdm when stderr is not a terminal: each refresh becomes one whole line.

    tqdm redraws its bar in place with carriage returns, and clears it with blanks at the end;
    in a log those glue the bar to the next line of output. Here every non-blank refresh is
    written as a line of its own, and the blanks are dropped.
    """

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        for part in text.replace("\n", "\r").split("\r"):
            if part.strip():
                self.stream.write(part.rstrip() + "\n")

    def flush(self) -> None:
        self.stream.flush()


def _terminal_like(stream) -> bool:
    """Whether ``stream`` shows carriage returns as a redraw: a terminal, or a notebook's."""
    if type(stream).__module__.startswith("ipykernel"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def progress_bar(total: int, progress: bool | None, desc: str, unit: str = " outputs"):
    """A tqdm bar on stderr for host-side loops.

    ``progress=None``: shown only once the work has taken 2 s; ``True``: at once; ``False``:
    never. When stderr is not a terminal (nor a notebook), the bar is written as whole lines,
    one every :data:`LOG_INTERVAL` seconds at most, so that a log never glues it to the output.
    """
    from tqdm import tqdm  # the text bar on stderr, in notebooks too (no ipywidgets needed)

    stderr = sys.stderr
    log = not _terminal_like(stderr)
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=True,
        delay=0.0 if progress else 2.0,
        disable=progress is False,
        leave=False,
        dynamic_ncols=not log,
        file=_Lines(stderr) if log else stderr,
        mininterval=LOG_INTERVAL if log else 0.1,
        ncols=100 if log else None,
    )
