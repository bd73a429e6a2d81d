"""Test configuration for the mechanism zoo.

Compile time. Under JAX's default partitionable Threefry PRNG, XLA on CPU needs about 2 s to
compile one sampler and about 7 s once it is vmapped over keys (measured on this project's 2-core
machine, JAX 0.10.2), against about 0.6 s with ``jax.threefry_partitionable(False)``. Both modes
produce valid, independent uniform bits, and nothing tested here — the laws of the samplers, jit ==
eager, vmap == loop — depends on how the bits are laid out. So the zoo's tests run in the fast mode
by default; tests marked ``default_prng`` run under the library default, so that the default path
stays covered.
"""

import jax
import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "default_prng: run under JAX's default (partitionable) Threefry PRNG"
    )


@pytest.fixture(autouse=True)
def _fast_compiling_prng(request):
    if request.node.get_closest_marker("default_prng") is not None:
        yield
        return
    with jax.threefry_partitionable(False):
        yield
