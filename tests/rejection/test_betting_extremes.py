"""The betting test at claims whose e^ε overflows float64 (found by a hunt, 2026-12-07)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.rejection import streamed_set_test
from rdpjax.stream import BlackBox, Looks


def _gsum(rng, db, m):
    return np.sum(db) + rng.standard_normal(m)


@pytest.mark.parametrize("epsilon", [709.0, 710.0, 800.0])
def test_a_claim_past_e_to_the_709_stakes_nothing_and_its_wealth_stays_1(epsilon):
    """λ ≤ c/(e^ε + δ) is 0 there; the wealth was NaN (inf · 0) from ε = 710, reported as inf."""
    box = BlackBox(_gsum, [1.0], [0.0])
    result = streamed_set_test(
        jax.random.key(0), box, rdpjax.claims.pure_dp(epsilon), n=Looks(max_n=3000)
    )
    assert not result.refuted and result.e_value == 1.0
    assert all(np.isfinite(log_k) for _, log_k in result.path)
