"""The pooled-guess test (rdpjax.rejection.pooled) and the order-free fixed-n set test."""

import jax
import numpy as np
import pytest
from scipy import stats

from rdpjax.claims import approx_dp, pure_dp
from rdpjax.rejection import set_test
from rdpjax.rejection.chain import chain_ends, chain_epsilon, crossing
from rdpjax.rejection.pooled import poisson_rate, shares, t_grid


@pytest.mark.parametrize("n", [3, 1_000, 10**6])
def test_poisson_rate_has_the_stated_miss_probability(n):
    rate = poisson_rate(n, 0.005)
    assert stats.poisson.sf(n, rate) == pytest.approx(0.005, rel=1e-6)
    assert rate < n


@pytest.mark.parametrize("s, t", [(1, 1), (7, 10), (950, 1000), (3, 50_000)])
def test_a_one_point_chain_is_the_one_sided_exact_interval(s, t):
    level = 0.01
    lo = stats.binomtest(s, t).proportion_ci(1 - 2 * level, method="exact").low
    got, k = chain_epsilon(np.array([s]), np.array([t]), 0, level)
    assert k == 0 and got == pytest.approx(np.log(lo / (1 - lo)), rel=1e-9)
    assert chain_epsilon(np.array([0]), np.array([5]), 0, level)[0] == -np.inf


def test_crossing_is_exact_on_a_chain_small_enough_to_enumerate():
    m, c, theta = np.array([3, 5, 9, 12]), np.array([3, 5, 7, 9]), 0.6
    walks = (np.arange(2**12)[:, None] >> np.arange(12)) & 1  # every sequence of 12 trials
    sums = np.cumsum(walks, axis=1)[:, m - 1]
    weight = theta ** walks.sum(1) * (1 - theta) ** (12 - walks.sum(1))
    exact = float(weight[np.any(sums >= c, axis=1)].sum())
    assert crossing(m, c, theta) == pytest.approx(exact, abs=1e-9)
    assert crossing(m, c, theta) >= exact  # never below


def test_a_chain_is_no_weaker_than_bonferroni_and_no_stronger_than_its_best_point():
    s, t, level = np.array([9, 40, 80, 150]), np.array([10, 50, 100, 200]), 0.01
    got, _ = chain_epsilon(s, t, 0, level, level / 4)
    lo = stats.beta.ppf(level / 4, s, t - s + 1)
    best = stats.beta.ppf(level, s, t - s + 1)
    assert np.max(np.log(lo / (1 - lo))) <= got < np.max(np.log(best / (1 - best)))


def test_a_chain_covers_the_truth_at_its_level():
    # i.i.d. Bernoulli(θ) guesses at the boundary: the chain's bound exceeds logit θ in at most
    # `level` of the walks (here 0.1: 400 walks exceed 60 with probability < 0.001)
    rng = np.random.default_rng(4)
    theta, t = 0.75, np.array([5, 12, 30, 70, 150, 300])
    sums = np.cumsum(rng.random((400, t[-1])) < theta, axis=1)[:, t - 1]
    eps = [chain_epsilon(row, t, 0, 0.1, 0.1 / t.size**0.5)[0] for row in sums]
    assert np.sum(np.array(eps) > np.log(theta / (1 - theta))) <= 60


def test_chain_ends_count_whole_cells_exactly_and_nest():
    fav, other = np.array([3, 0, 5, 2]), np.array([1, 4, 0, 2])
    order = np.array([2, 0, 3, 1])  # pooled sizes along the order: 5, 4, 4, 4
    rng = np.random.default_rng(0)
    t = np.array([0, 5, 9, 13, 17])
    np.testing.assert_array_equal(chain_ends(fav, other, order, t, 0 * t, rng), [0, 5, 8, 10, 10])
    # the other end, from the last cell: Q's among the last 4 (cell 1: 4 of Q), then 8
    np.testing.assert_array_equal(
        chain_ends(fav, other, order, np.array([0, 0]), np.array([4, 8]), rng), [4, 6]
    )
    for _ in range(50):  # t = 7 takes 2 of cell 0's 4 draws (3 favoured), then all of it at 9
        s = chain_ends(fav, other, order, np.array([7, 9]), np.array([0, 0]), rng)
        assert s[0] in (6, 7) and s[1] == 8
    with pytest.raises(ValueError, match="within the draws"):
        chain_ends(fav, other, order, np.array([9]), np.array([9]), rng)


