"""What the betting test has seen and decided (:class:`BettingState`), and where it keeps it.

The test (:func:`rdpjax.rejection.betting.betting_test`) runs on the looks driver
(:func:`rdpjax.stream.looks.run_looks`); its accumulator's state is a :class:`Wealth`, whose
:class:`BettingState` is what a :class:`Checkpoint` keeps (the rest, the bets in force and the
sorted past, follows from it). :class:`Kept` is the driver's checkpoint over a user's
:class:`Checkpoint` (:class:`rdpjax.auditing.sequential.betting_file.BettingFile` for
:func:`rdpjax.audit`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

from rdpjax.rejection.bets import Bets, SortedPast, plan_bets
from rdpjax.stream.looks import Run

__all__ = ["BettingState", "Checkpoint", "Kept", "Wealth", "replanned"]


@dataclasses.dataclass
class BettingState:
    """What :func:`~rdpjax.rejection.betting.betting_test` has seen and decided.

    Attributes:
        logk: ``(J, 1)`` log wealth of each strategy (:data:`~rdpjax.rejection.betting.SCALES`).
        x, y: buffers of both sides' past outputs (the first :attr:`size` are drawn), in the
            random order they were bet on; they double when full (O(n) copying in all).
        size: outputs drawn per side.
        start: pairs seen at the end of the last complete batch.
        n: pairs used (at the refutation, or :attr:`start`).
        path: ``(pairs, log wealth)`` at the end of each batch (and at the stop).
        rng: the numpy bit-generator states of x's, x''s and the orders' Generators after the
            last complete batch, so that a resumed test continues as an uninterrupted one (set
            when the state is saved).
        discrete: integer codes (sets of codes) or real outputs.
        refuted: the hedged wealth reached ``1/alpha``.
        planned: the pairs the bets in force were planned from (0: none yet).
    """

    logk: np.ndarray
    x: np.ndarray = dataclasses.field(default_factory=lambda: np.empty(0))
    y: np.ndarray = dataclasses.field(default_factory=lambda: np.empty(0))
    size: int = 0
    start: int = 0
    n: int = 0
    path: list = dataclasses.field(default_factory=list)
    rng: list = dataclasses.field(default_factory=list)
    discrete: bool = False
    refuted: bool = False
    planned: int = 0

    def added(self, bx: np.ndarray, by: np.ndarray, n: int, log_wealth: float, **fields):
        """The state after a batch bet on up to pair ``n`` (its end, or the refuting pair).

        The outputs go into the buffers past :attr:`size` (in place: this state's outputs are
        untouched, and a copy of the whole past every batch would cost O(n) a batch); ``fields``
        replace the others (``logk``, ``refuted``, ``planned``, ``discrete``).
        """
        x, y, end = self.x, self.y, self.size + bx.size
        if end > x.size or self.size == 0:
            grow = max(end, 2 * x.size)
            x = np.concatenate([x[: self.size].astype(bx.dtype),
                                np.empty(grow - self.size, bx.dtype)])  # fmt: skip
            y = np.concatenate([y[: self.size].astype(by.dtype),
                                np.empty(grow - self.size, by.dtype)])  # fmt: skip
        x[self.size : end], y[self.size : end] = bx, by
        path = [*self.path, (n, log_wealth)]
        return dataclasses.replace(self, x=x, y=y, size=end, start=end, n=n, path=path, **fields)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Both sides' past outputs."""
        return self.x[: self.size], self.y[: self.size]


class Wealth(NamedTuple):
    """The betting test's accumulator state (:func:`~rdpjax.rejection.betting.betting_test`).

    Attributes:
        past: the :class:`BettingState` (outputs, wealth, path, decision).
        bets: the bets in force, one :class:`~rdpjax.rejection.bets.Bets` per strategy.
        sorted_past: real outputs kept sorted between plans (a cache: rebuilt after a resume).
        order: the bit-generator state of the within-batch permutations.
    """

    past: BettingState
    bets: list[Bets]
    sorted_past: SortedPast
    order: dict


class Checkpoint(Protocol):
    """Where :func:`~rdpjax.rejection.betting.betting_test` keeps its :class:`BettingState`."""

    def load(self) -> BettingState | None:
        """The state to resume from, or ``None`` to start afresh."""
        ...

    def save(self, state: BettingState, now: bool) -> None:
        """Keep ``state``, called after every complete batch (and on an interruption).

        ``now``: the test is over or was interrupted, or the batch was slow to draw; otherwise
        the checkpoint may wait (:class:`rdpjax.stream.looks.Throttle`).
        """
        ...


def replanned(
    state: BettingState, *, eps: np.ndarray, delta: np.ndarray, scales: tuple[float, ...]
) -> list[Bets]:
    """The bets in force in a resumed state, planned again from its first ``planned`` pairs.

    Real outputs are planned from the float64 sorted rows that an uninterrupted run plans from
    (:class:`SortedPast`). A float32 past sorted as float32 gives other midpoints and medians,
    and the resumed run would then differ from the uninterrupted one.
    """
    if not state.planned:
        return []
    past = [a[: state.planned] for a in state.arrays()]
    if state.discrete:
        return plan_bets(past[0][None], past[1][None], eps, delta, True, scales)
    rows = SortedPast().update(*past)
    return plan_bets(*rows, eps, delta, False, scales, rows_sorted=True)


class Kept:
    """The looks driver's :class:`~rdpjax.stream.looks.Checkpoint` over a :class:`Checkpoint`.

    Args:
        checkpoint: the user's :class:`Checkpoint`.
        replan: ``replan(state)``, the bets in force in a resumed state (planned again from its
            first ``planned`` pairs).
    """

    def __init__(self, checkpoint: Checkpoint, replan: Callable[[BettingState], list]) -> None:
        self.checkpoint, self.replan = checkpoint, replan

    def load(self) -> Run | None:
        """The saved state as the driver's run (the orders' state back in the accumulator)."""
        state = self.checkpoint.load()
        if state is None:
            return None
        *rng, order = state.rng
        wealth = Wealth(state, self.replan(state), SortedPast(), order)
        return Run(wealth, (state.size, state.size), (len(state.path),) * 2, rng)

    def save(self, run: Run, now: bool) -> None:
        """The :class:`BettingState` with the random states of the draws and of the orders."""
        wealth: Wealth = run.stat
        state: Any = dataclasses.replace(wealth.past, rng=[*run.rng, wealth.order])
        self.checkpoint.save(state, now)
