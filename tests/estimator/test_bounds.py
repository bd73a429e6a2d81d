"""lower_bound: the pipeline, its invariants, its standard error, its coverage, its errors."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import ORDERS, B, gaussian_exact, laplace_exact, run_script

import rdpjax
from rdpjax.estimator.api import KEPT_SHARE, plan_bound
from rdpjax.stream import bound_of_draws


def _gauss(key, n_p, n_q):
    kp, kq = jax.random.split(key)
    return 1.0 + B * jax.random.normal(kp, (n_p,)), B * jax.random.normal(kq, (n_q,))


def test_bound_fields_and_validity():
    p, q = _gauss(jax.random.key(0), 20000, 20000)
    b = rdpjax.lower_bound(np.asarray(p), np.asarray(q), ORDERS)
    assert isinstance(b, rdpjax.Bound)
    for name in ("lam", "estimate", "lower", "std_error"):
        assert getattr(b, name).shape == (3,)
    # Gaussian outputs are mapped by default, and their own KDE is bounded beside the map:
    # 3 orders × 2 families, the map's at 0.9 α / 3 each (rdpjax.estimator.api.either_bound).
    assert b.simultaneous and b.n_bounds == 6 and not b.discrete
    np.testing.assert_allclose(float(b.level), 0.05 * (1 - KEPT_SHARE) / 3)
    # The map wins here: the bound uses the rows left by the pilot (1/16).
    assert b.transform == "quantile" and int(b.n_p) == int(b.n_q) == 20000 - 20000 // 16
    assert np.all(np.asarray(b.lower) < np.asarray(b.estimate))
    assert np.all(np.asarray(b.lower) <= gaussian_exact(np.asarray(ORDERS)))
    d = b.to_dict()
    assert set(d) >= {
        "lam",
        "estimate",
        "lower",
        "std_error",
        "bandwidth",
        "floor",
        "beta",
        "n_p",
        "n_q",
        "level",
    }
    assert "over 3 orders × 2 estimators = 6 bounds (Bonferroni)" in str(b)


def test_single_order_is_not_simultaneous():
    p, q = _gauss(jax.random.key(1), 5000, 5000)
    b = rdpjax.lower_bound(np.asarray(p), np.asarray(q), 2.0, transform=None)
    assert b.n_bounds == 1 and not b.simultaneous
    np.testing.assert_allclose(float(b.level), 0.05)
    # The default maps these (Gaussian tails) and bounds the outputs' own KDE too: two bounds.
    b = rdpjax.lower_bound(np.asarray(p), np.asarray(q), 2.0)
    assert b.n_bounds == 2 and b.simultaneous and b.transform == "quantile"
    np.testing.assert_allclose(float(b.level), 0.05 * (1 - KEPT_SHARE))


def test_estimates_nondecreasing_in_lambda():
    p, q = _gauss(jax.random.key(2), 20000, 20000)
    b = rdpjax.lower_bound(np.asarray(p), np.asarray(q), np.linspace(1.2, 12, 12))
    assert np.all(np.diff(np.asarray(b.estimate)) >= -1e-12)


@pytest.mark.slow
def test_jit_equals_eager_and_same_key_same_answer():
    p, q = _gauss(jax.random.key(3), 2000, 1500)
    with rdpjax.float64():
        plan, pj, qj = plan_bound(p, q, ORDERS)
        eager = plan(pj, qj)
        jitted = jax.jit(lambda a, b: plan(a, b))(pj, qj)
    for name in ("estimate", "lower", "std_error"):
        np.testing.assert_allclose(
            np.asarray(getattr(eager, name)), np.asarray(getattr(jitted, name)), rtol=1e-10
        )
    again = rdpjax.lower_bound(p, q, ORDERS)
    np.testing.assert_array_equal(
        np.asarray(again.lower), np.asarray(rdpjax.lower_bound(p, q, ORDERS).lower)
    )


@pytest.mark.slow
def test_vmap_equals_loop():
    keys = jax.random.split(jax.random.key(4), 3)
    with rdpjax.float64():
        plan, _, _ = plan_bound(*_gauss(keys[0], 3000, 3000), ORDERS)
        # jit(vmap): the batched program is compiled once (an eager vmap compiles every op).
        batched = jax.jit(jax.vmap(lambda k: plan(*_gauss(k, 3000, 3000))))(keys)
        one = jax.jit(lambda k: plan(*_gauss(k, 3000, 3000)))
        looped = [one(k) for k in keys]
    for i, b in enumerate(looped):
        np.testing.assert_allclose(np.asarray(batched.lower[i]), np.asarray(b.lower), rtol=1e-9)


@pytest.mark.slow
def test_samples_drawn_in_the_program_give_the_same_bound_behind_the_fusion_boundary():
    """bound_of_draws writes samples drawn in the same program to memory first (a conditional,
    rdpjax._internal.fusion): the bounds of a vmapped study are those of the fused program.
    (That the boundary is in the compiled program: benchmarks/performance/compiled_programs.py.)"""
    keys = jax.random.split(jax.random.key(5), 4)
    with rdpjax.float64():
        plan, _, _ = plan_bound(*_gauss(keys[0], 3000, 3000), ORDERS)

        def study(rows):
            def draw_and_bound(k):
                return bound_of_draws(plan, *_gauss(k, 3000, 3000), materialize_rows=rows).lower

            return np.asarray(jax.jit(jax.vmap(draw_and_bound))(keys))

        behind = study(rdpjax.stream.replicate.MATERIALIZE_ROWS)
        fused = study(0)
    np.testing.assert_allclose(behind, fused, rtol=1e-12, atol=0)


def _replicate(plan, draw, reps, seed):
    with rdpjax.float64():
        out = jax.jit(jax.vmap(lambda k: plan(*draw(k))))(
            jax.random.split(jax.random.key(seed), reps)
        )
    return np.asarray(out.estimate), np.asarray(out.std_error), np.asarray(out.lower)


@pytest.mark.slow
@pytest.mark.parametrize(("n_p", "n_q"), [(10000, 10000), (4000, 20000)])
def test_standard_error_matches_replication_spread(n_p, n_q):
    """σ̂/√n vs the spread of D̂ over R = 200 keyed replications (also for unequal sizes).

    The sample sd of 200 draws has relative standard error 1/√(2·199) = 5%; |ratio − 1| < 0.2
    is a 4-se band (false-failure rate 6e-5) around the delta method's claim."""
    draw = lambda k: _gauss(k, n_p, n_q)  # noqa: E731
    with rdpjax.float64():
        plan, _, _ = plan_bound(*draw(jax.random.key(99)), ORDERS)
    est, se, _ = _replicate(plan, draw, 200, 5)
    ratio = est.std(axis=0, ddof=1) / se.mean(axis=0)
    assert np.all(np.abs(ratio - 1) < 0.2), ratio


