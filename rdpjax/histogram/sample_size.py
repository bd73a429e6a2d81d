"""Guaranteed sample sizes of paper 001's histogram estimators, and the checks of their setting.

Gorla, Jalouzot, Granese, Palamidessi, Piantanida, *On the (Im)Possibility of Estimating Various
Notions of Differential Privacy*, arXiv:2208.14414, read through docs/methods.md §4 ("§4 step k" is
the k-th step of Algorithm 1 as listed there). For a local mechanism whose output densities on
``[a, b]`` are L-Lipschitz with ``L < 2/(b−a)²``:

* :func:`ldp_sample_size`: buckets and n of Algorithm 1 (Theorem 2);
* :func:`lrdp_sample_size`: the same for the Rényi variant;
* :func:`global_ldp_sample_size`, :func:`global_lrdp_sample_size`: grid inputs, buckets and n of
  Algorithm 2 (Theorem 3) and of its Rényi analogue.

The conditions on n (:func:`ldp_condition`, :func:`lrdp_condition`) are evaluated in float64 on
Python ints; the smallest n is found by doubling, then bisection (the conditions are monotone):
O(log n) evaluations. Sizes are exact for ``n < 2^53``. The argument checks (``check_*``) are
shared with :mod:`rdpjax.histogram.algorithms`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

_MAX_SEARCH = 2**200  # the guaranteed sizes are Python ints; for λ = 7 they pass 1e24


# ----------------------------------------------------------------------------- validation


def check_real(name: str, value: Any) -> float:
    """``value`` as a finite float, or a ``ValueError`` naming ``name``."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return out


def check_common(precision, confidence, low, high) -> tuple[float, float, float, float]:
    """``(γ, β, low, high)`` as floats; ``ValueError`` unless γ > 0, β ∈ (0, 1), low < high."""
    gamma, beta = check_real("precision", precision), check_real("confidence", confidence)
    low, high = check_real("low", low), check_real("high", high)
    if gamma <= 0:
        raise ValueError(f"precision (γ) must be > 0; got {precision!r}")
    if not 0 < beta < 1:
        raise ValueError(f"confidence (β) must be in (0, 1); got {confidence!r}")
    if not low < high:
        raise ValueError(f"need low < high (the output interval [a, b]); got {low!r}, {high!r}")
    return gamma, beta, low, high


def check_lipschitz(lipschitz, width: float, name: str = "lipschitz") -> float:
    """L as a float; ``ValueError`` unless ``0 < L < 2/width²`` (the precondition of Theorem 2)."""
    lip = check_real(name, lipschitz)
    if lip <= 0:
        raise ValueError(f"{name} (L) must be > 0; got {lipschitz!r}")
    if lip >= 2.0 / width**2:
        raise ValueError(
            f"precondition of Theorem 2 fails: {name} L = {lip:.6g} must be < 2/(high−low)² = "
            f"{2.0 / width**2:.6g}; no L-Lipschitz density on [low, high] is then bounded away "
            "from 0, so no sample size is guaranteed (pass buckets= and n= to run the histogram "
            "anyway, without the guarantee)"
        )
    return lip


def check_lam(lam) -> float:
    """λ as a float; ``ValueError`` unless it is a finite number > 1."""
    value = check_real("lam", lam)
    if value <= 1:
        raise ValueError(f"lam (the Rényi order λ) must be a finite number > 1; got {lam!r}")
    return value


def input_interval(input_low, input_high) -> tuple[float, float]:
    """``(c, d)`` as floats; ``ValueError`` unless they are finite and ``c < d``."""
    c, d = check_real("input_low", input_low), check_real("input_high", input_high)
    if not c < d:
        raise ValueError(f"need input_low < input_high; got {input_low!r}, {input_high!r}")
    return c, d


# ------------------------------------------------------------------- guaranteed sample sizes


def _psi(n: float, p: float, gamma: float) -> float:
    """ψ(n, p, γ) of Algorithm 1 (docs/methods.md §4, item 3): a Chernoff bound on bucket ratios."""
    e = math.exp(gamma)
    num = math.exp(-n * p * (e - 1) ** 2 / (1 + e)) + math.exp(-n * p * (1 - 1 / e) ** 2 / 2)
    return num / -math.expm1(n * math.log1p(-p))  # 1 − (1 − p)^n


def _smallest_n(ok: Callable[[int], bool]) -> int:
    """Smallest n ≥ 1 with ``ok(n)`` for a monotone ``ok``: doubling, then bisection."""
    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > _MAX_SEARCH:
            raise ValueError("no sample size below 2^200 meets the condition")
    lo = hi // 2  # ok(lo) is False (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def ldp_condition(k: int, p: float, gamma: float, beta: float) -> Callable[[int], bool]:
    """Algorithm 1's condition on n (§4 step 4): ``2k(1 − wτ)^n + 4ψ(n, wτ, γ/12) ≤ 1 − β``."""

    def ok(n: int) -> bool:
        miss = 2 * k * math.exp(n * math.log1p(-p))  # P(some bucket empty), union bound
        return miss + 4 * _psi(n, p, gamma / 12) <= 1 - beta

    return ok


