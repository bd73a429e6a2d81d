import itertools
import json
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import run_script

from rdpjax.estimator.binning import (
    bin_accumulator,
    bin_chunk,
    bin_counts,
    count_codes,
    fraction_bits,
    linear_binning,
    packing,
)
from rdpjax.estimator.grid import grid_from_range, grid_layout


def test_layout_margin_holds_kernel():
    shape, pad = grid_layout(np.array([-3.0]), np.array([4.0]), np.array([0.2]))
    spacing = 7.0 / (shape[0] - 1 - 2 * pad[0])
    assert pad[0] * spacing >= 5 * 0.2 - 1e-12  # the margin holds ±5h
    assert spacing <= 0.2 / 16 + 1e-12  # at least 16 cells per bandwidth


def test_layout_rejects_tiny_grid():
    with pytest.raises(ValueError, match="grid_size"):
        grid_layout(np.array([0.0]), np.array([1.0]), np.array([1.0]), grid_size=8)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_linear_binning_conserves_mass_and_mean(x64, d):
    x = jax.random.normal(jax.random.key(d), (5001, d))
    grid = grid_from_range(x.min(0) - 0.1, x.max(0) + 0.1, (40,) * d, (0,) * d)
    counts, outside = linear_binning(x, grid, chunk_size=1000)
    assert counts.shape == (40,) * d
    assert float(outside) == 0.0
    np.testing.assert_allclose(float(counts.sum()), 5001.0, rtol=1e-12)
    # Linear binning preserves the first moment exactly along every axis.
    for k, axis in enumerate(grid.axes()):
        marginal = counts.sum(axis=tuple(j for j in range(d) if j != k))
        np.testing.assert_allclose(
            float(marginal @ axis) / 5001, float(x[:, k].astype(jnp.float64).mean()), atol=1e-10
        )


def _atol(d, method, chunk, n):
    """Tolerance against exact linear binning: float round-off, or, for the 1-D int64 path
    (rdpjax.estimator.binning), each sample's fraction rounded to within 2^-(bits + 1) of a cell."""
    bits = fraction_bits(chunk)
    return n * 2.0 ** -(bits + 1) if d == 1 and method == "scatter" and bits else 1e-12


def _binning_by_definition(x, low, spacing, shape):
    """Linear binning one sample and one cell corner at a time (NumPy), skipping samples off
    the grid: corner c of the sample's cell gets Π_k (c_k ? frac_k : 1 − frac_k)."""
    counts, top = np.zeros(shape), np.array(shape) - 1
    for u in (x - low) / spacing:
        if not np.all((u >= 0) & (u <= top)):  # off the grid or NaN
            continue
        cell = np.minimum(np.floor(u).astype(int), top - 1)
        frac = u - cell
        for corner in itertools.product((0, 1), repeat=len(shape)):
            counts[tuple(cell + corner)] += np.prod(np.where(corner, frac, 1 - frac))
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("method", ["scatter", "sort"])
@pytest.mark.parametrize("shape", [(7,), (5, 6), (4, 5, 6)])
def test_linear_binning_equals_the_definition(x64, shape, method):
    """Every grid point's weight, against the per-sample definition, on a grid with unequal
    sides (so a wrong stride shows), with samples off the grid, on its edges and in a tail
    chunk."""
    d = len(shape)
    x = np.array(jax.random.uniform(jax.random.key(d), (301, d), minval=-0.2, maxval=1.2))
    x[:6] = [[0.0] * d, [1.0] * d, [0.5] * d, [np.nan] * d, [np.inf] * d, [-np.inf] * d]
    grid = grid_from_range(jnp.zeros(d), jnp.ones(d), shape, (0,) * d)
    counts, outside = linear_binning(jnp.asarray(x), grid, chunk_size=64, method=method)
    ref = _binning_by_definition(x, np.zeros(d), 1.0 / (np.array(shape) - 1), shape)
    np.testing.assert_allclose(np.asarray(counts), ref, rtol=0, atol=_atol(d, method, 64, 301))
    inside = np.all((x >= 0) & (x <= 1), axis=1)
    assert float(outside) == float(np.sum(~inside))  # the NaN and ±inf rows count as outside