@pytest.mark.slow
def test_fixed_key_coverage_gaussian_and_laplace():
    """Small fixed-key coverage check (benchmarks/calibration/calibrate.py is the real study).

    200 replications at n = 1e4 per side; per-order 95% bounds. If the true coverage were 0.95,
    P(≤ 180 of 200 covered) = 0.1%, so a 0.90 threshold flags a real loss of validity."""
    for noise, exact in ((jax.random.normal, gaussian_exact), (jax.random.laplace, laplace_exact)):

        def draw(k, noise=noise):
            kp, kq = jax.random.split(k)
            return 1.0 + B * noise(kp, (10000,)), B * noise(kq, (10000,))

        with rdpjax.float64():
            plan, _, _ = plan_bound(*draw(jax.random.key(7)), 5.0)
        _, _, lower = _replicate(plan, draw, 200, 11)
        coverage = np.mean(lower[:, 0] <= exact(5.0))
        assert coverage >= 0.90, coverage


def test_too_small_bandwidth_and_floor_break_the_first_order_bound_only():
    """docs/methods.md §2.5: h and τ far too small bias D̂ upward; the paper's first-order bound
    (16) does not see it and lands above the truth, the second-order correction does."""
    p, q = _gauss(jax.random.key(8), 10**5, 10**5)
    settings = dict(bandwidth=0.3 * 5 * 1e5**-0.4, floor=1e-4 / 5)
    first = rdpjax.lower_bound(p, q, 7.0, second_order=False, **settings)
    corrected = rdpjax.lower_bound(p, q, 7.0, **settings)
    good = rdpjax.lower_bound(p, q, 7.0)
    assert float(first.lower[0]) > gaussian_exact(7.0)
    assert float(corrected.lower[0]) <= gaussian_exact(7.0)
    assert float(good.lower[0]) <= gaussian_exact(7.0)


