import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rdpjax.binning import bin_chunk, count_codes, linear_binning
from rdpjax.grid import grid_from_range, grid_layout


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
    start = jnp.array([0.0, 2.0**31, 0.0])
    counts, _ = bin_chunk(start, jnp.zeros(()), jnp.array([[0.5], [0.25], [0.75]]), grid)
    assert float(counts[1]) == 2.0**31 + 2.0
    assert float(counts.sum()) == 2.0**31 + 3.0


def test_count_codes(x64):
    codes = jnp.array([0, 2, 2, 3, 2], jnp.int32)
    np.testing.assert_array_equal(np.asarray(count_codes(codes, 4, chunk_size=2)), [1, 0, 3, 1])


def test_binning_refuses_float32_mode():
    grid = grid_from_range(jnp.array([0.0]), jnp.array([1.0]), (3,), (0,))
    with pytest.raises(RuntimeError, match="float64"):
        linear_binning(jnp.zeros((4, 1)), grid)
