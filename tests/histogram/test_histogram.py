"""Paper 001's histogram estimators (rdpjax.histogram).

References: the published (buckets, n) of Gorla et al. (arXiv:2208.14414; the tables in the
authors' repository LouisJalouzot/DP-Estimation, ``res.txt``, ``resRDP.txt``,
``results/results.csv``); an mpmath evaluation of the sample-size conditions typed from
docs/methods.md §4; exact bucket masses of the truncated Laplace law (closed form, typed here) with
numpy multinomial draws and a numpy re-implementation of the estimators.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from scipy import stats

import rdpjax
from rdpjax import histogram as H
from rdpjax.mechanisms import TruncatedLaplace, from_sampler


def lipschitz_laplace(b):
    """Lipschitz constant of the truncated Laplace density on [0, 1] at μ ∈ {0, 1} (§4)."""
    return 1.0 / (b * b * (1.0 - math.exp(-1.0 / b)))


def laplace_bucket_masses(b, buckets, mu):
    """Exact bucket masses of Laplace(μ, b) truncated to [0, 1], μ ∈ {0, 1} (closed form)."""
    edges = np.linspace(0.0, 1.0, buckets + 1)
    dist = edges if mu == 0 else 1.0 - edges[::-1]  # distance to μ, increasing
    tail = np.exp(-dist / b)
    masses = (tail[:-1] - tail[1:]) / (1.0 - math.exp(-1.0 / b))
    return masses if mu == 0 else masses[::-1]


# ε-LDP, truncated Laplace, β = 0.8 (res.txt): ε = 1/B → {γ: (buckets, n)}.
LDP_PUBLISHED = {
    0.5: {1: (6, 9588), 0.5: (12, 75618), 0.1: (56, 8738124), 0.05: (112, 69829528)},
    0.7: {1: (12, 25488), 0.5: (23, 192646), 0.1: (114, 23644352), 0.05: (228, 188950656)},
    1.0: {1: (46, 239944), 0.5: (91, 1871942), 0.1: (455, 231768704), 0.05: (909, 1850113066)},
}
# Rényi λ = 2, truncated Laplace, β = 0.9 (resRDP.txt): B → {γ: (buckets, n)}.
LRDP_PUBLISHED = {
    5: {1: (3, 17794), 0.5: (6, 161860), 0.1: (29, 25059158)},
    3: {1: (10, 234188), 0.5: (20, 2082318), 0.1: (97, 311255974)},
    2: {1: (41, 6666500), 0.5: (81, 57434252), 0.1: (403, 8551394634)},
    1.5: {1: (195, 344551102), 0.5: (389, 2959509230), 0.1: (1945, 431430524240)},
}


# ------------------------------------------------------------------ guaranteed sample sizes


@pytest.mark.parametrize(
    "eps,gamma", [(e, g) for e, row in LDP_PUBLISHED.items() for g in row], ids=str
)
def test_ldp_sample_size_matches_published(eps, gamma):
    buckets, n = H.ldp_sample_size(gamma, 0.8, lipschitz_laplace(1.0 / eps))
    want_buckets, want_n = LDP_PUBLISHED[eps][gamma]
    assert buckets == want_buckets
    assert abs(n - want_n) <= 1  # the authors' bisection stops at a gap of 2


@pytest.mark.parametrize("b,gamma", [(b, g) for b, row in LRDP_PUBLISHED.items() for g in row])
def test_lrdp_sample_size_matches_published(b, gamma):
    buckets, n = H.lrdp_sample_size(gamma, 0.9, lipschitz_laplace(b), 2.0)
    want_buckets, want_n = LRDP_PUBLISHED[b][gamma]
    assert buckets == want_buckets
    assert abs(n - want_n) <= 1


def _psi_mp(n, p, g):
    e = mpmath.e**g
    num = mpmath.exp(-n * p * (e - 1) ** 2 / (1 + e)) + mpmath.exp(-n * p * (1 - 1 / e) ** 2 / 2)
    return num / (1 - (1 - p) ** n)


@pytest.mark.parametrize("gamma,beta,lip", [(1.0, 0.8, 0.6), (0.3, 0.95, 1.2), (0.05, 0.5, 0.1)])
def test_ldp_sample_size_is_the_smallest(gamma, beta, lip):
    """n meets Algorithm 1's condition and n − 1 does not (50-digit mpmath, from §4)."""
    mpmath.mp.dps = 50
    buckets, n = H.ldp_sample_size(gamma, beta, lip)
    tau = 1 - mpmath.mpf(lip) / 2
    assert buckets == math.ceil(6 * lip / (float(tau) * gamma))
    p = tau / buckets

    def lhs(m):
        return 2 * buckets * (1 - p) ** m + 4 * _psi_mp(m, p, mpmath.mpf(gamma) / 12)

    assert lhs(n) <= 1 - mpmath.mpf(beta) < lhs(n - 1)