def test_both_directions_reports_larger_with_bonferroni():
    p, q = _gauss(jax.random.key(9), 20000, 20000)
    fwd = rdpjax.lower_bound(p, q, ORDERS, alpha=0.05 / 2, transform=None)
    rev = rdpjax.lower_bound(q, p, ORDERS, alpha=0.05 / 2, transform=None)
    both = rdpjax.lower_bound(p, q, ORDERS, both_directions=True, transform=None)
    assert both.n_bounds == 6
    np.testing.assert_allclose(np.asarray(both.lower), np.maximum(fwd.lower, rev.lower), rtol=1e-9)
    np.testing.assert_array_equal(
        np.asarray(both.direction), (np.asarray(rev.lower) > np.asarray(fwd.lower)).astype(int)
    )


def test_eq18_and_autodiff_variances_are_close_at_small_h():
    p, q = _gauss(jax.random.key(10), 50000, 50000)
    a = rdpjax.lower_bound(p, q, ORDERS, variance="autodiff")
    e = rdpjax.lower_bound(p, q, ORDERS, variance="eq18")
    np.testing.assert_allclose(np.asarray(a.estimate), np.asarray(e.estimate), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(a.std_error), np.asarray(e.std_error), rtol=0.1)


def test_discrete_relative_frequencies_randomized_response():
    """Binary randomized response, ε0 = 1.5: discrete auto-detected, bound ≤ exact, within se."""
    a = np.exp(1.5) / (1 + np.exp(1.5))
    # λ = 2 closed form, docs/methods.md §3
    exact = np.log(a**2 * (1 - a) ** -1 + (1 - a) ** 2 * a**-1)
    kp, kq = jax.random.split(jax.random.key(12))
    n = 200000
    p = np.asarray(jax.random.bernoulli(kp, a, (n,))).astype(np.int8)
    q = np.asarray(jax.random.bernoulli(kq, 1 - a, (n,))).astype(np.int8)
    b = rdpjax.lower_bound(p, q, 2.0)
    # Two values, the support padded to the smallest bucket (4); the exact layout keeps 2.
    assert b.discrete and b.grid_shape == (4,)
    assert rdpjax.lower_bound(p, q, 2.0, layout="exact").grid_shape == (2,)
    assert float(b.lower[0]) <= exact
    assert abs(float(b.estimate[0]) - exact) < 4 * float(b.std_error[0])


def test_discrete_vectors_and_float_codes():
    rng = np.random.default_rng(0)
    p = rng.integers(0, 2, (5000, 3))
    q = rng.integers(0, 2, (5000, 3))
    b = rdpjax.lower_bound(p.astype(float), q.astype(float), 2.0)
    assert b.discrete and b.grid_shape == (8,)
    assert float(b.lower[0]) <= 0.0 < float(b.lower[0]) + 5 * float(b.std_error[0])


