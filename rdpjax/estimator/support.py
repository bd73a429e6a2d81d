"""Discrete outputs: detecting them, mapping them to integer codes, relative frequencies.

Relative frequencies are eq. (9) of Kutta, Askin, Dunsche, arXiv:2212.04739v3:
``p̂(t) = #{i : X_i = t} / n``. Outputs may be integers, integer-valued floats, a few distinct
floats, or vectors over a small alphabet (one code per distinct row). Codes are dense in
``[0, support_size)`` over the pooled samples, so both pmfs live on one common support.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "GAP_MIN_RATIO",
    "MAX_CATEGORIES",
    "MAX_SUPPORT",
    "encode_pair",
    "gap_evidence",
    "split_counts",
    "split_rows",
    "looks_discrete",
    "support_gap",
]

MAX_SUPPORT = 2**20
"""The dense limit: discrete data with more distinct values than this are rejected."""


MAX_CATEGORIES = 64
"""One-dimensional outputs with at most this many distinct values get relative frequencies."""


def looks_discrete(p: np.ndarray, q: np.ndarray, *, max_points: int = 2**16) -> bool:
    """Decide whether samples get relative frequencies (eq. (9)) rather than a KDE (eq. (10)).

    Made on a strided subsample of at most ``max_points`` rows of the pooled data. Booleans are
    always discrete. One-dimensional outputs of any dtype are discrete when they take at most
    :data:`MAX_CATEGORIES` distinct values, each seen four times on average; with more values they
    are treated as *ordinal* and smoothed along their order by the KDE, which is then the binned KDE
    of the integers as numbers (valid for any output by the data-processing inequality, like every
    smoothing here). Measured (``benchmarks/calibration/calibrate_ordinal.py``, R = 200, discrete
    Laplace and rounded Gaussian, scales 1–200, n = 10³–10⁵, every cell of both estimators with
    simultaneous coverage ≥ 0.98): with more than about 64 values the KDE was as tight or tighter in
    every cell, e.g. discrete Laplace, scale 30 at n = 10⁵: mean lower/exact 0.91 / 0.93 / 0.94 at λ
    = 2, 5, 7 against 0.72 / 0.88 / 0.90 for frequencies, and at scale 200 0.91 / 0.93 / 0.94
    against −0.61 / 0.47 / 0.60; with fewer the two were within a few hundredths. Codes of unordered
    categories (more than 64 of them) should be passed with ``discrete=True``.

    Vectors ``(n, d)``: integers are discrete when at most a tenth of the rows are distinct,
    floats when at most √rows are distinct.
    """
    if all(a.dtype.kind == "b" for a in (p, q)):
        return True
    stride = max(1, math.ceil((len(p) + len(q)) / max_points))
    # Every stride-th row of the pooled rows [p; q], without copying the pool: q's rows start
    # where p's stride left off.
    sub = np.concatenate([p[::stride], q[-len(p) % stride :: stride]])
    sub = sub.reshape(len(sub), -1)
    if sub.shape[1] == 1:
        # Every 64th row of the subsample first: more than MAX_CATEGORIES distinct values
        # there means more in the whole subsample too, so the answer is the same without the
        # sort of the whole (continuous outputs, the common case, stop here).
        if len(np.unique(sub[::64, 0])) > MAX_CATEGORIES:
            return False
        distinct = len(np.unique(sub[:, 0]))
        return distinct <= min(MAX_CATEGORIES, max(1, len(sub) // 4))
    distinct = len(np.unique(sub, axis=0))
    if sub.dtype.kind in "biu":
        return distinct <= max(1, len(sub) // 10)
    return distinct <= max(1, math.isqrt(len(sub)))


def encode_pair(
    p: np.ndarray, q: np.ndarray, *, max_support: int = MAX_SUPPORT
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Map two discrete samples to integer codes on their pooled support.

    Integer-valued data (any dimension) whose value box has at most ``max_support`` cells use
    mixed-radix codes (O(n), no sort); anything else goes through ``np.unique``.

    Args:
      p: ``(n,)`` or ``(n, d)`` samples.
      q: samples of the same dimension as ``p`` (their sizes may differ).
      max_support: the dense limit.

    Returns:
      ``(codes_p, codes_q, support)`` with int32 codes in ``[0, len(support))``; ``support[c]``
      is the value (or row) that code ``c`` stands for.

    Raises:
      ValueError: if there are more distinct values than ``max_support``.
    """
    n_p = len(p)
    pooled = np.concatenate([p, q]).reshape(n_p + len(q), -1)
    # Integer-valued and small enough that int64 arithmetic (and the radix) is exact.
    small = pooled.size == 0 or float(np.max(np.abs(pooled.astype(np.float64)))) < 2.0**52
    integral = small and (pooled.dtype.kind in "biu" or bool(np.all(pooled == np.rint(pooled))))
    if integral:
        ints = pooled.astype(np.int64)
        lo, hi = ints.min(axis=0), ints.max(axis=0)
        radix = hi - lo + 1
        if math.prod(int(r) for r in radix) <= max_support:
            box = tuple(int(r) for r in radix)
            codes = np.asarray(np.ravel_multi_index(tuple((ints - lo).T), box), dtype=np.int32)
            rows: np.ndarray = np.stack(np.unravel_index(np.arange(math.prod(box)), box), 1) + lo
            support = rows[:, 0] if np.ndim(p) == 1 else rows
            return codes[:n_p], codes[n_p:], support.astype(pooled.dtype)
    if pooled.shape[1] == 1:  # a flat sort is much faster than np.unique(axis=0)
        values, codes = np.unique(pooled[:, 0], return_inverse=True)
        support = values[:, None]
    else:
        support, codes = np.unique(pooled, axis=0, return_inverse=True)
    if len(support) > max_support:
        raise ValueError(
            f"discrete samples have {len(support)} distinct values, more than the dense limit "
            f"{max_support}; pass discrete=False to treat them as continuous."
        )
    codes = codes.reshape(-1).astype(np.int32)
    if np.ndim(p) == 1:
        support = support[:, 0]
    return codes[:n_p], codes[n_p:], support


