"""Report Noisy Max and the Sparse Vector Technique: correct and known-incorrect variants."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats
from zoo_testing import assert_chi2, assert_ks, draw

from rdpjax.mechanisms import ReportNoisyMax, SparseVector

# ---------------------------------------------------------------------------------------------
# Report Noisy Max.


def _rnm_index_quad(q, eps, noise):
    """P(argmax = i) by scipy adaptive quadrature (independent of the zoo's Gauss–Legendre)."""
    b = 2.0 / eps
    law = stats.laplace(scale=b) if noise == "laplace" else stats.expon(scale=b)
    probs = []
    for i in range(len(q)):

        def integrand(t, i=i):
            others = np.prod([law.cdf(t - q[j]) for j in range(len(q)) if j != i])
            return law.pdf(t - q[i]) * others

        lo = q[i] if noise == "exponential" else min(q) - 60 * b
        value, _ = integrate.quad(integrand, lo, max(q) + 60 * b, points=list(q), limit=400)
        probs.append(value)
    return np.array(probs)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_noisy_max_index_pmf(noise):
    q = np.array([0.0, 1.0, 0.5, 2.0])
    mech = ReportNoisyMax(1.0, noise=noise)
    pmf = np.exp(mech.log_pmf(q))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(pmf, _rnm_index_quad(q, 1.0, noise), rtol=1e-7)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_noisy_max_index_is_eps_dp(noise):
    """D_∞ ≤ ε on the reference pair and on random sensitivity-1 neighbours."""
    eps = 0.8
    mech = ReportNoisyMax(eps, noise=noise)
    assert mech.divergence(math.inf, *mech.reference_pair()) <= eps
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.uniform(0, 3, size=4)
        qp = q + rng.uniform(-1, 1, size=4)
        assert mech.divergence(math.inf, q, qp) <= eps * (1 + 1e-9)


def test_noisy_max_value_breaks_its_claim():
    """Releasing the noisy maximum: D_∞ = (Σq' − Σq)/b = 4ε on the reference pair, exactly the
    constant log ratio left of every answer; D_5 already exceeds ε."""
    eps = 1.0
    mech = ReportNoisyMax(eps, output_kind="value")
    x, xp = mech.reference_pair()
    b = 2.0 / eps
    assert mech.divergence(math.inf, x, xp) == pytest.approx(8.0 / b, rel=1e-9)
    assert mech.divergence(5, x, xp) > eps and not mech.claim_holds
    # The index output of the same noisy vector stays below ε on the same pair.
    assert ReportNoisyMax(eps).divergence(math.inf, x, xp) <= eps


def test_noisy_max_value_divergence_against_quadrature():
    q, qp, eps, lam = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 1.0]), 1.0, 3.0
    b = 2.0 / eps
    law = stats.laplace(scale=b)

    def density(answers):
        def f(t):
            return sum(
                law.pdf(t - answers[i])
                * np.prod([law.cdf(t - answers[j]) for j in range(3) if j != i])
                for i in range(3)
            )

        return f

    fp, fq = density(q), density(qp)
    value, _ = integrate.quad(
        lambda t: fp(t) ** lam * fq(t) ** (1 - lam), -40, 40, points=[0, 1], limit=400
    )
    ours = ReportNoisyMax(eps, output_kind="value").divergence(lam, q, qp)
    assert ours == pytest.approx(math.log(value) / (lam - 1), rel=1e-7)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_noisy_max_index_sampler_chi2(noise):
    mech = ReportNoisyMax(1.0, noise=noise)
    q = np.linspace(0.0, 2.0, 10)  # k = 10, as in the reference pair
    codes = mech.output(q).encode(draw(mech, 70, q))
    assert_chi2(codes, np.exp(mech.log_pmf(q)))


def test_noisy_max_value_sampler_ks():
    """CDF of the maximum: Π_i F(t − q_i)."""
    mech = ReportNoisyMax(1.0, output_kind="value")
    q = np.linspace(0.0, 2.0, 10)
    law = stats.laplace(scale=2.0)
    samples = draw(mech, 71, q)
    assert_ks(samples, lambda t: np.prod([law.cdf(t - a) for a in q], axis=0))


