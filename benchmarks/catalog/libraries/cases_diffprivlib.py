"""diffprivlib (IBM) mechanisms as rdpjax black boxes, and a bug it shipped.

Each sampler is a numpy callable ``sample(rng, database, n)``: it seeds one diffprivlib mechanism
with a 32-bit seed drawn from ``rng`` (diffprivlib takes ``random_state``), so the audit is
reproducible from its key, and calls ``randomise`` n times on the database's statistic.

* ``diffprivlib_laplace``: ``Laplace(ε = 1, sensitivity = 1)`` on a value 1 vs 0; claim
  ``pure_dp(1)``; exact: the Laplace closed form (continuous idealization: the library samples
  floats).
* ``diffprivlib_gaussian_analytic``: ``GaussianAnalytic(ε = 1, δ = 1e-5, sensitivity = 1)``. Its
  stated guarantee, (ε, δ)-DP, implies no RDP curve (``docs/claims.md``); what its analysis (Balle
  & Wang 2018, the analytic Gaussian mechanism) establishes is that N(0, σ²) with the library's
  σ has the Gaussian privacy profile of μ = Δ/σ, i.e. μ-GDP. The claim checked is ``gdp(Δ/σ)``
  with σ the mechanism's own scale; exact λΔ²/(2σ²), equal to the claim.
* ``diffprivlib_geometric``: ``Geometric(ε = 1, sensitivity = 1)`` on integers 1 vs 0; claim
  ``pure_dp(1)``; exact: the two-sided geometric law's D_λ summed over the integers.
* ``diffprivlib_linreg_diagonal`` (bug): ``LinearRegression``'s noisy objective (the functional
  mechanism, ``diffprivlib.models.linear_regression._construct_regression_obj``) with
  ``bounds_X = (0, 1)``: the diagonal second-degree coefficient Σx² gets the sensitivity
  ``max(|L|, |L|)² = 0`` (IBM/differential-privacy-library#105, PR #110), so it is released
  without noise. The audit observes that coefficient (a fixed projection of the release) on two
  databases differing in one record's feature (1 vs 0); claim ``pure_dp(ε/3)``, the share the
  library's own accounting gives each of the three coefficients (``local_epsilon``); ε(λ) = ∞.
* ``diffprivlib_linreg_diagonal.fixed`` (twin): the same coefficient through diffprivlib's
  ``LaplaceFolded`` with the sensitivity PR #110 restores (``max(|L|, |U|)² = 1``); exact: folded
  Laplace laws by quadrature.
"""

from __future__ import annotations

import numpy as np
from case import (
    Case,
    discrete_laplace_renyi,
    folded_laplace_renyi,
    gaussian_renyi,
    infinite,
    laplace_renyi,
    optional,
    seed_from,
)

from rdpjax.claims import gdp, pure_dp

diffprivlib, VERSION, MISSING = optional("diffprivlib", "diffprivlib")
EPS, DELTA = 1.0, 1e-5
LINREG_EPS = 1.0
LINREG_BOUNDS_X, LINREG_BOUNDS_Y = (0.0, 1.0), (0.0, 1.0)
# One feature, one target: 1 + 1·1 + 1·2/2 = 3 coefficients share ε (local_epsilon = ε/3).
LINREG_LOCAL_EPS = LINREG_EPS / 3
LINREG_CITES = (
    "https://github.com/IBM/differential-privacy-library/issues/105",
    "https://github.com/IBM/differential-privacy-library/pull/110",
    "https://github.com/IBM/differential-privacy-library/issues/104",
    "https://arxiv.org/abs/2602.17454",
)


def _repeat(mechanism_class, value, n, rng, **params):
    mech = mechanism_class(random_state=np.random.RandomState(seed_from(rng)), **params)
    return np.array([mech.randomise(value) for _ in range(n)])


def laplace(rng, database, n):
    """``diffprivlib.mechanisms.Laplace(ε, sensitivity 1)`` on the sum, n times."""
    from diffprivlib.mechanisms import Laplace

    return _repeat(Laplace, float(np.sum(database)), n, rng, epsilon=EPS, sensitivity=1.0)


def gaussian_analytic(rng, database, n):
    """``diffprivlib.mechanisms.GaussianAnalytic(ε, δ, sensitivity 1)`` on the sum."""
    from diffprivlib.mechanisms import GaussianAnalytic

    params = dict(epsilon=EPS, delta=DELTA, sensitivity=1.0)
    return _repeat(GaussianAnalytic, float(np.sum(database)), n, rng, **params)


def analytic_sigma() -> float:
    """The σ diffprivlib's ``GaussianAnalytic`` calibrates for (ε, δ) and sensitivity 1."""
    from diffprivlib.mechanisms import GaussianAnalytic

    return float(GaussianAnalytic(epsilon=EPS, delta=DELTA, sensitivity=1.0)._scale)


def geometric(rng, database, n):
    """``diffprivlib.mechanisms.Geometric(ε, sensitivity 1)`` on the integer sum."""
    from diffprivlib.mechanisms import Geometric

    out = _repeat(Geometric, int(np.sum(database)), n, rng, epsilon=EPS, sensitivity=1)
    return out.astype(np.int64)