@pytest.mark.parametrize("lam,gamma,lip", [(2.0, 1.0, 0.22), (5.0, 0.5, 0.3), (7.0, 1.0, 0.22)])
def test_lrdp_sample_size_is_the_smallest(lam, gamma, lip):
    mpmath.mp.dps = 50
    beta = mpmath.mpf("0.9")
    buckets, n = H.lrdp_sample_size(gamma, 0.9, lip, lam)
    lam_, lip_ = mpmath.mpf(lam), mpmath.mpf(lip)
    t0, t1 = 1 - lip_ / 2, 1 + lip_ / 2
    big, small = 2 * t1**lam_ / t0 ** (lam_ - 1), t0**lam_ / t1 ** (lam_ - 1)
    gamma_p = min(
        gamma * small * (lam_ - 1) / (2 * big * (2 * lam_ - 1)), mpmath.log(2) / (2 * lam_ - 1)
    )
    assert buckets == int(
        mpmath.ceil(lip_ * big * (2 * lam_ - 1) / (gamma * t0 * small * (lam_ - 1)))
    )
    p = t0 / buckets

    def lhs(m):
        return 1 - 2 * buckets * (1 - p) ** m - 2 * buckets * _psi_mp(m, p, gamma_p)

    assert lhs(n) >= beta > lhs(n - 1)


# The authors' global runs (results/results.csv): (L, L', γ, β) → (k_x, buckets, n to 1 digit).
GLOBAL_PUBLISHED = [
    (1.58, 3.16, 0.2, 0.95, 226, 678, 1e9),  # Laplace B = 1
    (0.64, 1.27, 0.1, 0.95, 57, 170, 4e8),  # Laplace B = 2
    (0.22, 0.44, 0.05, 0.95, 30, 89, 6e8),  # Laplace B = 5
    (1.49, 1.62, 0.3, 0.95, 64, 351, 2e8),  # Gaussian s = 0.6
    (0.70, 0.54, 0.1, 0.95, 25, 194, 4e8),  # Gaussian s = 1
]


@pytest.mark.parametrize("lip,lip_x,gamma,beta,k_x,buckets,n_rounded", GLOBAL_PUBLISHED)
def test_global_ldp_sample_size_matches_published(lip, lip_x, gamma, beta, k_x, buckets, n_rounded):
    got = H.global_ldp_sample_size(gamma, beta, lip, lip_x)
    assert got[:2] == (k_x, buckets)
    assert float(f"{got[2]:.0e}") == n_rounded  # published as '%.1g'


