"""The pilot quantile map (``lower_bound(..., transform="quantile")``): the map, the split, the
bound's validity on laws off the zoo (small fixed-key versions of
benchmarks/calibration/calibrate_offzoo.py),
and its errors."""

import jax
import numpy as np
import pytest
from scipy import integrate, stats

import rdpjax
from rdpjax.cli import main
from rdpjax.estimator.transform import PILOT_MAX, fit_quantile_map, pilot_split

ORDERS = [2.0, 5.0, 7.0]


def _renyi_by_quadrature(logpdf_p, logpdf_q, lam, points=()):
    def f(x):
        return np.exp(lam * logpdf_p(x) + (1 - lam) * logpdf_q(x))

    edges = [-np.inf, *sorted(points), np.inf]
    total = sum(
        integrate.quad(f, a, b, limit=400, epsrel=1e-11)[0]
        for a, b in zip(edges[:-1], edges[1:], strict=True)
    )
    return np.log(total) / (lam - 1)


@pytest.mark.parametrize("n", [10, 1000, 100_000])
def test_pilot_split_is_a_partition_by_fixed_indices(n):
    x = np.arange(n)
    pilot, rest = pilot_split(x)
    assert len(pilot) + len(rest) == n and not set(pilot) & set(rest)
    assert np.array_equal(np.sort(np.r_[pilot, rest]), x)
    assert len(pilot) <= max(PILOT_MAX, -(-n // 16)) and len(pilot) >= min(n, PILOT_MAX) // 17


def test_map_is_increasing_continuous_and_in_the_unit_interval():
    rng = np.random.default_rng(0)
    qmap = fit_quantile_map(rng.standard_cauchy(2000))
    x = np.sort(np.r_[np.linspace(-1e4, 1e4, 20_001), qmap.knots[0]])
    u = qmap(x)[:, 0]
    assert np.all(np.diff(u) >= 0) and np.all((u >= 0) & (u <= 1))
    inside = (x > -50) & (x < 50)  # strictly increasing where float64 resolves it
    assert np.all(np.diff(u[inside]) > 0)
    for xk in (qmap.knots[0][0], qmap.knots[0][-1]):  # the tails meet the interpolation
        left, right = qmap(np.array([xk - 1e-9, xk + 1e-9]))[:, 0]
        assert abs(right - left) < 1e-8


@pytest.mark.parametrize(
    "pilot",
    [
        np.random.default_rng(10).standard_cauchy(2000),  # 64 knots
        np.random.default_rng(11).laplace(size=300),  # 18 knots
        np.r_[np.zeros(200), np.linspace(1, 2, 200)],  # an atom: 13 knots after merging ties
    ],
)
def test_the_compiled_map_is_numpys_interpolation_with_exponential_tails(pilot):
    # The module docstring's map written with np.interp, against QuantileMap's branchless search
    # over padded knots, on more values than one compiled chunk holds (2^17).
    qmap = fit_quantile_map(pilot)
    xk, uk = qmap.knots[0], qmap.levels[0]
    rng = np.random.default_rng(12)
    x = np.r_[rng.standard_cauchy(2**17 + 5) * 3, xk, xk[0] - 1.0, xk[-1] + 1.0, -1e300, 1e300]
    lo_slope = (uk[1] - uk[0]) / (xk[1] - xk[0])
    hi_slope = (uk[-1] - uk[-2]) / (xk[-1] - xk[-2])
    expected = np.interp(x, xk, uk)
    below, above = x < xk[0], x > xk[-1]
    expected[below] = uk[0] * np.exp(lo_slope * (x[below] - xk[0]) / uk[0])
    expected[above] = 1 - (1 - uk[-1]) * np.exp(-hi_slope * (x[above] - xk[-1]) / (1 - uk[-1]))
    got = qmap(x)[:, 0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=4e-16)
    np.testing.assert_array_equal(qmap(xk)[:, 0], uk)  # every knot onto its level


def test_ties_in_the_pilot_merge_into_one_knot():
    pilot = np.r_[np.zeros(500), np.linspace(1, 2, 500)]  # an atom at 0 holding half the mass
    qmap = fit_quantile_map(pilot)
    assert np.all(np.diff(qmap.knots[0]) > 0) and qmap.knots[0][0] == 0.0


def test_affine_maps_of_the_data_leave_the_bound_unchanged():
    # Quantiles, hence the map, are affine-equivariant: the transformed data are the same.
    rng = np.random.default_rng(1)
    p, q = rng.laplace(0.3, 1.0, 20_000), rng.laplace(0.0, 1.0, 20_000)
    base = rdpjax.lower_bound(p, q, ORDERS, transform="quantile")
    moved = rdpjax.lower_bound(3.0 * p - 7.0, 3.0 * q - 7.0, ORDERS, transform="quantile")
    np.testing.assert_allclose(moved.lower, base.lower, rtol=1e-9)
    assert base.transform == "quantile" and int(base.n_p) == 20_000 - 20_000 // 16


@pytest.mark.slow
def test_bimodal_law_valid_and_tighter_than_without():
    """0.5·N(0, 1) + 0.5·N(50, 1) shifted by 0.3: the pooled scale makes one bandwidth far too
    wide for each mode; after the map one bandwidth fits both. 20 fixed-key replications at
    n = 10⁴ (the study: R = 200, coverage 1.000, lower/exact 0.54 / 0.48 / 0.43 against
    0.06 / 0.06 / 0.05 without the map)."""

    def logpdf(x):
        return np.logaddexp(stats.norm.logpdf(x), stats.norm.logpdf(x, 50.0)) + np.log(0.5)

    exact = np.array(
        [
            _renyi_by_quadrature(lambda x: logpdf(x - 0.3), logpdf, lam, (0.0, 50.0))
            for lam in ORDERS
        ]
    )
    rng = np.random.default_rng(2)
    lows, plain = [], []

    def draw(n):
        return np.where(rng.random(n) < 0.5, 0.0, 50.0) + rng.standard_normal(n)

    for _ in range(20):
        p, q = draw(10_000) + 0.3, draw(10_000)
        lows.append(rdpjax.lower_bound(p, q, ORDERS, transform="quantile").lower)
        plain.append(rdpjax.lower_bound(p, q, ORDERS, transform=None).lower)
    lows, plain = np.array(lows), np.array(plain)
    assert np.mean(np.all(lows <= exact, axis=1)) >= 0.95
    assert np.all(lows.mean(axis=0) > 3 * plain.mean(axis=0))
    assert np.all(lows.mean(axis=0) > 0.3 * exact)


@pytest.mark.slow
def test_heavy_tail_keeps_a_small_grid_and_a_valid_bound():
    """Cauchy location, γ = 1, shift 0.5: D_2 = log(1 + δ²/2). Without the map the grid spans
    the data's range (2^18 points at n = 10⁵) and the bound falls as n grows."""
    rng = np.random.default_rng(3)
    exact = np.log1p(0.25 / 2)
    lows = []
    for _ in range(10):
        p, q = rng.standard_cauchy(50_000) + 0.5, rng.standard_cauchy(50_000)
        b = rdpjax.lower_bound(p, q, 2.0, transform="quantile")
        assert b.grid_shape[0] <= 8192  # 6,144 (h at its 0.25 taper); unmapped: 2^18
        lows.append(float(b.lower[0]))
    assert max(lows) <= exact and np.mean(lows) > 0.7 * exact


def test_errors():
    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="transform must be one of"):
        rdpjax.lower_bound(rng.normal(size=100), rng.normal(size=100), 2.0, transform="cdf")
    codes = rng.integers(0, 3, 500)
    with pytest.raises(ValueError, match="continuous outputs"):
        rdpjax.lower_bound(codes, codes[::-1], 2.0, transform="quantile")
    spike = np.r_[np.zeros(990), np.linspace(1, 2, 10)]  # the pilot sees one value only
    with pytest.raises(ValueError, match="single value"):
        rdpjax.lower_bound(spike, spike, 2.0, discrete=False, transform="quantile")


def test_command_line(tmp_path, capsys):
    rng = np.random.default_rng(5)
    np.save(tmp_path / "p.npy", rng.standard_cauchy(20_000) + 0.5)
    np.save(tmp_path / "q.npy", rng.standard_cauchy(20_000))
    code = main(
        ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--transform", "quantile"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "after the quantile map" in out


@pytest.mark.slow
def test_audit_passes_the_transform_and_needs_the_draws_in_memory(tmp_path, capsys):
    from rdpjax.mechanisms import Laplace

    mech = Laplace(1.0)
    x, xp = mech.reference_pair()
    key = jax.random.key(6)
    report = rdpjax.audit(key, mech, x, xp, [2.0, 5.0], n=40_000, transform="quantile")
    assert report.bound.transform == "quantile" and np.all(report.lower <= report.exact)
    with pytest.raises(ValueError, match="needs the draws in memory"):
        rdpjax.audit(key, mech, x, xp, 2.0, n=40_000, transform="quantile", memory_budget=0)
    code = main(["audit", "laplace", "--n", "2e4", "--transform", "quantile", "--quiet"])
    assert code in (0, 1) and capsys.readouterr().out.strip()


def test_command_line_mistakes_end_in_one_line_and_exit_2(tmp_path, capsys):
    codes = np.random.default_rng(7).integers(0, 3, 500)
    np.save(tmp_path / "p.npy", codes)
    np.save(tmp_path / "q.npy", codes[::-1])
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--transform", "quantile"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "continuous outputs" in err[0]
    assert main(["audit", "laplace", "--n", "60", "--project", "learn", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "n ≥ 100" in err[0]


@pytest.mark.slow
@pytest.mark.parametrize("n", [1_000, 2_000, 20_000, 200_000])
def test_bandwidth_in_the_maps_units_follows_the_tapered_rule(n):
    # docs/methods.md §2.1: h = 10^(1/4)·s·m^(−1/3)·clip((m/1000)^(−0.35), 0.25, 1) on the m
    # mapped rows, against s·m^(−1/4) for the same mapped rows bounded as they are (the same
    # pooled scale s): a ratio (m/1000)^(−1/12)·clip((m/1000)^(−0.35), 0.25, 1).
    from rdpjax.estimator.transform import quantile_transform

    rng = np.random.default_rng(8)
    p, q = rng.standard_cauchy(n) + 0.5, rng.standard_cauchy(n)
    mapped = rdpjax.lower_bound(p, q, 2.0, transform="quantile")
    tp, tq, _ = quantile_transform(p[:, None], q[:, None])
    plain = rdpjax.lower_bound(tp, tq, 2.0, transform=None)
    m = min(len(tp), len(tq))
    taper = min(1.0, max(0.25, (m / 1000) ** -0.35))
    ratio = float(mapped.bandwidth[0] / plain.bandwidth[0])
    assert ratio == pytest.approx((m / 1000) ** (-1 / 12) * taper, rel=1e-9)


@pytest.mark.parametrize("n", [10, 17, 1001, 4097, 65537])
def test_pilot_split_is_every_stride_th_row_and_the_rest_in_order(n):
    """The pilot rows and the rest, as a boolean mask over the rows would give them."""
    from rdpjax.estimator.transform import pilot_stride

    x = np.random.default_rng(n).normal(size=(n, 2))
    keep = np.ones(n, bool)
    keep[:: pilot_stride(n)] = False
    pilot, rest = pilot_split(x)
    np.testing.assert_array_equal(pilot, x[~keep])
    np.testing.assert_array_equal(rest, x[keep])
    np.testing.assert_array_equal(pilot_split(x[:, 0])[1], x[keep, 0])


def test_a_key_makes_the_bound_forget_the_rows_order():
    """With ``key=`` the rows are sorted and then permuted by the key, so a sampler that sorted
    its batch (or reversed it, or wrote a discrete law by np.repeat) gives the very same bound as
    the batch in the order drawn (issue 51); without a key a sorted sample is read as given, and
    a warning says that the map's pilot is then a fixed set of ranks."""
    rng = np.random.default_rng(11)
    p, q = 1.0 + rng.laplace(size=6000), rng.laplace(size=6000)  # mapped: Laplace tails
    key = jax.random.key(5)
    drawn = rdpjax.lower_bound(p, q, [2, 5], key=key)
    for reorder in (np.sort, lambda x: np.sort(x)[::-1]):
        again = rdpjax.lower_bound(reorder(p), reorder(q), [2, 5], key=key)
        np.testing.assert_array_equal(again.lower, drawn.lower)
    other = rdpjax.lower_bound(p, q, [2, 5], key=jax.random.key(6))
    assert not np.array_equal(other.lower, drawn.lower)  # the order is the key's
    with pytest.warns(UserWarning, match="p_samples is sorted"):
        rdpjax.lower_bound(np.sort(p), q, [2, 5])
