"""Front doors of the rejection-set test: draws in memory, or counted batch by batch at any n.

:func:`set_test` splits each side's draws at random into a selection part (a share
``options.selection``) and a certification part (the rest); :func:`counted_set_test`
is the shared core, which takes the selection draws and a function that counts the
certification draws per cell, so that the streamed front door (:mod:`.streamed`) and the audit
run the same statistic. See :mod:`rdpjax.rejection` for the statistic and why it is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rdpjax.claims import SET_KINDS, as_claim
from rdpjax.estimator.options import or_default
from rdpjax.rejection.cells import cell_codes, cell_edges, cell_scores, default_cells
from rdpjax.rejection.certification import certify, choose_candidates
from rdpjax.rejection.options import SMOOTH_SHARE, SetOptions, set_options
from rdpjax.rejection.result import SetTest

__all__ = ["SPLIT_SEED", "set_test", "counted_set_test"]

SPLIT_SEED = 0
"""Seed of the permutation that splits in-memory draws into selection and certification."""


def _target(claim: Any, delta: float | None) -> tuple[str, float]:
    """What the sets are chosen to maximize: μ for a GDP claim, else ε at the δ of interest."""
    if claim is not None and claim.kind not in SET_KINDS:
        raise ValueError(
            f"a {claim.kind} claim ({claim}) has no trade-off function to check rejection sets "
            f"against; claims of kind {', '.join(SET_KINDS)} do (use Rényi bounds for the others)"
        )
    own = None
    if claim is not None and claim.kind != "gdp":
        own = claim.params.get("delta", 0.0)
    if delta is None:
        delta = 0.0 if own is None else float(own)
    elif own is not None and float(delta) != float(own):
        raise ValueError(f"delta = {delta!r} differs from the claim's δ = {own!r}")
    if not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must be in [0, 1); got {delta!r}")
    target = "mu" if claim is not None and claim.kind == "gdp" else "epsilon"
    return target, float(delta)


def _side(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} must be a 1-D array of real outputs or integer codes; got shape {arr.shape} "
            f"({arr.dtype}); map vector outputs to one number or code first (project=)"
        )
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = int(np.sum(~np.isfinite(arr)))
        raise ValueError(f"{name} has {bad:,} non-finite (NaN or infinite) outputs")
    return arr


def counted_set_test(
    select: tuple[np.ndarray, np.ndarray],
    count: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    n_certify: tuple[int, int],
    claim: Any = None,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    streamed: bool = False,
) -> SetTest:
    """The test from selection draws and a counter of the certification draws per cell.

    Args:
        select: 1-D selection draws of P (on x) and of Q (on x').
        count: ``count(edges)`` returns the certification counts per cell
            (:func:`~rdpjax.rejection.cells.cell_codes` of every certification draw), one
            array of ``len(edges) + 1`` per side; it is called once, after the sets are fixed.
        n_certify: certification draws per side (P, Q), for planning the sets.
        claim: a claim of kind ``pure_dp``, ``approx_dp`` or ``gdp``, or ``None``.
        delta: the δ at which ε is bounded (default the claim's δ, or 0).
        alpha: family-wise level in (0, 0.5).
        options: :class:`SetOptions`.
        streamed: recorded in the result.

    Returns:
        A :class:`~rdpjax.rejection.result.SetTest`.
    """
    claim = as_claim(claim)
    if not 0.0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5); got {alpha!r}")
    options = or_default(options, SetOptions, "options", "rdpjax.rejection.SetOptions")
    target, delta = _target(claim, delta)
    sel_p, sel_q = (
        _side(select[0], "the selection draws of P"),
        _side(select[1], "the selection draws of Q"),
    )
    pooled = np.concatenate([sel_p, sel_q]).astype(np.float64)
    cells = options.cells or default_cells(pooled.size)
    edges = cell_edges(pooled, cells)
    size = edges.size + 1
    k_p = np.bincount(cell_codes(sel_p, edges), minlength=size).astype(np.float64)
    k_q = np.bincount(cell_codes(sel_q, edges), minlength=size).astype(np.float64)
    atoms = sel_p.dtype.kind in "biu" or np.unique(pooled).size <= cells  # codes, or few values
    smooth = max(0.5, SMOOTH_SHARE * size) if options.smooth is None else options.smooth
    scores, prob_p, prob_q = cell_scores(k_p, k_q, smooth=0.0 if atoms else smooth)
    candidates = choose_candidates(
        scores, prob_p, prob_q, n_certify, alpha=alpha, both_directions=options.both_directions,
        target=target, delta=delta, m=(float(sel_p.size), float(sel_q.size)),
    )  # fmt: skip
    counts_p, counts_q = count(edges)
    certified = certify(candidates, np.asarray(counts_p), np.asarray(counts_q), alpha=alpha,
                        delta=delta, claim=claim)  # fmt: skip
    return SetTest(
        claim=claim,
        alpha=float(alpha),
        delta=delta,
        epsilon=max((c.epsilon for c in certified), default=-np.inf),
        mu=max((c.mu for c in certified), default=-np.inf),
        refuted=any(c.refutes for c in certified),
        sets=tuple(certified),
        n_select=int(min(sel_p.size, sel_q.size)),
        n_certify=int(min(n_certify)),
        cells=size,
        streamed=streamed,
    )


def set_test(
    p_samples: Any,
    q_samples: Any,
    claim: Any = None,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    **fields: Any,
) -> SetTest:
    """Certified rejection sets from draws of P (on x) and Q (on x'), checked against a claim.

    A random ``options.selection`` of each side's draws (a fixed-seed permutation, so that the
    order of the draws does not matter) choose the sets, the rest certify them with exact
    binomial bounds; everything reported holds simultaneously at 1 − α, at any
    sample size (no asymptotics). See :mod:`rdpjax.rejection`.

    Args:
        p_samples: 1-D array of outputs on x (reals or integer codes), i.i.d.
        q_samples: the same on x'.
        claim: :func:`~rdpjax.claims.approx_dp`, :func:`~rdpjax.claims.gdp` or
            :func:`~rdpjax.claims.pure_dp`, or ``None`` to report bounds only.
        delta: the δ at which the ε lower bound is reported (default the claim's δ, or 0).
        alpha: family-wise level in (0, 0.5).
        options: :class:`SetOptions`.
        **fields: :class:`SetOptions` fields by name instead (``selection=0.1``).

    Returns:
        A :class:`~rdpjax.rejection.result.SetTest`: ``epsilon`` (ε at δ), ``mu``, the certified
        trade-off ``points()``, ``refuted`` and a ``verdict()``.

    Raises:
        ValueError: for outputs that are not 1-D, non-finite, or too few (each part needs 2 or
            more draws); a claim without a trade-off function; α outside (0, 0.5).

    Example:
        >>> import numpy as np
        >>> from rdpjax.claims import approx_dp
        >>> rng = np.random.default_rng(0)
        >>> p, q = rng.normal(1.0, 1.0, 100_000), rng.normal(0.0, 1.0, 100_000)
        >>> result = set_test(p, q, approx_dp(1.0, 1e-5))
        >>> result.refuted  # N(1,1) vs N(0,1) is (4.38, 1e-5)-DP, not (1, 1e-5)
        True
    """
    options = set_options(options, fields)
    p, q = _side(p_samples, "p_samples"), _side(q_samples, "q_samples")
    # A uniformly random part of each side chooses the sets (a seeded permutation): the split is
    # then independent of the order the draws come in (a sorted file, say), which certification
    # needs; for draws already i.i.d. in order it changes nothing.
    rng = np.random.default_rng(SPLIT_SEED)
    p, q = p[rng.permutation(p.size)], q[rng.permutation(q.size)]
    m_p, m_q = (int(np.floor(options.selection * a.size)) for a in (p, q))
    if min(m_p, q.size - m_q, m_q, p.size - m_p) < 2:
        raise ValueError(
            f"too few draws: {p.size:,} and {q.size:,} leave fewer than 2 per side to choose or "
            f"to certify the sets (selection = {options.selection:g})"
        )

    def count(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return tuple(  # pyright: ignore[reportReturnType]
            np.bincount(cell_codes(a, edges), minlength=edges.size + 1) for a in (p[m_p:], q[m_q:])
        )

    return counted_set_test(
        (p[:m_p], q[:m_q]), count, (p.size - m_p, q.size - m_q), claim, delta=delta,
        alpha=alpha, options=options,
    )  # fmt: skip
