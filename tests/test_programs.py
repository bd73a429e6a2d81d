"""compiled_names sees a program the persistent compilation cache reads back.

The suite runs with one persistent jax compilation cache (conftest.py). A program that jax's
in-memory cache misses is then read back from disk rather than compiled by XLA; the tests that
count compilations (compiled_names) must still see it, or a miss would go unnoticed. jax records
``/jax/core/compile/backend_compile_duration`` for a read-back program too (jax 0.10.2); this
test fails if a jax version stops doing so, and compiled_names would then have to turn the
persistent cache off inside its block.
"""

import jax
import jax.numpy as jnp

from rdpjax._internal.programs import compiled_names


def test_a_program_read_back_from_the_persistent_cache_is_listed():
    assert jax.config.jax_compilation_cache_dir  # the suite's cache (conftest.py)
    floor = jax.config.jax_persistent_cache_min_compile_time_secs
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # keep even this one
    hits: list[str] = []

    def on_event(event: str, **kwargs) -> None:
        del kwargs
        if event == "/jax/compilation_cache/cache_hits":
            hits.append(event)

    jax.monitoring.register_event_listener(on_event)
    try:
        f = jax.jit(lambda x: jnp.sin(x) * 3.25 + jnp.arange(7.0))  # a program of this test only
        f(1.0)
        f.clear_cache()  # as if jax's in-memory cache had missed it
        with compiled_names() as names:
            f(1.0)
        assert hits, "the persistent cache did not read the program back (the test is moot)"
        assert len(names) == 1, names
        with compiled_names() as names:
            f(1.0)  # the in-memory cache holds it: nothing
        assert names == []
    finally:
        jax.monitoring.unregister_event_listener(on_event)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", floor)
