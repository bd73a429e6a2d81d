"""Black-box bounds at any n (rdpjax.stream.blackbox) and progress reports of the streamed bound.

References are independent of the batched kernel: the documented draws rebuilt here from
``np.random.SeedSequence`` and materialized in memory, binned in one pass by
``rdpjax.estimator.binning.linear_binning`` (in the same chunks, so the 1-D fraction rounding is the
same) on a grid rebuilt from the pilot by ``rdpjax.estimator.grid``, and ``rdpjax.lower_bound`` on
the same samples. Fixed keys throughout. The streamed-progress tests live here because this is the
file that owns them (``tests/stream/test_stream.py`` is kept unchanged).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rdpjax
from rdpjax import mechanisms
from rdpjax._internal.programs import compiled_names
from rdpjax.estimator.api import DEFAULTS, bound_program
from rdpjax.estimator.binning import linear_binning
from rdpjax.estimator.bound_plan import Binned, BoundPlan
from rdpjax.estimator.grid import grid_from_range, plan_layout
from rdpjax.estimator.settings import continuous_settings
from rdpjax.stream import BlackBox, JaxSamplers, MechanismPair, streamed_bound
from rdpjax.stream.sources import sorted_pilots

FIELDS = ("estimate", "lower", "std_error", "bias")
LAM = [2.0, 5.0, 7.0]
SCALE = 5.0
X, X_PRIME = np.array([1.0, 0.0, 0.0]), np.zeros(3)
BATCH = 2**16
N = 3 * BATCH + 5000  # three full batches and a smaller last one


def noisy_sum(rng, database, m):
    """The Gaussian mechanism as a numpy black box: Σ x + N(0, 25)."""
    return np.sum(database) + SCALE * rng.standard_normal(m)


def _generators(key):
    """The documented seeding: SeedSequence(key data words) spawned into (pilot, P, Q)."""
    words = [int(v) for v in np.asarray(jax.random.key_data(key)).ravel()]
    return [np.random.default_rng(s) for s in np.random.SeedSequence(words).spawn(3)]


def _documented_draws(sample, key, n, pilot, batch=BATCH, pair=(X, X_PRIME)):
    """Pilot and certifying draws as the module docstring documents them, in memory."""
    g_pilot, g_p, g_q = _generators(key)
    # The pilot sorted (rdpjax.stream.sources.sorted_pilots).
    pilots = sorted_pilots(tuple(sample(g_pilot, db, pilot) for db in pair))
    sizes = [batch] * (n // batch) + ([n % batch] if n % batch else [])
    sides = [
        np.concatenate([sample(g, db, m) for m in sizes])
        for g, db in zip((g_p, g_q), pair, strict=True)
    ]
    return pilots, sides


def _reference_1d(bound, pilots, sides, *, margin, second_order=True):
    """The bound of the same samples clamped to the pilot range (widened by ``margin``), binned
    by linear_binning on the grid rebuilt from that range and the bound's bandwidth."""
    lo = min(a.min() for a in pilots)
    hi = max(a.max() for a in pilots)
    lo, hi = lo - margin * (hi - lo), hi + margin * (hi - lo)
    h = float(bound.bandwidth[0])
    # The default (bucketed) layout policy for that range and bandwidth.
    shape, pad, half = plan_layout(np.array([lo]), np.array([hi]), np.array([h]))
    with rdpjax.float64():  # float64 λ and α, as every public entry point makes them
        plan = BoundPlan(
            lam=jnp.asarray(LAM), alpha=jnp.asarray(0.05), bandwidth=None, floor=None, beta=None,
            discrete=False, shape=shape, pad=pad, half_width=half,
            both_directions=False, variance="autodiff", second_order=second_order,
            defaults=DEFAULTS,
        )  # fmt: skip
        grid = grid_from_range(jnp.array([lo]), jnp.array([hi]), shape, pad)
        counts = [
            linear_binning(np.clip(s, lo, hi)[:, None], grid, chunk_size=BATCH)[0] for s in sides
        ]
        binned = Binned(
            counts_p=counts[0], counts_q=counts[1],
            n_p=jnp.asarray(len(sides[0]), jnp.int64), n_q=jnp.asarray(len(sides[1]), jnp.int64),
            outside=jnp.asarray([np.sum((s < lo) | (s > hi)) for s in sides], jnp.float64),
            grid=grid, bandwidth=jnp.asarray(bound.bandwidth), floor=jnp.asarray(bound.floor),
            beta=jnp.asarray(bound.beta),
        )  # fmt: skip
        return jax.tree.map(np.asarray, bound_program(plan, binned)), (lo, hi)


