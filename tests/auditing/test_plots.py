"""rdpjax.auditing.plots: the plotted data are the bound's densities and the results passed in."""

import dataclasses
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.auditing import densities, plots  # noqa: E402
from rdpjax.estimator.divergence import plugin_divergence  # noqa: E402
from rdpjax.mechanisms import Laplace  # noqa: E402

ORDERS = [2.0, 5.0, 7.0]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def gaussian_samples():
    """Outputs of the Gaussian mechanism (b = 5) on pair (21): 1 + 5Z and 5Z, n = 2e4."""
    rng = np.random.default_rng(0)
    return 1.0 + 5.0 * rng.standard_normal(20_000), 5.0 * rng.standard_normal(20_000)


@pytest.fixture(scope="module")
def laplace_reports():
    """Audits of the Laplace mechanism (b = 5, claim ε = 0.2) at two sample sizes."""
    mech = Laplace(5.0)
    x, xp = mech.reference_pair()
    return {
        n: rdpjax.audit(jax.random.key(n), mech, x, xp, ORDERS, n=n, both_directions=False)
        for n in (2_000, 20_000)
    }


def _line(ax, label):
    matches = [line for line in ax.lines if line.get_label() == label]
    assert len(matches) == 1, [line.get_label() for line in ax.lines]
    return matches[0]


def _errorbar(ax, label):
    matches = [c for c in ax.containers if c.get_label() == label]
    assert len(matches) == 1
    data_line, _, (bars,) = matches[0].lines
    segments = bars.get_segments()
    return data_line, np.array([s[0][1] for s in segments]), np.array([s[1][1] for s in segments])


def _plugin(curves, bound):
    """D_λ(p̂, q̂_τ) of the plotted curves with the bound's τ and β, for each order."""
    with rdpjax.float64():
        p_hat, q_hat = jnp.asarray(curves.p_hat), jnp.asarray(curves.q_hat)
        return [
            float(plugin_divergence(p_hat, q_hat, lam, bound.floor, bound.beta, curves.cell_volume))
            for lam in ORDERS
        ]


@pytest.mark.slow
def test_density_curves_are_the_bounds_densities(gaussian_samples):
    p, q = gaussian_samples
    curves = densities.density_curves(p, q, lam=ORDERS)
    bound = rdpjax.lower_bound(p, q, ORDERS)
    assert curves.points.shape == bound.grid_shape
    np.testing.assert_allclose(curves.bound.floor, bound.floor, rtol=0)
    # Both KDEs are densities on the bound's grid (the margin holds the whole kernel).
    for f in (curves.p_hat, curves.q_hat):
        assert np.sum(f) * curves.cell_volume == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(np.diff(curves.points), curves.cell_volume, rtol=1e-9)
    # The plug-in divergence of the curves is the bound's estimate: same grid, h, τ, β.
    np.testing.assert_allclose(_plugin(curves, bound), bound.estimate, rtol=1e-10)


def test_plot_densities_draws_the_curves_and_writes_the_file(gaussian_samples, tmp_path):
    p, q = gaussian_samples
    path = tmp_path / "densities.png"
    ax = plots.plot_densities(p, q, lam=ORDERS, path=path, dpi=60)
    curves = densities.density_curves(p, q, lam=ORDERS)
    tau = float(curves.bound.floor)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ax.get_yscale() == "log"
    p_line, q_line = _line(ax, "p̂ (x)"), _line(ax, "q̂ (x')")
    floored = _line(ax, "q̂_τ (x', floored)")
    np.testing.assert_array_equal(p_line.get_xdata(), curves.points)
    np.testing.assert_array_equal(p_line.get_ydata(), curves.p_hat)
    np.testing.assert_array_equal(q_line.get_ydata(), curves.q_hat)
    np.testing.assert_array_equal(floored.get_ydata(), curves.q_floored)
    assert np.all(floored.get_ydata() >= tau)
    # q̂_τ ≥ q̂ exactly in real arithmetic; log(e^{βq} + e^{βτ})/β may lose an ulp where βq ≫ βτ.
    assert np.all(floored.get_ydata() >= q_line.get_ydata() * (1 - 1e-14))
    # In the tails, where q̂ ≈ 0, the floored density is log(1 + e)/β ≈ 1.31 τ (β = 1/τ).
    assert np.min(floored.get_ydata()) == pytest.approx(np.log1p(np.e) * tau, rel=1e-6)
    np.testing.assert_array_equal(_line(ax, "floor τ").get_ydata(), [tau, tau])


