"""The orthogonal-series sampler (20) of paper 003, split and literal ties."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import comb
from zoo_testing import assert_chi2, draw

from rdpjax.mechanisms import OrthogonalSeries
from rdpjax.mechanisms.series import trigonometric_basis

B0 = math.sqrt(2.0)


def _brute_force_pmf(x, k, alpha, ties):
    """P(z | X = x) straight from the definition (20): sum over τ̃, count each side by brute force.

    Indexed by the little-endian code of the sign bits (1 ↔ +), like ``encode``.
    """
    phi = np.array([1.0] + [0.0] * (k - 1))
    for i in range(2, k + 1):
        j = i // 2
        phi[i - 1] = B0 * (
            math.cos(2 * math.pi * j * x) if i % 2 == 0 else math.sin(2 * math.pi * j * x)
        )
    p_plus = 0.5 + phi / (2 * B0)
    pi = math.exp(alpha) / (math.exp(alpha) + 1)
    signs = np.array(list(itertools.product((-1, 1), repeat=k)))[:, ::-1]  # code order
    pmf = np.zeros(2**k)
    for tau in signs:
        p_tau = np.prod(np.where(tau == 1, p_plus, 1 - p_plus))
        inner = signs @ tau
        if ties == "split":
            w1 = np.where(inner > 0, 1.0, np.where(inner == 0, 0.5, 0.0))
        else:
            w1 = (inner > 0).astype(float)
        w0 = 1.0 - w1
        pmf += p_tau * (pi * w1 / w1.sum() + (1 - pi) * w0 / w0.sum())
    return pmf


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("ties", ["split", "literal"])
def test_pmf_against_brute_force(k, ties):
    mech = OrthogonalSeries(0.8, k, ties)
    for x in (0.0, 0.13, 0.5, 0.77):
        ours = np.exp(mech.log_pmf(x))
        np.testing.assert_allclose(ours, _brute_force_pmf(x, k, 0.8, ties), rtol=1e-10, atol=1e-15)
        assert ours.sum() == pytest.approx(1.0, abs=1e-12)


def test_basis_and_constants():
    np.testing.assert_allclose(
        trigonometric_basis(0.125, 5, xp=np),
        [1.0, 1.0, 1.0, 0.0, B0],  # √2 cos(π/4), √2 sin(π/4), √2 cos(π/2), √2 sin(π/2)
        atol=1e-12,
    )
    # c_k of 003 through B: c_1 = 1, c_3 = 0.866, c_5 = 0.8385 (docs/methods.md §5).
    for k, c_k in ((1, 1.0), (3, 0.866), (5, 0.8385)):
        mech = OrthogonalSeries(1.0, k)
        implied = B0 * math.sqrt(k) / float(mech.bound) / math.tanh(0.5)
        assert implied == pytest.approx(c_k, abs=5e-4)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_split_is_unbiased(k):
    """E[Z | X] = (φ_1(X), …, φ_k(X)) for every k with split ties (exact, by enumeration)."""
    mech = OrthogonalSeries(0.7, k, "split")
    codes = np.arange(2**k)
    values = float(mech.bound) * (2 * ((codes[:, None] >> np.arange(k)) & 1) - 1)
    for x in (0.0, 0.21, 0.5, 0.9):
        mean = np.exp(mech.log_pmf(x)) @ values
        np.testing.assert_allclose(mean, trigonometric_basis(x, k, xp=np), atol=1e-9)


def test_literal_even_k_is_biased_and_not_private():
    """The published form with even k: the conditional ratio is 3e^α for k = 2, the input-level
    D_∞ exceeds α, and the mean is off (with c_k of 003)."""
    alpha = 1.0
    pi = math.exp(alpha) / (1 + math.exp(alpha))
    # Given τ̃, k = 2: one output on the positive side, three on the other.
    assert (pi / 1) / ((1 - pi) / 3) == pytest.approx(3 * math.exp(alpha))
    mech = OrthogonalSeries(alpha, 2, "literal")
    x, xp = mech.reference_pair()
    assert (float(x), float(xp)) == (0.0, 0.5)
    a = 0.5 + 1 / (2 * B0)  # P(τ̃_1 = +B0); τ̃_2 is certain at X ∈ {0, 1/2}
    expected = math.log(3 * a * math.exp(alpha) + 1 - a)
    assert mech.divergence(math.inf, x, xp) == pytest.approx(expected, rel=1e-12)
    assert expected > alpha and not mech.claim_holds
    codes = np.arange(4)
    values = float(mech.bound) * (2 * ((codes[:, None] >> np.arange(2)) & 1) - 1)
    mean = np.exp(mech.log_pmf(0.1)) @ values
    assert not np.allclose(mean, trigonometric_basis(0.1, 2, xp=np), atol=0.1)
    assert (
        OrthogonalSeries(alpha, 4, "literal").divergence(
            math.inf, *OrthogonalSeries(alpha, 4, "literal").reference_pair()
        )
        > alpha
    )


@pytest.mark.parametrize("k", [2, 3, 4])
def test_split_is_alpha_ldp_on_a_grid(k):
    alpha = 1.2
    mech = OrthogonalSeries(alpha, k, "split")
    grid = np.linspace(0, 1, 21)
    logs = np.array([mech.log_pmf(g) for g in grid])
    assert np.max(logs[:, None, :] - logs[None, :, :]) <= alpha + 1e-12
    literal_odd = OrthogonalSeries(alpha, 3, "literal")
    assert literal_odd.claim_holds
    np.testing.assert_allclose(literal_odd.log_pmf(0.3), OrthogonalSeries(alpha, 3).log_pmf(0.3))


@pytest.mark.parametrize("k, ties", [(2, "split"), (2, "literal")])  # ties weigh ½ / 0
def test_sampler_chi2(k, ties):
    mech = OrthogonalSeries(1.0, k, ties)
    samples = draw(mech, 60 + k, 0.13)
    assert samples.shape == (50_000, k)
    assert_chi2(mech.output().encode(samples), np.exp(mech.log_pmf(0.13)))
    assert set(np.unique(np.asarray(mech.values(samples)))) <= {
        -float(mech.bound),
        float(mech.bound),
    }


def test_count_weights_match_side_sizes():
    """Sanity of the derivation: for even k, N₊ = (2^k − C(k, k/2))/2 outputs lie strictly on
    the positive side of any τ̃."""
    for k in (2, 4, 6):
        tau = np.ones(k)
        inner = np.array(list(itertools.product((-1, 1), repeat=k))) @ tau
        assert np.sum(inner > 0) == (2**k - comb(k, k // 2, exact=True)) // 2
