"""Infinite divergence reported as such: the support-gap note (rdpjax.estimator.support)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.claims import pure_dp
from rdpjax.estimator.support import GAP_MIN_SHARE, support_gap
from rdpjax.mechanisms import RandomizedResponse

X, X_PRIME = np.array([1.0, 0.5]), np.array([0.0, 0.5])


def zero_noise(rng, database, m):
    """The sensitivity computed as B − B = 0: no noise at all, disjoint point masses."""
    return np.full(m, float(np.sum(database)))


def test_support_gap_rule():
    assert support_gap([10, 0, 5], [10, 7, 6]) is None  # every value seen on both sides
    note = support_gap([0, 0, 30, 70], [50, 50, 0, 0])
    assert note.startswith("supports differ: ε(λ) may be infinite")
    assert "100 of 100 outputs on x (100%)" in note and "2 values" in note
    share = int(100 * GAP_MIN_SHARE)  # below the share, or on values seen < 5 times: no note
    assert support_gap([100 - share + 1, share - 1], [100, 0]) is None
    assert support_gap([60] + [4] * 10, [100] + [0] * 10) is None
    assert "on x'" in support_gap([100, 0], [40, 60])


def test_zero_noise_bug_is_noted_and_its_bound_grows_with_n():
    lowers = []
    for n in (100, 1_000, 10_000):
        report = rdpjax.audit(
            zero_noise, X, X_PRIME, lam=[2.0], n=n, key=jax.random.key(0), claim=pure_dp(1.0),
            progress=False,
        )  # fmt: skip
        assert report.is_refuted and report.notes and "may be infinite" in report.notes[0]
        assert report.notes[0] in str(report) and report.notes[0] in report.to_markdown()
        assert report.to_dict()["notes"] == list(report.notes)
        lowers.append(float(report.lower[0]))
    assert lowers[0] < lowers[1] < lowers[2]  # log(1/τ) with the floor τ ∝ n^(−0.4)
    seq = rdpjax.audit(
        zero_noise, X, X_PRIME, sequential=True, max_n=1_000, key=jax.random.key(0),
        claim=pure_dp(1.0), progress=False,
    )  # fmt: skip
    assert seq.is_refuted and seq.bound.discrete and "may be infinite" in seq.notes[0]


@pytest.mark.slow
def test_correct_mechanisms_get_no_note():
    mech = RandomizedResponse(1.5)  # likelihood ratios up to e^15 over 1024 codes
    x, x_prime = mech.reference_pair()
    for seed in range(3):
        report = rdpjax.audit(mech, x, x_prime, n=1_000, key=jax.random.key(seed), progress=False)
        assert report.notes == ()
