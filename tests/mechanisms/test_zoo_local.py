"""Local channels of paper 003: k-ary RR, one-hot RR, the Laplace histogram."""

import itertools
import math

import numpy as np
import pytest
from autodp import rdp_bank
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy import stats
from scipy.special import logsumexp
from zoo_testing import assert_chi2, assert_ks, draw

from rdpjax.mechanisms import KaryRandomizedResponse, LaplaceHistogram, OneHotRandomizedResponse


@pytest.mark.parametrize("lam", [1.5, 2, 5, 7, 30])
@pytest.mark.parametrize("alpha, k", [(1.0, 5), (0.3, 2), (3.0, 17)])
def test_kary_against_dp_accounting(lam, alpha, k):
    """dp-accounting's k-ary RR: truth with probability 1 − p + p/k, each other with p/k."""
    ours = KaryRandomizedResponse(alpha, k).divergence(lam, 0, 1)
    p = k / (math.exp(alpha) + k - 1)
    assert ours == pytest.approx(rdp._randomized_response_rdp_replace_one(p, k, lam), rel=1e-10)
    assert KaryRandomizedResponse(alpha, k).divergence(math.inf, 2 % k, 1) == pytest.approx(alpha)
    assert KaryRandomizedResponse(alpha, k).divergence(lam, 1, 1) == pytest.approx(0, abs=1e-12)


def test_kary_sampler_chi2():
    mech = KaryRandomizedResponse(1.0, 5)
    codes = mech.output().encode(draw(mech, 50, 3))
    probs = np.full(5, 1 / (math.e + 4))
    probs[3] = math.e / (math.e + 4)
    assert_chi2(codes, probs)


@pytest.mark.parametrize("lam", [1.5, 2, 5, 7])
def test_one_hot_is_two_independent_bits(lam):
    alpha = 1.4
    keep = math.exp(alpha / 2) / (1 + math.exp(alpha / 2))
    expected = 2 * rdp_bank.RDP_randresponse({"p": keep}, lam)
    assert OneHotRandomizedResponse(alpha, 6).divergence(lam, 2, 5) == pytest.approx(
        expected, rel=1e-10
    )


def test_one_hot_divergence_by_enumeration():
    """Independent check: enumerate the 2^k outputs of the bitwise channel."""
    alpha, k, lam = 0.8, 4, 3.0
    keep = math.exp(alpha / 2) / (1 + math.exp(alpha / 2))

    def log_pmf(x):
        e = np.eye(k, dtype=int)[x]
        return np.array(
            [
                sum(math.log(keep if b == e[j] else 1 - keep) for j, b in enumerate(bits))
                for bits in itertools.product((0, 1), repeat=k)
            ]
        )

    lp, lq = log_pmf(0), log_pmf(3)
    brute = logsumexp(lam * lp + (1 - lam) * lq) / (lam - 1)
    assert OneHotRandomizedResponse(alpha, k).divergence(lam, 0, 3) == pytest.approx(brute)


def test_one_hot_sampler_chi2():
    alpha, k, x = 1.0, 5, 2
    keep = math.exp(alpha / 2) / (1 + math.exp(alpha / 2))
    codes = np.arange(2**k)
    bits = (codes[:, None] >> np.arange(k)) & 1
    probs = np.prod(np.where(bits == np.eye(k, dtype=int)[x], keep, 1 - keep), axis=1)
    mech = OneHotRandomizedResponse(alpha, k)
    assert_chi2(mech.output().encode(draw(mech, 51, x)), probs)


@pytest.mark.parametrize("lam", [1.5, 2, 5, 7])
def test_histogram_against_dp_accounting(lam):
    alpha = 0.9
    # Two coordinates shift by 1 under Laplace noise of scale 2/α: each is (α/2)-DP Laplace.
    expected = 2 * rdp._laplace_rdp(alpha / 2, lam)
    mech = LaplaceHistogram(alpha, 8)
    assert mech.divergence(lam, 0.0, 1.0) == pytest.approx(expected, rel=1e-10)
    assert mech.divergence(lam, 0.3, 0.3 + 1 / 64) == 0.0  # same bin
    assert mech.divergence(math.inf, 0.01, 0.99) == pytest.approx(alpha)


def test_histogram_sampler_ks():
    mech = LaplaceHistogram(1.0, 5)
    samples = draw(mech, 52, 0.5)  # bin 2
    assert samples.shape == (50_000, 5)
    assert_ks(samples[:, 2], stats.laplace(1.0, 2.0).cdf)
    assert_ks(samples[:, 0], stats.laplace(0.0, 2.0).cdf)
    # The coordinates are independent: their difference has the Laplace-difference law,
    # checked through its variance 2 · 2 b² (b = 2) with a 4-standard-error tolerance.
    diff = np.asarray(samples[:, 2] - samples[:, 0], dtype=np.float64)
    se = np.sqrt((np.mean((diff - 1) ** 4) - np.var(diff) ** 2) / diff.size)
    assert abs(np.var(diff) - 16.0) < 4 * se