def _rounded_binning_1d(x, low, spacing, size, bits):
    """1-D linear binning with each cell fraction rounded to ``bits`` bits (the documented map
    of the int64 path), vectorized NumPy: q = ⌊frac · 2^bits + 1/2⌋, weights 1 − q/2^bits and
    q/2^bits."""
    u = (x - low) / spacing
    inside = (u >= 0) & (u <= size - 1)
    cell = np.minimum(np.floor(u[inside]).astype(int), size - 2)
    moved = np.floor((u[inside] - cell) * 2.0**bits + 0.5) / 2.0**bits
    counts = np.zeros(size)
    np.add.at(counts, cell, 1.0 - moved)
    np.add.at(counts, cell + 1, moved)
    return counts


def test_packed_1d_binning_rounds_the_fraction_as_documented(x64):
    """Chunks of 2^20 (21 fraction bits) and a 5-sample tail (30 bits): the counts equal the
    rounded-fraction definition to float round-off, and differ from exact linear binning by
    far more (so the rounding, not the tolerance, is what the first check pins down)."""
    chunk = 2**20
    assert fraction_bits(chunk) == 21 and fraction_bits(5) == 30 and fraction_bits(2**21) is None
    x = np.asarray(jax.random.uniform(jax.random.key(3), (chunk + 5,), minval=-0.1, maxval=1.1))
    grid = grid_from_range(jnp.zeros(1), jnp.ones(1), (7,), (0,))
    counts, outside = linear_binning(jnp.asarray(x), grid, chunk_size=chunk)
    spacing = 1.0 / 6
    ref = _rounded_binning_1d(x[:chunk], 0.0, spacing, 7, 21)
    ref += _rounded_binning_1d(x[chunk:], 0.0, spacing, 7, 30)
    np.testing.assert_allclose(np.asarray(counts), ref, rtol=0, atol=1e-8)
    exact = _rounded_binning_1d(x, 0.0, spacing, 7, 60)
    assert np.max(np.abs(np.asarray(counts) - exact)) > 1e-6  # the rounding is visible
    assert np.max(np.abs(np.asarray(counts) - exact)) <= x.size * 2.0**-22  # and bounded
    assert float(outside) == float(np.sum((x < 0) | (x > 1)))


@pytest.mark.slow
def test_packed_1d_binning_differentiates_as_linear_binning(x64):
    """The pair search differentiates the KDE through the samples: the int64 path's derivative
    (forward and reverse) is linear binning's, as given by the float64 sort formulation."""
    x = jax.random.uniform(jax.random.key(5), (300,), jnp.float64, minval=0.05, maxval=0.95)
    grid = grid_from_range(jnp.zeros(1), jnp.ones(1), (9,), (0,))
    weights = jax.random.normal(jax.random.key(6), (9,))

    def f(x, method):
        return linear_binning(x, grid, chunk_size=64, method=method)[0] @ weights

    grad = jax.grad(f)(x, "scatter")
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(f)(x, "sort")), atol=1e-12)
    assert np.max(np.abs(np.asarray(grad))) > 1.0  # a real signal (8 cells per unit)
    tangent = jax.random.normal(jax.random.key(7), x.shape)
    _, forward = jax.jvp(lambda x: f(x, "scatter"), (x,), (tangent,))
    np.testing.assert_allclose(float(forward), float(grad @ tangent), rtol=1e-12)


@pytest.mark.parametrize("chunk", [2**20 - 1, 2**20])
def test_packed_1d_binning_does_not_overflow(x64, chunk):
    """The worst case of the int64 packing: a whole chunk in one row with the largest fraction
    (samples on the grid's right end: cell 1, fraction exactly 1, q = 2^bits) — and the same
    number in the discard row (off the grid)."""
    grid = grid_from_range(jnp.zeros(1), jnp.ones(1), (3,), (0,))
    for value, expected in ((1.0, [0.0, 0.0, chunk]), (2.0, [0.0, 0.0, 0.0])):
        counts, outside = linear_binning(jnp.full(chunk, value), grid, chunk_size=chunk)
        np.testing.assert_array_equal(np.asarray(counts), expected)
        assert float(outside) == (0.0 if value == 1.0 else chunk)


