"""The options of paper 001's estimators, grouped by concept in three frozen dataclasses.

Gorla, Jalouzot, Granese, Palamidessi, Piantanida, arXiv:2208.14414 (docs/methods.md §4):

* :class:`Accuracy` — the target: precision γ with probability ≥ β (Theorems 2 and 3);
* :class:`Regularity` — what the theorems assume of the mechanism: outputs in ``[a, b]`` with
  L-Lipschitz densities (and, for Algorithm 2, densities L'-Lipschitz in the input on ``[c, d]``);
* :class:`HistogramSettings` — how the estimate is run: sizes (default: the guaranteed ones),
  the softmax floor of paper 000 (eq. (13) of arXiv:2212.04739v3), paper 000's lower bound on
  the same draws, and the memory per step.

Each checks its fields when it is made (a ``ValueError`` naming the field); the precondition
``L < 2/(b−a)²`` is not checked there, since without it the caller's ``buckets`` and ``n`` still
run (not guaranteed). The defaults are those of the estimators' keywords before these classes
existed, so the same defaults give the same estimates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from rdpjax._validation import check_int, check_level, check_orders
from rdpjax.histogram.counting import CHUNK
from rdpjax.histogram.sample_size import check_common, check_real, input_interval

__all__ = ["Accuracy", "HistogramSettings", "Regularity"]

_MAX_N = 2**62  # largest n the estimators draw (int64 counts)


def _positive(name: str, value, symbol: str = "") -> float:
    """``value`` as a finite float > 0, or a ``ValueError`` naming ``name``."""
    out = check_real(name, value)
    if out <= 0:
        raise ValueError(f"{name}{symbol} must be > 0; got {value!r}")
    return out


@dataclasses.dataclass(frozen=True)
class Accuracy:
    """The target accuracy: ``|estimate − truth| ≤ γ`` with probability ≥ β.

    The guaranteed sizes (Theorem 2 for :func:`~rdpjax.histogram.estimate_ldp`, Theorem 3 for
    :func:`~rdpjax.histogram.estimate_global_ldp`, and their Rényi analogues) are the smallest
    that meet this target.

    Attributes:
      precision: γ > 0.
      confidence: β in (0, 1).

    Raises:
      ValueError: unless γ is a finite number > 0 and β is in (0, 1).
    """

    precision: float
    confidence: float

    def __post_init__(self) -> None:
        gamma, beta, _, _ = check_common(self.precision, self.confidence, 0.0, 1.0)
        object.__setattr__(self, "precision", gamma)
        object.__setattr__(self, "confidence", beta)


@dataclasses.dataclass(frozen=True)
class Regularity:
    """What the theorems assume of the mechanism: bounded outputs with Lipschitz densities.

    Outputs lie in ``[a, b] = [low, high]`` and the output densities ``P(·|x)`` are
    L-Lipschitz there; the sizes are guaranteed only when ``L < 2/(b−a)²`` (then every density is
    at least ``τ = 1/(b−a) − L(b−a)/2 > 0``; docs/methods.md §4). The global estimators also
    assume ``x ↦ P(y|x)`` is L'-Lipschitz on the input interval ``[c, d]``; the pair estimators
    ignore ``input_lipschitz``, ``input_low`` and ``input_high``.

    Attributes:
      lipschitz: L > 0, Lipschitz constant of the output densities on ``[low, high]``.
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.
      input_lipschitz: L' > 0 of ``x ↦ P(y|x)``; required by the global estimators.
      input_low: c, the lower end of the input interval ``[c, d]`` (global estimators).
      input_high: d, its upper end.

    Raises:
      ValueError: unless L (and L' when given) is a finite number > 0, ``low < high`` and
        ``input_low < input_high``, all finite.
    """

    lipschitz: float
    low: float = 0.0
    high: float = 1.0
    input_lipschitz: float | None = None
    input_low: float = 0.0
    input_high: float = 1.0

    def __post_init__(self) -> None:
        _, _, low, high = check_common(1.0, 0.5, self.low, self.high)
        c, d = input_interval(self.input_low, self.input_high)
        lip = _positive("lipschitz", self.lipschitz, " (L)")
        values = dict(lipschitz=lip, low=low, high=high, input_low=c, input_high=d)
        if self.input_lipschitz is not None:
            values["input_lipschitz"] = _positive("input_lipschitz", self.input_lipschitz, " (L')")
        for name, value in values.items():
            object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class HistogramSettings:
    """How an estimate is run: its sizes, the floored histogram, paper 000's bound, memory.

    Attributes:
      n: outputs per input; default the guaranteed size. A larger n keeps the guarantee.
      buckets: number of buckets; default the guaranteed k. The pair estimators need ``n`` with
        it; without the precondition ``L < 2/(b−a)²`` this is the only way to run them (no
        guarantee).
      inputs: number of grid inputs (≥ 2) of the global estimators; default the guaranteed k_x.
        The pair estimators take none.
      floor: τ of the softmax floor on bucket probabilities (default
        ``τ = max(0.03 n^(−0.4), 4/n)``, paper 000's discrete rule).
      beta: β of the softmax floor (default ``β = 1/τ``).
      with_lower_bound: also compute paper 000's bound (:func:`rdpjax.lower_bound`, eq. (16) of
        arXiv:2212.04739v3) on the first ``min(n, chunk_size)`` of the same draws (for the
        global estimators, between the end points ``(c, d)`` of the input interval).
      bound_lam: orders of paper 000's bound for the ε-LDP estimators; default ``(2, 5, 7)``.
        The Rényi estimators bound their own order λ and take none.
      alpha: level of that bound (simultaneous over its orders and directions).
      chunk_size: outputs drawn and counted per step (memory).

    Raises:
      ValueError: for sizes below 1 (``inputs`` below 2) or above 2^62, a floor or floor β
        that is not > 0, orders that are not all > 1, or ``alpha`` outside (0, 0.5).
    """

    n: int | None = None
    buckets: int | None = None
    inputs: int | None = None
    floor: float | None = None
    beta: float | None = None
    with_lower_bound: bool = True
    bound_lam: Sequence[float] | None = None
    alpha: float = 0.05
    chunk_size: int = CHUNK

    def __post_init__(self) -> None:
        for name, least in (("n", 1), ("buckets", 1), ("inputs", 2)):
            if getattr(self, name) is not None:
                value = check_int(getattr(self, name), name, least, _MAX_N)
                object.__setattr__(self, name, value)
        object.__setattr__(self, "chunk_size", check_int(self.chunk_size, "chunk_size", 1, _MAX_N))
        for name in ("floor", "beta"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _positive(name, getattr(self, name)))
        if self.bound_lam is not None:
            orders = tuple(check_orders(self.bound_lam, "bound_lam").tolist())
            object.__setattr__(self, "bound_lam", orders)
        if not isinstance(self.with_lower_bound, bool | np.bool_):
            raise ValueError(f"with_lower_bound must be a bool; got {self.with_lower_bound!r}")
        object.__setattr__(self, "with_lower_bound", bool(self.with_lower_bound))
        object.__setattr__(self, "alpha", check_level(self.alpha))
