"""The sequential set test by betting: its wealth is a supermartingale under a true claim
(checked exactly), true claims are rarely refuted, false ones quickly, and bad arguments raise."""

import json
from types import SimpleNamespace

import jax
import numpy as np
import pytest
from references import Memory, interrupted_at
from scipy import stats

from rdpjax.auditing import Looks
from rdpjax.claims import approx_dp, gdp, hockey_stick, pure_dp, zcdp
from rdpjax.rejection import bets as bets_module
from rdpjax.rejection import splits as splits_module
from rdpjax.rejection.bets import SortedPast, epsilon_grid, plan_bets
from rdpjax.rejection.betting import (
    SCALES,
    batch_ends,
    betting_test,
    log_wealth_paths,
)
from rdpjax.rejection.wealth import log_multipliers
from rdpjax.stream.batches import generators

KEY = jax.random.key(12)


def _set_mass(bets, cdf):
    """Exact mass of each row's set under a law with the given cdf (real outputs)."""
    t, c = bets.threshold, bets.center
    lower = np.where(bets.family == 1, cdf(c + t) - cdf(c - t), cdf(t))  # {s < t}
    return np.where(bets.below, lower, 1.0 - lower)


@pytest.mark.parametrize("claim", [gdp(1.0), approx_dp(1.0, float(hockey_stick(gdp(1.0), 1.0)))])
def test_one_step_multiplier_has_mean_at_most_one_on_the_exact_null(claim):
    """E[1 + λZ | past] = 1 + λ(P(S) − e^ε Q(S) − δ(ε)) ≤ 1 with P(S), Q(S) exact (scipy)."""
    rng = np.random.default_rng(0)
    px, py = rng.normal(1.0, 1.0, (300, 40)), rng.normal(0.0, 1.0, (300, 40))
    eps, delta = epsilon_grid(claim)
    (bets,) = plan_bets(px, py, eps, delta, discrete=False)
    assert np.all(bets.lam >= 0) and np.any(bets.lam > 0)
    mass_p = _set_mass(bets, stats.norm(1.0, 1.0).cdf)
    mass_q = _set_mass(bets, stats.norm(0.0, 1.0).cdf)
    a, b = np.where(bets.swap, mass_q, mass_p), np.where(bets.swap, mass_p, mass_q)
    mean = 1.0 + bets.lam * (a - np.exp(bets.epsilon) * b - bets.delta)
    assert np.all(mean <= 1.0 + 1e-12), mean.max()


def _split_counts_by_argsort(sx, sy, pooled=None):
    """The definition: a sort of the pooled past, halfway between its values at the split
    points, and each side's count of values below each threshold (the set ``{s < t}`` the bet
    places, counted directly: at a tie the rank of the k-th value is not that count)."""
    n = sx.shape[1]
    ordered = np.sort(np.concatenate([sx, sy], axis=1), axis=1)
    k = splits_module.positions(2 * n)
    t = 0.5 * (ordered[:, k - 1] + ordered[:, k])
    cx = np.sum(sx[:, :, None] < t[:, None, :], axis=1).astype(np.float64)
    cy = np.sum(sy[:, :, None] < t[:, None, :], axis=1).astype(np.float64)
    return t, cx, cy