def test_plot_densities_follows_the_options_on_given_axes(gaussian_samples):
    p, q = gaussian_samples
    fig, (left, right) = plt.subplots(1, 2)
    options = dict(bandwidth=0.8, floor=2e-3, beta=5e3, grid_size=1024)
    ax = plots.plot_densities(p, q, ax=right, log=False, **options)
    assert ax is right and right.get_yscale() == "linear" and not left.lines
    floored = _line(ax, "q̂_τ (x', floored)").get_ydata()
    assert floored.shape == (1024,) and np.all(floored >= 2e-3)
    np.testing.assert_array_equal(_line(ax, "floor τ").get_ydata(), [2e-3, 2e-3])
    assert "h = 0.8," in ax.get_title() and "β = 5e+03" in ax.get_title()
    # The q̂ line is a density on the 1024-point grid.
    q_line = _line(ax, "q̂ (x')")
    spacing = np.diff(q_line.get_xdata())[0]
    assert np.sum(q_line.get_ydata()) * spacing == pytest.approx(1.0, abs=1e-12)


def test_discrete_densities_are_the_bounds_frequencies(tmp_path):
    """Discrete samples: relative frequencies (eq. (9)) on the pooled support, q̂ floored."""
    rng = np.random.default_rng(1)
    p = rng.choice([-2, 0, 3, 7], size=5000, p=[0.1, 0.2, 0.3, 0.4])
    q = rng.choice([-2, 0, 3, 7], size=4000, p=[0.4, 0.3, 0.2, 0.1])
    curves = densities.density_curves(p, q, lam=ORDERS)
    bound = rdpjax.lower_bound(p, q, ORDERS)
    assert bound.discrete and curves.cell_volume == 1.0
    # Integer outputs are coded on their whole range (mixed radix): unseen values count 0.
    support = np.arange(-2, 8)
    np.testing.assert_array_equal(curves.points, support)
    np.testing.assert_allclose(curves.p_hat, [np.mean(p == v) for v in support])
    np.testing.assert_allclose(curves.q_hat, [np.mean(q == v) for v in support])
    assert np.all(curves.q_floored >= float(bound.floor))
    np.testing.assert_allclose(_plugin(curves, bound), bound.estimate, rtol=1e-10)
    ax = plots.plot_densities(p, q, lam=ORDERS, path=tmp_path / "pmf.png", dpi=60)
    np.testing.assert_array_equal(_line(ax, "p̂ (x)").get_ydata(), curves.p_hat)
    np.testing.assert_array_equal(_line(ax, "q̂_τ (x', floored)").get_ydata(), curves.q_floored)
    assert ax.get_ylabel() == "probability" and "relative frequencies" in ax.get_title()


def test_density_curves_reject_multivariate_continuous_samples():
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match="1-D"):
        densities.density_curves(rng.normal(size=(500, 2)), rng.normal(size=(500, 2)))


def test_plot_bound_vs_n_plots_the_results(laplace_reports, tmp_path):
    path = tmp_path / "vs_n.png"
    # Unsorted pairs: the plot sorts by n.
    ax = plots.plot_bound_vs_n(list(reversed(laplace_reports.items())), path=path, dpi=60)
    assert path.stat().st_size > 0 and ax.get_xscale() == "log"
    ns = sorted(laplace_reports)
    reports = [laplace_reports[n] for n in ns]
    exact = Laplace(5.0).divergence  # independent of the reports
    x, xp = Laplace(5.0).reference_pair()
    for i, lam in enumerate(ORDERS):
        lower = _line(ax, f"lower, λ={lam:g}")
        np.testing.assert_array_equal(lower.get_xdata(), ns)
        np.testing.assert_array_equal(lower.get_ydata(), [r.lower[i] for r in reports])
        truth = _line(ax, f"exact, λ={lam:g}").get_ydata()
        np.testing.assert_allclose(truth, exact(lam, x, xp), rtol=1e-12)
        est, low, high = _errorbar(ax, f"estimate ± s.e., λ={lam:g}")
        np.testing.assert_array_equal(est.get_ydata(), [r.estimate[i] for r in reports])
        se = np.array([r.std_error[i] for r in reports])
        np.testing.assert_allclose(high - low, 2 * se, rtol=1e-12)


