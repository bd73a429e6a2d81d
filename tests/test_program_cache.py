"""Traced programs kept on disk (rdpjax.program_cache): found again only under the same key,
skipping the trace, with the plain call's results; rebuilt when unreadable; bounded."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rdpjax
from rdpjax import program_cache

TRACES: list[str] = []
_program = None


def _make():
    """A fresh jitted function, the same code: empty jax caches, as in a new process."""

    @functools.partial(jax.jit, static_argnames=("scale",))
    def scaled(x, pair, *, scale):
        TRACES.append("traced")  # runs only when jax traces the function
        return {"y": x.astype(jnp.float32) * scale + pair[0], "n": None, "s": jnp.sum(pair[1])}

    return scaled


@pytest.fixture
def folder(tmp_path):
    global _program
    TRACES.clear()
    _program = _make()
    yield program_cache.enable_program_cache(tmp_path / "programs")
    program_cache.enable_program_cache(None)


def _new_process(folder):
    """What a later process sees: the folder's artifacts, nothing traced in memory."""
    global _program
    _program = _make()
    program_cache.enable_program_cache(folder)


def _call(x, scale=2.0):
    return program_cache.call(_program, x, (jnp.float32(1.0), jnp.arange(3.0)), scale=scale)


def test_a_later_process_runs_the_kept_program_without_tracing(folder):
    x = jnp.linspace(0.0, 1.0, 5)
    first = _call(x)
    assert TRACES == ["traced"] and len(list(folder.glob("*.program"))) == 1
    _new_process(folder)
    again = _call(x)
    assert TRACES == ["traced"]  # deserialized, not traced
    plain = _make()(x, (jnp.float32(1.0), jnp.arange(3.0)), scale=2.0)
    for out in (first, again):
        assert out["n"] is None
        np.testing.assert_array_equal(out["y"], plain["y"])
        np.testing.assert_array_equal(out["s"], plain["s"])


def test_another_static_value_shape_or_dtype_is_another_program(folder):
    x = jnp.linspace(0.0, 1.0, 5)
    _call(x)
    _call(x, scale=3.0)
    _call(jnp.linspace(0.0, 1.0, 6))
    _call(jnp.arange(5))  # int32
    assert len(TRACES) == 4 and len(list(folder.glob("*.program"))) == 4
    np.testing.assert_allclose(_call(x, scale=3.0)["y"], 3.0 * x + 1.0, rtol=1e-6)


def test_an_unreadable_artifact_is_rebuilt(folder):
    x = jnp.ones(4)
    _call(x)
    (path,) = folder.glob("*.program")
    path.write_bytes(b"rdpjax-program-1\nnot a pickle")
    _new_process(folder)
    np.testing.assert_array_equal(_call(x)["y"], 3.0 * np.ones(4))
    assert len(TRACES) == 2
    _new_process(folder)
    _call(x)
    assert len(TRACES) == 2  # the rebuilt artifact is readable


def test_static_values_that_are_not_plain_data_are_never_kept(folder):
    @functools.partial(jax.jit, static_argnames=("fn",))
    def apply(x, *, fn):
        return fn(x)

    out = program_cache.call(apply, jnp.ones(3), fn=lambda v: v + 1.0)
    np.testing.assert_array_equal(out, 2.0 * np.ones(3))
    assert not list(folder.glob("*.program"))


def test_inside_a_trace_it_is_the_plain_call(folder):
    out = jax.jit(lambda x: _call(x)["y"])(jnp.ones(2))
    np.testing.assert_array_equal(out, 3.0 * np.ones(2))
    assert not list(folder.glob("*.program"))


def test_off_it_is_the_plain_call(folder):
    program_cache.enable_program_cache(None)
    _call(jnp.ones(7))
    _call(jnp.ones(7))
    assert TRACES == ["traced"]  # jax's own trace cache, nothing kept
    assert program_cache.program_folder() is None


def test_the_folder_keeps_at_most_max_programs(folder, monkeypatch):
    monkeypatch.setattr(program_cache, "MAX_PROGRAMS", 2)
    for size in (2, 3, 4):
        _call(jnp.ones(size))
    assert len(list(folder.glob("*.program"))) == 2


@pytest.mark.slow
def test_a_kept_bound_program_gives_the_plain_bound(folder):
    rng = np.random.default_rng(3)
    p, q = 0.5 + rng.standard_normal(3000), rng.standard_normal(3000)
    cached = rdpjax.lower_bound(p, q, [2, 5])
    _new_process(folder)
    reloaded = rdpjax.lower_bound(p, q, [2, 5])
    program_cache.enable_program_cache(None)
    plain = rdpjax.lower_bound(p, q, [2, 5])
    assert list(folder.glob("*.program"))
    for name in ("estimate", "std_error", "lower", "bias"):
        np.testing.assert_array_equal(getattr(cached, name), getattr(plain, name))
        np.testing.assert_array_equal(getattr(reloaded, name), getattr(plain, name))
