"""One-run canary audits: :func:`one_run` (in and out scores) and :func:`one_run_bits`.

The statistical model (Steinke, Nasr, Jagielski, arXiv:2305.08846v1, the setting of Thm 3.1):
each of m canaries is included independently with probability ½, the mechanism runs once, and
every canary gets a score from the output alone (higher: more likely included). Nothing else is
assumed: the bounds hold for any mechanism satisfying the hypothesis, whatever the scores are.

How the bounds are put together, and why each is valid at 1 − α:

1. Guess pairs ``(k_in, k_out)`` from a grid G that depends on m only
   (:func:`rdpjax.canaries.guesses.guess_grid`): "in" on the k_in top scores, "out" on the
   k_out bottom ones, tied scores in an order drawn from ``key`` independently of the bits
   (:func:`rdpjax.canaries.guesses.tie_order`).
2. ``epsilon``: the larger of two bounds whose levels sum to α (Bonferroni), each valid for a
   true (ε, δ) hypothesis (nested hypotheses: see :mod:`rdpjax.canaries._search` and
   :mod:`rdpjax.canaries.joint`):

   * where the grid's pairs lie on two tracks and mδ is small
     (:func:`rdpjax.canaries.joint.usable`), Steinke's test made simultaneous over the whole
     grid (:mod:`rdpjax.canaries.joint`) at
     ``JOINT_SHARE``·α, and the f-DP test with f_{ε,δ} (Mahloujifar et al., arXiv:2410.22235)
     at (1 − ``JOINT_SHARE``)·α/G per pair;
   * otherwise, for each pair, Steinke's test (Thm 3.1, δ = 0; Thm 5.2, δ > 0) at
     ``STEINKE_SHARE``·α/G and the f-DP test at (1 − ``STEINKE_SHARE``)·α/G.
3. ``mu``: the f-DP test with the Gaussian curve G_μ at α/G per pair; the largest μ rejected.
4. ``refuted``: for ε-DP and (ε, δ)-DP claims, the tests of step 2 at the claim's own (ε, δ)
   (the joint test with the claim's ε added to its grid, and every grid point below it
   rejected), so that an ``epsilon`` computed at the claim's δ is at least the claimed ε
   exactly when the claim is refuted; for μ-GDP, the test of
   step 3 at the claim's μ, or ``mu`` above it; for other claims (zCDP, RDP, dp_accounting), the
   f-DP test with the curve :func:`rdpjax.canaries.tradeoffs.claim_curve` at α/G per pair (a
   dp_accounting event's curve read from its privacy loss distribution where dp_accounting's
   PLD accountant supports the event, else from its RDP curve).

Each of ``epsilon``, ``mu``, ``refuted`` is valid at 1 − α on its own (not jointly).
Cost: O(m log m) for the sort, then a few vectorized passes over G × 24 hypotheses, and for the
joint test one exact dynamic program per grid ε near the bound (where Bonferroni's sum cannot
decide); well under a second for m = 10⁴ on a laptop CPU.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rdpjax._validation import check_level
from rdpjax.canaries import fdp, joint, steinke
from rdpjax.canaries.guesses import (
    DEFAULT_FRACTIONS,
    as_scores_and_bits,
    counts_from_ranks,
    guess_grid,
    ranked_ones,
    split,
)
from rdpjax.canaries.result import OneRunResult
from rdpjax.canaries.tradeoffs import claim_curve
from rdpjax.claims import Claim, as_claim

__all__ = ["DEFAULT_DELTA", "one_run", "one_run_bits"]

DEFAULT_DELTA = 1e-5
"""δ of the ε bounds when neither ``delta`` nor an ε-DP/(ε, δ)-DP claim says otherwise."""

STEINKE_SHARE = 0.05
"""Where the joint test is not used (:func:`_levels`): the share of α spent on Steinke's
pair-by-pair tests of ``epsilon``; the f-DP tests get the rest. Any
split fixed in advance is valid (Bonferroni). At equal levels the f_{ε,δ} bound was the larger
in every replication of the idealized Gaussian power cells (δ = 10⁻⁵), and within 0.2% of
Steinke's on Laplace scores at δ = 0 (where Steinke's Thm 3.1 is exact for randomized response),
so an even split wasted about half of α; this split gave the larger mean ε on both (m = 10³ and
10⁴; benchmarks/LOG.md). Steinke's test is kept, at a small share, because no proof here shows
that the f-DP bound dominates it."""


def _delta(delta: Any, claim: Claim | None) -> float:
    if delta is None:
        if claim is not None and claim.kind in ("pure_dp", "approx_dp"):
            return float(claim.params.get("delta", 0.0))
        return DEFAULT_DELTA
    if isinstance(delta, bool) or not isinstance(delta, int | float | np.floating | np.integer):
        raise ValueError(f"delta must be a number in [0, 1); got {delta!r}")
    if not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must be in [0, 1); got {delta!r}")
    return float(delta)


JOINT_SHARE = 0.95
"""The share of α spent on the joint Steinke test (:mod:`.joint`) where it is used; the f-DP
tests get the rest, α/G·(1 − ``JOINT_SHARE``) each. On the calibration panel (nine score laws,
m = 10³ and 10⁴) a 5% f-DP share gave the larger mean ε than 10%, 25% or 50% on every law
(docs/canaries.md, "One level for the whole grid")."""


def _levels(alpha: float, size: int, m: int, delta: float, track) -> tuple[float, float, bool]:
    """The Steinke side's level, each f-DP test's level, and whether the Steinke side is joint.

    Joint: one test over the grid at ``JOINT_SHARE``·α (:mod:`.joint`); else G tests at
    ``STEINKE_SHARE``·α/G each. Either way the levels sum to α.
    """
    if track is not None and joint.usable(m, delta, JOINT_SHARE * alpha):
        return JOINT_SHARE * alpha, (1.0 - JOINT_SHARE) * alpha / size, True
    return STEINKE_SHARE * alpha / size, (1.0 - STEINKE_SHARE) * alpha / size, False


class _JointGrid(NamedTuple):
    """The joint test's guess pairs, their :func:`rdpjax.canaries.joint.tracks`, their counts."""

    grid: np.ndarray
    track: joint.Tracks | None
    counts: np.ndarray


