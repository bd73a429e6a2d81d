"""TPR at FPR and AUROC on canary scores, against scipy's and sklearn's independent references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rdpjax.canaries.metrics import auroc, clopper_pearson, tpr_at_fpr

# Coverage checks: R fixed-key replications; a check fails when the number of misses exceeds
# the 0.999 quantile of Binomial(R, nominal miss rate), a false-failure rate ≤ 10⁻³ each.
R = 2000


def _max_misses(rate: float, reps: int = R) -> int:
    return int(stats.binom.ppf(0.999, reps, rate))


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 400), (399, 400)])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_clopper_pearson_matches_scipy(k, n, alpha):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    lo, hi = clopper_pearson(k, n, alpha)
    np.testing.assert_allclose([lo, hi], [ci.low, ci.high], rtol=1e-9, atol=1e-12)


def test_tpr_at_fpr_counts_and_intervals():
    rng = np.random.default_rng(1)
    ins, outs = rng.normal(1.5, 1, 700), rng.normal(0, 1, 900)
    p = tpr_at_fpr(ins, outs, 0.05, alpha=0.1)
    assert p.certified and p.fpr <= 0.05 and p.fpr_interval[1] <= 0.05
    assert p.true_positives == (ins > p.threshold).sum()
    assert p.false_positives == (outs > p.threshold).sum()
    for count, n, (lo, hi) in [
        (p.true_positives, 700, p.tpr_interval),
        (p.false_positives, 900, p.fpr_interval),
    ]:
        ci = stats.binomtest(count, n).proportion_ci(confidence_level=0.95, method="exact")
        np.testing.assert_allclose([lo, hi], [ci.low, ci.high], rtol=1e-9)
    # The count is the largest certified one: one more false positive breaks the target.
    nxt = stats.binomtest(p.false_positives + 1, 900).proportion_ci(0.95, method="exact")
    assert nxt.high > 0.05


def test_tpr_at_fpr_not_certifiable():
    p = tpr_at_fpr([1.0, 2.0], [0.0, 0.5, 0.7], 0.01)
    assert not p.certified and p.threshold == np.inf
    assert p.tpr == p.fpr == 0.0 and p.tpr_interval == (0.0, 0.0)
    assert "not certifiable" in p.describe()


@pytest.mark.parametrize("discrete", [False, True])
def test_certified_fpr_covers(discrete):
    """The true FPR at the chosen threshold exceeds the target in ≤ α/2 of the runs, for
    continuous and for tied (Poisson) out scores; the true FPR is computed exactly."""
    rng = np.random.default_rng(2)
    target, alpha, n = 0.05, 0.1, 300
    misses = 0
    for _ in range(R // 4):
        outs = rng.poisson(20, n).astype(float) if discrete else rng.uniform(size=n)
        t = tpr_at_fpr(np.ones(3), outs, target, alpha=alpha).threshold
        true_fpr = stats.poisson.sf(t, 20) if discrete else 1.0 - t
        misses += true_fpr > target
    assert misses <= _max_misses(alpha / 2, R // 4)


def test_naive_threshold_would_miss():
    """The check above can fail: the empirical ⌊target·n⌋-th largest score misses ~half the time."""
    rng = np.random.default_rng(3)
    outs = np.sort(rng.uniform(size=(R // 4, 300)), axis=1)[:, ::-1]
    misses = (1.0 - outs[:, 15] > 0.05).sum()  # 15 = 0.05 · 300 false positives
    assert misses > _max_misses(0.05, R // 4)


def test_tpr_interval_covers():
    rng = np.random.default_rng(4)
    misses = 0
    for _ in range(R // 4):
        ins, outs = rng.normal(1, 1, 200), rng.normal(0, 1, 400)
        p = tpr_at_fpr(ins, outs, 0.1, alpha=0.1)
        true_tpr = stats.norm.sf(p.threshold, loc=1)
        misses += not p.tpr_interval[0] <= true_tpr <= p.tpr_interval[1]
    assert misses <= _max_misses(0.05, R // 4)


def test_auroc_matches_sklearn_and_bruteforce():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    ins, outs = rng.integers(0, 6, 300).astype(float), rng.integers(0, 5, 250).astype(float)
    a = auroc(ins, outs)
    labels = np.r_[np.ones(300), np.zeros(250)]
    assert a.value == pytest.approx(metrics.roc_auc_score(labels, np.r_[ins, outs]), rel=1e-12)
    u = stats.mannwhitneyu(ins, outs).statistic
    assert a.value == pytest.approx(u / (300 * 250), rel=1e-12)
    psi = (ins[:, None] > outs[None, :]) + 0.5 * (ins[:, None] == outs[None, :])
    se = np.sqrt(psi.mean(1).var(ddof=1) / 300 + psi.mean(0).var(ddof=1) / 250)  # DeLong
    assert a.std_error == pytest.approx(se, rel=1e-10)
    half = np.sqrt(np.log(2 / 0.05) / (2 * 250))
    np.testing.assert_allclose(a.interval, (a.value - half, a.value + half), rtol=1e-12)


@pytest.mark.parametrize("interval", ["interval", "delong"])
def test_auroc_intervals_cover(interval):
    """Gaussian scores N(1, 1) vs N(0, 1): AUROC = Φ(1/√2)."""
    rng = np.random.default_rng(6)
    truth = stats.norm.cdf(1 / np.sqrt(2))
    misses = 0
    for _ in range(R // 4):
        lo, hi = getattr(auroc(rng.normal(1, 1, 300), rng.normal(0, 1, 300), alpha=0.1), interval)
        misses += not lo <= truth <= hi
    assert misses <= _max_misses(0.1, R // 4)


def test_metrics_validate():
    with pytest.raises(ValueError, match="fpr"):
        tpr_at_fpr([1.0], [0.0], 1.0)
    with pytest.raises(ValueError, match="alpha"):
        auroc([1.0], [0.0], alpha=0.0)
    with pytest.raises(ValueError, match="out_scores"):
        auroc([1.0], [])
    with pytest.raises(ValueError, match="in_scores"):
        tpr_at_fpr([np.nan], [0.0], 0.1)
