"""Infinite divergence reported as such: the support-gap note (rdpjax.estimator.support)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from scipy import stats

import rdpjax
from rdpjax.auditing import Looks
from rdpjax.claims import pure_dp
from rdpjax.estimator.support import gap_evidence, split_counts, split_rows, support_gap
from rdpjax.mechanisms import RandomizedResponse

X, X_PRIME = np.array([1.0, 0.5]), np.array([0.0, 0.5])


def zero_noise(rng, database, m):
    """The sensitivity computed as B − B = 0: no noise at all, disjoint point masses."""
    return np.full(m, float(np.sum(database)))


def _halves(*counts):
    """``(2, K)`` counts of two halves: each count split as evenly as it goes."""
    counts = np.asarray(counts)
    return np.stack([counts // 2, counts - counts // 2])


def test_support_gap_rule():
    assert support_gap(_halves(10, 0, 5), _halves(10, 7, 6)) is None  # seen on both sides
    note = support_gap(_halves(0, 0, 30, 70), _halves(50, 50, 0, 0))
    assert note.startswith("supports differ: ε(λ) may be infinite")
    assert "100 of 100 outputs on x (100%)" in note and "2 values" in note
    assert "on x'" in support_gap(_halves(1000, 0), _halves(400, 600))
    assert support_gap(_halves(100, 0), _halves(40, 60)) is None  # 0 of 50: P(x) ≤ 0.084 only
    # 22 of 100 draws on a value the other side never produced: too few draws to show a ratio of
    # 10 (a lower bound ≈ 0.13 against an upper bound ≈ 0.08 on the other's probability there) ...
    assert support_gap(_halves(78, 22), _halves(100, 0)) is None
    # ... 220 of 1,000 do (0.19 against 0.009), with no fixed share (issue 47).
    note = support_gap(_halves(780, 220), _halves(1000, 0))
    assert note is not None and "220 of 1,000 outputs on x (22%)" in note


def test_gap_evidence_is_exact_clopper_pearson():
    found = gap_evidence(_halves(780, 220), _halves(1000, 0), 0.0125)
    assert found["draws"] == 220 and found["held"] == 0 and found["held_total"] == 500
    # Clopper–Pearson: the exact binomial tails at the bounds equal the level.
    assert stats.binom.sf(219, 1000, found["own_lower"]) == pytest.approx(0.0125, rel=1e-6)
    assert stats.binom.cdf(0, 500, found["theirs_upper"]) == pytest.approx(0.0125, rel=1e-6)
    assert found["ratio"] == pytest.approx(found["own_lower"] / found["theirs_upper"])


def test_split_counts_keeps_every_draw():
    counts = np.array([5, 0, 17, 1, 300])
    halves = split_counts(counts, np.random.default_rng(0))
    np.testing.assert_array_equal(halves.sum(axis=0), counts)
    assert halves[0].sum() == counts.sum() // 2 and np.all(halves >= 0)
    rows = split_rows(np.array([0, 2, 2, 1, 0]), 4)  # rows 0, 2, 4 and rows 1, 3
    np.testing.assert_array_equal(rows, [[2, 0, 1, 0], [0, 1, 1, 0]])


def test_no_note_without_a_gap_at_level_alpha():
    # Equal laws on 10⁴ values at 2,000 draws a side: most values are seen once, and half of
    # those a side produced the other never did; the rule must not read that as a gap. And
    # k-ary randomized response (ratio e² < 20). 200 keys each: at most α = 5% noted, with
    # slack for the binomial spread (≤ 10 expected at 5%; here none).
    rng = np.random.default_rng(0)
    noted = 0
    for _ in range(200):
        p, q = rng.integers(0, 10**4, 2000), rng.integers(0, 10**4, 2000)
        noted += support_gap(split_rows(p, 10**4), split_rows(q, 10**4)) is not None
        keep = np.exp(2.0) / (np.exp(2.0) + 99)
        p = np.where(rng.random(2000) < keep, 0, rng.integers(1, 100, 2000))
        q = np.where(rng.random(2000) < keep, 1, (1 + rng.integers(1, 100, 2000)) % 100)
        noted += support_gap(split_rows(p, 100), split_rows(q, 100)) is not None
    assert noted <= 20


def test_zero_noise_bug_is_noted_and_its_bound_grows_with_n():
    lowers = []
    for n in (100, 1_000, 10_000):
        # The Rényi bounds alone (test="renyi"), at the whole α: the note is theirs.
        report = rdpjax.audit(
            jax.random.key(0), zero_noise, X, X_PRIME, lam=[2.0], n=n, claim=pure_dp(1.0),
            progress=False, test="renyi",
        )  # fmt: skip
        assert report.is_refuted and report.notes and "may be infinite" in report.notes[0]
        assert report.notes[0] in str(report) and report.notes[0] in report.to_markdown()
        assert report.to_dict()["notes"] == list(report.notes)
        lowers.append(float(report.lower[0]))
    assert lowers[0] < lowers[1] < lowers[2]  # log(1/τ) with the floor τ ∝ n^(−0.4)
    seq = rdpjax.audit(
        jax.random.key(0), zero_noise, X, X_PRIME, n=Looks(max_n=1_000),
        claim=pure_dp(1.0), progress=False,
    )  # fmt: skip
    assert seq.is_refuted and seq.bound.discrete and "may be infinite" in seq.notes[0]


@pytest.mark.slow
def test_correct_mechanisms_get_no_note():
    mech = RandomizedResponse(1.5)  # likelihood ratios up to e^15 over 1024 codes
    x, x_prime = mech.reference_pair()
    for seed in range(3):
        report = rdpjax.audit(jax.random.key(seed), mech, x, x_prime, n=1_000, progress=False)
        assert report.notes == ()


def test_a_partial_gap_is_noted_by_the_audit():
    # Issue 47: 22% of the outputs on x fall where x' has none; the 25% share of the former rule
    # reported a finite ε(30) without a note.
    def partial_gap(rng, database, m):
        shared = rng.integers(0, 50, m)
        if database[0] == 0:
            return shared
        return np.where(rng.random(m) < 0.22, 100 + rng.integers(0, 10, m), shared)

    report = rdpjax.audit(
        jax.random.key(1), partial_gap, np.array([1.0]), np.array([0.0]), lam=[2.0, 30.0],
        n=10_000, progress=False,
    )  # fmt: skip
    assert report.bound.discrete and np.all(np.isfinite(report.lower))
    assert report.notes and report.notes[0].startswith("supports differ")
    assert "on x (22%)" in report.notes[0]