def test_global_lrdp_inputs_match_published():
    """k_x of the authors' Rényi global run (Laplace B = 1.5, γ = 0.04): 14581 inputs."""
    k_x, _, _ = H.global_lrdp_sample_size(0.04, 0.95, 0.913, 1.83, 2.0)
    assert k_x == 14581


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: H.ldp_sample_size(1.0, 0.8, 2.0), "precondition"),
        (lambda: H.ldp_sample_size(1.0, 0.8, 0.5, low=0.0, high=2.0), "precondition"),
        (lambda: H.lrdp_sample_size(1.0, 0.9, 3.0, 2.0), "precondition"),
        (lambda: H.ldp_sample_size(0.0, 0.8, 0.5), "precision"),
        (lambda: H.ldp_sample_size(float("nan"), 0.8, 0.5), "precision"),
        (lambda: H.ldp_sample_size(1.0, 1.0, 0.5), "confidence"),
        (lambda: H.ldp_sample_size(1.0, 0.0, 0.5), "confidence"),
        (lambda: H.ldp_sample_size(1.0, 0.8, 0.0), "lipschitz"),
        (lambda: H.ldp_sample_size(1.0, 0.8, 0.5, low=1.0, high=1.0), "low < high"),
        (lambda: H.lrdp_sample_size(1.0, 0.9, 0.5, 1.0), "lam"),
        (lambda: H.global_ldp_sample_size(1.0, 0.8, 0.5, -1.0), "input_lipschitz"),
        (lambda: H.global_ldp_sample_size(1.0, 0.8, 0.5, 1.0, input_low=1.0), "input_low"),
    ],
)
def test_invalid_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------- counting


def test_bucket_counts_match_numpy(x64):
    rng = np.random.default_rng(0)
    y = np.concatenate([rng.uniform(-0.5, 2.5, 5000), [0.0, 2.0, 2.0, -1e-9]])
    counts, outside = jax.jit(H.bucket_counts, static_argnums=1)(jnp.asarray(y), 7, 0.0, 2.0)
    want, _ = np.histogram(y, bins=7, range=(0.0, 2.0))  # numpy puts y = high in the last bin
    np.testing.assert_array_equal(np.asarray(counts), want)
    assert int(outside) == np.sum((y < 0) | (y > 2))


def test_draw_counts_chunks_are_the_documented_draws(x64):
    """n = 2.5 chunks: chunk i is mechanism.sample(fold_in(key, i), x, size)."""
    mech, key = TruncatedLaplace(scale=2.0), jax.random.key(3)
    draw = jax.jit(H.draw_counts, static_argnums=(3, 4), static_argnames="chunk_size")
    counts, outside = draw(key, mech, 0.3, 2500, 9, 0.0, 1.0, chunk_size=1000)
    parts = [mech.sample(jax.random.fold_in(key, i), 0.3, m) for i, m in enumerate((1000,) * 2)]
    parts.append(mech.sample(jax.random.fold_in(key, 2), 0.3, 500))
    want, _ = np.histogram(np.concatenate([np.asarray(p) for p in parts]), bins=9, range=(0, 1))
    np.testing.assert_array_equal(np.asarray(counts), want)
    assert int(outside) == 0 and int(np.asarray(counts).sum()) == 2500


# ------------------------------------------------------------------ estimates and coverage


def _replicate(mech, key, n, buckets, runs, lam=None):
    """``runs`` vmapped replications of the pairwise estimator on the pair (0, 1)."""

    def one(k):
        k1, k2 = jax.random.split(k)
        rows = [
            H.draw_counts(kk, mech, x, n, buckets, 0.0, 1.0)[0] for kk, x in ((k1, 0.0), (k2, 1.0))
        ]
        return H.from_counts(jnp.stack(rows), n, lam=lam).estimate

    with rdpjax.float64():
        return np.asarray(jax.jit(jax.vmap(one))(jax.random.split(key, runs)))


