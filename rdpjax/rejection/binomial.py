"""Exact (Clopper–Pearson) one-sided confidence bounds on a binomial proportion.

``k`` successes in ``n`` independent trials of probability p: with probability ≥ 1 − α,
``p ≥ lower(k)`` (and, separately, ``p ≤ upper(k)``), where (Clopper & Pearson, "The use of
confidence or fiducial limits illustrated in the case of the binomial", Biometrika 26 (1934))

    lower(k) = Beta⁻¹(α; k, n − k + 1)   (0 for k = 0),
    upper(k) = Beta⁻¹(1 − α; k + 1, n − k)   (1 for k = n).

These are the endpoints of ``scipy.stats.binomtest(k, n).proportion_ci(1 − 2α, "exact")``; the
beta quantiles are called directly here because they vectorize over many sets at once
(``tests/rejection/test_binomial.py`` checks the two agree). Valid at every n: no normal
approximation. Host float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["clopper_pearson"]


def clopper_pearson(k: Any, n: Any, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided exact bounds ``(lower, upper)`` on p from ``k`` of ``n``, each at level α.

    Args:
        k: success counts, integers in [0, n] (array or scalar).
        n: trials, integers ≥ 1 (broadcast against ``k``).
        alpha: the error probability of each one-sided bound, in (0, 1).

    Returns:
        float64 arrays ``(lower, upper)`` of the broadcast shape: ``P(p < lower) ≤ α`` and
        ``P(p > upper) ≤ α`` (a two-sided interval at 1 − 2α).

    Raises:
        ValueError: for ``k`` outside [0, n], non-integer counts, ``n < 1`` or α outside (0, 1).

    Example:
        >>> lo, hi = clopper_pearson(0, 1000, 0.05)
        >>> float(lo), round(float(hi), 5)  # the "rule of three": about 3/n
        (0.0, 0.00299)
    """
    from scipy import stats  # here, not at import: `import rdpjax` leaves scipy unloaded

    k, n = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64))
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    if np.any(n < 1) or np.any((k < 0) | (k > n)) or np.any(k != np.round(k)):
        raise ValueError("counts must be integers with 0 ≤ k ≤ n and n ≥ 1")
    with np.errstate(invalid="ignore"):  # the k = 0 and k = n ends are set below
        lower = np.where(k > 0, stats.beta.ppf(alpha, k, n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1.0 - alpha, k + 1, n - k), 1.0)
    return lower, upper
