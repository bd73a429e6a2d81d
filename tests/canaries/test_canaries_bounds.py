"""The one-run tail bounds against independent references.

References: scipy's binomial law (Steinke et al.'s Thm 3.1/5.2 written out term by term), the
exact law of the guesses on randomized response (the tight ε-DP mechanism, on which the f-DP
test's rejection probability is computed exactly), scipy's normal law (the Gaussian trade-off
curve), rdpjax.claims.tradeoff (the (ε, δ) curve), and a brute-force count of the guesses.
"""

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from rdpjax.canaries import claim_curve, fdp, guess_grid, steinke
from rdpjax.canaries.guesses import correct_guesses
from rdpjax.canaries.tradeoffs import pld_conversion
from rdpjax.claims import approx_dp, from_dp_accounting, gdp, pure_dp, rdp, tradeoff, zcdp


def _thm52(m, r, v, eps, delta):
    """Steinke, Nasr, Jagielski Thm 5.2 (Thm 3.1 at δ = 0) straight from scipy.stats.binom."""
    q = np.exp(eps) / (1 + np.exp(eps))
    tail = lambda x: stats.binom.sf(x - 1, r, q)  # noqa: E731 - P(Bin ≥ x)
    gaps = [(tail(v - i) - tail(v)) / i for i in range(1, m + 1)]
    return min(1.0, tail(v) + 2 * m * delta * max(gaps))


@pytest.mark.parametrize(
    "m, r, v, eps, delta",
    [
        (100, 50, 40, 0.5, 1e-3),
        (300, 200, 150, 1.0, 1e-5),
        (40, 30, 30, 2.0, 1e-2),
        (100, 10, 3, 0.1, 0.1),
        (500, 400, 330, 1.3, 0.0),
        (60, 60, 1, 3.0, 1e-4),
    ],
)
def test_steinke_p_value_matches_scipy(m, r, v, eps, delta):
    got = float(steinke.p_value(m, r, v, eps, delta))
    assert got == pytest.approx(_thm52(m, r, v, eps, delta), rel=1e-9, abs=1e-14)


def _smallest_rejected_count(r, m, level, curve):
    """The least c of r guesses at which the f-DP test rejects (r + 1 if none)."""
    c = np.arange(r + 1)
    rej = fdp.rejects(curve, m, np.full(c.shape, r), c, level)
    return int(c[rej].min()) if rej.any() else r + 1


@pytest.mark.parametrize(
    "eps, r, m, level",
    [(0.5, 200, 400, 0.05), (1.0, 60, 60, 0.01), (2.0, 500, 1000, 0.001), (0.0, 40, 100, 0.05)],
)
def test_fdp_test_is_valid_on_randomized_response(eps, r, m, level):
    """Canaries through randomized response at ε (ε-DP and no better): every guess is right
    with probability e^ε/(1 + e^ε), independently, so W ~ Binomial(r, q) exactly and the f-DP
    test's rejection probability is a binomial tail; it must be ≤ the level (and, the curve
    being tight here, not far below it)."""
    q = np.exp(eps) / (1 + np.exp(eps))
    c = _smallest_rejected_count(r, m, level, lambda a: tradeoff(pure_dp(eps), a))
    size = stats.binom.sf(c - 1, r, q)
    assert size <= level
    # Not vacuous: one fewer correct guess would be an event more likely than the level.
    assert stats.binom.sf(c - 2, r, q) > level / 20


def test_fdp_rejections_are_monotone_in_the_curve():
    """A stronger claim (smaller ε) is rejected whenever a weaker one is."""
    r, c = np.full(40, 300), np.full(40, 220)
    eps = np.linspace(0.0, 3.0, 40)
    rej = fdp.rejects(lambda a: fdp.eps_delta_curve(a, eps, 1e-6), 1000, r, c, 0.01)
    assert rej[0] and not rej[-1]
    assert np.all(np.diff(rej.astype(int)) <= 0)


