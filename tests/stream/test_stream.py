"""Streamed bounds, device splitting and compiled-once studies (rdpjax.stream,
rdpjax.estimator.sharding).

References are independent of the streamed kernel: the in-memory ``rdpjax.lower_bound`` on the
same draws (materialized through the public ``mechanism.sample`` or ``streamed_samples``), with
out-of-range draws clamped by numpy, and jax's own compilation events. Fixed keys throughout;
the settings (bandwidth, floor, grid) are fixed so that the two pipelines see the same grid.
"""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rdpjax
from rdpjax import mechanisms
from rdpjax._internal.programs import compiled_names
from rdpjax.estimator.binning import bin_accumulator, bin_chunk, bin_counts
from rdpjax.estimator.grid import grid_from_range
from rdpjax.estimator.sharding import draw_mesh, map_over_devices, replication_batch_size
from rdpjax.stream import (
    JaxSamplers,
    MechanismPair,
    StreamOptions,
    replicated_bounds,
    streamed_bound,
    streamed_samples,
)

FIELDS = ("estimate", "lower", "std_error", "bias")
GAUSS = mechanisms.Gaussian(scale=5.0)
X, X_PRIME = GAUSS.reference_pair()
# Fixed settings: the in-memory bound of clamped draws then uses exactly the streamed grid.
CONTINUOUS = dict(grid=(-14.0, 16.0), bandwidth=1.0, floor=2e-3, chunk=2**13)


def _assert_same_bound(a, b, rtol=1e-9):
    assert a.grid_shape == b.grid_shape and a.discrete == b.discrete
    for name in FIELDS:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=rtol, atol=1e-12)
    np.testing.assert_array_equal(a.direction, b.direction)


def _documented_draws(draw, key, n, chunk):
    """Draws of one side as the stream documents them: ``draw(fold_in(key, i), chunk)`` for
    the n // chunk full chunks, then ``draw(fold_in(key, n // chunk), n mod chunk)``."""
    full, rest = divmod(n, chunk)
    sizes = [chunk] * full + ([rest] if rest else [])
    with rdpjax.float64():  # the stream draws in float64 scope, as documented
        parts = [np.asarray(draw(jax.random.fold_in(key, i), m)) for i, m in enumerate(sizes)]
    return np.concatenate(parts)


def _mechanism_draws(key, n, chunk):
    """The draws of streamed_bound on a MechanismPair, rebuilt from the public mechanism.sample."""
    _, k_p, k_q = jax.random.split(key, 3)
    return [
        _documented_draws(lambda k, m, x=x: GAUSS.sample(k, x, m), k_side, n, chunk)
        for k_side, x in ((k_p, X), (k_q, X_PRIME))
    ]


@pytest.mark.slow
def test_streamed_equals_in_memory_with_outside_mass_clamped_and_counted():
    """n = 30000 per side in 3 chunks and a rest, a grid narrower than the draws: the
    streamed bound equals lower_bound on the same draws clamped to the grid range by numpy,
    and the clamped draws are counted per side (and warned about), never dropped."""
    key, n = jax.random.key(0), 30000
    with pytest.warns(UserWarning, match="clamped"):
        streamed = streamed_bound(
            key, MechanismPair(GAUSS, X, X_PRIME), [2.0, 5.0], n=n, **CONTINUOUS
        )
    p, q = _mechanism_draws(key, n, CONTINUOUS["chunk"])
    lo, hi = CONTINUOUS["grid"]
    off = [int(np.sum((s < lo) | (s > hi))) for s in (p, q)]
    pooled = np.concatenate([p, q])
    assert pooled.min() < lo and pooled.max() > hi  # so the clamped data span the grid range
    np.testing.assert_array_equal(streamed.outside, off)
    in_memory = rdpjax.lower_bound(
        np.clip(p, lo, hi), np.clip(q, lo, hi), [2.0, 5.0], bandwidth=1.0, floor=2e-3
    )
    _assert_same_bound(streamed, in_memory)
    assert int(streamed.n_p) == int(streamed.n_q) == n
    exact = [GAUSS.divergence(lam, X, X_PRIME) for lam in (2.0, 5.0)]
    assert np.all(streamed.lower <= exact)


def _codes(k, m):
    return jax.random.randint(k, (m,), 0, 6)


