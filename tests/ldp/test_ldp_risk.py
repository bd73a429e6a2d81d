"""rdpjax.ldp.risk: the exact risks of paper 003's unprojected estimators.

References are independent of the formulas under test:

* exact enumeration of every outcome for tiny n: the channels' laws written here from their
  definitions (docs/methods.md §5), the integrated squared error of each outcome by scipy
  quadrature of ``(f̂ − f)²`` (not by the bias–variance split the formulas use);
* the second moments ``∫ f φ_j²`` of the classical series estimator from the double-angle identity
  ``φ_{2m}² = 1 + φ_{4m}/√2``, ``φ_{2m+1}² = 1 − φ_{4m}/√2`` (coefficients by quadrature);
* Monte Carlo with fixed seeds through the zoo's channels, checked with
  ``|mean − risk| < 4 s.e.`` (``references.assert_within_se``: two-sided nominal false-failure
  rate 6e-5 per comparison), the squared error of each replication by the density objects'
  ``squared_error`` (checked against quadrature in ``tests/ldp/test_ldp.py``).
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import assert_within_se
from scipy import integrate, stats

import rdpjax.ldp as ldp
from rdpjax.mechanisms import OrthogonalSeries

B0 = math.sqrt(2.0)
BETA22 = stats.beta(2.0, 2.0)  # f(x) = 6x(1 − x): ∫ f² = 6/5
NORM_SQ = 1.2


def trig_basis(x, k):
    """φ_1 = 1, φ_{2j} = √2 cos(2πjx), φ_{2j+1} = √2 sin(2πjx) (003, Sec. 4), shape (..., k)."""
    x = np.asarray(x, np.float64)
    cols = [np.ones_like(x)]
    for i in range(2, k + 1):
        trig = np.cos if i % 2 == 0 else np.sin
        cols.append(B0 * trig(2 * math.pi * (i // 2) * x))
    return np.stack(cols, -1)


def coefficients(k):
    """θ_j = ∫ f φ_j for the Beta(2, 2) density, j = 1..k, by quadrature."""
    return np.array(
        [
            integrate.quad(lambda t, j=j: BETA22.pdf(t) * trig_basis(t, k)[j], 0, 1, limit=200)[0]
            for j in range(k)
        ]
    )


def bin_masses(k):
    return np.diff(BETA22.cdf(np.linspace(0.0, 1.0, k + 1)))


def mean_and_se(samples):
    samples = np.asarray(samples, np.float64)
    return samples.mean(), samples.std(ddof=1) / math.sqrt(samples.size)


# --------------------------------------------------------------------------------------------
# Multinomial: exact enumeration of all outcomes (n individuals, d categories).

THETA = np.array([0.2, 0.3, 0.5])
D = THETA.size


def _enumerated_risk(outputs, law, estimate, n):
    """``Σ_z P(z) ‖θ̂(z) − θ‖²`` over all n-tuples of i.i.d. outputs with pmf ``law``."""
    tuples = list(itertools.product(range(len(outputs)), repeat=n))
    prob = np.array([np.prod(law[list(t)]) for t in tuples])
    assert prob.sum() == pytest.approx(1.0, abs=1e-12)
    z = np.stack([np.stack([outputs[i] for i in t]) for t in tuples])  # (outcomes, n, ...)
    est = np.asarray(estimate(z), np.float64)
    return float(np.sum(prob * np.sum((est - THETA) ** 2, -1)))


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_bitwise_rr_risk_by_enumeration(alpha, x64):
    """Each bit of e_X kept with probability e^{α/2}/(1 + e^{α/2}), independently; n = 2."""
    keep = math.exp(alpha / 2) / (1 + math.exp(alpha / 2))
    outputs = [np.array(bits) for bits in itertools.product((0, 1), repeat=D)]
    law = np.array(
        [
            sum(
                THETA[x] * np.prod(np.where(z == np.eye(D, dtype=int)[x], keep, 1 - keep))
                for x in range(D)
            )
            for z in outputs
        ]
    )
    n = 2
    exact = _enumerated_risk(
        outputs, law, lambda z: ldp.multinomial_bitwise_rr(z, alpha, project=False), n
    )
    assert ldp.multinomial_risk(THETA, alpha, n, "bitwise_rr") == pytest.approx(exact, rel=1e-10)


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_kary_rr_risk_by_enumeration(alpha, x64):
    """The true category with probability e^α/(e^α + d − 1), each other with 1/(e^α + d − 1)."""
    law = np.array(
        [
            sum(THETA[x] * (math.exp(alpha) if z == x else 1.0) for x in range(D))
            / (math.exp(alpha) + D - 1)
            for z in range(D)
        ]
    )
    n = 3
    exact = _enumerated_risk(
        [np.array(z) for z in range(D)],
        law,
        lambda z: ldp.multinomial_kary_rr(jnp.asarray(z, jnp.int32), alpha, D, project=False),
        n,
    )
    assert ldp.multinomial_risk(THETA, alpha, n, "kary_rr") == pytest.approx(exact, rel=1e-10)


def test_laplace_and_nonprivate_risks_by_enumeration(x64):
    """Relative frequencies of n = 3 raw draws enumerated; for Z = e_X + W the independent,
    centred noise adds ``d · Var(W)/n``, Var from scipy's Laplace law of scale 2/α."""
    n, alpha = 3, 0.7
    outputs = list(np.eye(D))
    frequencies = _enumerated_risk(outputs, THETA, lambda z: z.mean(-2), n)
    assert ldp.multinomial_risk(THETA, alpha, n, "none") == pytest.approx(frequencies, rel=1e-12)
    noise = D * stats.laplace(scale=2.0 / alpha).var() / n
    assert ldp.multinomial_risk(THETA, alpha, n, "laplace") == pytest.approx(
        frequencies + noise, rel=1e-12
    )


