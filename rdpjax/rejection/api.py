"""Front doors of the rejection-set test: draws in memory, or counted batch by batch at any n.

:func:`set_test` sorts each side's draws (so that their order cannot matter), permutes them with
the key and splits them into a selection part (a share ``options.selection``) and a
certification part (the rest); :func:`counted_set_test` is the shared core, which takes the
selection draws and a function that counts the certification draws per cell, so that the
streamed front door (:mod:`.streamed`) and the audit run the same statistics: the pooled-guess
bound on ε(δ) (:mod:`.pooled`) and the certified masses of the candidate sets (μ, trade-off
points; :mod:`.certification`), the level split between them by :data:`PRIMARY_SHARE`. See
:mod:`rdpjax.rejection` for why it is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rdpjax._keys import key_rng, random_order
from rdpjax._validation import check_level
from rdpjax.claims import SET_KINDS, as_claim
from rdpjax.estimator.options import or_default
from rdpjax.rejection import operating  # noqa: F401  (registers its statistic)
from rdpjax.rejection.cells import MAX_CELLS, cell_codes, cell_edges, cell_scores, default_cells
from rdpjax.rejection.certification import certify, choose_candidates
from rdpjax.rejection.options import SMOOTH_SHARE, SetOptions, set_options
from rdpjax.rejection.pooled import (
    ORDERINGS,
    SELECTION_Z,
    Ordering,
    Pooled,
    orderings,
    poisson_rate,
    pooled_bound,
    predict,
)
from rdpjax.rejection.result import SetTest
from rdpjax.rejection.statistics import Counts, Selection, wanted

__all__ = [
    "PRIMARY_SHARE",
    "SELECTION_ORDER_TAG",
    "Counts",
    "counted_set_test",
    "selection_in_random_order",
    "set_test",
]

PRIMARY_SHARE = 0.9
"""Share of α for the statistic the claim is about: the pooled-guess bound on ε(δ) for ε-DP,
(ε, δ) or no claim, the certified masses (μ) for a GDP claim; the other gets the rest, so that
everything reported holds together at 1 − α."""


SELECTION_ORDER_TAG = 0x0D3F
"""Folded into a streamed test's key for the Generator that orders its selection draws (the
held-out half of :func:`_held_out` is taken by position)."""


def selection_in_random_order(key: Any, select: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Selection draws drawn outside :func:`set_test`, each side in :func:`random_order`.

    The Generator is ``key_rng(key, SELECTION_ORDER_TAG)``: the test cannot see the
    order a sampler returned them in.
    """
    rng = key_rng(key, SELECTION_ORDER_TAG)
    p, q = (np.asarray(a).reshape(-1) for a in select)
    return random_order(rng, p), random_order(rng, q)


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


def _held_out(
    sel_p: np.ndarray, sel_q: np.ndarray, edges: np.ndarray, smooth: float,
    cell_orders: list[Ordering], pooled: np.ndarray, alpha: float,
) -> list[float]:  # fmt: skip
    """Each ordering's predicted pooled bound, judged on the second half of the selection.

    The learned ordering is learned again on the first half only, so that no ordering is judged
    on the draws it was fitted to; the shares of the level follow
    (:func:`~rdpjax.rejection.pooled.shares`). ``pooled``: the pooled certification counts.
    """
    size = edges.size + 1
    half_p, half_q = sel_p.size // 2, sel_q.size // 2
    count = lambda a: np.bincount(cell_codes(a, edges), minlength=size).astype(np.float64)  # noqa: E731
    first, _, _ = cell_scores(count(sel_p[:half_p]), count(sel_q[:half_q]), smooth=smooth)
    _, fp, fq = cell_scores(count(sel_p[half_p:]), count(sel_q[half_q:]), smooth=smooth)
    freqs = (fp, fq, sel_p.size - half_p, sel_q.size - half_q)
    out = []
    for ordering in cell_orders:
        order = ordering.order
        if ordering.name == ORDERINGS[-1][0]:  # the learned ratio: refitted on the first half
            order = np.argsort(-first, kind="stable")
        out.append(max(predict(order, freqs, pooled, 0, alpha, z)[2] for z in SELECTION_Z))
    return out


