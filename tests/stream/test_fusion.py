"""rdpjax._internal.fusion.materialized: the values pass unchanged, through jit, scan, vmap,
lax.map and autodiff. That on the CPU it is a fusion boundary (a conditional the compiler keeps,
batched or not) is read from the compiled program's text by
benchmarks/performance/compiled_programs.py (issue 52: compiler text is not asserted in tests)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rdpjax._internal.fusion import materialized


@pytest.mark.parametrize(
    "x",
    [
        np.array([np.nan, 1.0, -2.0], np.float32),
        np.array([np.inf, -np.inf, 0.5]),
        np.array([-0.0, 3.0]),
        np.linspace(-1, 1, 12).reshape(4, 3),
    ],
)
def test_values_pass_unchanged(x):
    x = jnp.asarray(x)
    out = np.asarray(jax.jit(materialized)(x, jnp.int32(3)))
    np.testing.assert_array_equal(out, np.asarray(x))
    assert np.array_equal(np.signbit(out), np.signbit(np.asarray(x)))  # −0.0 kept


def test_with_a_loop_counter_inside_a_scan():
    def body(c, i):
        x = jnp.sin(i.astype(jnp.float32) + jnp.arange(5, dtype=jnp.float32))
        return c + materialized(x, i), None

    total = jax.jit(lambda: jax.lax.scan(body, jnp.zeros(5), jnp.arange(7))[0])()
    expect = sum(np.sin(i + np.arange(5, dtype=np.float32)) for i in range(7))
    np.testing.assert_allclose(np.asarray(total), expect, rtol=1e-6)


def test_by_value_passes_values_unchanged_under_vmap_and_lax_map():
    x = jnp.asarray(np.linspace(-3.0, 3.0, 24).reshape(2, 3, 4))
    x = x.at[0, 1, 2].set(jnp.nan)
    for f in (
        materialized,
        jax.vmap(materialized),
        jax.vmap(jax.vmap(materialized)),
        lambda a: jax.lax.map(materialized, a, batch_size=2),
    ):
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), np.asarray(x))


def test_integer_and_empty_arrays_are_returned_as_they_are():
    codes = jnp.arange(6, dtype=jnp.int32)
    assert materialized(codes) is codes
    empty = jnp.zeros((0, 2))
    assert materialized(empty) is empty


def test_by_value_differentiates_as_the_identity():
    def f(s):
        return jnp.sum(materialized(s * jnp.arange(1.0, 4.0)) ** 2)

    grad = jax.jit(jax.grad(f))(2.0)
    np.testing.assert_allclose(float(grad), 2 * 2.0 * (1 + 4 + 9), rtol=1e-6)
    batched = jax.jit(jax.vmap(jax.grad(f)))(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(batched), [28.0, 56.0], rtol=1e-6)
    tangent = jax.jvp(f, (2.0,), (1.0,))[1]
    np.testing.assert_allclose(float(tangent), 56.0, rtol=1e-6)