@pytest.mark.parametrize("eps, delta", [(0.0, 0.0), (1.0, 1e-5), (3.0, 0.2)])
def test_eps_delta_curve_matches_the_claims_tradeoff(eps, delta):
    a = np.linspace(0, 1, 101)
    want = tradeoff(approx_dp(eps, delta) if delta else pure_dp(eps), a)
    np.testing.assert_allclose(fdp.eps_delta_curve(a, eps, delta), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mu", [0.0, 0.5, 2.0])
def test_gaussian_curve_matches_scipy_norm(mu):
    a = np.linspace(0, 1, 101)
    want = stats.norm.cdf(stats.norm.ppf(1 - a) - mu)  # type II error of the NP test of N(μ,1)
    np.testing.assert_allclose(fdp.gaussian_curve(a, mu), want, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(claim_curve(gdp(mu))(a), want, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_rdp_conversion_is_below_the_gaussian_curve(rho):
    """ρ-zCDP holds for the Gaussian mechanism with μ = √(2ρ), whose exact trade-off is G_μ: a
    valid conversion of the claim can only lie below G_μ (and should be a real constraint)."""
    a = np.linspace(0, 1, 201)
    exact = fdp.gaussian_curve(a, np.sqrt(2 * rho))
    for claim in (zcdp(rho), rdp(lambda lam: rho * lam)):
        f = claim_curve(claim)(a)
        assert np.all(f <= exact + 1e-12)
        # The (ε, δ) route loses against the exact RDP region, but stays a real constraint.
        assert np.all(f <= 1 - a + 1e-12) and f[100] > 0.25 * exact[100]


def _brute_force_counts(scores, bits, k_in, k_out, favour):
    """Correct guesses with ties broken for (``favour`` = 1) or against (0) the auditor."""

    def top(s, b, k):  # included among the k highest, ties taking bit ``favour`` first
        if k == 0:
            return 0
        t = np.sort(s)[::-1][k - 1]
        above = s > t
        ties_in, ties_out = np.sum((s == t) & (b == 1)), np.sum((s == t) & (b == 0))
        room = k - above.sum()
        tied_right = min(room, ties_in) if favour else max(0, room - ties_out)
        return int(b[above].sum() + tied_right)

    # The bottom k_out "out" guesses are the top k_out of −score for the excluded canaries.
    return top(scores, bits, k_in) + top(-scores, 1 - bits, k_out)


def test_correct_guesses_lie_between_the_two_extreme_tie_breaks():
    """A brute-force count, tie group by tie group: any tie-break lies between the one that
    favours the auditor and the one against, and without a tie at the cut all three agree."""
    rng = np.random.default_rng(3)
    for m in (7, 40, 301):
        for scores in (rng.integers(0, 5, m).astype(float), rng.normal(0, 1, m)):
            bits = rng.integers(0, 2, m)
            grid = guess_grid(m, (0.1, 0.3, 0.5, 1.0))
            got = correct_guesses(scores, bits, grid)
            low = [_brute_force_counts(scores, bits, ki, ko, 0) for ki, ko in grid]
            high = [_brute_force_counts(scores, bits, ki, ko, 1) for ki, ko in grid]
            assert np.all((low <= got) & (got <= high))
            if np.unique(scores).size == m:
                np.testing.assert_array_equal(got, low)


def test_grid_depends_on_m_and_alpha_only_and_drops_hopeless_pairs():
    grid = guess_grid(1000, alpha=0.05)
    total = grid.sum(axis=1)
    assert np.all(total >= np.log2(2 * 19 / 0.05))  # 19 pairs before: fewer guesses cannot win
    assert set(map(tuple, grid)) >= {(500, 500), (500, 0), (50, 50)}
    assert (1000, 0) not in set(map(tuple, grid))  # "all in": no information
    assert np.all(grid.sum(axis=1) <= 1000)
    with pytest.raises(ValueError, match="fractions"):
        guess_grid(100, (0.0, 0.5))
    # Fractions below 1/m made an empty grid, then a numpy error deep in the joint test.
    with pytest.raises(ValueError, match=r"fractions \[0.001\] of m = 200 canaries make no guess"):
        guess_grid(200, (0.001,))
    from rdpjax.canaries import one_run_bits

    bits = np.arange(200) % 2
    with pytest.raises(ValueError, match="make no guess"):
        one_run_bits(bits + 0.0, bits, fractions=[0.001])


def _rdp_route(claim):
    """The same claim's RDP curve as an rdp claim: claim_curve then takes the RDP route."""
    return claim_curve(rdp(lambda lam: claim(lam)))


@pytest.mark.parametrize("sigma, steps", [(1.0, 1), (10.8, 100)])
def test_pld_curve_lies_between_the_rdp_curve_and_the_exact_gaussian(sigma, steps):
    """T Gaussian steps of noise σ are exactly μ-GDP with μ = √T/σ, whose trade-off is G_μ
    (scipy). The PLD curve must stay below G_μ (valid), above the RDP route's curve of the same
    event (tighter, up to the 10⁻¹⁰ rounding slack), and close to G_μ (the grid's loss)."""
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma), steps)
    claim = from_dp_accounting(event)
    a = np.concatenate([[0.0], np.geomspace(1e-12, 1.0, 300)])
    exact = stats.norm.cdf(stats.norm.isf(a) - np.sqrt(steps) / sigma)
    f_pld, f_rdp = claim_curve(claim)(a), _rdp_route(claim)(a)
    assert np.all(f_pld <= exact + 1e-12)
    assert np.all(f_pld >= f_rdp - 2e-10)
    assert np.max(exact - f_pld) < 1e-4 and np.max(f_pld - f_rdp) > 0.1


def test_pld_curve_is_valid_for_the_subsampled_gaussian_both_ways():
    """One Poisson-subsampled Gaussian step (q = 0.2, σ = 1, add or remove): P = N(0, 1),
    Q = (1 − q) N(0, 1) + q N(1, 1). The likelihood ratio is monotone in x, so thresholds
    trace T(P, Q) and T(Q, P) exactly (Neyman–Pearson, from scipy); the PLD curve must lie below
    both, and above the RDP route."""
    q = 0.2
    claim = from_dp_accounting(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(1.0))
    )
    t = np.linspace(-9.0, 10.0, 2001)
    up_p, up_q = stats.norm.sf(t), (1 - q) * stats.norm.sf(t) + q * stats.norm.sf(t - 1)
    curve = claim_curve(claim)
    assert np.all(curve(up_p) <= 1 - up_q + 1e-12)  # T(P, Q): reject P above t
    assert np.all(curve(1 - up_q) <= up_p + 1e-12)  # T(Q, P): reject Q below t
    a = np.linspace(0.0, 1.0, 201)
    assert np.all(curve(a) >= _rdp_route(claim)(a) - 2e-10)


def test_pld_route_falls_back_to_rdp_and_reads_non_private_events():
    """An event the PLD accountant does not support (ρ-zCDP) takes the RDP route, the curve of
    the zcdp claim; a non-private event claims nothing (δ = 1 at every ε)."""
    claim = from_dp_accounting(dp_accounting.ZCDpEvent(0.5))
    assert pld_conversion(claim) is None
    a = np.linspace(0.0, 1.0, 51)
    np.testing.assert_allclose(claim_curve(claim)(a), claim_curve(zcdp(0.5))(a), atol=1e-12)
    eps, deltas = pld_conversion(from_dp_accounting(dp_accounting.NonPrivateDpEvent()))
    assert np.all(deltas == 1.0)
    with pytest.raises(ValueError, match="dp_accounting"):
        pld_conversion(gdp(1.0))
