"""rdpjax._internal.fusion.materialized: the values pass unchanged, and on the CPU it is a fusion
boundary
(a conditional in the compiled program) that the compiler does not fold away."""

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


def test_a_conditional_survives_compilation_on_the_cpu():
    """The boundary is only worth having if XLA keeps it: its optimized program holds a
    conditional (one branch the values, the other zeros), not a fused select."""
    f = jax.jit(lambda k, i: jnp.sum(materialized(jax.random.normal(k, (1000,)), i)))
    hlo = f.lower(jax.random.key(0), jnp.int32(0)).compile().as_text()
    if jax.default_backend() == "cpu":
        assert "conditional(" in hlo


def _program(f, *args) -> str:
    return jax.jit(f).lower(*args).compile().as_text()


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


def test_under_vmap_the_batch_stays_behind_one_conditional_on_the_cpu():
    """A conditional on a batched predicate would become a select, which XLA fuses (no
    boundary): the batching rule keeps the predicate unbatched. Fails without the rule."""
    if jax.default_backend() != "cpu":
        pytest.skip("the boundary is CPU-only")

    def draw_and_sum(k):
        return jnp.sum(materialized(jax.random.normal(k, (1000,))) ** 2)

    keys = jax.random.split(jax.random.key(0), 4)
    for f in (jax.vmap(draw_and_sum), lambda ks: jax.lax.map(draw_and_sum, ks, batch_size=2)):
        hlo = _program(f, keys)
        assert "conditional(" in hlo
    unbatched = _program(draw_and_sum, keys[0])
    assert "conditional(" in unbatched


def test_by_value_differentiates_as_the_identity():
    def f(s):
        return jnp.sum(materialized(s * jnp.arange(1.0, 4.0)) ** 2)

    grad = jax.jit(jax.grad(f))(2.0)
    np.testing.assert_allclose(float(grad), 2 * 2.0 * (1 + 4 + 9), rtol=1e-6)
    batched = jax.jit(jax.vmap(jax.grad(f)))(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(batched), [28.0, 56.0], rtol=1e-6)
    tangent = jax.jvp(f, (2.0,), (1.0,))[1]
    np.testing.assert_allclose(float(tangent), 56.0, rtol=1e-6)