def ldp_buckets(gamma, lip, width) -> tuple[float, int]:
    """``(τ, k)`` of Algorithm 1 (§4 steps 1–2): ``τ = 1/W − LW/2`` and ``k = ⌈6LW/(τγ)⌉``.

    W is ``width``; τ is a lower bound on any L-Lipschitz density on an interval of width W.
    """
    tau = 1 / width - lip * width / 2  # Algorithm 1 (§4 step 1): τ ≤ any L-Lipschitz density
    return tau, math.ceil(6 * lip * width / (tau * gamma))  # Algorithm 1 (§4 step 2): k


def ldp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    low: float = 0.0,
    high: float = 1.0,
) -> tuple[int, int]:
    """Buckets and samples per input that Algorithm 1 of arXiv:2208.14414 needs (Theorem 2).

    With ``W = high − low`` and ``τ = 1/W − LW/2``, the number of buckets is
    ``k = ⌈6LW/(τγ)⌉`` and n the smallest integer with
    ``2k(1 − wτ)^n + 4ψ(n, wτ, γ/12) ≤ 1 − β``, ``w = W/k``, found by doubling then bisection
    (the condition is decreasing in n). Then ``P(success and |ε* − ε̃| ≤ γ) ≥ β``.

    Args:
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, a Lipschitz constant of both output densities on ``[low, high]``; the
        precondition of Theorem 2 is ``0 < L < 2/(high − low)²``.
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.

    Returns:
      ``(buckets, n)``: Python ints; n is the number of outputs drawn at *each* input.

    Raises:
      ValueError: for γ ≤ 0, β ∉ (0, 1), low ≥ high, or when the precondition fails.

    Example:
      >>> ldp_sample_size(1.0, 0.8, 1 / (4 * (1 - math.exp(-0.5))))  # ε = 0.5 (B = 2)
      (6, 9588)
    """
    gamma, beta, low, high = check_common(precision, confidence, low, high)
    width = high - low
    lip = check_lipschitz(lipschitz, width)
    tau, k = ldp_buckets(gamma, lip, width)
    return k, _smallest_n(ldp_condition(k, width / k * tau, gamma, beta))


def _lrdp_density_bounds(lip, lam, width) -> tuple[float, float, float]:
    """τ0 and the constants K, K' of the Rényi variant (docs/methods.md §4)."""
    tau0 = 1 / width - lip * width / 2  # lower bound on the densities
    tau1 = 1 / width + lip * width / 2  # upper bound on the densities
    big_k = 2 * tau1**lam / tau0 ** (lam - 1)  # K
    small_k = tau0**lam / tau1 ** (lam - 1)  # K'
    return tau0, big_k, small_k


def lrdp_constants(gamma, lip, lam, width) -> tuple[float, float, int]:
    """τ0, γ' and the bucket count k of the Rényi variant (docs/methods.md §4)."""
    tau0, big_k, small_k = _lrdp_density_bounds(lip, lam, width)
    gamma_p = min(
        gamma * small_k * (lam - 1) / (2 * big_k * (2 * lam - 1)), math.log(2) / (2 * lam - 1)
    )  # γ'
    k = math.ceil(lip * width * big_k * (2 * lam - 1) / (gamma * tau0 * small_k * (lam - 1)))
    return tau0, gamma_p, k


def lrdp_condition(k: int, p: float, gamma_p: float, beta: float) -> Callable[[int], bool]:
    """Rényi variant: ``1 − 2k(1 − wτ0)^n − 2kψ(n, wτ0, γ') ≥ β``."""

    def ok(n: int) -> bool:
        return 1 - 2 * k * math.exp(n * math.log1p(-p)) - 2 * k * _psi(n, p, gamma_p) >= beta

    return ok


