"""Certified TPR at a target FPR on cells (rdpjax.rejection.operating), in set_test and audit."""

import jax
import numpy as np
import pytest
from cell_laws import LAWS, true_rates
from scipy import stats

from rdpjax.canaries import tpr_at_fpr
from rdpjax.rejection import SetOptions, set_test
from rdpjax.rejection.operating import cell_operating_point


def test_one_draw_a_cell_is_the_threshold_on_raw_scores():
    """Each draw alone in its cell, ranked by its own value: the (k+1)-th largest negative is the
    threshold, as the raw-score rule (canaries.tpr_at_fpr, a sort of the scores) computes it."""
    rng = np.random.default_rng(3)
    ins, outs = rng.normal(1.0, 1.0, 300), rng.normal(0.0, 1.0, 400)
    values = np.concatenate([ins, outs])
    c_p = np.r_[np.ones(300, int), np.zeros(400, int)]
    for target in (0.02, 0.1, 0.3):
        cell = cell_operating_point(rng, c_p, 1 - c_p, values, target, 0.05)
        raw = tpr_at_fpr(ins, outs, target, alpha=0.05)
        assert cell.true_positives == raw.true_positives
        assert cell.false_positives == raw.false_positives
        assert cell.tpr_interval == raw.tpr_interval and cell.fpr_interval == raw.fpr_interval
        assert cell.fpr_interval[1] <= target


def test_the_boundary_cell_follows_the_negative_hypergeometric_law():
    """In the cell holding the threshold the draws are in uniform random order, so the positives
    above its (a+1)-th negative from the top are negative hypergeometric, of mean
    c_p (a + 1) / (c_q + 1), plus the positives of the cells ranked higher."""
    c_p, c_q = np.array([5, 40, 0]), np.array([0, 30, 70])
    scores = np.array([3.0, 1.0, -2.0])  # cell 0 first, then the boundary cell 1
    target, alpha = 0.12, 0.05
    k = cell_operating_point(np.random.default_rng(0), c_p, c_q, scores, target, alpha)
    a = k.false_positives  # all in cell 1 (cell 0 has no negative)
    assert 0 <= a < 30 and k.cut is not None and k.cut[0] == 1
    tps = np.array(
        [
            cell_operating_point(
                np.random.default_rng(s), c_p, c_q, scores, target, alpha
            ).true_positives
            for s in range(3000)
        ]
    )
    above = tps - 5
    mean = 40 * (a + 1) / (30 + 1)
    se = above.std() / np.sqrt(above.size)
    assert abs(above.mean() - mean) < 5 * se, (above.mean(), mean)
    assert above.min() >= 0 and above.max() <= 40


@pytest.mark.parametrize("law", sorted(LAWS))
def test_the_certified_point_holds_on_a_panel_of_laws(law):
    """R = 200 on each law of the panel (cell masses known), fixed keys: the true FPR of the
    randomized distinguisher is ≤ its certified upper end and its true TPR ≥ the certified TPR
    (two one-sided bounds at α/4 each: together missed with probability ≤ α/2 = 0.025, more than
    12 of 200 with probability < 0.003), and both two-sided intervals hold (≤ α = 0.05: more than
    19 of 200 with probability < 0.003)."""
    p, q = LAWS[law]
    rng = np.random.default_rng([5, sorted(LAWS).index(law)])
    certified_ends = both_intervals = 0
    for _ in range(200):
        sel_p, sel_q = rng.multinomial(500, p), rng.multinomial(500, q)
        scores = np.log(sel_p + 0.5) - np.log(sel_q + 0.5)  # fixed before the counts below
        c_p, c_q = rng.multinomial(2000, p), rng.multinomial(2000, q)
        point = cell_operating_point(rng, c_p, c_q, scores, 0.05, 0.05)
        fpr, tpr = true_rates(point, scores, p, q)
        (f_lo, f_hi), (t_lo, t_hi) = point.fpr_interval, point.tpr_interval
        certified_ends += not (fpr <= f_hi and tpr >= t_lo)
        both_intervals += not (f_lo <= fpr <= f_hi and t_lo <= tpr <= t_hi)
    assert certified_ends <= 12 and both_intervals <= 19, (certified_ends, both_intervals)


