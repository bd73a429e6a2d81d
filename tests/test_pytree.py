"""Pytree registration: the tree structure must tell classes apart.

jax 0.10.2's ``register_dataclass`` made ``tree_structure(Laplace(5)) == tree_structure(
Gaussian(5))`` true (same field names) with different hashes, so jit caches mixed them up
intermittently: a long ``rdpjax reproduce`` drew Laplace samples for the Gaussian experiment.
"""

from __future__ import annotations

import jax
import numpy as np

import rdpjax
from rdpjax import mechanisms as M
from rdpjax._pytree import pytree_dataclass


def test_mechanisms_with_the_same_fields_have_different_structures():
    for a, b in (
        (M.Laplace(5.0), M.Gaussian(5.0)),
        (M.RandomizedResponse(1.5), M.ShuffledRandomizedResponse(1.5)),
    ):
        assert jax.tree_util.tree_structure(a) != jax.tree_util.tree_structure(b)


def test_core_pytrees_with_the_same_fields_have_different_structures():
    @pytree_dataclass(static=("k",))
    class A:
        x: float
        k: int

    @pytree_dataclass(static=("k",))
    class B:
        x: float
        k: int

    assert jax.tree_util.tree_structure(A(1.0, 2)) != jax.tree_util.tree_structure(B(1.0, 2))
    back = jax.tree_util.tree_map(lambda v: v * 2, A(1.0, 2))
    assert isinstance(back, A) and back.x == 2.0 and back.k == 2


def test_one_jitted_function_samples_each_mechanism_from_its_own_law():
    x, _ = rdpjax.mechanisms.databases.paper_pair()
    draw = jax.jit(lambda mech, key: mech.sample(key, x, 200_000))

    def kurtosis(v):
        v = np.asarray(v, np.float64)
        v = v - v.mean()
        return float((v**4).mean() / (v**2).mean() ** 2)

    # Laplace: kurtosis 6, Gaussian: 3; the s.e. of the sample kurtosis at n = 2e5 is < 0.1.
    assert abs(kurtosis(draw(M.Laplace(5.0), jax.random.key(0))) - 6.0) < 0.6
    assert abs(kurtosis(draw(M.Gaussian(5.0), jax.random.key(1))) - 3.0) < 0.3