def test_settings_are_reported_and_overridable():
    p, q = _gauss(jax.random.key(13), 5000, 5000)
    b = rdpjax.lower_bound(p, q, 2.0, bandwidth=0.7, floor=0.002, beta=300.0, grid_size=2048)
    assert float(b.bandwidth[0]) == 0.7 and float(b.floor) == 0.002 and float(b.beta) == 300.0
    assert b.grid_shape == (2048,)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(p=[1.0, np.nan, 2.0]), "non-finite"),
        (dict(p=[1.0, np.inf, 2.0]), "non-finite"),
        (dict(p=[]), "at least 2"),
        (dict(p=[1.0]), "at least 2"),
        (dict(p=np.zeros((5, 2)) + np.arange(5)[:, None]), "same dimension"),
        (dict(lam=1.0), "lam"),
        (dict(lam=[2.0, 0.5]), "lam"),
        (dict(lam=np.nan), "lam"),
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=0.5), "alpha"),
        (dict(alpha=1.2), "alpha"),
        (dict(p=[3.0] * 10, discrete=False), "zero spread"),
        (dict(p=np.arange(2**20) + 0.5, q=np.arange(2**20) + 0.25, discrete=True), "dense limit"),
        (dict(bandwidth=-1.0), "bandwidth"),
        (dict(floor=0.0), "floor"),
        (dict(beta=np.inf), "beta"),
        (
            dict(
                p=np.random.default_rng(0).normal(size=(50, 4)),
                q=np.random.default_rng(1).normal(size=(50, 4)),
            ),
            "d ≤ 3",
        ),
        (dict(p=["a", "b"]), "numeric"),
        (dict(grid_size=3), "grid_size"),
        (dict(variance="bootstrap"), "variance"),
        (dict(layout="coarse"), "layout must be one of"),
    ],
)
def test_bad_input_raises_clear_error(kwargs, match):
    args = dict(p=np.linspace(0, 1, 10), q=np.linspace(0.2, 1.3, 10), lam=2.0)
    args.update(kwargs)
    p, q, lam = args.pop("p"), args.pop("q"), args.pop("lam")
    with pytest.raises(ValueError, match=match):
        rdpjax.lower_bound(p, q, lam, **args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", [0, 1, 70_000, -1])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_anywhere_is_named_with_the_sample(dtype, where, bad):
    """Floating samples get their extremes and finiteness checked while they are copied to jax,
    block by block (inputs.to_device_with_extremes): a bad value in the first row (which the
    discrete check's and the quantile map's pilots read), in a later block or in the last row
    gives the one clear error, before anything is bounded."""
    rng = np.random.default_rng(3)
    p, q = rng.normal(size=150_000).astype(dtype), rng.normal(size=140_000).astype(dtype)
    q[where] = bad
    with pytest.raises(ValueError, match=r"q_samples contains 1 non-finite value\(s\)"):
        rdpjax.lower_bound(p, q, ORDERS)


@pytest.mark.parametrize("shape", [(100_003,), (70_001, 2)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_copy_with_extremes_equals_the_copy_and_the_extremes(shape, dtype, x64):
    from rdpjax.estimator import inputs

    x = (np.random.default_rng(4).standard_t(3, size=shape) * 100).astype(dtype)
    target = np.float32 if dtype == np.float32 else np.float64
    rows = shape[0] + 37  # padded, as lower_bound pads
    copied, (lo, hi) = inputs.to_device_with_extremes(x, "x", target, rows, np.nan)
    lo_ref, hi_ref = inputs.finite_extremes(x, "x")
    np.testing.assert_array_equal(lo, lo_ref)
    np.testing.assert_array_equal(hi, hi_ref)
    out = np.asarray(copied).reshape(rows, -1)
    np.testing.assert_array_equal(out[: shape[0]], x.reshape(shape[0], -1).astype(target))
    assert np.isnan(out[shape[0] :]).all() and out.dtype == target


def test_bound_is_a_pytree():
    p, q = _gauss(jax.random.key(14), 3000, 3000)
    b = rdpjax.lower_bound(p, q, ORDERS)
    leaves, tree = jax.tree.flatten(b)
    rebuilt = jax.tree.unflatten(tree, leaves)
    assert dataclasses.asdict(rebuilt).keys() == dataclasses.asdict(b).keys()
    doubled = jax.tree.map(lambda x: x * 2, b)
    np.testing.assert_allclose(np.asarray(doubled.lower), 2 * np.asarray(b.lower))


def test_float64_is_scoped():
    p, q = _gauss(jax.random.key(15), 3000, 3000)
    rdpjax.lower_bound(p, q, 2.0)
    assert not jax.config.jax_enable_x64
    assert jnp.zeros(1).dtype == jnp.float32


def test_plan_reports_codes_outside_its_support_instead_of_dropping_them():
    with rdpjax.float64():
        p, q = np.tile([0, 1, 1, 2], 5), np.tile([0, 0, 1, 2], 5)  # 20 a side: the fewest planned
        plan, _, _ = plan_bound(p, q, 2.0, support_size=3)
        b = plan(jnp.array([0, 1, 5, 2]), jnp.array([0, 1, 1, 1]))
    np.testing.assert_array_equal(np.asarray(b.outside), [1, 0])
    assert b.grid_shape == (3,)


@pytest.mark.parametrize(
    "codes", [np.array([0, 1, 3]), np.array([0.0, 1.0, 2.0]), np.array([-1, 0, 1])]
)
def test_support_size_requires_codes_in_range(codes):
    with pytest.raises(ValueError, match="support_size"):
        plan_bound(codes, np.array([0, 1, 2]), 2.0, discrete=True, support_size=3)


def test_rounded_continuous_data_stay_continuous():
    """A CSV written with two decimals ties often, but is no discrete law: KDE, not frequencies."""
    p, q = _gauss(jax.random.key(16), 50000, 50000)
    p, q = np.round(np.asarray(p, np.float64), 2), np.round(np.asarray(q, np.float64), 2)
    b = rdpjax.lower_bound(p, q, 2.0)
    assert not b.discrete
    assert 0 < float(b.lower[0]) <= gaussian_exact(2.0)


def test_huge_floats_are_coded_exactly_not_cast():
    p, q = np.tile([1e19, 2e19, 1e19, 1e19], 5), np.tile([2e19, 2e19, 2e19, 1e19], 5)
    b = rdpjax.lower_bound(p, q, 2.0, discrete=True)
    assert int(b.support) == 2


def test_small_integer_dtypes_do_not_wrap_around():
    rng = np.random.default_rng(0)
    p = rng.integers(-100, 100, 1000).astype(np.int8)
    q = rng.integers(-100, 100, 1000).astype(np.int8)
    assert not rdpjax.lower_bound(p, q, 2.0, discrete=False).discrete


def test_bandwidth_wider_than_the_data_gets_a_grid():
    rng = np.random.default_rng(1)
    b = rdpjax.lower_bound(rng.normal(size=500), rng.normal(size=500), 2.0, bandwidth=1000.0)
    assert float(b.bandwidth[0]) == 1000.0


@pytest.mark.slow
def test_large_host_buffers_are_reused_only_once_jax_let_them_go(x64):
    """to_device keeps buffers of 4 MiB or more and hands one out again only when no jax array
    shares it: an array still held keeps its values while later copies are made, and a
    released buffer is taken again instead of a new one (at most KEEP_BYTES kept)."""
    import gc

    from rdpjax._internal import buffers

    rows = 2**21  # 8 MiB of float32 a copy
    x = [np.full(rows - 5, float(k), np.float32) for k in range(4)]
    held = buffers.to_device(x[0], np.float32, rows, fill=np.nan)
    second = buffers.to_device(x[1], np.float32, rows, fill=np.nan)
    assert np.asarray(held)[0] == 0.0 and np.asarray(second)[0] == 1.0  # not the same memory
    kept = len(buffers._kept)
    del second
    gc.collect()
    third = buffers.to_device(x[2], np.float32, rows, fill=np.nan)  # second's buffer, again
    assert len(buffers._kept) == kept
    np.testing.assert_array_equal(np.asarray(held)[: rows - 5], x[0])
    assert np.isnan(np.asarray(held)[rows - 5 :]).all()
    np.testing.assert_array_equal(np.asarray(third)[: rows - 5], x[2])
    assert sum(b.nbytes for b in buffers._kept) <= buffers.KEEP_BYTES
    # The bound is the same whether its copies come from kept buffers or fresh ones.
    p = np.random.default_rng(6).normal(0.3, 1.0, 2**21).astype(np.float32)
    q = np.random.default_rng(7).normal(0.0, 1.0, 2**21).astype(np.float32)
    first = rdpjax.lower_bound(p, q, [2.0, 5.0])
    # The default bound copies each side once per family it bounds (the map's and, where
    # transform="auto" maps, the outputs' own KDE: docs/methods.md §2.1), two or four buffers.
    after_first = len(buffers._kept)
    assert after_first <= kept + 4
    gc.collect()
    again = rdpjax.lower_bound(p, q, [2.0, 5.0])
    np.testing.assert_array_equal(again.lower, first.lower)
    assert len(buffers._kept) == after_first  # the second bound's copies reuse the first's
    assert sum(b.nbytes for b in buffers._kept) <= buffers.KEEP_BYTES


def test_floor_must_be_a_single_number():
    with pytest.raises(ValueError, match="single number"):
        rdpjax.lower_bound(
            np.linspace(0, 1, 10), np.linspace(0.2, 1.3, 10), 2.0, floor=[1e-3, 2e-3]
        )


@pytest.mark.slow
def test_samples_reach_jax_through_a_private_copy(x64):
    """plan_bound hands samples to jax through one aligned copy (zero-copy device_put on the
    CPU): the values and dtype are kept, ints become float64, and changing the caller's array
    afterwards does not change the array jax holds."""
    from rdpjax._internal.buffers import to_device

    x = np.random.default_rng(3).standard_normal((1001, 2))
    j = to_device(x, np.float64)
    assert j.dtype == jnp.float64 and j.shape == x.shape
    np.testing.assert_array_equal(np.asarray(j), x)
    keep = x.copy()
    x[:] = -7.0
    np.testing.assert_array_equal(np.asarray(j), keep)
    ints = np.arange(-5, 6, dtype=np.int16)
    np.testing.assert_array_equal(np.asarray(to_device(ints, np.float64)), ints.astype(float))
    codes = to_device(np.array([0, 3, 2, 1], np.int64), np.int32)
    assert codes.dtype == jnp.int32 and codes.tolist() == [0, 3, 2, 1]
    # And through the public path: a bound on arrays the caller then overwrites is unchanged.
    p = np.random.default_rng(4).normal(1.0, 1.0, 2000)
    q = np.random.default_rng(5).normal(0.0, 1.0, 2000)
    plan, pj, qj = rdpjax.plan_bound(p, q, 2.0)
    before = plan(pj, qj).lower
    p[:] = 0.0
    q[:] = 0.0
    np.testing.assert_array_equal(plan(pj, qj).lower, before)


@pytest.mark.slow
def test_a_process_bounding_many_data_sets_keeps_a_bounded_number_of_programs(monkeypatch):
    """Past the budget the compiled programs are dropped (issue 20): with a budget of 2, data
    sets whose sizes each fall into a new bucket leave the memory maps level, and results after
    the drops equal the first ones. (jax's own count of the programs kept, at most 4 of a kind
    with a budget of 4: benchmarks/performance/compiled_programs.py.)"""
    from rdpjax._internal import programs as programs_module
    from rdpjax.estimator import api as bounds
    from rdpjax.estimator import grid

    def maps() -> int:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)

    from rdpjax.estimator import from_samples

    monkeypatch.setattr(programs_module, "PROGRAM_BUDGET", 2)
    monkeypatch.setattr(programs_module, "_seen_programs", set())
    monkeypatch.setattr(from_samples, "MIN_PADDED_ROWS", 1)  # every size bucket its own binning
    for fn in bounds.BOUND_PROGRAMS:  # whatever earlier tests compiled
        fn.clear_cache()
    rng = np.random.default_rng(5)
    sizes = [int(700 * 1.25**k) for k in range(6)]
    assert len({grid.bucket_size(n) for n in sizes}) == len(sizes)  # a new bucket each
    data = [(1 + rng.standard_normal(n), rng.standard_normal(n)) for n in sizes]
    first = rdpjax.lower_bound(*data[0], [2.0])
    counts = []
    for p, q in data:
        rdpjax.lower_bound(p, q, [2.0])
        counts.append(maps())
    # Each drop frees the programs: the peaks stay level (without a budget the count grows by
    # ~200-450 a new size: measured 853, 1176, 1646, 2084, 2522, 2680 on these six, against
    # 858, 1180, 1182, 1182, 1184, 1183 with the budget of 2).
    assert max(counts[3:]) - max(counts[:3]) < 150, str(counts)
    again = rdpjax.lower_bound(*data[0], [2.0])
    np.testing.assert_array_equal(again.lower, first.lower)


@pytest.mark.slow
def test_samples_up_to_the_padding_floor_compile_nothing_on_a_repeat(monkeypatch):
    """Every sample of up to MIN_PADDED_ROWS outputs is padded to that length and the scale's
    subsample to SCALE_POINTS rows (issue 20): data sets of sizes in many buckets, planned on
    several layouts, compile nothing on a repeat and give the same bounds. A layout is the plan's
    grid shape, margin and kernel half-width (two sizes may share a shape with different
    margins). That they compile one settings program and one binning and bound program a layout
    (jax's own count): benchmarks/performance/compiled_programs.py."""
    from rdpjax._internal.programs import compiled_names
    from rdpjax.estimator import api as bounds
    from rdpjax.estimator import grid
    from rdpjax.estimator.from_samples import MIN_PADDED_ROWS

    programs = (bounds.padded_settings, bounds.bin_program, bounds.bound_program)
    for fn in programs:
        fn.clear_cache()
    planned = set()

    def recording(plan, *args):
        planned.add((plan.shape, plan.pad, plan.half_width))
        return programs[1](plan, *args)

    monkeypatch.setattr(bounds, "bin_program", recording)
    rng = np.random.default_rng(12)
    sizes = [150, 900, 1_700, 3_100, 5_000, 9_000, 14_000, 21_000, MIN_PADDED_ROWS]
    assert len({grid.bucket_size(n) for n in sizes}) == len(sizes)
    data = [(1.0 + 5.0 * rng.standard_normal(n), 5.0 * rng.standard_normal(n)) for n in sizes]
    # The outputs' own KDE (transform=None): the map would plan on the rows left by the pilot.
    first = [rdpjax.lower_bound(p, q, [2, 5, 7], transform=None) for p, q in data]
    assert len(planned) >= len({b.grid_shape for b in first}) > 1
    with compiled_names() as compiled:
        again = [rdpjax.lower_bound(p, q, [2, 5, 7], transform=None) for p, q in data]
    assert compiled == [], compiled
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.lower, b.lower)


@pytest.mark.slow
def test_a_new_size_in_a_seen_bucket_compiles_nothing():
    """Samples are padded to a bucketed size and the layout is bucketed (issue 20): bounds on
    9,000 … 9,900 samples a side (bucket 10,240; the data's range fixed, so one grid layout)
    compile once, for the first size, and never again; the padding changes nothing but the
    order of a few floating-point sums (against the plan on the unpadded samples)."""
    from rdpjax._internal.programs import compiled_names

    rng = np.random.default_rng(11)
    base = 5.0 * rng.standard_normal(10_000)
    base[:2] = [-25.0, 25.0]
    pairs = [(1.0 + base[:n], base[::-1][:n]) for n in range(9_000, 10_000, 100)]
    rdpjax.lower_bound(*pairs[0], [2, 5, 7], transform=None)  # the outputs' own KDE
    with compiled_names() as compiled:
        results = [rdpjax.lower_bound(p, q, [2, 5, 7], transform=None) for p, q in pairs[1:]]
    assert len({b.grid_shape for b in results}) == 1  # the precondition: one layout
    assert compiled == [], compiled
    for (p, q), b in zip(pairs[1:], results, strict=True):
        assert (int(b.n_p), int(b.n_q)) == (len(p), len(q)) and float(b.outside.sum()) == 0.0
    with rdpjax.float64():
        plan, pj, qj = plan_bound(*pairs[-1], [2, 5, 7])
        reference = plan(pj, qj)
    np.testing.assert_allclose(results[-1].lower, reference.lower, rtol=1e-12, atol=0)


def test_discrete_data_sets_of_new_supports_compile_nothing_in_a_seen_bucket():
    """Discrete supports are bucketed like grids: integer data on 41 … 47 observed values
    (support bucket 48) and 3,100 … 3,440 samples (bucket 3,584) compile once, then never."""
    from rdpjax._internal.programs import compiled_names

    rng = np.random.default_rng(12)
    sets = [
        (rng.integers(0, k, 3100 + 50 * i), rng.integers(0, k, 3200 + 40 * i))
        for i, k in enumerate(range(41, 48))
    ]
    rdpjax.lower_bound(*sets[0], [2, 5, 7])
    with compiled_names() as compiled:
        results = [rdpjax.lower_bound(p, q, [2, 5, 7]) for p, q in sets[1:]]
    assert compiled == [], compiled
    assert {b.grid_shape for b in results} == {(48,)} and all(b.discrete for b in results)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("p", "q"),
    [
        (
            np.random.default_rng(1).normal(size=(1500, 2)),
            np.random.default_rng(2).normal(size=(1700, 2)),
        ),
        (
            np.random.default_rng(3).integers(0, 7, 999),
            np.random.default_rng(4).integers(0, 6, 1234),
        ),
        (
            np.random.default_rng(5).laplace(size=70_001),
            0.1 + np.random.default_rng(6).laplace(size=65_000),
        ),
    ],
    ids=["2-d", "discrete", "subsampled-scale"],
)
def test_padded_bound_equals_the_plan_on_the_samples(p, q):
    """lower_bound pads its samples (NaN rows, or codes past the support) and passes their real
    sizes; the bound equals the plan's on the unpadded samples (2-D, discrete codes, and sizes
    past the pooled scale's 2^16-point subsample), and the padding is neither counted nor
    reported as outside. (``transform=None``: the Laplace samples would be mapped by default.)"""
    b = rdpjax.lower_bound(p, q, [2, 5], both_directions=True, transform=None)
    with rdpjax.float64():
        plan, pj, qj = plan_bound(p, q, [2, 5], both_directions=True)
        reference = plan(pj, qj)
    assert (int(b.n_p), int(b.n_q)) == (len(p), len(q))
    np.testing.assert_array_equal(b.outside, [0.0, 0.0])
    for name in ("estimate", "lower", "std_error", "bandwidth", "floor"):
        np.testing.assert_allclose(
            getattr(b, name), np.asarray(getattr(reference, name)), rtol=1e-12, atol=1e-15
        )