@pytest.fixture(scope="module")
def gaussian():
    """One black-box run (with progress) at N per side, and its documented draws."""
    key = jax.random.key(0)
    calls = []
    bound = streamed_bound(
        key, BlackBox(noisy_sum, X, X_PRIME), LAM, n=N, batch_size=BATCH,
        progress=lambda done, total: calls.append((done, total)),
    )  # fmt: skip
    pilots, sides = _documented_draws(noisy_sum, key, N, rdpjax.stream.DEFAULT_PILOT)
    return key, bound, calls, pilots, sides


@pytest.mark.slow
def test_blackbox_equals_plan_machinery_on_the_same_binned_samples(gaussian):
    """The batched bound equals BoundPlan.bound on the documented draws binned in one pass on
    the pilot's grid, to 1e-12; the settings are the default rule on the pilot with the full n;
    nothing fell outside."""
    _, bound, _, pilots, sides = gaussian
    ref, _ = _reference_1d(bound, pilots, sides, margin=0.5)
    assert bound.grid_shape == ref.grid_shape
    for name in FIELDS:
        np.testing.assert_allclose(getattr(bound, name), getattr(ref, name), rtol=1e-12, atol=0)
    np.testing.assert_array_equal(bound.outside, [0, 0])
    assert int(bound.n_p) == int(bound.n_q) == N
    with rdpjax.float64():
        h, floor, beta = continuous_settings(
            jnp.asarray(pilots[0][:, None]), jnp.asarray(pilots[1][:, None]), None, None, None,
            DEFAULTS, n=N,
        )  # fmt: skip
    np.testing.assert_allclose(bound.bandwidth, h, rtol=1e-14)
    np.testing.assert_allclose([bound.floor, bound.beta], [floor, beta], rtol=1e-14)


def test_blackbox_below_exact_and_close_to_lower_bound(gaussian):
    """Below the exact D_λ = λ/(2σ²) and within 3 standard errors of lower_bound on the same
    samples in memory (same data; only the grid range and the pilot's scale differ)."""
    _, bound, _, _, sides = gaussian
    exact = np.array(LAM) / (2 * SCALE**2)
    assert np.all(bound.lower <= exact)
    ref = rdpjax.lower_bound(*sides, LAM)
    for name in ("estimate", "lower"):
        z = np.abs(getattr(bound, name) - getattr(ref, name)) / ref.std_error
        assert np.all(z < 3), (name, z)


def test_blackbox_progress_is_monotone_ends_at_total_and_changes_nothing(gaussian):
    key, bound, calls, _, _ = gaussian
    done = [d for d, _ in calls]
    assert len(calls) == 8  # 4 batches per side
    assert all(t == 2 * N for _, t in calls)
    assert np.all(np.diff(done) > 0) and done[-1] == 2 * N
    again = streamed_bound(key, BlackBox(noisy_sum, X, X_PRIME), LAM, n=N, batch_size=BATCH)
    for name in (*FIELDS, "outside", "bandwidth", "floor"):
        np.testing.assert_array_equal(getattr(again, name), getattr(bound, name))


@pytest.mark.slow
def test_outside_mass_is_clamped_counted_and_warned_or_raised():
    """A small pilot (1000) without margin: some draws fall off its range; they are clamped
    (the bound equals the reference on np.clip'ed draws) and counted per side, never dropped;
    outside="raise" raises."""
    key, n, pilot = jax.random.key(1), 3 * BATCH, 1000
    with pytest.warns(UserWarning, match="clamped"):
        bound = streamed_bound(
            key,
            BlackBox(noisy_sum, X, X_PRIME),
            LAM,
            n=n,
            batch_size=BATCH,
            pilot=pilot,
            margin=0.0,
            second_order=False,
        )
    pilots, sides = _documented_draws(noisy_sum, key, n, pilot)
    ref, (lo, hi) = _reference_1d(bound, pilots, sides, margin=0.0, second_order=False)
    off = [int(np.sum((s < lo) | (s > hi))) for s in sides]
    assert min(off) > 0
    np.testing.assert_array_equal(bound.outside, off)
    for name in FIELDS:
        np.testing.assert_allclose(getattr(bound, name), getattr(ref, name), rtol=1e-10, atol=0)
    with pytest.raises(ValueError, match="outside the grid range"):
        streamed_bound(
            key,
            BlackBox(noisy_sum, X, X_PRIME),
            LAM,
            n=n,
            batch_size=BATCH,
            pilot=pilot,
            margin=0.0,
            outside="raise",
        )


