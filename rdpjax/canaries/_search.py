"""The largest parameter a family of tests rejects, by a vectorized grid refinement.

A claim family indexed by t ≥ 0 (ε of (ε, δ)-DP, μ of μ-GDP) is nested: a mechanism that
satisfies the claim at t* satisfies it at every t ≥ t*. So if the reported t̂ exceeds t*, the
claim at t̂ is true and its test rejected. For one guess pair, the test at t rejects on a set
of counts whose smallest member c_t has ``P(at least c_t correct) ≤ level`` under the claim at t
(that is what the theorems bound); the union over t ≥ t* lies in the largest of these nested
events, that of some t₀ ≥ t* where the claim is true, so ``P(t̂ > t*) ≤ level``. That holds as
long as t̂ is a value whose test was actually run and rejected, which is all this search
returns (or 0, trivially valid). No monotonicity of the tests in t is assumed; it only governs
how close to the supremum the search lands.

Cost: ``passes`` calls of ``rejects`` on a (G, points) batch; resolution
``upper / points**passes``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["largest_rejected"]


def largest_rejected(
    rejects: Callable[[np.ndarray], np.ndarray],
    size: int,
    upper: float,
    *,
    points: int = 24,
    passes: int = 3,
) -> np.ndarray:
    """For each of ``size`` tests, the largest grid value found rejected (0 if none).

    Args:
        rejects: maps a (size, points) array of parameters to a bool array of the same shape.
        size: the number of tests (rows).
        upper: the largest parameter tried (returned where every tried value is rejected).
        points: candidates per pass and row.
        passes: refinements; each divides the bracket by ``points``.

    Returns:
        float64 array (size,): verified rejected values, or 0.
    """
    lo, width = np.zeros(size), float(upper)
    steps = np.arange(1, points + 1) / points
    for _ in range(passes):
        t = lo[:, None] + width * steps[None, :]
        rej = np.asarray(rejects(t), bool)
        # The first candidate not rejected; the one before it (or lo) is the new lower end.
        first_kept = np.where(rej.all(axis=1), points, np.argmin(rej, axis=1))
        lo = lo + width * first_kept / points
        width /= points
    return lo