def counted_set_test(
    rng: np.random.Generator,
    select: tuple[np.ndarray, np.ndarray],
    count: Callable[[np.ndarray], Counts],
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
        rng: randomness of the pooled test's ties (from the key).
        select: 1-D selection draws of P (on x) and of Q (on x').
        count: ``count(edges)`` returns the certification :class:`Counts` per cell
            (:func:`~rdpjax.rejection.cells.cell_codes` of the certification draws, arrays of
            ``len(edges) + 1``); it is called once, after the cells and orderings are fixed.
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
    alpha = check_level(alpha)
    options = or_default(options, SetOptions, "options", "rdpjax.rejection.SetOptions")
    target, delta = _target(claim, delta)
    sel_p, sel_q = (
        _side(select[0], "the selection draws of P"),
        _side(select[1], "the selection draws of Q"),
    )
    pooled = np.concatenate([sel_p, sel_q]).astype(np.float64)
    cells = options.cells or default_cells(pooled.size)
    distinct = np.unique(pooled)
    atoms = sel_p.dtype.kind in "biu" or distinct.size <= cells  # codes, or few values
    if atoms and distinct.size < min(cells if options.cells else MAX_CELLS, MAX_CELLS):
        edges = distinct  # a cell per value seen: quantiles could merge two codes' cells
    else:
        edges = cell_edges(pooled, cells)
    size = edges.size + 1
    k_p = np.bincount(cell_codes(sel_p, edges), minlength=size).astype(np.float64)
    k_q = np.bincount(cell_codes(sel_q, edges), minlength=size).astype(np.float64)
    smooth = max(0.5, SMOOTH_SHARE * size) if options.smooth is None else options.smooth
    scores, prob_p, prob_q = cell_scores(k_p, k_q, smooth=0.0 if atoms else smooth)
    primary = PRIMARY_SHARE * float(alpha)
    a_pooled, a_mass = (
        (primary, alpha - primary) if target == "epsilon" else (alpha - primary, primary)
    )
    candidates = choose_candidates(
        scores, prob_p, prob_q, n_certify, alpha=a_mass, both_directions=options.both_directions,
        target=target, delta=delta, m=(float(sel_p.size), float(sel_q.size)),
    )  # fmt: skip
    cell_orders = orderings(edges, scores, float(np.median(pooled)))
    selection = Selection(
        edges=edges, scores=scores, prob_p=prob_p, prob_q=prob_q,
        n_select=(int(sel_p.size), int(sel_q.size)), n_certify=n_certify, options=options,
    )  # fmt: skip
    plans = [(s, s.plan(selection)) for s in wanted(options)]  # before any count exists
    counts = count(edges)
    certified = certify(candidates, np.asarray(counts.p), np.asarray(counts.q), alpha=a_mass,
                        delta=delta, claim=claim)  # fmt: skip
    guess: Pooled | None = None
    if counts.poisson is not None:
        freqs = (prob_p, prob_q, sel_p.size, sel_q.size)
        pooled_counts = counts.poisson[0] + counts.poisson[1]
        honest = _held_out(sel_p, sel_q, edges, 0.0 if atoms else smooth, cell_orders,
                           pooled_counts, a_pooled)  # fmt: skip
        guess = pooled_bound(rng, counts.poisson, counts.rate, cell_orders, freqs, delta=delta,
                             alpha=a_pooled, honest=honest)  # fmt: skip
    pooled_eps = -np.inf if guess is None else guess.epsilon
    # Registered statistics: each its own family at α, after every other use of rng.
    extras = {s.name: s.result(plan, counts, float(alpha), rng) for s, plan in plans}
    refuted = any(c.refutes for c in certified)
    if claim is not None and claim.kind in ("pure_dp", "approx_dp"):
        refuted = refuted or bool(pooled_eps > float(claim.params["epsilon"]))
    return SetTest(
        claim=claim,
        alpha=float(alpha),
        delta=delta,
        epsilon=max(max((c.epsilon for c in certified), default=-np.inf), pooled_eps),
        mu=max((c.mu for c in certified), default=-np.inf),
        refuted=refuted,
        sets=tuple(certified),
        n_select=int(min(sel_p.size, sel_q.size)),
        n_certify=int(min(n_certify)),
        cells=size,
        streamed=streamed,
        pooled=guess,
        levels=(a_pooled, a_mass),
        extras=extras,
    )


def set_test(
    key: Any,
    p_samples: Any,
    q_samples: Any,
    claim: Any = None,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    **fields: Any,
) -> SetTest:
    """Certified ε(δ), μ and rejection sets from draws of P (on x) and Q (on x'), against a claim.

    Each side's draws are sorted, then permuted with ``key``, so the result depends on the draws
    and the key only, never on the order the sampler returned them in; a share
    ``options.selection`` of each side chooses the cells and orderings, the rest certifies:
    exact binomial bounds, and everything reported holds simultaneously at 1 − α, at any sample
    size (no asymptotics). See :mod:`rdpjax.rejection`.

    Args:
        key: a JAX key (the split, the Poissonization and the ties of the pooled test).
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
        >>> import jax, numpy as np
        >>> from rdpjax.claims import approx_dp
        >>> rng = np.random.default_rng(0)
        >>> p, q = rng.normal(1.0, 1.0, 100_000), rng.normal(0.0, 1.0, 100_000)
        >>> result = set_test(jax.random.key(0), p, q, approx_dp(1.0, 1e-5))
        >>> result.refuted  # N(1,1) vs N(0,1) is (4.38, 1e-5)-DP, not (1, 1e-5)
        True
    """
    options = set_options(options, fields)
    alpha = check_level(alpha)
    rng = key_rng(key)
    p, q = _side(p_samples, "p_samples"), _side(q_samples, "q_samples")
    # Sorted first, so that the permutation (from the key) acts on the multiset of draws: the
    # split and everything after it are then the same whatever order the draws came in, and
    # for i.i.d. draws the parts are independent uniformly random subsamples.
    p, q = random_order(rng, p), random_order(rng, q)
    m_p, m_q = (int(np.floor(options.selection * a.size)) for a in (p, q))
    if min(m_p, q.size - m_q, m_q, p.size - m_p) < 2:
        raise ValueError(
            f"too few draws: {p.size:,} and {q.size:,} leave fewer than 2 per side to choose or "
            f"to certify the sets (selection = {options.selection:g})"
        )
    cert_p, cert_q = p[m_p:], q[m_q:]

    def count(edges: np.ndarray) -> Counts:
        size = edges.size + 1
        codes_p, codes_q = cell_codes(cert_p, edges), cell_codes(cert_q, edges)
        rate = poisson_rate(min(codes_p.size, codes_q.size))
        n_p, n_q = int(rng.poisson(rate)), int(rng.poisson(rate))
        poisson = None
        if n_p <= codes_p.size and n_q <= codes_q.size:  # the first N of a random order
            poisson = tuple(
                np.bincount(c[:k], minlength=size) for c, k in ((codes_p, n_p), (codes_q, n_q))
            )
        full_p, full_q = (np.bincount(c, minlength=size) for c in (codes_p, codes_q))
        return Counts(full_p, full_q, poisson, rate)  # pyright: ignore[reportArgumentType]

    return counted_set_test(
        rng, (p[:m_p], q[:m_q]), count, (cert_p.size, cert_q.size), claim, delta=delta,
        alpha=alpha, options=options,
    )  # fmt: skip