def _reference_estimates(b, buckets, n, runs, lam=None, seed=0):
    """Independent: numpy multinomial counts from exact masses, numpy estimator."""
    rng = np.random.default_rng(seed)
    nj = rng.multinomial(n, laplace_bucket_masses(b, buckets, 0), size=runs).astype(float)
    mj = rng.multinomial(n, laplace_bucket_masses(b, buckets, 1), size=runs).astype(float)
    with np.errstate(divide="ignore"):
        if lam is None:
            est = np.max(np.abs(np.log(nj / mj)), axis=1)
        else:
            est = np.log(np.sum((nj / n) ** lam * (mj / n) ** (1 - lam), axis=1)) / (lam - 1)
    return np.where((nj > 0).all(1) & (mj > 0).all(1), est, np.inf)


@pytest.mark.slow
@pytest.mark.parametrize(
    "lam,b,gamma,beta", [(None, 2.0, 1.0, 0.8), (2.0, 5.0, 1.0, 0.9)], ids=["ldp", "lrdp"]
)
def test_guaranteed_n_reaches_precision_with_confidence(lam, b, gamma, beta):
    """At the guaranteed n, ≥ β of 100 replications land within γ (Theorems 2 and Rényi), and
    their law matches an independent simulation (two-sample KS, false-failure rate 1e-3)."""
    lip = lipschitz_laplace(b)
    if lam is None:
        buckets, n = H.ldp_sample_size(gamma, beta, lip)
        truth = 1.0 / b
    else:
        buckets, n = H.lrdp_sample_size(gamma, beta, lip, lam)
        truth = TruncatedLaplace(scale=b).divergence(lam, 0.0, 1.0)
    est = _replicate(TruncatedLaplace(scale=b), jax.random.key(11), n, buckets, 100, lam)
    assert np.all(np.isfinite(est))
    assert np.mean(np.abs(est - truth) <= gamma) >= beta
    ref = _reference_estimates(b, buckets, n, 2000, lam)
    assert stats.ks_2samp(est, ref).pvalue > 1e-3


def test_estimate_ldp_is_the_kernel_on_split_keys():
    """estimate_ldp(key): input i draws from split(key, 2)[i]; same key, same answer."""
    mech, key = TruncatedLaplace(scale=2.0), jax.random.key(5)
    lip = lipschitz_laplace(2.0)
    kw = dict(
        accuracy=H.Accuracy(precision=1.0, confidence=0.8),
        regularity=H.Regularity(lipschitz=lip),
        settings=H.HistogramSettings(with_lower_bound=False),
    )
    r = H.estimate_ldp(key, mech, 0.0, 1.0, **kw)
    assert (r.buckets, r.n, r.guaranteed) == (6, 9588, True)
    assert int(r.status) == 0 and int(r.failed_bucket) == -1
    with rdpjax.float64():  # n < chunk_size: one chunk, drawn from fold_in(key_i, 0)
        draws = [
            np.asarray(mech.sample(jax.random.fold_in(k, 0), x, 9588))
            for k, x in zip(jax.random.split(key), (0.0, 1.0), strict=True)
        ]
    rows = np.stack([np.histogram(d, bins=6, range=(0, 1))[0] for d in draws])
    np.testing.assert_array_equal(r.counts, rows)
    want = np.max(np.abs(np.log(rows[0] / rows[1])))
    assert float(r.estimate) == pytest.approx(want, rel=1e-12)
    assert float(H.estimate_ldp(key, mech, 0.0, 1.0, **kw).estimate) == float(r.estimate)


def _floor(t, tau, beta):
    """Softmax floor, eq. (13) of 2212.04739, typed here."""
    return np.log(np.exp(beta * t) + np.exp(beta * tau)) / beta


def _toy(key, x, n):
    """Uniform on [0, 0.5 + 0.5 x]: input 0 puts no mass on (0.5, 1], input 2 leaves [0, 1]."""
    return (0.5 + 0.5 * x) * jax.random.uniform(key, (n,))


TOY = from_sampler(_toy, name="toy")
TOY_KW = dict(  # theory: (4, 5815)
    accuracy=H.Accuracy(precision=1.0, confidence=0.8),
    regularity=H.Regularity(lipschitz=0.5),
    settings=H.HistogramSettings(n=2000, with_lower_bound=False),
)


