"""The report's figure and its empirical trade-off curve, against a direct computation."""

import numpy as np
import pytest

from rdpjax.canaries import one_run, tpr_at_fpr
from rdpjax.canaries.report import empirical_tradeoff, plot_tradeoff
from rdpjax.claims import approx_dp


def test_empirical_tradeoff_matches_direct_counts():
    rng = np.random.default_rng(0)
    ins, outs = rng.integers(0, 8, 50).astype(float), rng.integers(0, 6, 70).astype(float)
    fpr, fnr = empirical_tradeoff(ins, outs)
    t = np.r_[np.inf, np.unique(np.r_[ins, outs])[::-1], -np.inf]
    np.testing.assert_allclose(fpr, [(outs > x).mean() for x in t])
    np.testing.assert_allclose(fnr, [1 - (ins > x).mean() for x in t])
    assert fpr[0] == 0 and fnr[0] == 1 and fpr[-1] == 1 and fnr[-1] == 0
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(fnr) <= 0)


def test_plot_tradeoff_draws_the_points_and_the_claim():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1)
    ins, outs = rng.normal(2, 1, 500), rng.normal(0, 1, 500)
    result = one_run(ins, outs, approx_dp(1.0, 1e-5))
    points = [tpr_at_fpr(ins, outs, f) for f in (0.001, 0.05, 0.2)]  # 0.001: not certifiable
    ax = plot_tradeoff(ins, outs, result, points=points)
    labels = [line.get_label() for line in ax.lines]
    assert any(lbl.startswith("claim: (ε, δ)-DP") for lbl in labels)
    assert len(ax.containers[0].lines[0].get_xdata()) == 2  # the uncertified target left out
    assert "REFUTED" in ax.get_title() and "m = 1,000" in ax.get_title()
    plt.close(ax.figure)