RR = mechanisms.RandomizedResponse(eps0=1.0)
RR_PAIR = (np.array([1, 0, 0]), np.array([0, 0, 0]))
# Codes 0…7 on the support [0, 6): 6 and 7 are clamped to 5. Second order off: it only costs
# compilation here (the continuous test covers it).
DISCRETE = dict(n=20000, chunk=3000, support_size=6, second_order=False)


def _rr_codes(key, n, chunk):
    _, k_p, k_q = jax.random.split(key, 3)
    return [
        _documented_draws(lambda k, m, x=x: RR.encode(RR.sample(k, x, m), x), k_side, n, chunk)
        for k_side, x in zip((k_p, k_q), RR_PAIR, strict=True)
    ]


def test_streamed_discrete_equals_in_memory_with_codes_clamped():
    """Randomized-response codes 0…7 streamed onto the support [0, 6): codes 6, 7 are clamped
    to 5 and counted; the bound equals lower_bound on the same codes clamped by numpy."""
    key = jax.random.key(1)
    with pytest.warns(UserWarning, match="clamped"):
        b = streamed_bound(key, MechanismPair(RR, *RR_PAIR), [2.0, 5.0], **DISCRETE)
    p, q = _rr_codes(key, DISCRETE["n"], DISCRETE["chunk"])
    np.testing.assert_array_equal(b.outside, [np.sum(p >= 6), np.sum(q >= 6)])
    ref = rdpjax.lower_bound(
        np.minimum(p, 5), np.minimum(q, 5), [2.0, 5.0], discrete=True, second_order=False
    )
    assert b.discrete and b.grid_shape == (6,)
    _assert_same_bound(b, ref, rtol=1e-12)
    with pytest.raises(ValueError, match="outside the grid range or support"):
        streamed_bound(key, MechanismPair(RR, *RR_PAIR), [2.0, 5.0], outside="raise", **DISCRETE)


def test_streamed_samples_follow_the_documented_key_scheme():
    key = jax.random.key(2)
    p, q = streamed_samples(key, JaxSamplers(_codes, _codes), n=10, chunk=4)
    _, k_p, k_q = jax.random.split(key, 3)
    with rdpjax.float64():
        for got, k in ((p, k_p), (q, k_q)):
            parts = [_codes(jax.random.fold_in(k, i), m) for i, m in enumerate((4, 4, 2))]
            assert got.shape == (10,)
            np.testing.assert_array_equal(np.asarray(got), np.concatenate(parts))
    assert not np.array_equal(np.asarray(p), np.asarray(q))


