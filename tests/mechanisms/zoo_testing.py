"""Shared checks for the mechanism-zoo tests.

Goodness-of-fit tests use fixed PRNG keys and reject at level 0.01: for a correct sampler each
check would fail on 1% of keys (nominal false-failure rate), and with a fixed key it either always
passes or always fails, so a pass is reproducible.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

LEVEL = 0.01  # nominal false-failure rate of one KS / chi-square check


def key(seed: int) -> jax.Array:
    return jax.random.key(seed)


def assert_ks(samples, cdf, level: float = LEVEL) -> float:
    """One-sample Kolmogorov–Smirnov test of ``samples`` against the exact ``cdf``."""
    result = stats.kstest(np.asarray(samples, dtype=np.float64), cdf)
    assert result.pvalue > level, f"KS p-value {result.pvalue:.3g} <= {level}"
    return result.pvalue


def assert_chi2(codes, probs, level: float = LEVEL, min_expected: float = 5.0) -> float:
    """Chi-square goodness of fit of integer ``codes`` to the pmf ``probs``.

    Cells with expected count below ``min_expected`` are pooled into one cell (the usual validity
    condition of the chi-square approximation). A code outside the support fails at once.
    """
    codes = np.asarray(codes).ravel()
    probs = np.asarray(probs, dtype=np.float64)
    assert np.isclose(probs.sum(), 1.0, atol=1e-9), probs.sum()
    n = codes.size
    assert codes.min() >= 0 and codes.max() < probs.size
    counts = np.bincount(codes, minlength=probs.size).astype(np.float64)
    assert np.all(counts[probs == 0] == 0), "sampled an impossible output"
    expected = n * probs
    big = expected >= min_expected
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    result = stats.chisquare(obs, exp)
    assert result.pvalue > level, f"chi-square p-value {result.pvalue:.3g} <= {level}"
    return result.pvalue


def check_jit_and_vmap(mech, database, n: int = 64, seed: int = 3) -> None:
    """jit(vmap over keys) equals eager sampling key by key; the same key, the same samples."""
    keys = jax.random.split(key(seed), 3)
    batched = np.asarray(jax.jit(jax.vmap(lambda kk: mech.sample(kk, database, n)))(keys))
    for i in range(3):
        eager = np.asarray(mech.sample(keys[i], database, n))
        np.testing.assert_allclose(batched[i], eager, rtol=2e-6, atol=2e-6)
    np.testing.assert_array_equal(eager, np.asarray(mech.sample(keys[2], database, n)))


def scaled_leaves(mech, factors=(1.0, 1.1)):
    """A batch of two mechanisms: every leaf multiplied by each factor (stacked)."""
    return jax.tree.map(lambda v: jnp.stack([jnp.asarray(v) * f for f in factors]), mech)


def draw(mech, seed: int, database, n: int = 50_000) -> jax.Array:
    """``n`` samples with a fixed key.

    ``sample`` runs one jitted kernel cached per mechanism class, static fields and shapes, so
    tests sharing ``n`` (50,000 by default) and a class share one compilation.
    """
    return mech.sample(key(seed), jnp.asarray(database), n)