GAP_MIN_RATIO = 10.0
"""A support gap is noted when the data show, at level α, that one side puts at least this many
times the other's probability on the values the other side's first half never produced
(ε(∞) ≥ log 10 ≈ 2.3 there). Mechanisms whose likelihood ratio stays below it everywhere get a
note with probability ≤ α; measured on gaps and on laws without one in
``benchmarks/calibration/support_gap.py`` (docs/calibration.md)."""


def split_rows(codes: np.ndarray, size: int) -> np.ndarray:
    """Counts ``(2, size)`` of the even and the odd rows of ``codes``.

    Fixed indices: for i.i.d. draws two independent samples, as the pilot split of
    :mod:`rdpjax.estimator.transform`.
    """
    codes = np.asarray(codes)
    return np.stack([np.bincount(codes[i::2], minlength=size) for i in (0, 1)])


def split_counts(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Counts ``(2, K)`` of two halves of the draws behind ``counts`` ``(K,)``, split at random.

    Given the counts of n i.i.d. draws, a uniformly random half of the draws (a multivariate
    hypergeometric draw of ⌊n/2⌋ from the counts) and the rest are two independent i.i.d. samples,
    as a split of the draws themselves would be: for samples kept only as counts.
    """
    counts = np.asarray(counts, np.int64)
    first = rng.multivariate_hypergeometric(counts, int(counts.sum()) // 2)
    return np.stack([first, counts - first])


def gap_evidence(own: np.ndarray, theirs: np.ndarray, level: float) -> dict[str, float]:
    """Exact binomial bounds on both sides' probability of where ``theirs``' first half is empty.

    ``own`` and ``theirs`` are ``(2, K)`` counts of two independent halves of each sample. The set
    ``G`` (values with no draw in ``theirs[0]``) is fixed by the first half of the other sample
    alone, so given it the own draws there are Binomial(n, P_own(G)) and the other sample's
    second-half draws Binomial(m, P_theirs(G)) (n, m the sizes): Clopper–Pearson bounds at
    ``level`` each (scipy's beta quantiles) give ``P_own(G) ≥ own_lower`` and
    ``P_theirs(G) ≤ theirs_upper``. Choosing G from the same draws that bound its probability
    would not be valid: with many rare values, equal laws leave many values that one side never
    produced.

    Returns:
      A dict: ``draws`` (own draws on G), ``total`` (n), ``values`` (values of G the own sample
      produced), ``held`` (the other sample's second-half draws on G) and ``held_total`` (m),
      ``own_lower``, ``theirs_upper`` and ``ratio`` = own_lower / theirs_upper.
    """
    own, theirs = np.asarray(own, np.int64), np.asarray(theirs, np.int64)
    gap = theirs[0] == 0
    own_all = own.sum(axis=0)
    k, n = int(own_all[gap].sum()), int(own_all.sum())
    b, m = int(theirs[1][gap].sum()), int(theirs[1].sum())
    # scipy on demand: importing rdpjax leaves it unloaded (tests/test_public_api.py).
    from scipy import stats  # pyright: ignore[reportMissingTypeStubs]

    beta: Any = stats.beta  # pyright: ignore[reportUnknownMemberType]  # scipy has no stubs
    lower = float(beta.ppf(level, k, n - k + 1)) if k > 0 else 0.0
    upper = float(beta.ppf(1 - level, b + 1, m - b)) if b < m else 1.0
    return {
        "draws": k,
        "total": n,
        "values": int(np.count_nonzero(gap & (own_all > 0))),
        "held": b,
        "held_total": m,
        "own_lower": lower,
        "theirs_upper": upper,
        "ratio": lower / upper if upper > 0 else math.inf,
    }


def support_gap(halves_p: np.ndarray, halves_q: np.ndarray, alpha: float = 0.05) -> str | None:
    """A note when the samples show that one side has mass where the other has (almost) none.

    In each direction, :func:`gap_evidence` bounds both probabilities of the values the other
    side's first half never produced (four Clopper–Pearson bounds, each at α/4); when the own
    side's lower bound is at least :data:`GAP_MIN_RATIO` times the other's upper bound there, the
    note says so. All four bounds hold together with probability ≥ 1 − α, so a mechanism whose
    likelihood ratio is below :data:`GAP_MIN_RATIO` on every set gets a note with probability
    ≤ α. The data are then consistent with disjoint supports, where ε(λ) = ∞, and show ε(∞) ≥
    log ratio. The bound stays valid: its floor caps the ratio at what n draws resolve, so it grows
    with n instead (eq. (13) of arXiv:2212.04739v3 with τ → 0). Not a test of disjointness: a
    finite but huge ratio looks the same.

    Args:
      halves_p: ``(2, K)`` counts of two independent halves of the sample on x
        (:func:`split_rows`, or :func:`split_counts` for samples kept as counts).
      halves_q: the same for the sample on x', on the same support.
      alpha: the level (the audit's α).

    Returns:
      One line naming the larger gap (by its share of draws), or ``None``.
    """
    worst: tuple[float, str, str, dict[str, float]] | None = None
    for name, other, own, theirs in (
        ("x", "x'", halves_p, halves_q),
        ("x'", "x", halves_q, halves_p),
    ):
        found = gap_evidence(own, theirs, alpha / 4)
        share = found["draws"] / max(found["total"], 1)
        if found["ratio"] >= GAP_MIN_RATIO and (worst is None or share > worst[0]):
            worst = (share, name, other, found)
    if worst is None:
        return None
    share, name, other, found = worst
    values = int(found["values"])
    return (
        f"supports differ: ε(λ) may be infinite — {found['draws']:,.0f} of {found['total']:,.0f} "
        f"outputs on {name} ({share:.0%}) fell on {values:,} value{'s' if values > 1 else ''} "
        f"that half of the outputs on {other} never produced (the other half: "
        f"{found['held']:,.0f} of {found['held_total']:,.0f}); at {1 - alpha:.0%} {name} gives "
        f"them ≥ {found['ratio']:,.0f} times the probability {other} does, so ε(∞) ≥ "
        f"{math.log(found['ratio']):.2f}; the bound is capped by the floor and grows with n"
    )