def test_empty_bucket_is_a_failure_status_and_the_floor_stays_finite():
    """Algorithm 1 fails on bucket 2 of 4 of input 0: a status, never a NaN."""
    r = H.estimate_ldp(jax.random.key(0), TOY, 0.0, 1.0, **TOY_KW)
    assert int(r.status) == H.STATUS_EMPTY_BUCKET and r.failed
    assert r.buckets == 4 and (int(r.failed_input), int(r.failed_bucket)) == (0, 2)
    assert "empty bucket 2 of input 0" in r.status_text
    assert np.isposinf(r.estimate) and not r.guaranteed  # n = 2000 < 5815
    # Floored: max_j max(log p̂ − log q̂_τ, log q̂ − log p̂_τ), τ = max(0.03 n^-0.4, 4/n) (the
    # default), β = 1/τ.
    p, q = r.counts / 2000.0
    tau = max(0.03 * 2000**-0.4, 4 / 2000)
    with np.errstate(divide="ignore"):
        want = max(
            np.max(np.log(p) - np.log(_floor(q, tau, 1 / tau))),
            np.max(np.log(q) - np.log(_floor(p, tau, 1 / tau))),
        )
    assert np.isfinite(r.floored) and float(r.floored) == pytest.approx(want, rel=1e-12)
    # The empty buckets dominate, but the floor caps them: above log 2 (the filled buckets'
    # ratio), at most log(1 / S(0)) since probabilities are at most 1.
    assert math.log(2) < float(r.floored) <= math.log(1 / _floor(0.0, tau, 1 / tau))


def test_outputs_outside_the_interval_fail_loudly():
    r = H.estimate_ldp(jax.random.key(1), TOY, 1.0, 2.0, **TOY_KW)
    assert int(r.status) == H.STATUS_OUTSIDE and r.failed
    np.testing.assert_array_equal(r.outside == 0, [True, False])
    assert np.isposinf(r.estimate)


def test_renyi_zero_count_from_counts(x64):
    counts = jnp.array([[5, 0, 5], [4, 3, 3]])
    r = H.from_counts(counts, 10, lam=2.0, floor=0.05, beta=20.0)
    assert int(r.status) == 1 and (int(r.failed_input), int(r.failed_bucket)) == (0, 1)
    assert np.isposinf(r.estimate)
    p, q = np.array([0.5, 0.0, 0.5]), np.array([0.4, 0.3, 0.3])
    want = math.log(np.sum(p[p > 0] ** 2 / _floor(q, 0.05, 20.0)[p > 0]))
    assert float(r.floored) == pytest.approx(want, rel=1e-12)
    # A vanishing floor gives back the plain estimate when no bucket is empty.
    full = jnp.array([[5, 2, 3], [4, 3, 3]])
    plain = H.from_counts(full, 10, lam=2.0, floor=0.05, beta=20.0)
    tiny = H.from_counts(full, 10, lam=2.0, floor=1e-12, beta=1e14)
    want = math.log(np.sum(np.array([0.5, 0.2, 0.3]) ** 2 / np.array([0.4, 0.3, 0.3])))
    assert float(plain.estimate) == pytest.approx(want, rel=1e-12)
    assert float(tiny.floored) == pytest.approx(want, rel=1e-9)
    assert float(plain.floored) <= float(plain.estimate)  # q_τ ≥ q