@pytest.mark.slow
def test_plan_bound_outside_float64_scope():
    # plan_bound is public: called without rdpjax.float64() (jax in its default 32-bit mode) it
    # must plan in float64 itself, not fail on a 64-bit constant (it raised OverflowError).
    rng = np.random.default_rng(3)
    p, q = rng.normal(0.5, 1.0, 4000), rng.normal(0.0, 1.0, 4000)
    plan, pj, qj = rdpjax.plan_bound(p, q, [2.0])
    assert pj.dtype == jnp.float64 and plan.shape[0] >= 8
    with rdpjax.float64():
        direct = plan(pj, qj)
    assert np.isfinite(float(direct.lower[0]))


@pytest.mark.slow
@pytest.mark.parametrize("support", [3, 37, 300])
def test_discrete_padded_support_changes_nothing(support):
    # The bucketed layout pads the support with codes neither sample has: every term of the
    # estimate, its variance and the second-order terms carries a factor p̂ (or p̂^λ), so the
    # padded cells add nothing. Both directions, unequal n.
    rng = np.random.default_rng(support)
    w = rng.uniform(0.5, 1.5, support)
    p = rng.choice(support, 3000, p=w / w.sum())
    q = rng.integers(0, support, 2000)
    options = dict(both_directions=True, discrete=True)
    exact_layout = rdpjax.lower_bound(p, q, ORDERS, layout="exact", **options)
    padded = rdpjax.lower_bound(p, q, ORDERS, **options)
    assert padded.grid_shape[0] > exact_layout.grid_shape[0] == len(np.union1d(p, q))
    for name in ("estimate", "std_error", "bias", "lower"):
        np.testing.assert_allclose(
            getattr(padded, name), getattr(exact_layout, name), rtol=1e-12, atol=1e-15
        )