def lrdp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    lam: float,
    low: float = 0.0,
    high: float = 1.0,
) -> tuple[int, int]:
    """Buckets and samples per input of the Rényi-LDP histogram estimator of arXiv:2208.14414.

    With ``τ0 = 1/W − LW/2``, ``τ1 = 1/W + LW/2``, ``K = 2τ1^λ/τ0^(λ−1)``,
    ``K' = τ0^λ/τ1^(λ−1)`` and ``γ' = min(γK'(λ−1)/(2K(2λ−1)), log 2/(2λ−1))``:
    ``k = ⌈LWK(2λ−1)/(γτ0K'(λ−1))⌉`` buckets and n the smallest integer with
    ``1 − 2k(1 − wτ0)^n − 2kψ(n, wτ0, γ') ≥ β`` (doubling, then bisection).

    Args:
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, as in :func:`ldp_sample_size` (``0 < L < 2/(high − low)²``).
      lam: the Rényi order λ > 1.
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.

    Returns:
      ``(buckets, n)`` as Python ints. Both grow fast with λ and L (``K/K' ~ (τ1/τ0)^(2λ−1)``).

    Raises:
      ValueError: as :func:`ldp_sample_size`, and for λ ≤ 1.

    Example:
      >>> lrdp_sample_size(1.0, 0.9, 1 / (25 * (1 - math.exp(-0.2))), 2.0)  # B = 5
      (3, 17793)

      (The published size is 17,794: the authors' bisection stops at a gap of 2.)
    """
    gamma, beta, low, high = check_common(precision, confidence, low, high)
    lam = check_lam(lam)
    width = high - low
    lip = check_lipschitz(lipschitz, width)
    tau0, gamma_p, k = lrdp_constants(gamma, lip, lam, width)
    return k, _smallest_n(lrdp_condition(k, width / k * tau0, gamma_p, beta))


def _check_input_lipschitz(input_lipschitz) -> float:
    lip_x = check_real("input_lipschitz", input_lipschitz)
    if lip_x <= 0:
        raise ValueError(f"input_lipschitz (L') must be > 0; got {input_lipschitz!r}")
    return lip_x


def global_ldp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    input_lipschitz: float,
    low: float = 0.0,
    high: float = 1.0,
    input_low: float = 0.0,
    input_high: float = 1.0,
) -> tuple[int, int, int]:
    """Grid inputs, buckets and samples per input of Algorithm 2 of arXiv:2208.14414.

    ``k_x = ⌈3L'(d − c)/(τγ)⌉`` equally spaced inputs on ``[c, d]`` (at least 2), and the
    Algorithm 1 sizes at precision γ/3 and confidence √β. The split of β is the authors' code's
    (docs/methods.md §4 marks the paper's exact split **[unverified]**).

    Args:
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, as in :func:`ldp_sample_size` (``0 < L < 2/(high − low)²``).
      input_lipschitz: L' > 0, a Lipschitz constant of ``x ↦ P(y|x)`` on ``[c, d]``, uniformly
        in y.
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.
      input_low: c, the lower end of the input interval ``[c, d]``.
      input_high: d, its upper end.

    Returns:
      ``(inputs, buckets, n)``: Python ints; n outputs are drawn at each of the inputs.

    Raises:
      ValueError: as :func:`ldp_sample_size`, for L' ≤ 0 or ``input_low ≥ input_high``.
    """
    gamma, beta, low, high = check_common(precision, confidence, low, high)
    c, d = input_interval(input_low, input_high)
    width = high - low
    tau, _ = ldp_buckets(gamma, check_lipschitz(lipschitz, width), width)
    lip_x = _check_input_lipschitz(input_lipschitz)
    k_x = max(2, math.ceil(3 * lip_x * (d - c) / (tau * gamma)))  # Algorithm 2, line 3
    buckets, n = ldp_sample_size(gamma / 3, math.sqrt(beta), lipschitz, low, high)
    return k_x, buckets, n


def global_lrdp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    input_lipschitz: float,
    lam: float,
    low: float = 0.0,
    high: float = 1.0,
    input_low: float = 0.0,
    input_high: float = 1.0,
) -> tuple[int, int, int]:
    """Grid inputs, buckets and samples per input of the global Rényi-LDP estimator.

    ``k_x = ⌈3(2λ−1)K L'(d−c)/(2(λ−1)K'τ0γ)⌉`` inputs (docs/methods.md §4) and the Rényi sizes of
    :func:`lrdp_sample_size` at precision γ/3 and confidence √β — the split of Algorithm 2,
    carried over by analogy (**[unverified]**: the paper's text for this case did not survive
    extraction, and the authors' code computes k_x but not a separate inner split).

    Returns:
      ``(inputs, buckets, n)`` as Python ints.

    Raises:
      ValueError: as :func:`global_ldp_sample_size`, and for λ ≤ 1.
    """
    gamma, beta, low, high = check_common(precision, confidence, low, high)
    lam = check_lam(lam)
    c, d = input_interval(input_low, input_high)
    width = high - low
    lip = check_lipschitz(lipschitz, width)
    lip_x = _check_input_lipschitz(input_lipschitz)
    tau0, big_k, small_k = _lrdp_density_bounds(lip, lam, width)
    k_x = max(
        2,
        math.ceil(
            3 * (2 * lam - 1) * big_k * lip_x * (d - c) / (2 * (lam - 1) * small_k * tau0 * gamma)
        ),
    )
    buckets, n = lrdp_sample_size(gamma / 3, math.sqrt(beta), lipschitz, lam, low, high)
    return k_x, buckets, n