_SHARDED = textwrap.dedent(
    """
    import json, os, sys, warnings
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax
    import numpy as np
    from rdpjax import mechanisms
    from rdpjax.stream import MechanismPair, streamed_bound
    warnings.simplefilter("ignore")
    if sys.argv[1] == "rr":
        mech, pair = mechanisms.RandomizedResponse(eps0=1.0), ([1, 0, 0], [0, 0, 0])
    else:
        mech = mechanisms.Gaussian(scale=5.0)
        pair = mech.reference_pair()
    b = streamed_bound(jax.random.key(7), MechanismPair(mech, *map(np.asarray, pair)), [2.0, 5.0],
                                 devices=4, **json.loads(sys.argv[2]))
    out = {"devices": len(jax.devices()), **b.to_dict()}
    if sys.argv[1] == "rr":  # 6 replications on 4 devices: 2 of padding
        from rdpjax.stream import replicated_bounds
        pairs = [tuple(map(np.asarray, pair)), tuple(map(np.asarray, pair[::-1]))]
        reps = replicated_bounds(jax.random.key(8), mech, pairs, [2.0, 5.0], n=500, reps=6,
                                 second_order=False)
        out["replicated"] = {k: getattr(reps, k).tolist() for k in ("estimate", "lower")}
        from rdpjax.estimator.sharding import draw_mesh, map_over_devices  # 3 entries on 4 devices
        f = jax.jit(lambda xs, a: map_over_devices(lambda x, a: (x, x * a), draw_mesh(), xs, a,
                                                   batch_size=1))
        out["mapped"] = [v.tolist() for v in f(np.arange(3.0), 10.0)]
    print("RESULT" + json.dumps(out))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("rr", DISCRETE), ("gaussian", {**CONTINUOUS, "n": 6 * CONTINUOUS["chunk"] + 1000})],
)
def test_four_host_devices_equal_one_device(name, kwargs):
    """6 full chunks (2 padding ones on the last device, drawn and masked out) and a rest dealt
    to 4 forced host devices give the bound this process computes on its one device, for codes
    and for continuous outputs; so do replicated_bounds' replications split over the 4 devices.
    The device flag must be set before jax is imported, hence the subprocess."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    run = subprocess.run(
        [sys.executable, "-c", _SHARDED, name, json.dumps(kwargs)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    line = next(s for s in run.stdout.splitlines() if s.startswith("RESULT"))
    four = json.loads(line[len("RESULT") :])
    assert four["devices"] == 4
    mech, pair = (RR, RR_PAIR) if name == "rr" else (GAUSS, (X, X_PRIME))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RR's codes 6 and 7 are clamped (and warned about)
        one = streamed_bound(jax.random.key(7), MechanismPair(mech, *pair), [2.0, 5.0], **kwargs)
    assert len(jax.devices()) == 1
    assert float(one.n_p) == float(one.n_q) == kwargs["n"]
    for field in (*FIELDS, "outside"):
        np.testing.assert_allclose(four[field], getattr(one, field), rtol=1e-12)
    if name == "rr":  # 6 replications: 2 on each of three devices, 2 copies of the last on the
        # fourth (padding, dropped); the results come back in order
        pairs = [RR_PAIR, RR_PAIR[::-1]]
        reps = replicated_bounds(
            jax.random.key(8), RR, pairs, [2.0, 5.0], n=500, reps=6, second_order=False
        )
        assert reps.lower.shape == (2, 6, 2)
        for field in ("estimate", "lower"):
            np.testing.assert_allclose(four["replicated"][field], getattr(reps, field), rtol=1e-12)
        assert four["mapped"] == [[0.0, 1.0, 2.0], [0.0, 10.0, 20.0]]


def test_streamed_samples_of_a_mechanism_are_its_public_draws():
    """A zoo mechanism's stream draws ``mechanism.sample(fold_in(k_side, i), database, m_i)``
    chunk by chunk; a black box (numpy) is refused with the values that are accepted."""
    key, mech = jax.random.key(3), mechanisms.Gaussian(2.0)
    x, xp = mech.reference_pair()
    p, q = streamed_samples(key, MechanismPair(mech, x, xp), n=(10, 7), chunk=4)
    _, k_p, k_q = jax.random.split(key, 3)
    with rdpjax.float64():
        for got, k, db, sizes in ((p, k_p, x, (4, 4, 2)), (q, k_q, xp, (4, 3))):
            parts = [mech.sample(jax.random.fold_in(k, i), db, m) for i, m in enumerate(sizes)]
            np.testing.assert_array_equal(np.asarray(got), np.concatenate(parts))
    box = rdpjax.stream.BlackBox(lambda rng, db, m: rng.normal(size=m), 0.0, 1.0)
    with pytest.raises(ValueError, match="JaxSamplers.*MechanismPair"):
        streamed_samples(key, box, n=10, chunk=4)


def test_map_over_devices_keeps_order_and_replication_batches_fit_the_budget():
    """On this process's one device: lax.map's results (keys and shared arguments in, every
    batch size, one that does not divide R and so pads); the default batch sizes hold at most
    2^17 samples per side and core of a CPU device (unless one replication is larger), in as
    few batches as that allows, of equal sizes."""
    mesh = draw_mesh()
    keys = jax.random.split(jax.random.key(0), 7)

    def fn(k, shift):
        return jax.random.normal(k, (3,)) + shift, jax.random.bits(k)

    ref = jax.lax.map(lambda k: fn(k, 2.0), keys)
    for batch in (1, 3, 7):
        got = jax.jit(lambda ks, b=batch: map_over_devices(fn, mesh, ks, 2.0, batch_size=b))(keys)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    for xs, batch in ((keys[:0], 1), (keys, 0)):
        with pytest.raises(ValueError, match="R ≥ 1 and batch_size ≥ 1"):
            map_over_devices(fn, mesh, xs, 2.0, batch_size=batch)
    budget = 2**17 * max(1, os.cpu_count() // mesh.size)
    cases = ((10**3, 1000, 1), (10**3, 1000, 4), (5000, 99, 1), (10**5, 999, 1), (10**6, 5, 1))
    for n, reps, pairs in cases:
        b = replication_batch_size(n, reps, mesh, pairs)
        most = max(1, budget // (n * pairs))  # replications one batch may hold
        batches = -(-reps // b)
        assert 1 <= b <= min(reps, most)
        assert (batches - 1) * most < reps  # no more batches than the budget needs
        assert batches * b - reps < batches  # less than one padded replication a batch
    assert replication_batch_size(10, 5, mesh) == 5


def test_replicated_bounds_compile_once_and_match_lower_bound():
    """R = 3 replications × P = 2 database pairs × L = 3 orders as one study: a second call with
    new keys and databases of the same shapes compiles nothing (jax.monitoring). One replication
    equals lower_bound on its own draws. (That the study is one program, jit(_replicate),
    compiled once: benchmarks/performance/compiled_programs.py.)"""
    rr = RR
    pairs = [(np.array([1, 0, 0]), np.array([0, 0, 0])), (np.array([1, 1, 0]), np.array([1, 1, 1]))]
    other = [(np.array([0, 1, 0]), np.array([0, 1, 1])), (np.array([0, 0, 1]), np.array([1, 0, 1]))]
    with compiled_names() as compiles:
        first = replicated_bounds(
            jax.random.key(4), rr, pairs, [2.0, 5.0, 7.0], n=2000, reps=3, second_order=False
        )
        n_first = list(compiles)
        second = replicated_bounds(
            jax.random.key(5), rr, other, [2.0, 5.0, 7.0], n=2000, reps=3, second_order=False
        )
        n_second = compiles[len(n_first) :]
    assert n_first and n_second == [], (n_first, n_second)
    assert first.lower.shape == second.lower.shape == (2, 3, 3)
    assert first.grid_shape == (8,)

    # Replication (pair 1, rep 2) rebuilt from the documented keys and the public sampler.
    _, k_main = jax.random.split(jax.random.key(4))
    k = jax.random.split(jax.random.split(k_main, 2)[1], 3)[2]
    kp, kq = jax.random.split(k)
    with rdpjax.float64():
        p = rr.encode(rr.sample(kp, pairs[1][0], 2000), pairs[1][0])
        q = rr.encode(rr.sample(kq, pairs[1][1], 2000), pairs[1][1])
    ref = rdpjax.lower_bound(
        np.asarray(p), np.asarray(q), [2.0, 5.0, 7.0], discrete=True, second_order=False
    )
    assert ref.grid_shape == (8,)  # every code seen, so the dense supports agree
    for name in FIELDS:
        np.testing.assert_allclose(getattr(first, name)[1, 2], getattr(ref, name), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("pad", [0, 4])
@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("method", ["scatter", "sort"])
def test_bin_chunk_methods_and_clamping_agree_with_numpy_clip(x64, method, d, pad):
    """Both binning formulations (in 1-D, scatter is the int64 path with its off-grid rows),
    with the interior box, equal plain binning of np.clip'ed data; masked-out and non-finite
    samples count nowhere. The box either fills the grid or leaves a pad of 4 points."""
    x = np.array(jax.random.normal(jax.random.key(6), (3001, d)) * 1.5)
    x[:3, 0] = [np.inf, -np.inf, np.nan]
    size = 32 + 2 * pad
    grid = grid_from_range(jnp.full(d, -2.0), jnp.full(d, 2.0), (size,) * d, (pad,) * d)
    zero = (bin_accumulator(grid), jnp.zeros(()))
    interior = ((pad, size - 1 - pad),) * d
    valid = jnp.arange(3001) < 3000
    binner = jax.jit(bin_chunk, static_argnames=("interior", "method"))
    acc, outside = binner(*zero, x, grid, valid=valid, interior=interior, method=method)
    counts = bin_counts(acc, grid)
    clipped = jnp.clip(x[3:3000], -2.0, 2.0)
    ref_acc, ref_out = binner(*zero, clipped, grid, valid=None, method="sort")
    ref = bin_counts(ref_acc, grid)
    # 1-D scatter rounds each fraction to 30 bits (chunk 3001): ≤ 2^-31 of a unit a sample
    atol = 3000 * 2.0**-31 if d == 1 and method == "scatter" else 1e-9
    np.testing.assert_allclose(np.asarray(counts), np.asarray(ref), rtol=0, atol=atol)
    assert float(ref_out) == 0.0
    assert float(outside) == float(np.sum(np.any(np.abs(x[3:3000]) > 2.0, axis=1)))
    assert float(outside) > 0
    assert float(counts.sum()) == pytest.approx(2997.0, rel=1e-12)


def test_integer_key_sort_percentiles_equal_jnp_percentile(x64):
    """The pooled scale's fast exact sort (bit patterns as int64) against jnp.sort/percentile,
    with negative zeros, ties, tiny magnitudes and both signs."""
    from rdpjax.estimator.settings import _percentiles, _sort_finite

    x = jax.random.normal(jax.random.key(8), (1001, 2), jnp.float64) * jnp.array([[1.0, 1e-300]])
    x = x.at[:3, 0].set(jnp.array([-0.0, 0.0, -0.0])).at[3:6, 1].set(-2.5)
    np.testing.assert_array_equal(np.asarray(_sort_finite(x)), np.asarray(jnp.sort(x, axis=0)))
    for n in (2, 3, 1001):
        got = jnp.stack(_percentiles(x[:n], (0.75, 0.25)))
        ref = jnp.percentile(x[:n], jnp.array([75.0, 25.0]), axis=0)
        np.testing.assert_allclose(got, ref, rtol=4e-16, atol=0)  # 1 ulp: XLA may fuse an FMA


def _normal(k, m):
    return jax.random.normal(k, (m,), jnp.float32)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(n=1), "n must be an int ≥ 2"),
        (dict(n=True), "n must be an int ≥ 2"),
        (dict(n=2.5e6), "n must be an int ≥ 2"),
        (dict(n=(10, 1)), "n must be an int ≥ 2"),
        (dict(chunk=0), "chunk must be an int ≥ 1"),
        (dict(chunk=-5), "chunk must be an int ≥ 1"),
        (dict(pilot=1), "pilot must be an int ≥ 2"),
        (dict(grid=(1.0, 0.0)), "low < high"),
        (dict(grid=(0.0, np.nan)), "low < high"),
        (dict(grid=3.0), "range"),
        (dict(outside="drop"), "outside"),
        (dict(binning="atomic"), "binning"),
        (dict(margin=-1.0), "margin"),
        (dict(discrete=True), "integer codes"),
        (dict(lam=1.0), "lam"),
        (dict(alpha=0.7), "alpha"),
        (dict(grid_size=4), "grid_size"),
        (dict(devices=0), "devices"),
        (dict(sample_q="not a function"), "callable"),
    ],
)
def test_bad_input_raises_clear_error(kwargs, match):
    args = dict(sample_p=_normal, sample_q=_normal, lam=2.0, n=1000)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        streamed_bound(
            jax.random.key(0),
            JaxSamplers(args.pop("sample_p"), args.pop("sample_q")),
            args.pop("lam"),
            **args,
        )


def test_grid_not_covering_the_pilot_raises_before_streaming():
    with pytest.raises(ValueError, match="does not cover the pilot"):
        streamed_bound(
            jax.random.key(0),
            JaxSamplers(_normal, _normal),
            2.0,
            n=10**9,
            grid=(-1.0, 1.0),
            outside="raise",
        )


def test_non_finite_draws_raise():
    def broken(k, x, m):
        return jnp.where(jnp.arange(m) == 3, jnp.nan, jax.random.normal(k, (m,), jnp.float32))

    mech = mechanisms.from_sampler(broken)
    message = r"returned 1 non-finite \(NaN or infinite\) values on x \(P\) and 1 on x' \(Q\)"
    with pytest.raises(ValueError, match=message):
        streamed_bound(
            jax.random.key(0),
            MechanismPair(mech, X, X_PRIME),
            2.0,
            n=100,
            grid=(-5, 5),
            bandwidth=0.5,
            floor=0.01,
        )


@pytest.mark.slow
def test_bucketed_layout_puts_two_pilots_on_one_grid():
    """With layout="bucketed" a second call with new keys (a new pilot, so a slightly different
    range) lands on the same grid; the bounds stay below the truth. (That it compiles neither the
    stream, jit(_stream_side), nor the bound again: benchmarks/performance/compiled_programs.py.)"""

    def p(k, m):
        return 1.0 + 5.0 * jax.random.normal(k, (m,), jnp.float32)

    def q(k, m):
        return 5.0 * jax.random.normal(k, (m,), jnp.float32)

    first = streamed_bound(
        jax.random.key(10), JaxSamplers(p, q), [2.0, 5.0], n=30000, layout="bucketed"
    )
    second = streamed_bound(
        jax.random.key(11), JaxSamplers(p, q), [2.0, 5.0], n=30000, layout="bucketed"
    )
    assert first.grid_shape == second.grid_shape
    for b in (first, second):
        assert np.all(np.asarray(b.lower) <= np.array([0.04, 0.10]))
    with pytest.raises(ValueError, match="layout"):
        streamed_bound(jax.random.key(0), JaxSamplers(p, q), 2.0, n=100, layout="coarse")


def test_one_pass_counts_the_grid_and_the_cells_of_the_same_draws():
    """A tally with cells counts, in the same compiled pass, exactly the Rényi counts of a
    tally without them and the cells numpy's searchsorted gives on the same draws (rebuilt from
    the documented key scheme), for a zoo mechanism and a numpy black box alike."""
    from rdpjax.stream.samplers import mechanism_samplers
    from rdpjax.stream.sources import JaxSource, NumpySource

    key, n, chunk = jax.random.key(5), 7_000, 3_000
    stream = StreamOptions(chunk=chunk, pilot=500)
    sampler, a_p, a_q, _ = mechanism_samplers(GAUSS, X, X_PRIME)
    edges = np.array([-1.0, 0.0, 0.25, 1.5, 2.0])
    with rdpjax.float64():
        src = JaxSource(key, (sampler, sampler), (a_p, a_q))
        src.kind(rdpjax.BoundOptions(), stream)
        plain = src.tally(None, (n, n + 1), stream, cells=edges)
        p, q = _mechanism_draws(key, n, chunk)[0], _mechanism_draws(key, n + 1, chunk)[1]
        for got, draws in zip(plain.cells, (p, q), strict=True):
            expected = np.bincount(np.searchsorted(edges, draws, side="right"), minlength=6)
            np.testing.assert_array_equal(got, expected)
        assert plain.counts is None

        def sample(rng, db, m):
            return rng.normal(float(db), 1.0, m)

        boxes = [NumpySource(key, sample, 1, 0) for _ in range(2)]
        for box in boxes:
            box.kind(rdpjax.BoundOptions(), stream.replace(batch_size=3_000))
        pilot = boxes[0].pilot()
        fixed = _fixed_from(pilot)
        both = boxes[0].tally(fixed, (n, n), stream.replace(batch_size=3_000), cells=edges)
        alone = boxes[1].tally(fixed, (n, n), stream.replace(batch_size=3_000))
    for a, b in zip(both.counts, alone.counts, strict=True):
        np.testing.assert_array_equal(a, b)
    g = NumpySource(key, sample, 1, 0).g_p  # the same Generator stream as boxes[0]'s P side
    drawn = np.concatenate(
        [g.normal(1.0, 1.0, 3_000) for _ in range(2)] + [g.normal(1.0, 1.0, 1_000)]
    )
    expected = np.bincount(np.searchsorted(edges, drawn, side="right"), minlength=6)
    np.testing.assert_array_equal(both.cells[0], expected)


def _fixed_from(pilot):
    from rdpjax.stream.pilot import fix_settings

    return fix_settings(
        lambda: pilot, [2.0], kind=(False, 1), sizes=(7_000, 7_000), alpha=0.05,
        both_directions=False, options=rdpjax.BoundOptions(transform=None),
        stream=StreamOptions(),
    )  # fmt: skip


def test_trim_programs_drops_the_compiled_programs_past_the_budget():
    """A stream compiles programs for every grid and size; past the budget they are dropped."""
    from rdpjax._internal.programs import trim_programs

    double = jax.jit(lambda v: 2 * v)
    for size in (1, 2, 3):
        double(jnp.zeros(size))
    trim_programs((double,), budget=4)
    assert double._cache_size() == 3
    trim_programs((double,), budget=3)
    assert double._cache_size() == 0


def test_negative_integer_codes_stream_from_the_pilots_least():
    """Integers below 0 (a noisy count) are counted from the pilot's least code, a fixed shift:
    the streamed bound equals lower_bound on the same codes (its pilot saw all six values)."""
    key, n = jax.random.key(6), 6_000

    def codes_p(k, m):
        return jax.random.randint(k, (m,), -3, 3)

    def codes_q(k, m):
        return jax.random.randint(k, (m,), -3, 2)  # no 2: its frequency is floored

    b = streamed_bound(
        key, JaxSamplers(codes_p, codes_q), [2.0, 5.0], n=n, chunk=2_000, second_order=False
    )
    p, q = streamed_samples(key, JaxSamplers(codes_p, codes_q), n=n, chunk=2_000)
    assert np.asarray(p).min() == -3
    ref = rdpjax.lower_bound(np.asarray(p), np.asarray(q), [2.0, 5.0], discrete=True,
                             second_order=False)  # fmt: skip
    assert b.grid_shape == (6,)
    _assert_same_bound(b, ref, rtol=1e-12)