@pytest.mark.parametrize(
    ("values", "discrete"),
    [
        (lambda rng, n: rng.integers(0, 2, n), True),  # binary
        (lambda rng, n: rng.integers(0, 40, n).astype(np.float64), True),  # 40 values as floats
        # Discrete Laplace of scale 30 (hundreds of values): ordinal, the KDE at every n.
        (lambda rng, n: rng.geometric(0.033, n) - rng.geometric(0.033, n), False),
        # float32 with an offset of 1e6: ties from rounding, a continuous law.
        (lambda rng, n: (1e6 + 5.0 * rng.standard_normal(n)).astype(np.float32), False),
    ],
)
@pytest.mark.parametrize("n", [300, 3_000, 30_000])
def test_discrete_or_ordinal_decision(values, discrete, n):
    """discrete=None: few values (≤ 64) get relative frequencies, many values are ordinal and
    get the KDE, whatever the dtype and n (docs: looks_discrete, calibrate_ordinal.py)."""
    rng = np.random.default_rng(n)
    p, q = values(rng, n), values(rng, n)
    assert rdpjax.estimator.support.looks_discrete(p, q) is discrete


def test_many_valued_integers_warn_that_they_are_treated_as_ordinal():
    rng = np.random.default_rng(13)
    p, q = rng.integers(0, 500, 5000), rng.integers(0, 500, 5000)
    with pytest.warns(UserWarning, match="ordinal"):
        b = rdpjax.lower_bound(p, q, 2.0)
    assert not b.discrete
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rdpjax.lower_bound(p, q, 2.0, discrete=False)
        assert rdpjax.lower_bound(p, q, 2.0, discrete=True).discrete