EPS0 = 1.0


def randomized_response(rng, database, m):
    """Binary randomized response of the first entry, as int codes: keep it w.p. e^ε/(1+e^ε)."""
    keep = rng.random(m) < np.exp(EPS0) / (1 + np.exp(EPS0))
    return np.where(keep, int(database[0]), 1 - int(database[0])).astype(np.int64)


def test_discrete_randomized_response_equals_lower_bound_and_is_below_exact():
    key, n = jax.random.key(2), 50000
    bound = streamed_bound(
        key,
        BlackBox(randomized_response, X, X_PRIME),
        LAM,
        n=n,
        batch_size=20000,
        second_order=False,
    )
    assert bound.discrete and int(bound.support) == 2
    _, sides = _documented_draws(randomized_response, key, n, 2**16, batch=20000)
    ref = rdpjax.lower_bound(*sides, LAM, discrete=True, second_order=False)
    for name in FIELDS:
        np.testing.assert_allclose(getattr(bound, name), getattr(ref, name), rtol=1e-12)
    a = np.exp(EPS0) / (1 + np.exp(EPS0))
    lam = np.array(LAM)
    exact = np.log(a**lam * (1 - a) ** (1 - lam) + (1 - a) ** lam * a ** (1 - lam)) / (lam - 1)
    assert np.all(bound.lower <= exact)


def test_discrete_codes_off_the_support_are_clamped_and_counted():
    """Codes 0…7 on support_size=6: 6 and 7 go to 5 and are counted, as np.minimum does."""

    def codes(rng, database, m):
        return rng.integers(0, 8, m) if database[0] else rng.integers(0, 7, m)

    key, n = jax.random.key(3), 30000
    with pytest.warns(UserWarning, match="clamped"):
        bound = streamed_bound(
            key,
            BlackBox(codes, X, X_PRIME),
            2.0,
            n=n,
            support_size=6,
            batch_size=7000,
            second_order=False,
        )
    _, sides = _documented_draws(codes, key, n, 2**16, batch=7000)
    np.testing.assert_array_equal(bound.outside, [np.sum(s >= 6) for s in sides])
    ref = rdpjax.lower_bound(*(np.minimum(s, 5) for s in sides), 2.0, second_order=False)
    assert ref.discrete and ref.grid_shape == bound.grid_shape == (6,)
    for name in FIELDS:
        np.testing.assert_allclose(getattr(bound, name), getattr(ref, name), rtol=1e-12)


def _varying(ndim_for):
    """A black box whose output dimension depends on the call: ``ndim_for(database, m)``."""

    def sample(rng, database, m):
        d = ndim_for(database, m)
        return rng.standard_normal((m, d)) if d else rng.standard_normal(m)

    return sample


def _nan_in_batch(rng, database, m):
    out = rng.standard_normal(m)
    if m == 500:  # certifying batches only, not the pilot
        out[:3] = np.nan
    return out


