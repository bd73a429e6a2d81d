"""rdpjax._fusion.materialized: the values pass unchanged, and on the CPU it is a fusion boundary
(a conditional in the compiled program) that the compiler does not fold away."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rdpjax._fusion import materialized


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
