"""rdpjax.audit(..., tpr_at_fpr=…): the certified TPR at a target FPR beside the verdict."""

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.auditing import Looks
from rdpjax.claims import approx_dp, zcdp
from rdpjax.mechanisms import Gaussian

X, X_PRIME = np.array([0.0]), np.array([1.0])


@pytest.mark.parametrize("memory_budget", [None, 0])  # in memory, and streamed (one pass)
def test_audit_reports_the_points_and_keeps_its_verdict(memory_budget):
    budget = {} if memory_budget is None else {"memory_budget": memory_budget}
    common = dict(n=20_000, claim=approx_dp(1.0, 1e-5), **budget)
    plain = rdpjax.audit(jax.random.key(1), Gaussian(scale=1.0), X, X_PRIME, **common)
    asked = rdpjax.audit(
        jax.random.key(1), Gaussian(scale=1.0), X, X_PRIME, tpr_at_fpr=[0.01, 0.1], **common
    )
    assert plain.verdict() == asked.verdict()
    np.testing.assert_array_equal(plain.lower, asked.lower)
    points = asked.sets.operating_points
    assert [p.target_fpr for p in points] == [0.01, 0.1]
    assert all(p.certified and p.fpr_interval[1] <= p.target_fpr for p in points)
    assert all(p.alpha == asked.sets.alpha / 2 for p in points)  # the sets' level, split
    text = str(asked)
    assert "TPR at FPR" in text and "(target 0.1)" in text
    assert "TPR at FPR" not in str(plain)


def test_audit_refuses_points_it_cannot_report():
    gauss = Gaussian(scale=1.0)
    with pytest.raises(ValueError, match="tpr_at_fpr= .* Rényi bounds alone"):
        rdpjax.audit(jax.random.key(0), gauss, X, X_PRIME, n=1000, claim=zcdp(0.5),
                     tpr_at_fpr=0.01)  # fmt: skip
    with pytest.raises(ValueError, match="tpr_at_fpr= .* sequential audit"):
        rdpjax.audit(jax.random.key(0), gauss, X, X_PRIME, n=Looks(max_n=10_000),
                     claim=approx_dp(1.0, 1e-5), tpr_at_fpr=0.01)  # fmt: skip
    with pytest.raises(ValueError, match="tpr_at_fpr must be"):
        rdpjax.audit(jax.random.key(0), gauss, X, X_PRIME, n=1000,
                     claim=approx_dp(1.0, 1e-5), tpr_at_fpr=2.0)  # fmt: skip