def test_plot_bound_vs_n_accepts_a_dict_of_bounds_with_exact(laplace_reports):
    bounds = {n: r.bound for n, r in laplace_reports.items()}
    ax = plots.plot_bound_vs_n(bounds, exact=[0.1, 0.2, 0.3])
    np.testing.assert_array_equal(_line(ax, "exact, λ=5").get_ydata(), [0.2, 0.2])
    np.testing.assert_array_equal(
        _line(ax, "lower, λ=7").get_ydata(), [bounds[n].lower[2] for n in sorted(bounds)]
    )
    no_exact = plots.plot_bound_vs_n(bounds)
    assert not [line for line in no_exact.lines if line.get_label().startswith("exact")]


def test_plot_bound_vs_n_rejects_bad_results(laplace_reports):
    report = laplace_reports[2_000]
    with pytest.raises(ValueError, match="non-empty"):
        plots.plot_bound_vs_n([])
    with pytest.raises(ValueError, match="Bound or rdpjax.AuditReport"):
        plots.plot_bound_vs_n([(10, object())])
    other = dataclasses.replace(report.bound, lam=np.array([2.0, 3.0, 4.0]))
    with pytest.raises(ValueError, match="same orders"):
        plots.plot_bound_vs_n([(2_000, report), (100, other)])


def test_plot_bound_vs_lambda_plots_exact_and_claim(laplace_reports, tmp_path):
    report = laplace_reports[20_000]
    path = tmp_path / "vs_lambda.png"
    ax = plots.plot_bound_vs_lambda(report, path=path, dpi=60)
    assert path.stat().st_size > 0
    mech = Laplace(5.0)
    x, xp = mech.reference_pair()
    exact = _line(ax, "exact")
    np.testing.assert_array_equal(exact.get_xdata(), ORDERS)
    np.testing.assert_allclose(exact.get_ydata(), [mech.divergence(lam, x, xp) for lam in ORDERS])
    np.testing.assert_array_equal(_line(ax, "lower").get_ydata(), report.lower)
    # Laplace's claim ε = 0.2 as an RDP curve: binary randomized response at 0.2, typed here.
    p = np.exp(0.2) / (1 + np.exp(0.2))
    rr = [np.log(p**lam * (1 - p) ** (1 - lam) + (1 - p) ** lam * p ** (1 - lam)) / (lam - 1)
          for lam in ORDERS]  # fmt: skip
    np.testing.assert_allclose(_line(ax, "claim").get_ydata(), rr, rtol=1e-12)
    est, _, _ = _errorbar(ax, "estimate ± s.e.")
    np.testing.assert_array_equal(est.get_ydata(), report.estimate)
    assert ax.get_title() == report.mechanism


def test_plot_bound_vs_lambda_of_a_bound_without_truth(laplace_reports):
    ax = plots.plot_bound_vs_lambda(laplace_reports[2_000].bound)
    labels = {line.get_label() for line in ax.lines}
    assert "lower" in labels and "exact" not in labels and not labels & {"claimed ε", "claim"}
    ax = plots.plot_bound_vs_lambda(laplace_reports[2_000].bound, claimed_epsilon=0.5)
    np.testing.assert_array_equal(_line(ax, "claimed ε").get_ydata(), [0.5, 0.5])


def test_missing_matplotlib_is_reported_clearly(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plots.plot_bound_vs_lambda(None)
    with pytest.raises(ImportError, match="rdpjax.auditing.plots needs matplotlib"):
        plots.plot_densities([0.0, 1.0], [0.0, 1.0])


def test_densities_in_the_quantile_maps_units_say_so_on_the_x_axis():
    """Laplace outputs (tail ratio 9 > 6): "auto" applies the pilot quantile map, whose values lie
    in (0, 1); the axis says so. Gaussian outputs (ratio 4.6) are plotted as they are."""
    rng = np.random.default_rng(1)
    p, q = 1.0 + rng.laplace(size=5_000), rng.laplace(size=5_000)
    curves = densities.density_curves(p, q, lam=ORDERS)
    assert curves.bound.transform == "quantile"
    # The grid spans (0, 1) and the kernel's margin, not the outputs' range (about −8 to 9).
    assert np.ptp(np.concatenate([p, q])) > 10
    assert -0.5 < curves.points.min() < 0.0 and 1.0 < curves.points.max() < 1.5
    ax = plots.plot_density_curves(curves)
    assert ax.get_xlabel() == "output, mapped to (0, 1) by the pilot quantile map"
    plain = densities.density_curves(p, q, lam=ORDERS, transform=None)
    assert plots.plot_density_curves(plain).get_xlabel() == "output"