_TWO_DEVICES = """
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import numpy as np, jax, rdpjax
from rdpjax.estimator.api import binning_mesh
data = np.load(sys.argv[1])
out = {"devices": len(jax.devices()), "mesh": binning_mesh().size}
for name in ("continuous", "discrete"):
    b = rdpjax.lower_bound(data[name + "_p"], data[name + "_q"], [2, 5, 7])
    out[name] = [b.lower.tolist(), b.estimate.tolist(), float(b.bandwidth[0]), int(b.n_p)]
print("RESULT" + json.dumps(out))
"""


@pytest.mark.slow
def test_lower_bound_bins_on_every_local_device(tmp_path):
    """With two local devices, lower_bound bins continuous samples split over both (each a
    block, one psum): the same bound as on one device, up to the 1-D binning's fraction
    rounding, whose bits follow the chunk each device scans (every sample moves by at most
    2^-26 of a cell, far below 1e-7 of the bound); discrete codes are counted as before."""
    rng = np.random.default_rng(3)
    data = {
        "continuous_p": (1.0 + 5.0 * rng.standard_normal(300_001)).astype(np.float32),
        "continuous_q": (5.0 * rng.standard_normal(299_999)).astype(np.float32),
        "discrete_p": rng.integers(0, 6, 5_000),
        "discrete_q": rng.integers(0, 5, 5_001),
    }
    np.savez(tmp_path / "data.npz", **data)
    got = run_script(_TWO_DEVICES, str(tmp_path / "data.npz"))
    assert got["devices"] == 2 and got["mesh"] == 2
    for name, rtol in (("continuous", 1e-7), ("discrete", 1e-12)):
        b = rdpjax.lower_bound(data[name + "_p"], data[name + "_q"], [2, 5, 7])  # one device
        lower, estimate, bandwidth, n_p = got[name]
        np.testing.assert_allclose(lower, b.lower, rtol=rtol, atol=0, err_msg=name)
        np.testing.assert_allclose(estimate, b.estimate, rtol=rtol, atol=0, err_msg=name)
        assert bandwidth == float(b.bandwidth[0]) and n_p == int(b.n_p)
