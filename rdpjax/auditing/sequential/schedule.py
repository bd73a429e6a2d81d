"""When a sequential audit looks, and how much of α each look spends.

A sequential audit computes the bound after ``n_1 < n_2 < … < n_K = max_n`` outputs per side
and stops at the first look whose bound exceeds the claim. Look ``k`` reports bounds that hold
simultaneously (over orders and directions) at level ``α_k``, with ``Σ_k α_k ≤ α``. The union
bound then gives, for a true claim (or for the event "some reported bound exceeds the truth"),

    P(any look k refutes) ≤ Σ_k P(look k's bounds fail) ≤ Σ_k α_k ≤ α,

whatever rule decides to stop, because the looks' sizes and levels are fixed before any draw
(optional stopping can only remove looks from the union). Nothing about the dependence between
looks is needed; the price is that each look spends only its share of α. This is α-spending with
Bonferroni over looks (Lan & DeMets, Biometrika 70:659, 1983, in its simplest, conservative form).

The sizes grow geometrically (:func:`geometric_schedule`): a refutation that needs n outputs is
found at the first look ≥ n, so at most ``ratio × n`` are drawn, and the number of looks, hence the
spending's cost in ``|Φ⁻¹(α_k)|``, grows only like ``log(max_n / first)``. The spending rules
(:data:`SPENDING`) and the default were chosen by ``benchmarks/calibration/sequential.py``
(docs/sequential.md).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = [
    "DEFAULT_FIRST",
    "DEFAULT_RATIO",
    "DEFAULT_SPENDING",
    "SPENDING",
    "Schedule",
    "geometric_schedule",
    "spend",
]

SPENDING = ("uniform", "inverse_square", "linear")
"""α-spending rules: ``"uniform"`` α/K at every look; ``"inverse_square"`` ``α_k ∝ 1/k²``
(early looks spend most); ``"linear"`` ``α_k ∝ n_k − n_{k−1}`` (the spending function α·t in
the information fraction t = n/max_n: early looks spend least)."""

DEFAULT_SPENDING = "uniform"
"""The default rule (``benchmarks/calibration/sequential.py``: docs/sequential.md)."""

DEFAULT_FIRST = 100
"""Outputs per side at the first look."""

DEFAULT_RATIO = 2.0
"""Growth factor of the look sizes."""


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The looks of a sequential audit, fixed before any draw.

    Attributes:
      sizes: outputs per side at each look (strictly increasing; the last is ``max_n``).
      alphas: the family-wise level each look's bounds hold at; they sum to at most ``alpha``.
      spending: the rule that made ``alphas`` (:data:`SPENDING`), or ``"custom"``.
    """

    sizes: tuple[int, ...]
    alphas: tuple[float, ...]
    spending: str = "custom"

    def __post_init__(self):
        sizes = tuple(int(v) for v in self.sizes)
        alphas = tuple(float(v) for v in self.alphas)
        if not sizes or len(sizes) != len(alphas):
            raise ValueError(
                f"a schedule needs as many levels as looks (≥ 1); got {len(sizes)} sizes and "
                f"{len(alphas)} levels."
            )
        if sizes[0] < 2 or any(b <= a for a, b in zip(sizes, sizes[1:], strict=False)):
            raise ValueError(f"look sizes must be ≥ 2 and strictly increasing; got {sizes}.")
        if not all(0.0 < a < 1.0 for a in alphas) or sum(alphas) >= 1.0:
            raise ValueError(f"look levels must lie in (0, 1) and sum below 1; got {alphas}.")
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "alphas", alphas)

    @property
    def alpha(self) -> float:
        """The total level spent, ``Σ_k α_k``: any reported bound fails with at most this."""
        return math.fsum(self.alphas)

    @property
    def max_n(self) -> int:
        """Outputs per database at the last look."""
        return self.sizes[-1]

    def to_dict(self) -> dict:
        """A JSON-ready dict of ``sizes``, ``alphas`` (as lists) and ``spending``."""
        return {"sizes": list(self.sizes), "alphas": list(self.alphas), "spending": self.spending}


def _whole(value, name: str) -> int:
    """A count ≥ 2 given as an int or a whole float (``1e5``)."""
    ok = not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating)
    if not (ok and math.isfinite(float(value)) and float(value).is_integer() and value >= 2):
        raise ValueError(f"{name} must be a whole number ≥ 2; got {value!r}.")
    return int(value)


def spend(alpha: float, sizes, rule: str = DEFAULT_SPENDING) -> tuple[float, ...]:
    """Split ``alpha`` over looks at ``sizes`` by ``rule`` (:data:`SPENDING`); sums to ``alpha``.

    Raises:
      ValueError: on an unknown rule or α outside (0, 1).
    """
    if not (isinstance(alpha, int | float) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    k = np.arange(1, len(sizes) + 1, dtype=np.float64)
    if rule == "uniform":
        weights = np.ones_like(k)
    elif rule == "inverse_square":
        weights = 1.0 / k**2
    elif rule == "linear":
        weights = np.diff(np.concatenate([[0.0], np.asarray(sizes, np.float64)]))
    else:
        raise ValueError(f"spending must be one of {SPENDING}; got {rule!r}.")
    return tuple(float(v) for v in alpha * weights / weights.sum())


def geometric_schedule(
    max_n,
    *,
    alpha: float = 0.05,
    first=DEFAULT_FIRST,
    ratio: float = DEFAULT_RATIO,
    spending: str = DEFAULT_SPENDING,
) -> Schedule:
    """Looks at ``first · ratio^j`` outputs per side (rounded) below ``max_n``, then ``max_n``.

    Args:
      max_n: outputs per side at the last look (an integer ≥ 2; ``1e5`` is accepted).
      alpha: the total level (:attr:`Schedule.alpha`).
      first: outputs per side at the first look (capped at ``max_n``).
      ratio: growth factor > 1 between looks.
      spending: the α-spending rule (:data:`SPENDING`).

    Returns:
      A :class:`Schedule` (one look, a fixed-n audit at α, when ``first ≥ max_n``).

    Example:
      >>> geometric_schedule(2000, first=250).sizes
      (250, 500, 1000, 2000)
      >>> geometric_schedule(1e4).sizes  # the default first look: 100
      (100, 200, 400, 800, 1600, 3200, 6400, 10000)
    """
    max_n = _whole(max_n, "max_n")
    first = min(_whole(first, "first"), max_n)
    if not (isinstance(ratio, int | float) and math.isfinite(ratio) and ratio > 1.0):
        raise ValueError(f"ratio must be a number > 1; got {ratio!r}.")
    sizes = [first]
    while True:
        nxt = round(sizes[-1] * ratio)
        if nxt <= sizes[-1]:
            nxt = sizes[-1] + 1
        if nxt >= max_n:
            break
        sizes.append(nxt)
    if sizes[-1] != max_n:
        if max_n / sizes[-1] < math.sqrt(ratio) and len(sizes) > 1:
            sizes[-1] = max_n  # a last step much shorter than the others costs a look for little
        else:
            sizes.append(max_n)
    return Schedule(tuple(sizes), spend(alpha, sizes, spending), spending)