def _design(database):
    database = np.asarray(database, np.float64)
    return database[:, :1], database[:, 1]


def linreg_diagonal(rng, database, n):
    """n releases of LinearRegression's noisy objective, its diagonal coefficient Σx² observed.

    The database is (m, 2) rows [x | y]; one call of the library's functional mechanism per
    release (its three coefficients drawn, the diagonal one kept).
    """
    from diffprivlib.models.linear_regression import _construct_regression_obj

    X, y = _design(database)
    state = np.random.RandomState(seed_from(rng))
    bounds_x = (np.array([LINREG_BOUNDS_X[0]]), np.array([LINREG_BOUNDS_X[1]]))
    bounds_y = (np.array([LINREG_BOUNDS_Y[0]]), np.array([LINREG_BOUNDS_Y[1]]))
    out = np.empty(n)
    for i in range(n):
        _, coefs = _construct_regression_obj(X, y, bounds_x, bounds_y, LINREG_EPS, 0, state)
        out[i] = coefs[2][0, 0]
    return out


def linreg_diagonal_fixed(rng, database, n):
    """The diagonal coefficient through ``LaplaceFolded`` with sensitivity max(|L|, |U|)²."""
    from diffprivlib.mechanisms import LaplaceFolded

    X, _ = _design(database)
    sensitivity = max(abs(LINREG_BOUNDS_X[0]), abs(LINREG_BOUNDS_X[1])) ** 2
    params = dict(epsilon=LINREG_LOCAL_EPS, sensitivity=sensitivity, lower=0, upper=float("inf"))
    return _repeat(LaplaceFolded, float(np.sum(X[:, 0] ** 2)), n, rng, **params)


LINREG_PAIR = (np.array([[1.0, 0.5], [0.5, 0.5]]), np.array([[0.0, 0.5], [0.5, 0.5]]))


def cases() -> list[Case]:
    """The diffprivlib cases (raises ``RuntimeError`` if diffprivlib is not usable)."""
    if MISSING:
        raise RuntimeError(MISSING)
    sigma = analytic_sigma()
    common = dict(library="diffprivlib", version=VERSION)
    one, zero = np.array([1.0]), np.array([0.0])
    sum_sq = [float(np.sum(p[:, 0] ** 2)) for p in LINREG_PAIR]
    lib_claim = "diffprivlib's documented ε-DP"
    return [
        Case(
            name="diffprivlib_laplace", kind="correct", mechanism=laplace, x=one, x_prime=zero,
            claim=pure_dp(EPS), n=100_000,
            description="Laplace(ε = 1, sensitivity 1)", claim_source=lib_claim,
            exact=laplace_renyi(1.0, 1.0 / EPS), exact_note="closed form (continuous)",
            **common,
        ),
        Case(
            name="diffprivlib_gaussian_analytic", kind="correct", mechanism=gaussian_analytic,
            x=one, x_prime=zero, claim=gdp(1.0 / sigma), n=100_000,
            description=f"GaussianAnalytic(ε = 1, δ = 1e-5): σ = {sigma:.4f}",
            claim_source="the analytic Gaussian's analysis: μ-GDP, μ = Δ/σ with the library's σ "
            "(its (ε, δ) is a point of that profile)",
            exact=gaussian_renyi(1.0, sigma), exact_note="closed form (continuous)",
            **common,
        ),
        Case(
            name="diffprivlib_geometric", kind="correct", mechanism=geometric,
            x=np.array([1]), x_prime=np.array([0]), claim=pure_dp(EPS), n=100_000,
            description="Geometric(ε = 1, sensitivity 1)", claim_source=lib_claim,
            exact=discrete_laplace_renyi(1, EPS), exact_note="sum over the integers",
            options={"discrete": True}, **common,
        ),
        Case(
            name="diffprivlib_linreg_diagonal", kind="bug", mechanism=linreg_diagonal,
            x=LINREG_PAIR[0], x_prime=LINREG_PAIR[1], claim=pure_dp(LINREG_LOCAL_EPS), n=100,
            description="LinearRegression's noisy objective, coefficient Σx², bounds_X = (0, 1)",
            claim_source="the library's split of ε over the objective's 3 coefficients (ε/3 each)",
            exact=infinite, exact_note="point masses at Σx² = 1.25 vs 0.25",
            options={"discrete": True}, cites=LINREG_CITES,
            twin="diffprivlib_linreg_diagonal.fixed", **common,
        ),
        Case(
            name="diffprivlib_linreg_diagonal.fixed", kind="correct",
            mechanism=linreg_diagonal_fixed, x=LINREG_PAIR[0], x_prime=LINREG_PAIR[1],
            claim=pure_dp(LINREG_LOCAL_EPS), n=100,
            description="the same coefficient, LaplaceFolded with sensitivity max(|L|, |U|)² = 1",
            claim_source="the library's split of ε over the objective's 3 coefficients (ε/3 each)",
            exact=folded_laplace_renyi(sum_sq[0], sum_sq[1], 1.0 / LINREG_LOCAL_EPS),
            exact_note="quadrature (scipy), both directions", cites=LINREG_CITES,
            twin="diffprivlib_linreg_diagonal", **common,
        ),
    ]  # fmt: skip
