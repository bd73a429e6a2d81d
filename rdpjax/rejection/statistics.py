"""The set test's statistics of cells: what one is, and the registry a new one joins.

Every route of the rejection-set test (draws in memory, a stream, the audit's one shared pass)
ends in :func:`rdpjax.rejection.api.counted_set_test`: the selection draws fix the cells and
what each statistic will compute (:class:`Selection`), then the certification draws are counted
once per cell and side (:class:`Counts`), and each statistic is a function of those counts. So a
statistic is a pair of pure functions, in the style of optax's ``GradientTransformation``:

* ``plan(selection) -> plan``: everything the statistic chooses, from the selection alone (its
  validity rests on the plan being fixed before the certification draws exist);
* ``result(plan, counts, level, rng) -> result``: the statistic at its level, from the counts
  (``rng`` for randomized statistics, independent of the draws).

The test's own two statistics (the certified masses and the pooled guesses) share the test's α
and its verdict, and stay written out in ``counted_set_test``. Any other statistic is registered
here (:func:`register`) and reported beside them in ``SetTest.extras``, under its name, at the
test's α on its own (a family apart: it never changes the verdict or another number). A new one
is one module that defines its :class:`CellStatistic` and calls :func:`register` at import, plus
its import in :mod:`rdpjax.rejection` (certified TPR at a target FPR:
:mod:`rdpjax.rejection.operating`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

__all__ = ["CellStatistic", "Counts", "Selection", "register", "registered", "wanted"]


@dataclasses.dataclass(frozen=True)
class Counts:
    """Certification counts per cell: all draws, and the Poissonized ones of the pooled test.

    Attributes:
        p, q: counts of every certification draw of P and of Q (binomial, for the masses).
        poisson: counts of ``Poisson(rate)`` draws a side (the pooled-guess test), or ``None``
            when more were needed than there were (in memory, probability ≤ ``pooled.MISS``).
        rate: λ.
    """

    p: np.ndarray
    q: np.ndarray
    poisson: tuple[np.ndarray, np.ndarray] | None
    rate: float


@dataclasses.dataclass(frozen=True)
class Selection:
    """What the selection draws fixed before any certification draw: each plan reads this.

    Attributes:
        edges: the cells' edges (:func:`rdpjax.rejection.cells.cell_edges`, or the atoms).
        scores: each cell's estimated log ratio ``log p̂ − log q̂`` (larger: evidence of P).
        prob_p, prob_q: the selection's smoothed cell frequencies.
        n_select: selection draws per side (P, Q).
        n_certify: certification draws planned per side (P, Q).
        options: the test's :class:`~rdpjax.rejection.SetOptions`.
    """

    edges: np.ndarray
    scores: np.ndarray
    prob_p: np.ndarray
    prob_q: np.ndarray
    n_select: tuple[int, int]
    n_certify: tuple[int, int]
    options: Any


class CellStatistic(NamedTuple):
    """A statistic of the certification counts per cell (module docstring).

    Attributes:
        name: its key in ``SetTest.extras`` (and in ``to_dict()``).
        asked: whether a test's :class:`~rdpjax.rejection.SetOptions` ask for it.
        plan: ``plan(selection) -> plan``, from the selection alone.
        result: ``result(plan, counts, level, rng) -> result``, at ``level``.
        lines: ``lines(result) -> list[str]``, the text the test's details print.
        to_json: ``to_json(result) -> JSON-ready value``.
    """

    name: str
    asked: Callable[[Any], bool]
    plan: Callable[[Selection], Any]
    result: Callable[[Any, Counts, float, np.random.Generator], Any]
    lines: Callable[[Any], list[str]]
    to_json: Callable[[Any], Any]


_REGISTRY: dict[str, CellStatistic] = {}


def register(statistic: CellStatistic) -> CellStatistic:
    """Add ``statistic`` to the registry (at import of its module); returns it.

    Raises:
        ValueError: if another statistic holds its name.
    """
    held = _REGISTRY.get(statistic.name)
    if held is not None and held is not statistic:
        raise ValueError(f"a set-test statistic named {statistic.name!r} is registered already")
    _REGISTRY[statistic.name] = statistic
    return statistic


def registered() -> tuple[CellStatistic, ...]:
    """Every registered statistic, in the order they were registered."""
    return tuple(_REGISTRY.values())


def wanted(options: Any) -> tuple[CellStatistic, ...]:
    """The registered statistics these :class:`~rdpjax.rejection.SetOptions` ask for."""
    return tuple(s for s in _REGISTRY.values() if s.asked(options))