def _joint_grid(m, alpha, grid, fractions, ones) -> _JointGrid:
    """The joint test's pairs, tracks and counts (``ones``: :func:`ranked_ones`).

    With the default ``fractions``, :func:`rdpjax.canaries.joint.grid` (finer than the
    pair-by-pair grid: nested pairs cost the joint test little); else the caller's grid.
    """
    own = joint.grid(m, alpha) if fractions is DEFAULT_FRACTIONS else grid
    return _JointGrid(own, joint.tracks(own, m), counts_from_ranks(ones, own))


def _steinke(m, grid, paths, n_correct, delta, level, joint_used, extra=None):
    """The Steinke side's bound (the joint test's, or the largest pair's) and its pair.

    The pair is an index into ``paths.grid`` for the joint test, else into ``grid``.
    """
    if joint_used:
        return joint.epsilon_lower(m, paths.track, paths.counts, delta, level, extra)
    eps = steinke.epsilon_lower(m, grid.sum(axis=1), n_correct, delta, level)
    return float(eps.max()), int(np.argmax(eps))


def _epsilon_at(delta: float, mu: float) -> float | None:
    """The ε at which μ-GDP has hockey-stick divergence δ (DRS Cor. 2.13); None for δ = 0."""
    from scipy import optimize

    from rdpjax.claims import gdp, hockey_stick

    if delta == 0.0:
        return None
    if mu == 0.0 or float(hockey_stick(gdp(mu), 0.0)) <= delta:
        return 0.0
    claim = gdp(mu)
    hi = 1.0
    while float(hockey_stick(claim, hi)) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: float(hockey_stick(claim, e)) - delta, 0.0, hi))


def one_run_bits(
    scores: Any,
    bits: Any,
    claim: Claim | None = None,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    fractions: Any = DEFAULT_FRACTIONS,
    key: Any = None,
) -> OneRunResult:
    """Lower bounds on ε(δ) and μ from one run's canary scores and inclusion bits.

    Args:
        scores: (m,) finite scores, higher meaning "more likely included".
        bits: (m,) 0/1 inclusion bits (each drawn independently with probability ½ before the
            run: the bounds' validity rests on it).
        claim: optional :class:`rdpjax.claims.Claim` to check (any kind).
        delta: δ of the ε bounds; default: the claim's δ for ε-DP/(ε, δ)-DP claims, else 1e-5.
        alpha: error probability of each bound, in (0, 1).
        fractions: total guesses as fractions of m (:func:`~rdpjax.canaries.guesses.guess_grid`);
            fixed before seeing the data, or the Bonferroni correction is void.
        key: a ``jax.random`` key for the order of tied scores
            (:func:`~rdpjax.canaries.guesses.tie_order`); ``None``: ``jax.random.key(0)``. Any
            key chosen without looking at the bits is valid; without ties it plays no part.

    Returns:
        :class:`~rdpjax.canaries.OneRunResult`.

    Raises:
        ValueError: naming the argument: scores or bits not finite/0-1/1-D, lengths that
            disagree, a side with no canary, alpha outside (0, 1), delta outside [0, 1),
            a bad fraction or claim.

    Example:
        >>> import numpy as np
        >>> bits = np.arange(1000) % 2
        >>> one_run_bits(bits * 10.0, bits).epsilon > 4  # every guess right: a large bound
        True
    """
    scores, bits = as_scores_and_bits(scores, bits)
    claim = as_claim(claim)
    delta = _delta(delta, claim)
    alpha = check_level(alpha, upper=1.0)
    m = bits.size
    grid = guess_grid(m, fractions, alpha)
    size = grid.shape[0]
    n_guess = grid.sum(axis=1)
    ones = ranked_ones(scores, bits, key)  # one sort for both grids
    n_correct = counts_from_ranks(ones, grid)
    paths = _joint_grid(m, alpha, grid, fractions, ones)
    level_s, level_f, joint_used = _levels(alpha, size, m, delta, paths.track)
    claimed = _claimed_epsilon(claim, delta)
    eps_s, pair_s = _steinke(m, grid, paths, n_correct, delta, level_s, joint_used, claimed)
    # The joint test's verdict on the claim, from the same grid (pair -1: nothing rejected).
    joint_refutes = joint_used and claimed is not None and pair_s >= 0 and eps_s >= claimed
    eps_f = fdp.epsilon_lower(m, n_guess, n_correct, delta, level_f)
    mu_g = fdp.mu_lower(m, n_guess, n_correct, alpha / size)
    if eps_s > eps_f.max():
        winner = (paths.grid if joint_used else grid)[pair_s]
        winner_correct = (paths.counts if joint_used else n_correct)[pair_s]
    else:
        best = int(np.argmax(eps_f))
        winner, winner_correct = grid[best], n_correct[best]
    epsilon = float(max(eps_s, eps_f.max()))
    mu = float(mu_g.max())
    refuted = None
    if claim is not None:
        refuted = joint_refutes or _refutes(
            claim, m, grid, paths, n_correct, alpha, epsilon, mu, delta
        )
    return OneRunResult(
        epsilon=epsilon,
        epsilon_steinke=eps_s,
        epsilon_fdp=float(eps_f.max()),
        mu=mu,
        epsilon_gaussian=_epsilon_at(delta, mu),
        delta=delta,
        alpha=float(alpha),
        m=m,
        n_in=int(bits.sum()),
        n_out=int(m - bits.sum()),
        grid_size=size,
        guesses={
            "k_in": int(winner[0]),
            "k_out": int(winner[1]),
            "correct": int(winner_correct),
            "bound": epsilon,
        },
        claim=claim,
        refuted=refuted,
    )