def test_set_test_reports_points_beside_unchanged_bounds():
    rng = np.random.default_rng(0)
    p, q = rng.normal(1.0, 1.0, 20_000), rng.normal(0.0, 1.0, 20_000)
    key = jax.random.key(0)
    plain = set_test(key, p, q)
    asked = set_test(key, p, q, tpr_at_fpr=(0.01, 0.1))
    assert (plain.epsilon, plain.mu, plain.refuted) == (asked.epsilon, asked.mu, asked.refuted)
    assert plain.operating_points == ()
    lo, hi = (pt for pt in asked.operating_points)
    assert (lo.target_fpr, hi.target_fpr) == (0.01, 0.1)
    assert lo.alpha == hi.alpha == 0.025  # α split over the two points
    # N(1,1) against N(0,1): the Neyman–Pearson TPR at FPR f is Φ(1 − Φ⁻¹(1 − f)); the
    # certified one is below it, and a real distinguisher: twice the FPR's upper end at least.
    for pt in asked.operating_points:
        best = stats.norm.sf(stats.norm.isf(pt.fpr) - 1.0)
        assert pt.tpr_interval[0] <= best + 1e-9
        assert pt.tpr_interval[0] > 2 * pt.fpr_interval[1]
    text = str(asked)
    assert "TPR at FPR" in text and "(target 0.01)" in text
    assert asked.to_dict()["operating_points"][0]["target_fpr"] == 0.01
    assert set_test(key, p, q, tpr_at_fpr=0.01).operating_points[0].alpha == 0.05


@pytest.mark.parametrize("bad", [0, 1.0, -0.1, "0.1", [0.1, "x"], [True], float("nan"), None])
def test_bad_targets_are_named(bad):
    with pytest.raises(ValueError, match="tpr_at_fpr"):
        SetOptions(tpr_at_fpr=bad)


def test_too_few_negatives_certify_nothing():
    point = cell_operating_point(
        np.random.default_rng(0), np.array([10, 0]), np.array([0, 10]), np.array([1.0, 0.0]),
        0.01, 0.05,
    )  # fmt: skip
    assert not point.certified and point.tpr_interval == (0.0, 0.0) and point.cut is None


def test_a_new_statistic_is_a_module_and_its_registration(monkeypatch):
    """A statistic registered from outside the package runs on every route's counts: here the
    certification totals, which must equal the test's own n_certify, with its plan made from the
    selection before any count existed."""
    from rdpjax.rejection import statistics

    monkeypatch.setattr(statistics, "_REGISTRY", dict(statistics._REGISTRY))
    seen = {}

    def plan(selection):
        seen["cells"] = selection.scores.size
        return selection.n_select

    def result(plan, counts, level, rng):
        return {"select": plan, "certify": (int(counts.p.sum()), int(counts.q.sum()))}

    totals = statistics.register(
        statistics.CellStatistic(
            name="totals", asked=lambda options: True, plan=plan, result=result,
            lines=lambda r: [f"totals {r['certify']}"], to_json=lambda r: r,
        )
    )  # fmt: skip
    rng = np.random.default_rng(1)
    p, q = rng.normal(0.5, 1.0, 5_000), rng.normal(0.0, 1.0, 4_000)
    out = set_test(jax.random.key(2), p, q)
    assert out.extras["totals"]["certify"] == (5_000 - 400, 4_000 - 320)  # 8% select
    assert out.extras["totals"]["select"] == (400, 320) and seen["cells"] == out.cells
    assert "totals (4600, 3680)" in str(out) and out.to_dict()["totals"]["select"] == (400, 320)
    plain = set_test(jax.random.key(2), p, q, tpr_at_fpr=0.1)
    assert plain.epsilon == out.epsilon and set(plain.extras) == {"totals", "operating_points"}
    with pytest.raises(ValueError, match="registered already"):
        statistics.register(totals._replace(plan=lambda s: None))
