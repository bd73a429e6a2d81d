"""rdpjax.canaries.joint: the exact crossing probability, the tracks, validity, the claim check.

References: the crossing probability against a brute-force sum over every path of a short walk
and against a Monte Carlo simulation of a longer one (scipy's binomial tail for the p-values in
both); validity on randomized response, the law that makes every guess an independent
Bernoulli(e^ε/(1 + e^ε)) (Steinke et al., arXiv:2305.08846v1, Thm 3.1 is tight there).
"""

import itertools

import numpy as np
import pytest
from scipy import stats

from rdpjax.canaries import joint, one_run_bits
from rdpjax.canaries.guesses import correct_guesses, guess_grid
from rdpjax.claims import approx_dp, pure_dp


def _brute_crossing(sizes, q, s):
    total = 0.0
    for path in itertools.product((0, 1), repeat=int(sizes[-1])):
        counts = np.cumsum(path)
        hit = any(stats.binom.sf(counts[n - 1] - 1, n, q) <= s for n in sizes)
        ones = sum(path)
        total += hit * q**ones * (1 - q) ** (len(path) - ones)
    return total


@pytest.mark.parametrize(("sizes", "q", "s"), [((2, 5, 9), 0.7, 0.2), ((1, 3, 4, 10), 0.55, 0.06)])
def test_crossing_equals_the_sum_over_every_path(sizes, q, s):
    got = joint.crossing(np.array(sizes), np.array([q]), np.array([s]))[0]
    assert got == pytest.approx(_brute_crossing(sizes, q, s), abs=1e-12)


def test_crossing_agrees_with_a_simulated_walk():
    sizes, q, s, n = np.array([10, 20, 50, 100, 250]), 0.73, 0.01, 400_000
    rng = np.random.default_rng(0)
    steps = rng.binomial(np.diff(sizes, prepend=0), q, size=(n, sizes.size))
    pvals = stats.binom.sf(np.cumsum(steps, axis=1) - 1, sizes, q)
    sim = np.mean((pvals <= s).any(axis=1))
    got = joint.crossing(sizes, np.array([q]), np.array([s]))[0]
    assert abs(got - sim) < 5 * np.sqrt(got * (1 - got) / n)
    assert got < sizes.size * s  # below Bonferroni: the nested counts overlap


def test_first_rejected_count_is_where_the_p_values_cross():
    """Against the tail at every count (scipy's ``binom.sf``), thresholds at the p-values of
    attained counts included (the observed count must be in its own rejection region)."""
    rng = np.random.default_rng(1)
    for n in (1, 7, 50, 1000, 20_000):
        q = rng.uniform(0.5, 0.999, 40)
        c_obs = rng.integers(0, n + 1, 40)
        s = np.where(np.arange(40) % 2, stats.binom.sf(c_obs - 1, n, q), rng.uniform(0, 1, 40))
        tails = stats.binom.sf(np.arange(n + 1)[None, :] - 1, n, q[:, None])
        expected = (tails > s[:, None]).sum(axis=1)
        assert np.array_equal(joint._first_rejected(n, q, s), expected)


def test_tracks_of_the_default_grid():
    track = joint.tracks(guess_grid(1000, alpha=0.05), 1000)
    assert track.one_sizes.tolist() == [10, 20, 50, 100, 200, 500]
    assert track.two_sizes.tolist() == [10, 20, 50, 100, 200, 500, 1000]
    grid = guess_grid(1001, alpha=0.05)
    track = joint.tracks(grid, 1001)
    assert track is not None and [500, 501] in grid[track.two].tolist()


@pytest.mark.parametrize("grid", [[[10, 0], [3, 7]], [[0, 10], [5, 5]], [[800, 0], [400, 400]]])
def test_grids_without_two_tracks_use_the_pair_by_pair_tests(grid):
    """A pair that is on neither track, or "in" and "out" guesses that could meet: None."""
    assert joint.tracks(np.array(grid), 1000) is None


def test_the_delta_term_and_the_rule_for_using_it():
    track = joint.tracks(guess_grid(300, alpha=0.05), 300)
    counts = np.full(track.one.size + track.two.size, 0)
    assert joint.epsilon_lower(300, track, counts, 2e-4, 0.05) == (0.0, -1)  # mδ > level
    assert joint.usable(1000, 1e-5, 0.0475) and not joint.usable(3000, 1e-5, 0.0475)