# --------------------------------------------------------------------------------------------
# Private histogram (Proposition 2).


def _quadrature_ise(heights):
    """∫(f̂ − f)² for the step function f̂ with these heights on equal bins, by quadrature."""
    k = len(heights)
    step = lambda t: heights[min(int(k * t), k - 1)]  # noqa: E731
    edges = list(np.linspace(0, 1, k + 1)[1:-1])
    return integrate.quad(lambda t: (step(t) - BETA22.pdf(t)) ** 2, 0, 1, points=edges)[0]


def test_nonprivate_histogram_risk_by_enumeration():
    """n = 4 draws into k = 3 bins: every count vector, its multinomial probability and the
    quadrature ISE of its histogram ``k · counts / n``."""
    n, k = 4, 3
    masses = bin_masses(k)
    exact = 0.0
    for counts in itertools.product(range(n + 1), repeat=k):
        if sum(counts) == n:
            prob = stats.multinomial(n, masses).pmf(counts)
            exact += prob * _quadrature_ise(k * np.asarray(counts) / n)
    assert ldp.histogram_risk(masses, NORM_SQ, None, n) == pytest.approx(exact, rel=1e-8)


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_private_histogram_risk_by_monte_carlo(alpha):
    """R = 2000 replications of n = 200 points through ``LaplaceHistogram``'s law (one-hot bin
    plus Laplace noise of scale 2/α, drawn by numpy), the unprojected heights by
    :func:`rdpjax.ldp.histogram_density`; the projected estimator's mean error lies below."""
    reps, n, k = 2000, 200, 5
    rng = np.random.default_rng(int(10 * alpha))
    x = rng.beta(2.0, 2.0, size=(reps, n))
    z = np.eye(k)[np.minimum((x * k).astype(int), k - 1)] + rng.laplace(0, 2 / alpha, (reps, n, k))
    masses = bin_masses(k)
    risk = ldp.histogram_risk(masses, NORM_SQ, alpha, n)
    raw = np.asarray(ldp.histogram_density(z, project=False).squared_error(masses, NORM_SQ))
    mean, se = mean_and_se(raw)
    assert_within_se(mean, risk, se)
    projected = np.asarray(ldp.histogram_density(z).squared_error(masses, NORM_SQ))
    assert np.all(projected <= raw * (1 + 1e-5) + 1e-6)  # Π_k is non-expansive toward kF ∈ kΔ_k