def test_packed_1d_binning_on_a_grid_of_four_million_points(x64):
    """Cell and fraction come from one rounding of position · 2^bits, exact below 2^52: on a grid
    of 2^22 + 5 points the bits are lowered (30 → 29) so that the rounding stays exact, and the
    counts stay within the rounding's bound of exact linear binning."""
    size = 2**22 + 5
    x = np.random.default_rng(8).uniform(0.0, size - 1.0, 3000)
    grid = grid_from_range(jnp.zeros(1), jnp.full(1, size - 1.0), (size,), (0,))
    counts, outside = linear_binning(jnp.asarray(x), grid, chunk_size=4096)
    spacing = float(grid.spacing[0])
    assert fraction_bits(4096) == 30 and float(outside) == 0.0
    rounded = _rounded_binning_1d(x, 0.0, spacing, size, 29)
    np.testing.assert_allclose(np.asarray(counts), rounded, rtol=0, atol=1e-12)
    exact = _rounded_binning_1d(x, 0.0, spacing, size, 60)
    np.testing.assert_allclose(np.asarray(counts), exact, rtol=0, atol=2.0**-29)


def test_packing_spreads_large_chunks_over_copies():
    """The documented (bits, copies): one copy while 20 bits remain, then power-of-two copies
    of at most 2^18 samples each (so 25 bits), never fewer than 20 bits."""
    assert packing(2**16) == (29, 1) and packing(2**20) == (21, 1)
    assert packing(2**21) == (25, 8) and packing(2**22) == (25, 16)
    assert packing(2**21 + 5) == (27, 16)  # 16 copies of ⌈(2^21 + 5)/16⌉ = 131,073 samples
    for chunk in (2**21, 3 * 2**20, 2**23, 2**25 + 1):
        bits, copies = packing(chunk)
        per_copy = -(-chunk // copies)
        assert bits >= 20 and per_copy <= 2**18 and copies & (copies - 1) == 0
        assert bits + 2 * per_copy.bit_length() <= 63  # count and Σq fit one int64


def test_spread_packed_binning_rounds_the_fraction_as_documented(x64):
    """A chunk of 2^21 samples (the GPU path: 8 interleaved copies at 25 bits) and a 5-sample
    tail (30 bits) equal the rounded-fraction definition; so does a point mass of a whole
    2^22 chunk on one grid point (16 copies, the contention case), and samples off the grid
    are counted."""
    chunk = 2**21
    x = np.asarray(jax.random.uniform(jax.random.key(4), (chunk + 5,), minval=-0.1, maxval=1.1))
    grid = grid_from_range(jnp.zeros(1), jnp.ones(1), (7,), (0,))
    counts, outside = linear_binning(jnp.asarray(x), grid, chunk_size=chunk)
    ref = _rounded_binning_1d(x[:chunk], 0.0, 1.0 / 6, 7, 25)
    ref += _rounded_binning_1d(x[chunk:], 0.0, 1.0 / 6, 7, 30)
    np.testing.assert_allclose(np.asarray(counts), ref, rtol=0, atol=1e-8)
    assert float(outside) == float(np.sum((x < 0) | (x > 1)))
    for value, expected in ((1.0, [0.0] * 6 + [2.0**22]), (0.5, [0, 0, 0, 2.0**22, 0, 0, 0])):
        counts, outside = linear_binning(jnp.full(2**22, value), grid, chunk_size=2**22)
        np.testing.assert_array_equal(np.asarray(counts), expected)
        assert float(outside) == 0.0


_SHARDED_BINNING = textwrap.dedent(
    """
    import json, os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec
    import rdpjax
    from rdpjax.estimator.binning import linear_binning
    from rdpjax.estimator.grid import grid_from_range
    from rdpjax.estimator.sharding import AXIS, draw_mesh
    x, shape = np.asarray(json.loads(sys.argv[1])), tuple(json.loads(sys.argv[2]))
    d, mesh, out = len(shape), draw_mesh(4), {}
    with rdpjax.float64():
        grid = grid_from_range(jnp.zeros(d), jnp.ones(d), shape, (0,) * d)
        for name, data in (("all", x), ("first 300", x[:300]), ("first 3", x[:3])):
            placed = jnp.asarray(data)
            if name == "first 300":  # already split over the devices, as the docstring says
                placed = jax.device_put(data, NamedSharding(mesh, PartitionSpec(AXIS)))
            counts, outside = linear_binning(placed, grid, chunk_size=32, mesh=mesh)
            out[name] = [np.asarray(counts).tolist(), float(outside)]
    print("RESULT" + json.dumps({"devices": len(jax.devices()), **out}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(7,), (5, 6)])
def test_linear_binning_split_over_four_host_devices(shape):
    """Binning split over 4 forced host devices (blocks of 75 samples: two chunks of 32 and a
    tail each, and a last sample binned after the psum; samples already split; fewer samples
    than devices) equals the per-sample definition. The device flag must be set before jax is
    imported, hence the subprocess."""
    d = len(shape)
    x = np.array(jax.random.uniform(jax.random.key(d), (301, d), minval=-0.2, maxval=1.2))
    x[:4] = [[0.0] * d, [1.0] * d, [0.5] * d, [np.nan] * d]
    got = run_script(_SHARDED_BINNING, json.dumps(x.tolist()), json.dumps(shape))
    assert got["devices"] == 4
    for name, m in (("all", 301), ("first 300", 300), ("first 3", 3)):
        ref = _binning_by_definition(x[:m], np.zeros(d), 1.0 / (np.array(shape) - 1), shape)
        counts, outside = got[name]
        atol = _atol(d, "scatter", 32, m)
        np.testing.assert_allclose(np.asarray(counts), ref, rtol=0, atol=atol, err_msg=name)
        inside = np.all((x[:m] >= 0) & (x[:m] <= 1), axis=1)
        assert outside == float(np.sum(~inside)), name


def test_outside_points_are_counted_not_dropped(x64):
    grid = grid_from_range(jnp.array([0.0]), jnp.array([1.0]), (11,), (0,))
    counts, outside = linear_binning(jnp.array([[0.5], [2.0], [-1.0], [1.0]]), grid)
    assert float(outside) == 2.0
    assert float(counts.sum()) == 2.0


def test_accumulation_exact_beyond_float32(x64):
    """2^25 samples in one bin: float32 stops counting at 2^24, the float64 scan does not."""
    n = 2**25
    x = jnp.full((n, 1), 0.5, jnp.float32)
    grid = grid_from_range(jnp.array([0.0]), jnp.array([1.0]), (3,), (0,))
    counts, _ = linear_binning(x, grid)
    assert float(counts[1]) == float(n)


def test_accumulator_exact_at_2_pow_31(x64):
    """Adding a chunk to a bin already holding 2^31 counts stays exact (to 1e-6 and beyond)."""
    grid = grid_from_range(jnp.array([0.0]), jnp.array([1.0]), (3,), (0,))
    start = bin_accumulator(grid).at[1, 0].set(2.0**31)  # point 1 holds 2^31
    acc, _ = bin_chunk(start, jnp.zeros(()), jnp.array([[0.5], [0.25], [0.75]]), grid)
    counts = bin_counts(acc, grid)
    assert float(counts[1]) == 2.0**31 + 2.0
    assert float(counts.sum()) == 2.0**31 + 3.0


def test_count_codes(x64):
    codes = jnp.array([0, 2, 2, 3, 2], jnp.int32)
    np.testing.assert_array_equal(np.asarray(count_codes(codes, 4, chunk_size=2)), [1, 0, 3, 1])


def test_binning_refuses_float32_mode():
    grid = grid_from_range(jnp.array([0.0]), jnp.array([1.0]), (3,), (0,))
    with pytest.raises(RuntimeError, match="float64"):
        linear_binning(jnp.zeros((4, 1)), grid)