def test_estimator_argument_errors():
    mech = TruncatedLaplace(scale=2.0)
    accuracy = H.Accuracy(precision=1.0, confidence=0.8)

    def run(x2=1.0, lipschitz=0.5, **settings):
        return H.estimate_ldp(
            jax.random.key(0),
            mech,
            0.0,
            x2,
            accuracy=accuracy,
            regularity=H.Regularity(lipschitz=lipschitz),
            settings=H.HistogramSettings(with_lower_bound=False, **settings),
        )

    with pytest.raises(ValueError, match="precondition"):
        run(lipschitz=2.5)
    with pytest.raises(ValueError, match="pass n="):
        run(buckets=5)
    with pytest.raises(ValueError, match="n must"):
        run(n=0)
    with pytest.raises(ValueError, match="lam"):
        H.estimate_lrdp(
            jax.random.key(0), mech, 0.0, 1.0, lam=1.0, accuracy=accuracy,
            regularity=H.Regularity(lipschitz=0.5),
        )  # fmt: skip
    with pytest.raises(ValueError, match="same shape"):
        run(x2=np.zeros(2))
    with pytest.raises(ValueError, match="floor"):
        run(floor=-1.0)
    # Without the precondition the user's sizes still run, flagged as not guaranteed; with it,
    # the theory's own sizes passed explicitly keep the guarantee.
    r = run(lipschitz=2.5, buckets=6, n=9588)
    assert not r.guaranteed and r.n == 9588
    assert run(lipschitz=lipschitz_laplace(2.0), buckets=6, n=9588).guaranteed


