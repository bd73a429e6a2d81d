"""A user's JAX sampler may return its i.i.d. batch in any order (found by a hunt, 2026-12-07).

The sequential audit kept the first m of bucket_size(m) outputs: on a sorted batch the smallest,
so its bounds lay above the truth and a true claim was refuted at the first looks. The in-memory
audit bounded the rows in the order given. Both now put a user sampler's outputs in the key's
order (sorted, then permuted), as they did a numpy black box's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rdpjax
from rdpjax.mechanisms import from_sampler
from rdpjax.stream import Looks


def _gauss(key, x, n):
    """N(sum(x), 1): D_λ = λ/2 exactly for x = [1] against x' = [0] (0.5-zCDP)."""
    return jnp.sum(x) + jax.random.normal(key, (n,))


def _sorted(key, x, n):
    return jnp.sort(_gauss(key, x, n))


def _reversed(key, x, n):
    return jnp.sort(_gauss(key, x, n))[::-1]


X, X_PRIME = jnp.array([1.0]), jnp.array([0.0])


def _audit(sample, n, **kwargs):
    mech = from_sampler(sample, name="gauss")
    return rdpjax.audit(jax.random.key(3), mech, X, X_PRIME, n=n, progress=False, **kwargs)


@pytest.mark.parametrize("sample", [_sorted, _reversed])
def test_a_sorted_jax_sampler_gives_the_looks_of_the_same_draws_unsorted(sample):
    claim = rdpjax.claims.zcdp(0.5)  # the exact curve: true
    base = _audit(_gauss, Looks(max_n=1_600), claim=claim)
    other = _audit(sample, Looks(max_n=1_600), claim=claim)
    assert not other.is_refuted and other.n == base.n == 1_600
    for a, b in zip(base.looks, other.looks, strict=True):
        np.testing.assert_array_equal(a.lower, b.lower)


def test_a_sorted_jax_sampler_gives_the_fixed_n_audit_of_the_same_draws_unsorted():
    base = _audit(_gauss, 30_000, lam=[2.0, 5.0])
    other = _audit(_sorted, 30_000, lam=[2.0, 5.0])
    np.testing.assert_array_equal(base.lower, other.lower)
    assert np.all(base.lower <= np.array([1.0, 2.5]))