# ---------------------------------------------------------------------------------------------
# Sparse Vector Technique.


def _laplace_sf(u, scale):
    """P(L ≥ u) for L ~ Lap(0, scale), in plain floats (scipy.stats per call is slow)."""
    return 0.5 * math.exp(-u / scale) if u >= 0 else 1.0 - 0.5 * math.exp(u / scale)


def _svt_pattern_quad(q, pattern, eps, threshold, variant, cutoff=1):
    """P(output = pattern) by scipy quadrature over the threshold noise (independent oracle)."""
    mech = SparseVector(eps, threshold, cutoff, variant)
    rho_factor, nu_factor = mech.noise_factors()
    rho_scale, nu = rho_factor / eps, nu_factor / eps
    last = len(q) - 1
    if mech.stops and sum(pattern) == cutoff:
        last = max(i for i, v in enumerate(pattern) if v == 1)

    def integrand(r):
        value = math.exp(-abs(r) / rho_scale) / (2 * rho_scale)
        for i in range(last + 1):
            u = threshold + r - q[i]
            top = _laplace_sf(u, nu) if nu > 0 else float(u <= 0)
            value *= top if pattern[i] else 1.0 - top
        return value

    kinks = sorted(set(np.asarray(q) - threshold) | {0.0})
    width = 60 * rho_scale
    value, _ = integrate.quad(integrand, -width, width, points=kinks, limit=400)
    return value


@pytest.mark.parametrize("variant", ["lyu", "lee_clifton", "stoddard", "chen"])
def test_svt_pmf_against_quadrature(variant):
    q = np.array([0.2, 1.4, 0.0, 0.9])
    mech = SparseVector(1.0, 0.5, variant=variant)
    log_pmf = mech.log_pmf(q)
    assert np.exp(log_pmf).sum() == pytest.approx(1.0, abs=1e-10)
    for pattern in itertools.product((0, 1), repeat=4):
        if mech.stops and sum(pattern) > 1:
            continue
        code = sum(bit << i for i, bit in enumerate(pattern))
        oracle = _svt_pattern_quad(q, pattern, 1.0, 0.5, variant)
        assert math.exp(log_pmf[code]) == pytest.approx(oracle, rel=1e-6, abs=1e-12)


def test_svt_correct_variant_below_eps():
    eps = 1.0
    mech = SparseVector(eps)
    pairs = [mech.reference_pair(), SparseVector.lee_clifton_pair()]
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = rng.uniform(-1, 2, size=6)
        pairs.append((q, q + rng.uniform(-1, 1, size=6)))
    for x, xp in pairs:
        assert mech.divergence(math.inf, x, xp) <= eps * (1 + 1e-9)
    assert SparseVector(eps, cutoff=2).divergence(math.inf, *pairs[0]) <= eps * (1 + 1e-9)


def test_svt_incorrect_variants_exceed_eps():
    eps = 1.0
    lee = SparseVector(eps, variant="lee_clifton")
    d_inf = lee.divergence(math.inf, *lee.reference_pair())
    # Lyu, Su, Li (2017): Lee–Clifton's SVT is ((1 + 6c)/4)ε-DP, not ε-DP.
    assert eps < d_inf <= (1 + 6 * 1) / 4 * eps
    assert lee.divergence(7, *lee.reference_pair()) > eps
    assert (
        SparseVector(eps, variant="stoddard").divergence(
            2, *SparseVector(eps, variant="stoddard").reference_pair()
        )
        == math.inf
    )
    chen = SparseVector(eps, variant="chen")
    assert chen.divergence(2, *chen.reference_pair()) > eps
    assert not any(
        SparseVector(eps, variant=v).claim_holds for v in ("lee_clifton", "stoddard", "chen")
    )


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["lyu", "lee_clifton", "stoddard", "chen"])
def test_svt_sampler_chi2(variant):
    mech = SparseVector(1.0, 0.5, variant=variant)
    x, _ = mech.reference_pair()
    samples = draw(mech, 72, x)
    assert_chi2(mech.output(x).encode(samples), np.exp(mech.log_pmf(x)))