# --------------------------------------------------------------------------------------------
# Orthogonal series, estimator (22) (Proposition 3).


@pytest.mark.parametrize("k", [1, 3, 4])
def test_nonprivate_series_risk_against_double_angle_moments(k):
    """E φ_j(X)² from the coefficients of index 4m (double-angle identity), not from quadrature
    of φ_j²; the risk is then Σ_j (E φ_j² − θ_j²)/n + ∫f² − Σ_j θ_j²."""
    n = 50
    theta_2k = coefficients(max(4 * (k // 2), 1))
    second = []
    for j in range(1, k + 1):
        m = j // 2
        sign = 0.0 if j == 1 else (1.0 if j % 2 == 0 else -1.0)
        second.append(1.0 + sign * (theta_2k[4 * m - 1] / B0 if m else 0.0))
    theta = coefficients(k)
    reference = np.sum(np.asarray(second) - theta**2) / n + NORM_SQ - np.sum(theta**2)
    ours = ldp.series_risk(theta, NORM_SQ, None, n, pdf=BETA22.pdf)
    assert ours == pytest.approx(reference, rel=1e-9)


def test_nonprivate_series_risk_by_monte_carlo():
    reps, n, k = 4000, 100, 4
    rng = np.random.default_rng(3)
    x = rng.beta(2.0, 2.0, size=(reps, n))
    theta = coefficients(k)
    est = ldp.series_density(trig_basis(x, k))
    errors = np.asarray(est.squared_error(theta, NORM_SQ), np.float64)
    mean, se = mean_and_se(errors)
    assert_within_se(mean, ldp.series_risk(theta, NORM_SQ, None, n, pdf=BETA22.pdf), se)


@pytest.mark.slow
@pytest.mark.parametrize("k,alpha", [(3, 1.0), (4, 2.0)])
def test_private_series_risk_by_monte_carlo(k, alpha):
    """R = 8000 replications of n = 200 points privatized by the zoo's sampler (20) (ties split,
    so unbiased for even k too) and estimated by (22)."""
    reps, n = 8000, 200
    x = jnp.asarray(np.random.default_rng(k).beta(2.0, 2.0, size=(reps, n)), jnp.float32)
    mech = OrthogonalSeries(alpha, k)

    @jax.jit
    def coefficients_of(keys, data):
        def one(key, row):
            return ldp.series_density(mech.values(ldp.privatize(key, mech, row))).coefficients

        return jax.vmap(one)(keys, data)

    est = ldp.SeriesDensity(coefficients_of(jax.random.split(jax.random.key(k), reps), x))
    theta = coefficients(k)
    errors = np.asarray(est.squared_error(theta, NORM_SQ), np.float64)
    mean, se = mean_and_se(errors)
    assert_within_se(mean, ldp.series_risk(theta, NORM_SQ, alpha, n), se)


def test_risk_validation():
    masses, theta = bin_masses(3), coefficients(3)
    with pytest.raises(ValueError, match="pdf="):
        ldp.series_risk(theta, NORM_SQ, None, 10)
    with pytest.raises(ValueError, match="Bessel"):
        ldp.series_risk(theta, 0.5, 1.0, 10)
    with pytest.raises(ValueError, match="pmf"):
        ldp.histogram_risk([0.5, 0.6], 2.0, 1.0, 10)
    with pytest.raises(ValueError, match="Cauchy"):
        ldp.histogram_risk(masses, 0.9, 1.0, 10)
    with pytest.raises(ValueError, match="alpha"):
        ldp.histogram_risk(masses, NORM_SQ, 0.0, 10)
    with pytest.raises(ValueError, match="alpha must be a scalar"):
        ldp.series_risk(theta, NORM_SQ, [1.0, 2.0], 10)
    with pytest.raises(ValueError, match="n must be"):
        ldp.histogram_risk(masses, NORM_SQ, 1.0, 0)
    with pytest.raises(ValueError, match="norm_sq"):
        ldp.histogram_risk(masses, float("nan"), 1.0, 10)
    with pytest.raises(ValueError, match="1-D"):
        ldp.series_risk(np.ones((2, 2)), NORM_SQ, 1.0, 10)