def _claimed_epsilon(claim: Claim | None, delta: float) -> float | None:
    """An ε-DP or (ε, δ)-DP claim's ε where its δ is the bounds' (added to the joint grid)."""
    if claim is None or claim.kind not in ("pure_dp", "approx_dp"):
        return None
    if float(claim.params.get("delta", 0.0)) != delta:
        return None
    return float(claim.params["epsilon"])


def _refutes(
    claim: Claim,
    m: int,
    grid: np.ndarray,
    paths: _JointGrid,
    n_correct: np.ndarray,
    alpha: float,
    epsilon: float,
    mu: float,
    delta: float,
) -> bool:
    """Step 4 of the module docstring (the joint test at the bounds' δ is the caller's)."""
    size, n_guess = grid.shape[0], grid.sum(axis=1)
    if claim.kind in ("pure_dp", "approx_dp"):
        eps0, delta0 = float(claim.params["epsilon"]), float(claim.params.get("delta", 0.0))
        if delta0 == delta and epsilon > eps0:
            return True  # a bound above the claim: the claim's tests, run for ``epsilon``
        level_s, level_f, joint_used = _levels(alpha, size, m, delta0, paths.track)
        curve = lambda a: fdp.eps_delta_curve(a, eps0, delta0)  # noqa: E731
        if fdp.rejects(curve, m, n_guess, n_correct, level_f).any():
            return True
        if not joint_used:
            return bool((steinke.p_value(m, n_guess, n_correct, eps0, delta0) <= level_s).any())
        if delta0 == delta:
            return False  # the caller's run had the claim's ε on its grid
        bound, pair = joint.epsilon_lower(m, paths.track, paths.counts, delta0, level_s, eps0)
        return pair >= 0 and bound >= eps0
    if claim.kind == "gdp":
        mu0 = float(claim.params["mu"])
        if mu > mu0:
            return True
        curve = lambda a: fdp.gaussian_curve(a, mu0)  # noqa: E731
        return bool(fdp.rejects(curve, m, n_guess, n_correct, alpha / size).any())
    return bool(fdp.rejects(claim_curve(claim), m, n_guess, n_correct, alpha / size).any())


def one_run(
    in_scores: Any,
    out_scores: Any,
    claim: Claim | None = None,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    fractions: Any = DEFAULT_FRACTIONS,
    key: Any = None,
) -> OneRunResult:
    """:func:`one_run_bits` on the scores of the included and the excluded canaries.

    The split into "in" and "out" must come from independent fair coins drawn before the run
    (arXiv:2305.08846v1, Thm 3.1); jax_privacy's ``CanaryScoreAuditor(in, out)`` takes the same
    input.

    Raises:
        ValueError: naming ``in_scores``/``out_scores`` when empty, not 1-D or not finite, and
            as :func:`one_run_bits`.

    Example:
        >>> import numpy as np
        >>> key = np.random.default_rng(0)
        >>> r = one_run(key.normal(0, 1, 500), key.normal(0, 1, 500))  # null canaries
        >>> r.epsilon
        0.0
    """
    scores, bits = split(in_scores, out_scores)
    return one_run_bits(scores, bits, claim, delta=delta, alpha=alpha, fractions=fractions, key=key)