@pytest.mark.parametrize("ties", [False, True])
def test_bets_from_sorted_sides_are_those_of_the_pooled_argsort(monkeypatch, ties):
    """plan_bets bisects sorted sides for order statistics; the bets must be those of the
    definition (a sort of the pooled past, each set counted directly on each unsorted side),
    for continuous outputs and for outputs with ties, and the same when the past is kept sorted
    as it grows (SortedPast)."""
    rng = np.random.default_rng(3)
    draw = (lambda s: rng.integers(0, 5, s).astype(float)) if ties else rng.standard_normal
    px, py = 0.5 + draw((4, 3000)), draw((4, 3000))
    eps, delta = epsilon_grid(gdp(1.0))
    fast = plan_bets(px, py, eps, delta, False, SCALES)
    np.testing.assert_array_equal(fast[0].center, np.median(np.concatenate([px, py], 1), 1))
    past = SortedPast()
    for m in (7, 300, 3000):
        sorted_rows = past.update(px[0, :m], py[0, :m])
        kept = plan_bets(*sorted_rows, eps, delta, False, SCALES, rows_sorted=True)
        again = plan_bets(px[:1, :m], py[:1, :m], eps, delta, False, SCALES)
        for a, b in zip(kept, again, strict=True):
            np.testing.assert_array_equal(a.threshold, b.threshold)
            np.testing.assert_array_equal(a.lam, b.lam)

    def values(sx, sy):
        return (*_split_counts_by_argsort(sx, sy), np.median(np.concatenate([sx, sy], 1), 1))

    def distances(sx, sy, c):
        return _split_counts_by_argsort(np.abs(sx - c[:, None]), np.abs(sy - c[:, None]))

    monkeypatch.setattr(bets_module, "value_splits", values)
    monkeypatch.setattr(bets_module, "distance_splits", distances)
    reference = plan_bets(px, py, eps, delta, False, SCALES)
    for a, b in zip(fast, reference, strict=True):
        for field in ("family", "center", "threshold", "below", "swap", "epsilon", "lam"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_multipliers_of_codes_average_to_at_most_one_by_enumeration():
    """Randomized response, tight at ε = 1: the exact mean over the four output pairs ≤ 1."""
    keep = np.e / (1 + np.e)
    rng = np.random.default_rng(1)
    px = (rng.random((200, 30)) < keep).astype(np.int64)
    py = (rng.random((200, 30)) >= keep).astype(np.int64)
    eps, delta = epsilon_grid(pure_dp(1.0))
    (bets,) = plan_bets(px, py, eps, delta, discrete=True)
    law_p, law_q = {0: 1 - keep, 1: keep}, {0: keep, 1: 1 - keep}
    mean = np.zeros(200)
    for x in (0, 1):
        for y in (0, 1):
            bx, by = np.full((200, 1), x), np.full((200, 1), y)
            mean += law_p[x] * law_q[y] * np.exp(log_multipliers(bets, bx, by)[:, 0])
    assert np.any(bets.lam > 0)
    assert np.all(mean <= 1.0 + 1e-12), mean.max()


def test_true_claims_are_rarely_refuted():
    """At most 10 of 100 (the level allows 5 in expectation; P(> 10) < 0.02 at rate 0.05)."""
    rng = np.random.default_rng(2)
    xs, ys = rng.normal(1.0, 1.0, (100, 2000)), rng.normal(0.0, 1.0, (100, 2000))
    assert np.count_nonzero(log_wealth_paths(KEY, xs, ys, gdp(1.0))["stop"]) <= 10
    keep = np.e / (1 + np.e)
    xs = (rng.random((100, 2000)) < keep).astype(np.int64)
    ys = (rng.random((100, 2000)) >= keep).astype(np.int64)
    assert np.count_nonzero(log_wealth_paths(KEY, xs, ys, pure_dp(1.0))["stop"]) <= 10


def test_false_claims_are_refuted_within_a_few_hundred():
    rng = np.random.default_rng(3)
    xs, ys = rng.normal(1.0, 1.0, (50, 1000)), rng.normal(0.0, 1.0, (50, 1000))
    stop = log_wealth_paths(KEY, xs, ys, gdp(0.5))["stop"]
    assert np.all(stop > 0) and np.median(stop) < 300
    keep = np.exp(2) / (1 + np.exp(2))  # randomized response at ε = 2 claimed 0.5-DP
    xs = (rng.random((50, 1000)) < keep).astype(np.int64)
    ys = (rng.random((50, 1000)) >= keep).astype(np.int64)
    stop = log_wealth_paths(KEY, xs, ys, pure_dp(0.5))["stop"]
    assert np.all(stop > 0) and np.median(stop) < 300


def _noisy_sum(rng, db, m):
    return np.sum(db) + rng.normal(size=m)


def test_the_black_box_test_equals_the_vectorized_one_on_the_same_draws():
    key = jax.random.key(4)
    result = betting_test(key, _noisy_sum, [1.0], [0.0], gdp(0.5), max_n=3000, batch=64)
    assert result.refuted and result.e_value >= 1 / 0.05
    assert result.n <= result.drawn and result.path[-1][0] == result.n
    # The same batches from the same generators, tested at once.
    _, g_p, g_q = generators(key)
    ends = batch_ends(3000, 64)
    sizes = np.diff([0, *ends])[: ends.index(result.drawn) + 1]
    xs = np.concatenate([_noisy_sum(g_p, [1.0], int(m)) for m in sizes])
    ys = np.concatenate([_noisy_sum(g_q, [0.0], int(m)) for m in sizes])
    out = log_wealth_paths(key, xs[None], ys[None], gdp(0.5), batch=64)
    assert out["stop"][0] == result.n
    np.testing.assert_allclose(np.log(result.e_value), out["log_wealth"][0], rtol=1e-12)
    assert result.strategy["scale"] == SCALES[out["winner"][0]]
    again = betting_test(key, _noisy_sum, [1.0], [0.0], gdp(0.5), max_n=3000, batch=64)
    assert again == result
    json.dumps(result.to_dict())


def test_a_true_claim_runs_to_max_n_with_a_small_e_value():
    r = betting_test(jax.random.key(5), _noisy_sum, [1.0], [0.0], gdp(1.0), max_n=500)
    assert not r.refuted and r.n == r.drawn == 500 and r.e_value < 20


def test_integer_codes_are_tested_with_sets_of_codes():
    def rr(rng, db, m):  # randomized response at ε = 2
        keep = rng.random(m) < np.exp(2) / (1 + np.exp(2))
        return np.where(keep, db[0], 1 - db[0])

    r = betting_test(jax.random.key(6), rr, [1], [0], pure_dp(0.5), max_n=2000)
    assert r.refuted and r.n < 500 and "codes" in r.strategy["set"]


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_a_constant_output_is_never_refuted_nor_bet_on(dtype):
    """No set separates a constant's pairs, so no bet is placed: the wealth stays 1. (Real
    outputs: while the sets were scored on ranks, the plan saw x's "below" the tied value, bet
    on ``{v < 1}``, and the wealth fell to e^-1963 in 20,000 pairs.)"""

    def constant(rng, db, m):
        return np.ones(m, dtype)

    r = betting_test(jax.random.key(7), constant, [1], [0], gdp(0.5), max_n=20_000)
    assert not r.refuted and r.e_value == 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"claim": zcdp(0.5)}, "kind pure_dp, approx_dp, gdp"),
        ({"alpha": 0.5}, r"alpha must be a number in \(0, 0.5\)"),
        ({"alpha": 0.0}, "alpha"),
        ({"max_n": 2}, "max_n"),
        ({"batch": 0}, "batch"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    args = {"claim": gdp(0.5), **kwargs}
    claim = args.pop("claim")
    with pytest.raises(ValueError, match=match):
        betting_test(jax.random.key(0), _noisy_sum, [1.0], [0.0], claim, **args)


def test_bad_outputs_raise_naming_the_side():
    def nan_on_x_prime(rng, db, m):
        return np.full(m, np.nan) if db[0] == 0 else rng.normal(size=m)

    with pytest.raises(ValueError, match="non-finite values .* on x'"):
        betting_test(jax.random.key(0), nan_on_x_prime, [1.0], [0.0], gdp(0.5))

    def vectors(rng, db, m):
        return rng.normal(size=(m, 2))

    with pytest.raises(ValueError, match="one number per output"):
        betting_test(jax.random.key(0), vectors, [1.0], [0.0], gdp(0.5))

    def mixed(rng, db, m):
        return np.zeros(m, np.int64) if db[0] else rng.normal(size=m)

    with pytest.raises(ValueError, match="same kind of output"):
        betting_test(jax.random.key(0), mixed, [1], [0], gdp(0.5))


def _gauss_sum(rng, db, m):
    return np.sum(db) + rng.normal(size=m)


def _rr_repeat(rng, db, m):
    """Randomized response at ε = 1 written as np.repeat(values, multinomial): sorted codes."""
    keep = np.e / (1 + np.e)
    p = [1 - keep, keep] if db[0] == 1 else [keep, 1 - keep]
    return np.repeat([0, 1], rng.multinomial(m, p))


def _reordered(sample, how):
    def reordered(rng, db, m):
        out = sample(rng, db, m)
        return {"sorted": np.sort(out), "reversed": np.sort(out)[::-1], "as drawn": out}[how]

    return reordered


@pytest.mark.parametrize(
    ("sample", "claim"),
    [(_gauss_sum, gdp(1.0)), (_noisy_sum, gdp(0.6)), (_rr_repeat, pure_dp(1.0))],
)
def test_the_order_a_sampler_returns_a_batch_in_changes_nothing(sample, claim):
    """Issue 51: each batch is sorted, then permuted from the key, so a sampler returning its
    batch sorted, reverse-sorted or as drawn (the same draws) gives the same result; a sorted
    batch bet on in its given order made true claims fail Ville's inequality."""
    results = [
        betting_test(jax.random.key(13), _reordered(sample, how), [1], [0], claim,
                            max_n=3000, batch=256)
        for how in ("as drawn", "sorted", "reversed")
    ]  # fmt: skip
    assert results[0] == results[1] == results[2]
    assert len(results[0].path) > 3  # several batches were bet on


def test_the_vectorized_test_is_the_same_for_any_order_within_batches():
    rng = np.random.default_rng(14)
    xs, ys = rng.normal(1.0, 1.0, (20, 1500)), rng.normal(0.0, 1.0, (20, 1500))
    ends = batch_ends(1500, 1024)
    reordered = [a.copy() for a in (xs, ys)]
    for start, end in zip([0, *ends[:-1]], ends, strict=True):
        for a in reordered:
            a[:, start:end] = -np.sort(-a[:, start:end], axis=1)  # descending in each batch
    a = log_wealth_paths(KEY, xs, ys, gdp(0.6))
    b = log_wealth_paths(KEY, *reordered, gdp(0.6))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert np.count_nonzero(a["stop"]) > 5  # a false claim: the paths do stop


def test_watching_only_batch_ends_stops_no_earlier():
    """The alternative to watching every pair: on the same (permuted) pairs it stops at the end
    of a batch, never before the pair where the wealth first reaches 1/α."""
    rng = np.random.default_rng(15)
    xs, ys = rng.normal(1.0, 1.0, (40, 2000)), rng.normal(0.0, 1.0, (40, 2000))
    every = log_wealth_paths(KEY, xs, ys, gdp(0.5))["stop"]
    ends = log_wealth_paths(KEY, xs, ys, gdp(0.5), every_pair=False)["stop"]
    assert np.all((ends == 0) | (every > 0) & (ends >= every))
    assert np.all(np.isin(ends[ends > 0], batch_ends(2000, 1024)))
    assert np.count_nonzero(every) >= np.count_nonzero(ends) > 20


def test_plans_every_batch_below_the_cap_then_as_the_past_grows_by_an_eighth():
    """Issue 52: the bets are planned at every batch while batches grow by 1/8, then when the
    pairs have grown by 1/8 since the last plan; the black-box test and the vectorized one
    follow the same plans on the same draws."""
    from rdpjax.rejection import betting

    ends = batch_ends(3000, 64)
    plans = sorted(betting.plans_at(ends))
    starts = [s for s in [0, *ends[:-1]] if s >= 2]
    assert [s for s in starts if s <= 512] == [s for s in plans if s <= 512]
    later = [s for s in plans if s > 512]
    assert all(b >= a + a / 8 for a, b in zip(plans[:-1], plans[1:], strict=True) if a >= 512)
    assert len(later) < len([s for s in starts if s > 512]) / 2
    key = jax.random.key(5)
    result = betting_test(key, _noisy_sum, [1.0], [0.0], gdp(1.0), max_n=3000, batch=64)
    assert not result.refuted and result.n == result.drawn == 3000
    _, g_p, g_q = generators(key)
    sizes = np.diff([0, *ends])
    xs = np.concatenate([_noisy_sum(g_p, [1.0], int(m)) for m in sizes])
    ys = np.concatenate([_noisy_sum(g_q, [0.0], int(m)) for m in sizes])
    out = log_wealth_paths(key, xs[None], ys[None], gdp(1.0), batch=64)
    np.testing.assert_allclose(np.log(result.e_value), out["log_wealth"][0], rtol=1e-12)


def test_an_interrupted_test_resumes_as_an_uninterrupted_one():
    """The state after each batch (outputs, wealth, random states) resumes the test exactly."""
    interrupted = interrupted_at(_noisy_sum, 13)
    key, args = jax.random.key(21), ([1.0], [0.0], gdp(0.8))
    whole = betting_test(key, _noisy_sum, *args, max_n=4000, batch=64)
    memory = Memory()
    with pytest.raises(KeyboardInterrupt):
        betting_test(key, interrupted, *args, max_n=4000, batch=64, checkpoint=memory)
    assert memory.saves >= 5 and 0 < memory.state.start < whole.n
    resumed = betting_test(key, _noisy_sum, *args, max_n=4000, batch=64,
                                  checkpoint=Memory(memory.state))  # fmt: skip
    assert resumed == whole and whole.refuted


def test_a_resumed_float32_test_plans_from_the_rows_of_the_uninterrupted_one():
    """On resume the bets in force are planned again: from the float64 sorted rows that the
    uninterrupted run plans from (``SortedPast``), not from the float32 past sorted as float32,
    whose midpoints and medians differ (16 of 20 such plans did)."""
    from rdpjax.rejection.betting_state import replanned

    eps, delta = epsilon_grid(gdp(1.0))
    rng = np.random.default_rng(0)
    for _ in range(10):
        n = int(rng.integers(1_000, 30_000))
        px, py = (rng.normal(mu, 1.0, n).astype(np.float32) for mu in (1.0, 0.0))

        # What a checkpoint holds: the outputs as drawn, and the size of the plan in force.
        resumed = SimpleNamespace(planned=n, discrete=False, arrays=lambda p=px, q=py: (p, q))
        got = replanned(resumed, eps=eps, delta=delta, scales=SCALES)
        rows = (np.sort(a.astype(np.float64))[None] for a in (px, py))  # the run's own rows
        want = plan_bets(*rows, eps, delta, False, SCALES, rows_sorted=True)
        for a, b in zip(got, want, strict=True):
            for field in ("family", "center", "threshold", "below", "swap", "epsilon", "lam"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_a_betting_audit_keeps_and_resumes_its_checkpoint(tmp_path):
    import rdpjax

    looks = Looks(max_n=5_000, checkpoint=tmp_path)
    common = dict(n=looks, claim=gdp(0.6), progress=False)
    first = rdpjax.audit(jax.random.key(3), _noisy_sum, [1.0], [0.0], **common)
    assert (tmp_path / "betting.npz").exists() and first.refuted
    with pytest.raises(ValueError, match="holds a betting audit's draws"):
        rdpjax.audit(jax.random.key(3), _noisy_sum, [1.0], [0.0], **common)
    resumed = common | {"n": Looks(max_n=5_000, checkpoint=tmp_path, resume=True)}
    again = rdpjax.audit(jax.random.key(3), _noisy_sum, [1.0], [0.0], **resumed)
    assert again.sets == first.sets
    with pytest.raises(ValueError, match="belongs to another audit"):
        rdpjax.audit(jax.random.key(3), _noisy_sum, [1.0], [0.0], **(resumed | {"claim": gdp(0.5)}))
