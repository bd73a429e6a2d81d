"""Randomized response and shuffled randomized response (paper 000)."""

import math

import jax.numpy as jnp
import numpy as np
import pytest
from autodp import rdp_bank
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy import stats
from scipy.special import comb
from zoo_testing import assert_chi2, draw

from rdpjax.mechanisms import RandomizedResponse, ShuffledRandomizedResponse
from rdpjax.mechanisms.databases import paper_pair
from rdpjax.mechanisms.shuffle import paper_closed_form

RR_TABLE = (1.309634, 1.449647, 1.466431)  # docs/methods.md §3, ε0 = 1.5
SHUFFLED_TABLE = (0.239396, 0.437170, 0.530391)  # docs/methods.md §3, ε0 = 1.5, m = 10
SHUFFLED_REVERSE = (0.405, 1.005, 1.165)  # docs/methods.md §3 notes, reverse direction


def test_rr_matches_table():
    x, xp = paper_pair()
    for lam, ref in zip((2, 5, 7), RR_TABLE, strict=True):
        assert abs(RandomizedResponse(1.5).divergence(lam, x, xp) - ref) <= 5e-7


@pytest.mark.parametrize("lam", [1.5, 2, 3.3, 5, 7, 40])
@pytest.mark.parametrize("eps0", [0.3, 1.5, 4.0])
def test_rr_against_dp_accounting_and_autodp(lam, eps0):
    x, xp = paper_pair()
    ours = RandomizedResponse(eps0).divergence(lam, x, xp)
    keep = math.exp(eps0) / (1 + math.exp(eps0))
    # dp-accounting: k = 2 buckets, noise parameter p with p/k the flip probability.
    oracle = rdp._randomized_response_rdp_replace_one(p=2 * (1 - keep), k=2, alpha=lam)
    assert ours == pytest.approx(oracle, rel=1e-10)
    assert ours == pytest.approx(rdp_bank.RDP_randresponse({"p": keep}, lam), rel=1e-10)


def test_rr_divergence_adds_over_differing_entries():
    x = jnp.array([1.0, 1.0, 0.0, 1.0])
    xp = jnp.array([0.0, 1.0, 1.0, 1.0])
    one = RandomizedResponse(1.0).divergence(3, *paper_pair(m=4))
    assert RandomizedResponse(1.0).divergence(3, x, xp) == pytest.approx(2 * one)
    assert RandomizedResponse(1.0).divergence(math.inf, x, xp) == pytest.approx(2.0)


def _rr_vector_pmf(x, eps0):
    """P(output = v) for every v in {0,1}^m, indexed by the little-endian code."""
    keep = math.exp(eps0) / (1 + math.exp(eps0))
    m = len(x)
    codes = np.arange(2**m)
    bits = (codes[:, None] >> np.arange(m)) & 1
    return np.prod(np.where(bits == np.asarray(x, int), keep, 1 - keep), axis=1)


def test_rr_sampler_chi2_on_full_vector():
    x, _ = paper_pair()  # m = 10: 1024 cells
    mech = RandomizedResponse(1.0)
    samples = draw(mech, 20, x)
    assert samples.shape == (50_000, 10) and samples.dtype == jnp.int32
    assert_chi2(mech.output(x).encode(samples), _rr_vector_pmf(np.asarray(x), 1.0))


def test_shuffled_enumeration_matches_table_paper_formula_and_reverse():
    x, xp = paper_pair()
    mech = ShuffledRandomizedResponse(1.5)
    for i, lam in enumerate((2, 5, 7)):
        value = mech.divergence(lam, x, xp)
        assert abs(value - SHUFFLED_TABLE[i]) <= 5e-7
        assert value == pytest.approx(paper_closed_form(lam, 1.5, 10), rel=1e-10)
        assert abs(mech.divergence(lam, xp, x) - SHUFFLED_REVERSE[i]) <= 5e-4
    # Shuffling reduces the divergence by more than 60% (000, Shuffle Model).
    for lam in (2, 5, 7):
        assert mech.divergence(lam, x, xp) < 0.4 * RandomizedResponse(1.5).divergence(lam, x, xp)


@pytest.mark.parametrize("eps0, m", [(0.5, 3), (2.0, 7), (1.5, 25)])
def test_shuffled_closed_form_other_parameters(eps0, m):
    x, xp = paper_pair(m=m)
    for lam in (2, 3, 6):
        assert ShuffledRandomizedResponse(eps0).divergence(lam, x, xp) == pytest.approx(
            paper_closed_form(lam, eps0, m), rel=1e-9
        )


def test_shuffled_count_law():
    """Under x the count is Bern(a) + Bin(m−1, 1−a); under x' it is Bin(m, 1−a)."""
    a = math.exp(1.5) / (1 + math.exp(1.5))
    x, xp = paper_pair()
    mech = ShuffledRandomizedResponse(1.5)
    direct = np.convolve([1 - a, a], stats.binom(9, 1 - a).pmf(np.arange(10)))
    np.testing.assert_allclose(np.exp(mech.log_count_pmf(x)), direct, rtol=1e-12)
    np.testing.assert_allclose(
        np.exp(mech.log_count_pmf(xp)), stats.binom(10, 1 - a).pmf(np.arange(11)), rtol=1e-12
    )


def test_shuffled_sampler_is_a_uniform_shuffle():
    """Chi-square on the full vector: P(v) = P(count = |v|) / C(m, |v|) (uniform arrangement)."""
    x, _ = paper_pair()
    mech = ShuffledRandomizedResponse(1.0)
    samples = draw(mech, 21, x)
    codes = np.arange(2**10)
    ones = np.array([bin(c).count("1") for c in codes])
    count_pmf = np.exp(mech.log_count_pmf(x))
    probs = count_pmf[ones] / comb(10, ones)
    assert_chi2(np.asarray(RandomizedResponse(1.0).output(x).encode(samples)), probs)
    # The canonical encoding is the count.
    counts = mech.output(x).encode(samples)
    assert mech.output(x).alphabet_size == 11
    np.testing.assert_array_equal(counts, samples.sum(axis=1))
