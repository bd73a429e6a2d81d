"""Small n, many values: the relative-frequency bound stays valid (issue 22, item 1).

A fixed-key version of ``benchmarks/calibration/calibrate_small_n.py``: a uniform null on K = 100
values
at n = 500 a side, λ = 2, 5, 7 in both directions (six bounds, Bonferroni), R = 200. With the
floor held at ≥ 4 samples' worth (``Defaults.discrete_floor_counts``) the simultaneous coverage
is at least 0.95; without it (the former rule, 0.03 n^(−0.4) alone) it is far below, which is
what the counts term fixed.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.estimator.api import plan_bound

K, N, REPS = 100, 500, 200


def _simultaneous_coverage(defaults) -> float:
    def draw(key):
        kp, kq = jax.random.split(key)
        return jax.random.randint(kp, (N,), 0, K), jax.random.randint(kq, (N,), 0, K)

    with rdpjax.float64():
        pilot = [np.asarray(a) for a in draw(jax.random.key(99))]
        plan, _, _ = plan_bound(
            *pilot, [2, 5, 7], support_size=K, both_directions=True, defaults=defaults
        )
        lower = jax.jit(jax.vmap(lambda k: plan(*draw(k)).lower))(
            jax.random.split(jax.random.key(3), REPS)
        )
    return float(np.mean(np.all(np.asarray(lower) <= 0.0, axis=1)))  # the truth is 0


@pytest.mark.slow
def test_floor_counts_keep_a_sparse_null_valid():
    assert _simultaneous_coverage(rdpjax.DEFAULTS) >= 0.95


def test_without_the_counts_term_the_sparse_null_is_invalid():
    former = dataclasses.replace(rdpjax.DEFAULTS, discrete_floor_counts=0.0)
    assert _simultaneous_coverage(former) < 0.9


@pytest.mark.parametrize("n", [200, 3_000, 10_000])
def test_the_counts_term_decides_only_at_small_n(n):
    floor = rdpjax.lower_bound(np.arange(n) % 7, (np.arange(n) + 1) % 7, 2.0).floor
    assert float(floor) == pytest.approx(max(0.03 * n**-0.4, 4.0 / n), rel=1e-12)