@pytest.mark.parametrize(
    ("sample", "kwargs", "match"),
    [
        (lambda rng, db, m: rng.standard_normal(m - 1), {}, r"returned shape \(99,\)"),
        (lambda rng, db, m: rng.standard_normal((m, 2, 2)), {}, "pass project="),
        (_nan_in_batch, {}, "3 non-finite values in a batch of 500"),
        (_varying(lambda db, m: 2 if db[0] else 3), {}, "same kind of output on x and x'"),
        (_varying(lambda db, m: 2 if m == 100 else 3), {}, r"\(3,\)\) on x \(P\), but"),
        (_varying(lambda db, m: 4), {}, "d = 4: pass project="),
        (lambda rng, db, m: rng.standard_normal(m) + 0j, {}, "complex128"),
        (noisy_sum, dict(discrete=True), "integer codes"),
        (noisy_sum, dict(n=1), "n must be an int ≥ 2"),
        (noisy_sum, dict(batch_size=0), "batch_size must be an int ≥ 1"),
        (noisy_sum, dict(pilot=1), "pilot must be an int ≥ 2"),
        (noisy_sum, dict(outside="drop"), "outside"),
        (noisy_sum, dict(progress=3), "progress must be"),
        (noisy_sum, dict(lam=1.0), "lam"),
        ("not a function", {}, "sample must be callable"),
    ],
)
def test_bad_input_raises_clear_error(sample, kwargs, match):
    args = dict(n=1000, batch_size=500, pilot=100, lam=2.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        streamed_bound(jax.random.key(0), BlackBox(sample, X, X_PRIME), args.pop("lam"), **args)


def test_project_maps_vectors_to_a_bound():
    """(m, 4) outputs need project; a fixed projection onto 2 of the coordinates gives a 2-D
    bound (below the exact D_λ of the projected pair: shift (1, 0), so λ/(2σ²))."""

    def vectors(rng, database, m):
        return np.sum(database) * np.eye(4)[0] + SCALE * rng.standard_normal((m, 4))

    bound = streamed_bound(
        jax.random.key(4), BlackBox(vectors, X, X_PRIME), 2.0, n=20000, project=lambda a: a[:, :2],
        second_order=False,
    )  # fmt: skip
    assert len(bound.grid_shape) == 2
    assert float(bound.lower[0]) <= 2.0 / (2 * SCALE**2)


# ----------------------------------------------------------------------------- stream progress


GAUSS = mechanisms.Gaussian(scale=SCALE)
STREAM = dict(
    n=20 * 2**12 + 100, chunk=2**12, grid=(-30.0, 31.0), bandwidth=1.0, floor=2e-3,
    second_order=False,
)  # fmt: skip


@pytest.mark.slow
def test_streamed_progress_is_monotone_ends_at_total_and_changes_nothing(monkeypatch):
    """20 full chunks and a rest per side, a report after every chunk (the minimum spacing of
    2^22 draws lifted, so that this small run reports often): progress(done, total) comes with
    increasing done (real chunks only), ends at done = total = 2n, and the bound is the one
    without progress, to the bit; a new callable on a second call compiles nothing."""
    monkeypatch.setattr(rdpjax._internal.progress, "_PROGRESS_MIN_DRAWS", 1)  # read at trace time
    key, (x, x_prime) = jax.random.key(5), GAUSS.reference_pair()
    plain = streamed_bound(key, MechanismPair(GAUSS, x, x_prime), LAM, **STREAM)
    first, second = [], []
    with compiled_names() as compiles:
        a = streamed_bound(
            key,
            MechanismPair(GAUSS, x, x_prime),
            LAM,
            progress=lambda d, t: first.append((d, t)),
            **STREAM,
        )
        n_first = len(compiles)
        b = streamed_bound(
            key,
            MechanismPair(GAUSS, x, x_prime),
            LAM,
            progress=lambda d, t: second.append((d, t)),
            **STREAM,
        )
        again = compiles[n_first:]
    assert again == [], again
    total = 2 * STREAM["n"]
    for calls in (first, second):
        done = [d for d, _ in calls]
        assert all(t == total for _, t in calls)
        assert np.all(np.diff(done) > 0) and done[-1] == total
        assert all(d % STREAM["chunk"] == 0 for d in done[:-1])  # whole chunks before the end
        assert len(calls) == 41  # a report per chunk (20 per side), then the end
    for bound in (a, b):
        for name in (*FIELDS, "outside"):
            np.testing.assert_array_equal(getattr(bound, name), getattr(plain, name))


def test_streamed_progress_errors_are_reraised_and_bad_progress_refused():
    def normal(k, m):
        return jax.random.normal(k, (m,), jnp.float32)

    def broken(done, total):
        raise RuntimeError("progress bar closed")

    opts = dict(n=3 * 2**12, chunk=2**12, grid=(-6.0, 6.0), bandwidth=0.5, floor=0.01)
    with pytest.raises(RuntimeError, match="progress bar closed"):
        streamed_bound(jax.random.key(6), JaxSamplers(normal, normal), 2.0, progress=broken, **opts)
    with pytest.raises(ValueError, match="progress must be"):
        streamed_bound(jax.random.key(6), JaxSamplers(normal, normal), 2.0, progress="bar", **opts)
