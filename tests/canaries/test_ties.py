"""Tied scores: the random tie-break of rdpjax.canaries.guesses.tie_order.

What must hold: the order within a tied group is uniform and independent of the bits (over the
key), nothing depends on the order the scores are passed in, and on the tight ε-DP mechanism
with every score tied in two groups (randomized response) the Thm 3.1 test keeps its level.
"""

import jax
import numpy as np
import pytest
from scipy import stats

from rdpjax.canaries import one_run, one_run_bits, steinke
from rdpjax.canaries.guesses import correct_guesses, tie_order


def _tied(seed, m, values=4):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, m)
    return rng.integers(0, values, m).astype(float) + bits * (rng.random(m) < 0.3), bits


@pytest.mark.parametrize("seed", [0, 1])
def test_the_input_order_does_not_matter_given_the_key(seed):
    """Shuffled, sorted by score, sorted by bit: the same counts and the same bounds."""
    scores, bits = _tied(seed, 300)
    grid = np.array([[10, 0], [5, 5], [30, 0], [75, 75], [150, 0]])
    key = jax.random.key(seed + 7)
    want = correct_guesses(scores, bits, grid, key)
    for perm in (
        np.random.default_rng(seed + 100).permutation(300),
        np.argsort(scores, kind="stable"),
        np.argsort(-scores, kind="stable"),
        np.lexsort((scores, bits)),
        np.lexsort((scores, 1 - bits)),
    ):
        np.testing.assert_array_equal(correct_guesses(scores[perm], bits[perm], grid, key), want)
    first = one_run_bits(scores, bits, key=key)
    sorted_by_bit = np.lexsort((scores, bits))
    again = one_run_bits(scores[sorted_by_bit], bits[sorted_by_bit], key=key)
    assert again.to_dict() == first.to_dict()
    # one_run(in, out) passes every included canary first: the same result.
    assert one_run(scores[bits == 1], scores[bits == 0], key=key).epsilon == first.epsilon


def test_without_ties_the_key_plays_no_part():
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2, 500)
    scores = rng.normal(bits, 1.0)
    np.testing.assert_array_equal(tie_order(scores, bits, jax.random.key(5)), np.argsort(scores))
    a, b = one_run_bits(scores, bits), one_run_bits(scores, bits, key=jax.random.key(9))
    assert a.to_dict() == b.to_dict()


def test_the_order_within_a_tied_group_is_uniform_over_keys():
    """All scores tied, a = 6 included of 15: the top 5 hold Hypergeometric(15, 6, 5) included
    canaries over the key's draw, whatever the bits' positions. The old rule (ties against the
    auditor) gave 0 for every key; one that put included canaries first gave 5."""
    bits = np.array([1] * 6 + [0] * 9)
    grid = np.array([[5, 0]])
    counts = [
        int(correct_guesses(np.zeros(15), bits, grid, jax.random.key(k))[0]) for k in range(400)
    ]
    observed = np.bincount(counts, minlength=6)
    expected = 400 * stats.hypergeom(15, 6, 5).pmf(np.arange(6))
    # Pool the sparse tail (P(5) ≈ 0.001) into the count of 4 before the chi-square test.
    observed = np.r_[observed[:4], observed[4:].sum()]
    expected = np.r_[expected[:4], expected[4:].sum()]
    assert stats.chisquare(observed, expected).pvalue > 0.001
    # The same law for the bottom ("out") guesses: excluded among the 5 lowest.
    grid = np.array([[0, 5]])
    outs = [correct_guesses(np.zeros(15), bits, grid, jax.random.key(k))[0] for k in range(400)]
    assert abs(np.mean(outs) - 5 * 9 / 15) < 0.2  # mean 3, sd of the mean ≈ 0.05


def test_randomized_response_keeps_the_level_of_thm_3_1():
    """Randomized response (score = the bit, flipped with probability 1/(1 + e^ε)) is the tight
    ε-DP mechanism and ties every score into two groups. With ties in a random order the k
    highest "in" guesses are correct independently with probability e^ε/(1 + e^ε), so the
    Thm 3.1 p-value of (k, 0) is exact and P(p ≤ 0.1) ≤ 0.1. Ties broken in favour of the
    included canaries would reject in every replication."""
    eps, m, k, reps = 1.0, 200, 40, 1000
    p = []
    for r in range(reps):
        rng = np.random.default_rng([11, r])
        bits = rng.integers(0, 2, m)
        flip = rng.random(m) < 1.0 / (1.0 + np.exp(eps))
        scores = np.where(flip, 1 - bits, bits).astype(float)
        v = correct_guesses(scores, bits, np.array([[k, 0]]), jax.random.key(r))[0]
        p.append(steinke.p_value(m, k, v, eps, 0.0))
    # Binomial(1000, 0.1) exceeds 125 with probability < 0.5%.
    assert np.sum(np.array(p) <= 0.1) <= 125


@pytest.mark.parametrize("key", ["0", 1.5, np.zeros(3)])
def test_a_bad_key_names_the_key(key):
    with pytest.raises(ValueError, match="key"):
        one_run_bits(np.arange(10.0), np.arange(10) % 2, key=key)
