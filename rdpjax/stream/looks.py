"""The looks driver: two sides drawn batch by batch, fed to a statistic, looked at on a schedule.

A sequential audit draws outputs on x and x' in batches whose ends (outputs per side) are fixed
before any draw, adds every pair of batches to a statistic, and at some of those ends, its
*looks*, asks the statistic whether to stop. :func:`run_looks` is that loop, once, for every
sequential statistic: the Rényi looks (:mod:`rdpjax.auditing.sequential`) and the betting test
(:mod:`rdpjax.rejection.betting`) are the same driver over two accumulators. What makes each
valid is stated with its accumulator; the driver only guarantees the order of the draws, which
both arguments rest on: the batch sizes are a function of the ends alone (never of the outputs),
a batch never straddles a look, and each side's batches come from that side's own stream.

**Accumulators** (:class:`Accumulator`) are modelled on optax's ``GradientTransformation`` and
blackjax's ``SamplingAlgorithm``: ``init()`` makes the state, ``update(state, bx, by)`` adds one
batch of each side, ``look(state, k)`` returns ``(state, stop)`` at look ``k`` (a look taken
before a checkpoint gives back its recorded decision), and ``result(state)`` the outcome. The
state is a value: the driver keeps the last complete one, and that is what a checkpoint holds
(an update may grow buffers or tables in place, for speed, but must leave the state it was given
valid: an interrupted update's state is dropped and the one before it saved).

**Sources** (:class:`BatchSource`): ``draw(side, piece, m)`` is batch ``piece`` of ``side`` (0:
x, 1: x'), ``m`` outputs, a deterministic function of the key and of that side's earlier
batches; ``rng_state()`` and ``restore(state)`` save and set what carries the position (a numpy
black box's Generators, :class:`rdpjax.stream.batches.BlackBoxBatches`; nothing for keys folded
by index), so a resumed run draws exactly what an uninterrupted one would have.

**Order.** For each batch end: x's batch, then x''s, then ``update``, then ``look`` where the
end is a look, then the checkpoint. A side that is behind (a checkpoint written after one side's
batch, as rdpjax did before the driver) draws first up to the other: in each round every side
short of the next look draws its own next batch, x first, as that loop did.

**Checkpoints** (:class:`Checkpoint`): ``save(run, now)`` after every complete batch (and its
look), and on an interruption (Ctrl-C, an exception in the user's sampler: the batch under way is
lost, every complete one kept); ``now`` when the batch took at least :data:`SLOW_BATCH` seconds
to draw, the run is over, or it was interrupted. A file-backed checkpoint writes at once when
``now`` and otherwise at most every :data:`SAVE_EVERY` seconds (:class:`Throttle`), so a kill at
any moment loses at most the batch under way and a couple of seconds of cheap ones.

Cost: the driver adds O(1) a batch to the draws and the statistic's updates.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

__all__ = [
    "SAVE_EVERY",
    "SLOW_BATCH",
    "Accumulator",
    "BatchSource",
    "Checkpoint",
    "Run",
    "Throttle",
    "run_looks",
]

SAVE_EVERY = 2.0
"""Seconds between checkpoints after cheap batches."""

SLOW_BATCH = 0.05
"""A batch that took this many seconds or more to draw is saved as soon as it is added."""


class BatchSource(Protocol):
    """Batches of outputs of each side, reproducible from the key and their position."""

    def draw(self, side: int, piece: int, m: int) -> np.ndarray:
        """Batch ``piece`` of ``side`` (0: x, 1: x'): ``m`` checked outputs."""
        ...

    def rng_state(self) -> Any:
        """What a checkpoint must keep to continue the draws (JSON-ready, or ``None``)."""
        ...

    def restore(self, state: Any) -> None:
        """Continue from a state :meth:`rng_state` returned."""
        ...


class Accumulator(NamedTuple):
    """A sequential statistic as four pure functions (optax's ``init``/``update`` pattern).

    Attributes:
      init: ``init() -> state``, the state before any batch (may draw a pilot).
      update: ``update(state, bx, by) -> state`` after one batch of each side; a side already
        at the batch end (only when resuming a checkpoint written after one side's batch) is
        ``None``.
      look: ``look(state, k) -> (state, stop)`` at look ``k`` (0-based).
      result: ``result(state)``, the outcome.
    """

    init: Callable[[], Any]
    update: Callable[[Any, np.ndarray | None, np.ndarray | None], Any]
    look: Callable[[Any, int], tuple[Any, bool]]
    result: Callable[[Any], Any]


class Run(NamedTuple):
    """The driver's state: the statistic's, and where the draws stand.

    Attributes:
      stat: the accumulator's state.
      drawn: outputs added per side.
      pieces: batches added per side (batch ``j`` of a JAX sampler uses ``fold_in(k_side, j)``).
      rng: the source's :meth:`~BatchSource.rng_state` once those batches were drawn.
    """

    stat: Any
    drawn: tuple[int, int]
    pieces: tuple[int, int]
    rng: Any


class Checkpoint(Protocol):
    """Where :func:`run_looks` keeps its :class:`Run` between batches."""

    def load(self) -> Run | None:
        """The run to resume, or ``None`` to start afresh."""
        ...

    def save(self, run: Run, now: bool) -> None:
        """Keep ``run`` (``now``: at once; else the checkpoint may wait, :class:`Throttle`)."""
        ...


class Throttle:
    """When a file-backed checkpoint writes: at once when asked, else every :data:`SAVE_EVERY` s.

    Writing a checkpoint rewrites the whole file, so cheap batches are saved a few times a
    minute rather than after each one.
    """

    def __init__(self) -> None:
        self.saved_at = time.monotonic()

    def due(self, now: bool) -> bool:
        """Whether to write: ``now``, or :data:`SAVE_EVERY` seconds since the last write."""
        return now or time.monotonic() - self.saved_at >= SAVE_EVERY

    def saved(self) -> None:
        """Note a write."""
        self.saved_at = time.monotonic()


def run_looks(
    source: BatchSource,
    ends: Sequence[int],
    looks: Sequence[int],
    accumulator: Accumulator,
    *,
    checkpoint: Checkpoint | None = None,
    bar: Any = None,
) -> Any:
    """Draw, add and look until a look stops the run or the last look is taken.

    Args:
      source: a :class:`BatchSource`.
      ends: outputs per side at the end of each batch, strictly increasing.
      looks: the indices into ``ends`` of the looks, increasing; the last is ``len(ends) − 1``.
      accumulator: the statistic (:class:`Accumulator`).
      checkpoint: a :class:`Checkpoint`: a run it loads is resumed (the source restored to
        its saved state), and the run is saved after every complete batch.
      bar: a tqdm-like progress bar, run to each look in turn (``total``, ``set_description``,
        ``update``), or ``None``.

    Returns:
      ``accumulator.result`` of the last state.
    """
    ends = [int(e) for e in ends]
    run = None if checkpoint is None else checkpoint.load()
    if run is None:
        run = Run(accumulator.init(), (0, 0), (0, 0), source.rng_state())
    else:
        source.restore(run.rng)
    if bar is not None:
        bar.update(sum(run.drawn))
    try:
        for k, j in enumerate(looks):
            target = ends[j]
            if target < min(run.drawn):  # a look the resumed run is past
                continue
            if bar is not None:
                bar.total = 2 * target  # the bar runs to the next look
                bar.set_description(f"look {k + 1}/{len(looks)}")
            while True:
                slow = False
                if min(run.drawn) < target:
                    started = time.monotonic()
                    batches = [_next(source, ends, run, side, target) for side in (0, 1)]
                    slow = time.monotonic() - started >= SLOW_BATCH
                    stat = accumulator.update(run.stat, *batches)
                    run = _advanced(run, stat, batches, source.rng_state())
                    if bar is not None:
                        bar.update(sum(0 if b is None else len(b) for b in batches))
                stop = False
                if min(run.drawn) == target:
                    stat, stop = accumulator.look(run.stat, k)
                    run = run._replace(stat=stat)
                done = bool(stop) or (k == len(looks) - 1 and min(run.drawn) == target)
                if checkpoint is not None:
                    checkpoint.save(run, slow or done)
                if done:
                    return accumulator.result(run.stat)
                if min(run.drawn) == target:
                    break
    except BaseException:
        if checkpoint is not None:
            checkpoint.save(run, True)  # the last complete state: every complete batch is kept
        raise
    return accumulator.result(run.stat)


def _next(source: BatchSource, ends: list[int], run: Run, side: int, target: int):
    """The side's next batch, up to its next end (``None`` when it is at the look already)."""
    drawn = run.drawn[side]
    if drawn >= target:
        return None
    end = ends[bisect.bisect_right(ends, drawn)]
    return source.draw(side, run.pieces[side], end - drawn)


def _advanced(run: Run, stat: Any, batches: list, rng: Any) -> Run:
    """``run`` after ``batches`` (one a side, ``None``: none) were added, giving ``stat``."""
    sizes = [0 if b is None else len(b) for b in batches]
    drawn = (run.drawn[0] + sizes[0], run.drawn[1] + sizes[1])
    pieces = (run.pieces[0] + (batches[0] is not None), run.pieces[1] + (batches[1] is not None))
    return Run(stat, drawn, pieces, rng)
