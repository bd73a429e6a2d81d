"""The one planner (rdpjax.estimator.planner): one DrawPlan for every route, and its rules.

The three routes (samples in memory, a stream's pilot, a sequential audit's pilot) each hand
the planner their evidence; these tests check the plan it returns against the rules it states
(independent of how they are computed), against the other routes, and that a sequential audit's
JSON form of the plan (LookSetup) loses nothing. Fixed seeds throughout.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import rdpjax
from rdpjax.auditing.sequential.options import LookOptions
from rdpjax.auditing.sequential.schedule import geometric_schedule
from rdpjax.auditing.sequential.setup import LookSetup, look_plan, setup_looks
from rdpjax.estimator.grid import CELLS_PER_BANDWIDTH, KERNEL_RADIUS
from rdpjax.estimator.inputs import plan_options
from rdpjax.estimator.planner import DrawPlan, Evidence, PilotScale, plan_draws
from rdpjax.stream.options import StreamOptions
from rdpjax.stream.pilot import fix_settings

OPTIONS = rdpjax.BoundOptions(transform=None)
DEFAULTS = OPTIONS.defaults


def _pilot(seed: int = 0, m: int = 4_096, d: int = 1):
    rng = np.random.default_rng(seed)
    return rng.normal(1.0, 2.0, (m, d)), rng.normal(0.0, 2.0, (m, d))


def _span(p, q, margin=0.5):
    lo, hi = np.minimum(p.min(0), q.min(0)), np.maximum(p.max(0), q.max(0))
    return lo - margin * (hi - lo), hi + margin * (hi - lo)


def _robust_scale(x):
    """min(sd, IQR / 1.349) per axis of the strided subsample the defaults document (numpy)."""
    x = x[:: -(-len(x) // DEFAULTS.scale_points)]
    q75, q25 = np.percentile(x, [75, 25], axis=0)
    return np.minimum(x.std(0, ddof=1), (q75 - q25) / 1.349)


def test_the_settings_of_a_fixed_n_follow_the_documented_rates():
    """h = scale · factor · n^(−exponent) · taper(n), τ from the floor rule, β = 1/τ (d = 1)."""
    p, q = _pilot()
    n = 200_000
    drawn = plan_draws(Evidence(False, _span(p, q), PilotScale(p, q)), (n,), OPTIONS)
    scale = 0.5 * (_robust_scale(p) + _robust_scale(q))
    rate = DEFAULTS.bandwidth_factor * n ** (-DEFAULTS.bandwidth_exponent(1)) * DEFAULTS.taper(n)
    np.testing.assert_allclose(np.asarray(drawn.bandwidth), scale * rate, rtol=1e-12)
    tau = DEFAULTS.floor_factor * n ** (-DEFAULTS.floor_exponent) / scale[0]
    np.testing.assert_allclose(float(drawn.floor), tau, rtol=1e-12)
    assert float(drawn.beta) == pytest.approx(1.0 / float(drawn.floor), rel=1e-12)


@pytest.mark.parametrize("d", [1, 2])
def test_a_fixed_n_grid_covers_the_span_with_a_kernel_margin_and_fine_cells(d):
    p, q = _pilot(1, d=d)
    lo, hi = _span(p, q)
    drawn = plan_draws(Evidence(False, (lo, hi), PilotScale(p, q)), (10**6,), OPTIONS)
    low, spacing, h = drawn.low, drawn.spacing, np.asarray(drawn.bandwidth)
    shape, pad = np.asarray(drawn.layout.shape), np.asarray(drawn.pad)
    np.testing.assert_allclose(low + pad * spacing, lo, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(low + (shape - 1 - pad) * spacing, hi, rtol=1e-12)
    assert np.all(pad * spacing >= KERNEL_RADIUS * h * (1 - 1e-12))
    if d == 1:  # 2-D grids are capped in size (MAX_GRID_SIZE): coarser cells there
        assert np.all(spacing <= h / CELLS_PER_BANDWIDTH * 1.01)  # "about 16 a bandwidth"
    assert np.all(np.asarray(drawn.half_width) <= pad)


def test_one_grid_for_every_look_holds_the_widest_kernel_and_the_finest_cells():
    p, q = _pilot(2)
    sizes = (1_000, 4_000, 16_000, 64_000)
    lo, hi = _span(p, q)
    drawn = plan_draws(Evidence(False, (lo, hi), PilotScale(p, q)), sizes, OPTIONS, looks=True)
    h = np.asarray(drawn.bandwidths)
    assert h.shape == (4, 1) and np.all(np.diff(h[:, 0]) < 0)  # narrower as n grows
    spacing, pad, shape = drawn.spacing, drawn.pad[0], drawn.layout.shape[0]
    assert pad * spacing[0] >= KERNEL_RADIUS * h[0, 0] * (1 - 1e-12)  # the first look's kernel
    assert spacing[0] <= h[-1, 0] / CELLS_PER_BANDWIDTH * (1 + 1e-12)  # the last look's cells
    interior_low = drawn.low[0] + pad * spacing[0]
    interior_high = drawn.low[0] + (shape - 1 - pad) * spacing[0]
    assert interior_low <= lo[0] and interior_high >= hi[0]
    assert drawn.half_width == drawn.pad
    with pytest.raises(ValueError, match="4 looks"):
        _ = drawn.bandwidth


def test_a_look_of_a_looks_plan_has_the_settings_of_a_fixed_n_plan_at_its_size():
    """Two code paths (one size as a constant; the sizes as one traced array) agree."""
    p, q = _pilot(3, d=2)
    sizes = (2_000, 20_000, 200_000)
    evidence = Evidence(False, _span(p, q), PilotScale(p, q))
    with rdpjax.float64():
        looks = plan_draws(evidence, sizes, OPTIONS, looks=True)
        common = plan_options(
            [2.0], alpha=0.05, floor=None, beta=None, discrete=False, both_directions=False,
            variance="autodiff", second_order=True, defaults=DEFAULTS,
        )  # fmt: skip
        for k, n in enumerate(sizes):
            one = plan_draws(evidence, (n,), OPTIONS)
            alone = looks.look(k, common)  # look k's plan alone, with its BoundPlan
            assert alone.sizes == (n,) and alone.plan.half_width == looks.pad
            for a, b, c in zip(looks.settings(k), one.settings(), alone.settings(), strict=True):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13)
                np.testing.assert_array_equal(np.asarray(a), np.asarray(c))


def test_the_discrete_floor_follows_its_rule_at_every_look():
    sizes = (100, 10_000, 10**6)
    drawn = plan_draws(Evidence(True, support=(-2, 7)), sizes, OPTIONS, looks=True)
    for k, n in enumerate(sizes):
        rate = DEFAULTS.discrete_floor_factor * n ** (-DEFAULTS.discrete_floor_exponent)
        tau = max(rate, DEFAULTS.discrete_floor_counts / n)
        assert float(drawn.floors[k]) == pytest.approx(tau, rel=1e-12)
        assert float(drawn.betas[k]) == pytest.approx(1 / tau, rel=1e-12)
    assert drawn.layout.shape == (7,) and drawn.low.tolist() == [-2] and drawn.grid is None
    given = plan_draws(Evidence(True, support=(0, 3)), (50,), OPTIONS, floor=0.01, beta=7.0)
    assert float(given.floor) == 0.01 and float(given.beta) == 7.0


def test_the_stream_and_memory_routes_plan_through_the_one_planner():
    """fix_settings (a stream's pilot) is the planner on the widened pilot range."""
    p, q = _pilot(4)
    stream = StreamOptions(margin=0.25)
    with rdpjax.float64():
        fixed = fix_settings(
            lambda: (p, q), [2.0, 5.0], kind=(False, 1), sizes=(30_000, 50_000), alpha=0.05,
            both_directions=False, options=OPTIONS, stream=stream,
        )  # fmt: skip
        direct = plan_draws(
            Evidence(False, _span(p, q, 0.25), PilotScale(p, q)), (30_000,), OPTIONS
        )
    assert isinstance(fixed, DrawPlan) and fixed.plan is not None
    for a, b in zip(fixed.settings(), direct.settings(), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(fixed.low, direct.low)
    assert fixed.plan.shape == direct.layout.shape and fixed.plan.pad == direct.pad
    rng = np.random.default_rng(5)
    x, y = rng.normal(1, 1, 20_000), rng.normal(0, 1, 20_000)
    plan, _, _ = rdpjax.plan_bound(x, y, [2.0])
    assert plan.bandwidth is None and plan.shape[0] > 2 * plan.pad[0]


def test_a_sequential_audits_saved_plan_gives_back_the_planners_looks(tmp_path):
    """LookSetup (the checkpoint's JSON) → look_plan: each look's settings and grid, bit for bit."""

    class Pilot:
        discrete = False

        def pilot(self, m):
            rng = np.random.default_rng(6)
            return rng.laplace(0.0, 1.0, m), rng.laplace(1.0, 1.0, m)

    schedule = geometric_schedule(64_000, alpha=0.05)
    setup, m = setup_looks(Pilot(), schedule, LookOptions())
    saved = LookSetup.from_json(json.loads(json.dumps(dataclasses.asdict(setup))))
    p, q = (a.reshape(m, 1) for a in Pilot().pilot(m))
    with rdpjax.float64():
        drawn = plan_draws(
            Evidence(False, _span(p, q), PilotScale(p, q)), schedule.sizes, OPTIONS, looks=True
        )
        common = plan_options(
            [2.0], alpha=0.05, floor=None, beta=None, discrete=False, both_directions=False,
            variance="autodiff", second_order=True, defaults=DEFAULTS,
        )  # fmt: skip
        for k, n in enumerate(schedule.sizes):
            one = look_plan(saved, k, n, common)
            for a, b in zip(one.settings(), drawn.settings(k), strict=True):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            np.testing.assert_array_equal(one.low, drawn.low)
            np.testing.assert_array_equal(one.spacing, drawn.spacing)
            assert one.plan.shape == drawn.layout.shape and one.plan.half_width == drawn.pad


def test_the_planner_refuses_what_it_cannot_plan():
    p, q = _pilot(7)
    evidence = Evidence(False, _span(p, q), PilotScale(p, q))
    with pytest.raises(ValueError, match="fixed n plans one size"):
        plan_draws(evidence, (100, 200), OPTIONS)
    with pytest.raises(ValueError, match="at least 20 outputs a side; got 19"):
        plan_draws(evidence, (19,), OPTIONS)
    flat = np.zeros((64, 1))  # a range given, but a pilot with nothing to scale by
    with pytest.raises(ValueError, match="no spread to scale a bandwidth"):
        plan_draws(
            Evidence(False, (np.zeros(1), np.ones(1)), PilotScale(flat, flat)),
            (100, 1_000),
            OPTIONS,
            looks=True,
        )