def _randomized_response(key, m, eps):
    rng = np.random.default_rng([key, m])
    bits = rng.integers(0, 2, m)
    keep = rng.random(m) < 1.0 / (1.0 + np.exp(-eps))
    return np.where(keep, bits, 1 - bits).astype(float), bits


def test_randomized_response_true_claims_kept():
    """ε-DP randomized response: every guess is right with probability exactly e^ε/(1 + e^ε),
    so the joint test's level is reached; the true claim may be refuted in at most α of keys:
    ≤ 11 of 100 fails by chance with probability 0.011 (Binomial(100, 0.05))."""
    refuted = 0
    for key in range(100):
        scores, bits = _randomized_response(key, 300, 1.0)
        result = one_run_bits(scores, bits, pure_dp(1.0))
        refuted += result.refuted
        assert result.refuted == (result.epsilon >= 1.0)
    assert refuted <= 11


def test_the_claims_verdict_is_the_bounds():
    """At the bounds' δ an (ε, δ) claim is refuted exactly when ``epsilon`` reaches its ε (the
    claim's ε is on the joint test's grid), between grid points too."""
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2, 1000)
    scores = rng.normal(3.0 * bits, 1.0)
    free = one_run_bits(scores, bits, delta=1e-5).epsilon
    assert free > 1.0
    for eps0 in (free - 0.2, free - 0.0025, free + 0.0025, free + 0.2):
        result = one_run_bits(scores, bits, approx_dp(eps0, 1e-5))
        assert result.refuted == (result.epsilon >= eps0)
        assert abs(result.epsilon - free) <= joint.EPSILON_STEP or result.epsilon < eps0
    assert one_run_bits(scores, bits, approx_dp(free - 0.0025, 1e-5)).refuted
    assert not one_run_bits(scores, bits, approx_dp(free + 0.2, 1e-5)).refuted


def test_joint_bound_is_the_steinke_side_and_beats_bonferroni_on_a_fixed_key():
    """On the idealized Gaussian (μ = 3, m = 1,000, key 3): the Steinke side is the joint test on
    its own grid, its pair is reported, and the same tests pair by pair at α/G (Thm 3.1/5.2
    each) on the pair-by-pair grid give less."""
    from rdpjax.canaries import steinke

    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2, 1000)
    scores = rng.normal(3.0 * bits, 1.0)
    result = one_run_bits(scores, bits, delta=1e-5)
    level = 0.95 * 0.05
    own = joint.grid(1000, 0.05)
    counts = correct_guesses(scores, bits, own)
    bound, pair = joint.epsilon_lower(1000, joint.tracks(own, 1000), counts, 1e-5, level)
    assert result.epsilon_steinke == bound == result.epsilon
    g = result.guesses
    assert [g["k_in"], g["k_out"], g["correct"]] == [*own[pair].tolist(), counts[pair]]
    grid = guess_grid(1000, alpha=0.05)
    pair_counts = correct_guesses(scores, bits, grid)
    pairwise = steinke.epsilon_lower(1000, grid.sum(1), pair_counts, 1e-5, level / grid.shape[0])
    assert result.epsilon_steinke > pairwise.max()


def test_the_joint_grid():
    """Two tracks for every m; totals from ⌈log₂(1/α)⌉ growing by about 10% up to m/2 (one-sided)
    and m (two-sided), ends included; a custom ``fractions`` keeps its own grid."""
    for m in (2, 3, 10, 101, 1000, 12_345):
        own = joint.grid(m, 0.05)
        track = joint.tracks(own, m)
        assert track is not None
        assert track.one_sizes[-1] == m // 2 and track.two_sizes[-1] == m
    sizes = joint.tracks(joint.grid(1000, 0.05), 1000).two_sizes
    assert sizes[0] == 5 and np.all(sizes[1:] / sizes[:-1] <= 1.1 + 1 / 5 + 1e-9)
    assert joint.grid(1000, 0.01)[:, :].sum(1).min() == 7  # ⌈log₂ 100⌉
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, 400)
    scores = rng.normal(2.0 * bits, 1.0)
    custom = one_run_bits(scores, bits, fractions=(0.05, 0.1, 0.5))
    assert custom.guesses["k_in"] + custom.guesses["k_out"] in (20, 40, 200)