@pytest.mark.parametrize(
    ("make", "kwargs", "match"),
    [
        (H.Accuracy, dict(precision=0.0, confidence=0.8), "precision"),
        (H.Accuracy, dict(precision=1.0, confidence=1.0), "confidence"),
        (H.Accuracy, dict(precision="a", confidence=0.8), "real number"),
        (H.Regularity, dict(lipschitz=-1.0), "lipschitz"),
        (H.Regularity, dict(lipschitz=0.5, low=1.0, high=0.0), "low < high"),
        (H.Regularity, dict(lipschitz=0.5, high=np.inf), "finite"),
        (H.Regularity, dict(lipschitz=0.5, input_lipschitz=0.0), "input_lipschitz"),
        (H.Regularity, dict(lipschitz=0.5, input_low=2.0), "input_low < input_high"),
        (H.HistogramSettings, dict(n=0), "n must"),
        (H.HistogramSettings, dict(n=2.5e6), "n must"),
        (H.HistogramSettings, dict(buckets=0), "buckets must"),
        (H.HistogramSettings, dict(inputs=1), "inputs must"),
        (H.HistogramSettings, dict(chunk_size=0), "chunk_size must"),
        (H.HistogramSettings, dict(floor=-1.0), "floor"),
        (H.HistogramSettings, dict(beta=0.0), "beta"),
        (H.HistogramSettings, dict(bound_lam=(1.0, 2.0)), "bound_lam"),
        (H.HistogramSettings, dict(alpha=0.7), "alpha"),
        (H.HistogramSettings, dict(alpha="0.05"), "alpha must be a number"),
        (H.HistogramSettings, dict(alpha=None), "alpha must be a number"),
        (H.HistogramSettings, dict(with_lower_bound="no"), "with_lower_bound"),
    ],
)
def test_options_are_checked_when_made(make, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(**kwargs)


def test_options_an_estimator_does_not_take_are_errors():
    mech, key = TruncatedLaplace(scale=2.0), jax.random.key(0)
    accuracy = H.Accuracy(precision=1.0, confidence=0.8)
    regularity = H.Regularity(lipschitz=lipschitz_laplace(2.0))
    pair = dict(accuracy=accuracy, regularity=regularity)
    with pytest.raises(ValueError, match="bound_lam applies"):
        H.estimate_lrdp(
            key, mech, 0.0, 1.0, lam=2.0, settings=H.HistogramSettings(bound_lam=(2.0,)), **pair
        )
    with pytest.raises(ValueError, match="inputs applies"):
        H.estimate_ldp(key, mech, 0.0, 1.0, settings=H.HistogramSettings(inputs=4), **pair)
    with pytest.raises(ValueError, match="input_lipschitz"):
        H.estimate_global_ldp(key, mech, **pair)
    with pytest.raises(ValueError, match="accuracy must be an? Accuracy"):
        H.estimate_ldp(key, mech, 0.0, 1.0, accuracy=(1.0, 0.8), regularity=regularity)
    # The defaults are the former keywords' defaults.
    assert H.HistogramSettings() == H.HistogramSettings(
        n=None, buckets=None, inputs=None, floor=None, beta=None, with_lower_bound=True,
        bound_lam=None, alpha=0.05, chunk_size=H.counting.CHUNK,
    )  # fmt: skip
    assert H.Regularity(lipschitz=1) == H.Regularity(1.0, 0.0, 1.0, None, 0.0, 1.0)


# ------------------------------------------------------------------------ global version


@pytest.mark.slow
@pytest.mark.parametrize("lam", [None, 2.0], ids=["ldp", "lrdp"])
def test_global_is_the_max_over_pairs_of_the_same_draws(lam):
    mech, key = TruncatedLaplace(scale=2.0), jax.random.key(7)
    kw = dict(
        accuracy=H.Accuracy(precision=1.0, confidence=0.8),
        regularity=H.Regularity(lipschitz=lipschitz_laplace(2.0), input_lipschitz=1.3),
        settings=H.HistogramSettings(inputs=4, buckets=5, n=3000, with_lower_bound=False),
    )
    if lam is None:
        r = H.estimate_global_ldp(key, mech, **kw)
    else:
        r = H.estimate_global_lrdp(key, mech, lam=lam, **kw)
    grid = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(r.inputs, grid)
    keys = jax.random.split(key, 4)
    with rdpjax.float64():
        draws = [
            np.asarray(mech.sample(jax.random.fold_in(keys[i], 0), grid[i], 3000)) for i in range(4)
        ]
    counts = np.stack([np.histogram(d, bins=5, range=(0, 1))[0] for d in draws]).astype(float)
    np.testing.assert_array_equal(r.counts, counts)
    pairwise = {}
    for i in range(4):
        for j in range(4):
            if i != j:
                if lam is None:
                    pairwise[i, j] = np.max(np.abs(np.log(counts[i] / counts[j])))
                else:
                    f, g = counts[i] / 3000, counts[j] / 3000
                    pairwise[i, j] = math.log(np.sum(f**lam * g ** (1 - lam))) / (lam - 1)
    best = max(pairwise, key=pairwise.get)
    assert float(r.estimate) == pytest.approx(pairwise[best], rel=1e-12)
    assert pairwise[tuple(int(v) for v in r.pair)] == pytest.approx(pairwise[best], rel=1e-12)
    assert float(r.estimate) >= pairwise[0, 3] - 1e-12  # ≥ the end points' pairwise value


@pytest.mark.slow
def test_lower_bound_is_paper_000_on_the_same_draws():
    mech, key = TruncatedLaplace(scale=5.0), jax.random.key(2)
    lip = lipschitz_laplace(5.0)
    r = H.estimate_lrdp(
        key,
        mech,
        0.0,
        1.0,
        lam=2.0,
        accuracy=H.Accuracy(precision=1.0, confidence=0.9),
        regularity=H.Regularity(lipschitz=lip),
    )
    assert (r.buckets, r.n) == (3, 17793)  # published 17794 (their bisection stops at gap 2)
    k1, k2 = jax.random.split(key)
    with rdpjax.float64():
        p = np.asarray(mech.sample(jax.random.fold_in(k1, 0), 0.0, r.n))
        q = np.asarray(mech.sample(jax.random.fold_in(k2, 0), 1.0, r.n))
    want = rdpjax.lower_bound(p, q, 2.0)
    np.testing.assert_allclose(r.lower.lower, want.lower, rtol=1e-12)
    assert r.lower_epsilon == pytest.approx(float(want.lower[0]), rel=1e-12)
    truth = mech.divergence(2.0, 0.0, 1.0)
    assert abs(float(r.estimate) - truth) <= 1.0 and np.isfinite(r.floored)
