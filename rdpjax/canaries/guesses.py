"""Canary scores and inclusion bits → the guess counts of a one-run audit.

The one-run game (Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run",
arXiv:2305.08846v1, the setting of Thm 3.1): each of m canaries is included in the training set
independently with probability ½ (its *inclusion bit* ``S_i``), the mechanism runs **once**, and
the auditor, from the output alone, scores every canary and guesses ``T_i ∈ {in, out, abstain}``.
The bounds of :mod:`.steinke` and :mod:`.fdp` hold for any guess vector that is a function of the
output (and of anything independent of the bits) with a number of guesses ``r = ‖T‖₁`` fixed in
advance (ibid. Thm 3.1).

Guesses here are two-sided: "in" for the ``k_in`` highest scores, "out" for the ``k_out`` lowest,
abstain on the rest. The pairs ``(k_in, k_out)`` come from a small grid that depends only on m
(:func:`guess_grid`), so the choice of the best pair after seeing the data is paid for by a
Bonferroni correction over the grid's size (the callers divide α by it).

Ties in the scores are broken in a random order drawn from a key, independent of the bits
(:func:`tie_order`): the guesses are then a function of the output and of randomness independent
of the inclusion bits, which is all Steinke et al.'s Thm 3.1 (arXiv:2305.08846v1) asks of a
guess vector, and every bound stays valid. The order depends on the (score, bit) pairs as a
multiset and on the key, never on the order the scores come in. Cost: two sorts, O(m log m).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_FRACTIONS",
    "as_scores_and_bits",
    "correct_guesses",
    "counts_from_ranks",
    "guess_grid",
    "ranked_ones",
    "split",
    "tie_order",
]

TIE_TAG = 0x7E
"""The tag folded into the key for the tie-break's stream (:func:`rdpjax._keys.key_rng`)."""

DEFAULT_FRACTIONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
"""Total guesses as fractions of m; each is used one-sided ("in" only) and two-sided (half "in",
half "out"), so the default grid has at most 19 pairs: Bonferroni pays a factor 19 on α."""


def _finite_1d(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of real numbers; got {arr.dtype} values of shape "
            f"{arr.shape}"
        )
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; entry {int(np.argmin(np.isfinite(arr)))} is not")
    return arr