def test_the_two_ends_split_a_shared_cell_without_overlap():
    # One cell of 10 draws, 6 of P: the first end takes 4 at random (k of P), the second the
    # other 6, which hold exactly k of the 4 Q's: 2k right guesses, always even (two
    # independent draws would give odd counts too).
    rng = np.random.default_rng(1)
    rights = [
        chain_ends(np.array([6]), np.array([4]), np.array([0]), np.array([4]), np.array([6]),
                   rng)[0]
        for _ in range(200)
    ]  # fmt: skip
    assert all(r % 2 == 0 and 0 <= r <= 8 for r in rights)
    assert np.mean(rights) == pytest.approx(4.8, abs=0.3)  # 2 E[k] = 2 · 4 · 0.6


def test_t_grid_and_shares():
    g = t_grid(10_000)
    assert g[0] == 1 and g[-1] == 10_000 and np.all(np.diff(g) > 0)
    assert np.all(g[10:-1] <= 1.2 * g[9:-2] + 1)  # a factor 1.2 apart, rounded
    assert shares(None).sum() == pytest.approx(1.0)
    w = shares([0.1, -np.inf, 0.5])
    assert w.sum() == pytest.approx(1.0) and np.argmax(w) == 2


def _laplace(rng, n):
    return rng.laplace(1.0, 1.0, n), rng.laplace(0.0, 1.0, n)


def test_a_flat_ratio_at_its_tight_claim_is_rarely_refuted():
    # Laplace b = 1, shift 1 is exactly 1-DP and every draw at x ≥ 1 or x ≤ 0 is guessed right
    # with probability e/(1 + e): the pooled test sits on its boundary. At α = 0.05, 100
    # replications refute more than 12 with probability < 0.001.
    rng = np.random.default_rng(11)
    refuted = sum(
        set_test(jax.random.key(r), *_laplace(rng, 3_000), pure_dp(1.0)).refuted for r in range(100)
    )
    assert refuted <= 12


def test_equal_laws_certify_nothing_positive_mostly():
    rng = np.random.default_rng(5)
    eps = [
        set_test(jax.random.key(r), rng.normal(size=2_000), rng.normal(size=2_000)).epsilon
        for r in range(60)
    ]
    assert np.mean(np.array(eps) > 0) <= 0.15  # ≤ α = 0.05 in expectation; P(> 9 of 60) < 0.01


def test_the_order_of_the_draws_does_not_matter():
    rng = np.random.default_rng(2)
    p, q = _laplace(rng, 5_000)
    key = jax.random.key(3)
    a = set_test(key, p, q, approx_dp(0.5, 1e-5))
    for pp, qq in [(np.sort(p), np.sort(q)), (np.sort(p)[::-1], q[rng.permutation(q.size)])]:
        b = set_test(key, pp, qq, approx_dp(0.5, 1e-5))
        assert (b.epsilon, b.mu, b.refuted) == (a.epsilon, a.mu, a.refuted)
    c = set_test(jax.random.key(4), p, q, approx_dp(0.5, 1e-5))
    assert c.epsilon != a.epsilon  # the key, not a fixed seed, draws the split


def test_pooled_bound_lies_below_the_truth_and_refutes_a_categorical_leak():
    rng = np.random.default_rng(9)
    p, q = rng.normal(1.0, 1.0, 200_000), rng.normal(0.0, 1.0, 200_000)
    r = set_test(jax.random.key(0), p, q, approx_dp(1.0, 1e-5))
    assert r.pooled is not None and r.pooled.guess is not None
    assert 2.0 < r.pooled.epsilon <= r.epsilon < 4.38
    # 8-ary randomized response at ε = 1 (true value 0 on x, 1 on x') against ε = 0.7
    keep = np.e / (np.e + 7)

    def rr(value, n):
        other = rng.integers(0, 7, n)
        return np.where(rng.random(n) < keep, value, other + (other >= value))

    res = set_test(jax.random.key(1), rr(0, 5_000), rr(1, 5_000), pure_dp(0.7))
    assert res.refuted and 0.7 < res.epsilon <= 1.0
    assert "pooled guesses" in str(res) and res.to_dict()["pooled"]["guess"]["correct"] > 0