def as_scores_and_bits(scores: Any, bits: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validated float64 ``scores`` and int ``bits`` (1 = included), both of length m.

    Raises:
        ValueError: naming ``scores`` or ``bits``: not 1-D numbers, not finite, bits not 0/1,
            lengths that disagree, or a side (in or out) with no canary.
    """
    scores = _finite_1d(scores, "scores")
    raw = np.asarray(bits)
    if raw.ndim != 1 or raw.dtype.kind not in "biuf":
        raise ValueError(f"bits must be a 1-D array of 0/1; got shape {raw.shape}")
    if not np.all((raw == 0) | (raw == 1)):
        raise ValueError("bits must be 0 or 1 (1 = the canary was included)")
    if raw.shape != scores.shape:
        raise ValueError(f"scores and bits lengths disagree: {scores.size} and {raw.size}")
    bits = raw.astype(np.int64)
    if bits.sum() == 0 or bits.sum() == bits.size:
        side = "in" if bits.sum() == 0 else "out"
        raise ValueError(f"bits: no {side} canary (each side needs at least one)")
    return scores, bits


def split(in_scores: Any, out_scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, bits)`` from the scores of included and excluded canaries.

    Raises:
        ValueError: naming ``in_scores`` or ``out_scores`` when one is empty, not 1-D or not
            finite.
    """
    ins, outs = _finite_1d(in_scores, "in_scores"), _finite_1d(out_scores, "out_scores")
    for arr, name in ((ins, "in_scores"), (outs, "out_scores")):
        if arr.size == 0:
            raise ValueError(f"{name} is empty: each side needs at least one canary")
    bits = np.concatenate([np.ones(ins.size, np.int64), np.zeros(outs.size, np.int64)])
    return np.concatenate([ins, outs]), bits


def guess_grid(
    m: int, fractions: Any = DEFAULT_FRACTIONS, alpha: float | None = None
) -> np.ndarray:
    """The ``(k_in, k_out)`` pairs tried on m canaries: an int array of shape (G, 2).

    For each fraction φ: ``(⌊φm⌋, 0)`` (one-sided) and ``(⌊φm/2⌋, ⌈φm/2⌉)`` (two-sided), pairs
    with no guess and the pair (m, 0) (its count is the number of included canaries, whatever the
    output) dropped, duplicates merged. With ``alpha``, pairs of fewer than
    ``log₂(2G₀/α)`` guesses are dropped too (G₀: the grid's size before): r guesses all correct
    have probability 2^{−r} under a mechanism that ignores its input, so no valid test at level
    α/(2G₀) can reject anything with them, and they would only dilute the Bonferroni correction.
    The grid depends on m, ``fractions`` and ``alpha`` only, never on the scores or bits: that
    is what makes a Bonferroni correction over its size G honest.

    Raises:
        ValueError: for m < 2, a fraction outside (0, 1], or fractions that make no guess.
    """
    if m < 2:
        raise ValueError(f"m must be ≥ 2 canaries; got {m}")
    frac = np.atleast_1d(np.asarray(fractions, np.float64))
    if frac.ndim != 1 or frac.size == 0 or np.any(~((frac > 0) & (frac <= 1))):
        raise ValueError(f"fractions must be a non-empty list in (0, 1]; got {fractions!r}")
    total = np.floor(frac * m).astype(np.int64)
    one = np.stack([total, np.zeros_like(total)], axis=1)
    two = np.stack([total // 2, total - total // 2], axis=1)
    pairs = np.concatenate([one, two])
    # "In" for every canary is right exactly n_in times, a count the output cannot move: dropped.
    keep = (pairs.sum(axis=1) >= 1) & ~((pairs[:, 0] == m) & (pairs[:, 1] == 0))
    pairs = np.unique(pairs[keep], axis=0)
    if pairs.shape[0] == 0:
        raise ValueError(
            f"fractions {frac.tolist()} of m = {m} canaries make no guess (⌊φm⌋ = 0): give "
            f"fractions of at least 1/m = {1 / m:.3g}."
        )
    if alpha is not None:
        fewest = np.log2(2.0 * pairs.shape[0] / alpha)
        if np.any(pairs.sum(axis=1) >= fewest):
            pairs = pairs[pairs.sum(axis=1) >= fewest]
    return pairs


def tie_order(scores: np.ndarray, bits: np.ndarray, key: Any = None) -> np.ndarray:
    """The canaries in ascending score, ties in a random order drawn from ``key``: index array (m,).

    First a canonical order that depends on the (score, bit) pairs as a multiset only (score,
    then bit), then, where scores tie, the order of a uniform permutation drawn from ``key``
    (:func:`rdpjax._keys.key_rng`). For a key drawn independently of the bits the order within
    every tied group is uniform and independent of the bits, whatever the canonical order was,
    so the guesses it gives ("in" on the top k_in, "out" on the bottom k_out) are a function of
    the output and of randomness independent of the bits, a valid guess vector of exactly
    ``k_in + k_out`` guesses (Steinke, Nasr, Jagielski, arXiv:2305.08846v1, the setting of
    Thm 3.1; the same guess vectors for the f-DP bound, Mahloujifar et al., arXiv:2410.22235v1).
    The guarantee is over the key's draw: the default, ``jax.random.key(0)``, is fixed before
    any data, and any key not chosen by looking at the bits is as good. Without ties the key
    plays no part.

    Args:
        scores: (m,) float scores.
        bits: (m,) 0/1 inclusion bits.
        key: a ``jax.random`` key, or ``None`` for ``jax.random.key(0)``.

    Returns:
        int array (m,): the canaries' indices, lowest score first.

    Raises:
        ValueError: naming ``key`` when it is not a ``jax.random`` key.
    """
    from rdpjax._keys import as_key, key_rng

    if key is not None:  # a bad key is a ValueError, ties or not
        try:
            key = as_key(key)
        except (TypeError, ValueError) as err:
            raise ValueError(f"key must be a jax.random key (or None); got {key!r}") from err
    canonical = np.lexsort((bits, scores))  # score, then bit: a function of the multiset only
    ordered = scores[canonical]
    if not np.any(ordered[1:] == ordered[:-1]):
        return canonical
    import jax

    key = jax.random.key(0) if key is None else key
    rank = key_rng(key, TIE_TAG).permutation(scores.size)  # a random rank per canonical slot
    return canonical[np.lexsort((rank, ordered))]


def ranked_ones(scores: np.ndarray, bits: np.ndarray, key: Any = None) -> np.ndarray:
    """Included canaries among the j lowest scores, j = 0 … m: int array (m + 1,).

    In :func:`tie_order`'s order (ties broken by ``key``): one sort, from which
    :func:`counts_from_ranks` reads the correct guesses of any grid.
    """
    order = tie_order(scores, bits, key)
    return np.concatenate([[0], np.cumsum(bits[order])])


def counts_from_ranks(ones: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Correct guesses at each pair of ``grid`` from :func:`ranked_ones`: int array (G,).

    ``v_g`` = (included among the ``k_in`` top scores) + (excluded among the ``k_out`` bottom
    scores).
    """
    m = ones.size - 1
    k_in, k_out = grid[:, 0], grid[:, 1]
    top = ones[m] - ones[m - k_in]
    bottom = k_out - ones[k_out]
    return (top + bottom).astype(np.int64)


def correct_guesses(
    scores: np.ndarray, bits: np.ndarray, grid: np.ndarray, key: Any = None
) -> np.ndarray:
    """Correct guesses at each grid pair: int array (G,), ties broken by :func:`tie_order`.

    Args:
        scores: (m,) float scores, higher meaning "more likely included".
        bits: (m,) 0/1 inclusion bits.
        grid: (G, 2) pairs ``(k_in, k_out)`` with ``k_in + k_out ≤ m``.
        key: the tie-break's ``jax.random`` key (:func:`tie_order`); ``None``: the default.

    Returns:
        ``v_g`` = (included among the ``k_in`` top scores) + (excluded among the ``k_out``
        bottom scores).
    """
    return counts_from_ranks(ranked_ones(scores, bits, key), grid)
