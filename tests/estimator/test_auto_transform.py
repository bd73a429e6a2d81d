"""``transform="auto"`` (lower_bound's default): when the pilot quantile map is applied, and what
the rule leaves alone. The rule's coverage and tightness are
benchmarks/calibration/calibrate_offzoo.py's
(docs/calibration.md); these are its fixed-key checks."""

import jax
import numpy as np
import pytest
from scipy import integrate, special, stats

import rdpjax
from rdpjax.cli import main
from rdpjax.estimator.api import KEPT_MAX_GRID, KEPT_SHARE
from rdpjax.estimator.transform import (
    AUTO_GAUSSIAN_MAX_N,
    AUTO_GAUSSIAN_RANGE,
    AUTO_MAX_DIM,
    AUTO_MIN_N,
    AUTO_TAIL_RANGE,
    auto_transform,
    tail_ratio,
)
from rdpjax.mechanisms import registry

ORDERS = [2.0, 5.0, 7.0]
N = 20_000


def _laws(rng, n):
    """P and Q samples of the laws the rule is about, the shifts of calibrate_offzoo.py."""
    mix = rng.choice(2, n), rng.choice(2, n)
    spike = rng.random(n) < 0.9, rng.random(n) < 0.9
    return {
        "gaussian": (rng.normal(0.5, 1, n), rng.normal(0, 1, n)),
        "laplace": (rng.laplace(0.5, 1, n), rng.laplace(0, 1, n)),
        "uniform": (rng.uniform(0.1, 1.1, n), rng.uniform(0, 1, n)),
        "clipped": (np.clip(rng.normal(0.3, 1, n), -1, 1), np.clip(rng.normal(0, 1, n), -1, 1)),
        "cauchy": (rng.standard_cauchy(n) + 0.5, rng.standard_cauchy(n)),
        "student_t3": (rng.standard_t(3, n) + 0.5, rng.standard_t(3, n)),
        "lognormal": (np.exp(rng.normal(size=n)) + 0.2, np.exp(rng.normal(size=n))),
        "bimodal": (50.0 * mix[0] + rng.normal(0.3, 1, n), 50.0 * mix[1] + rng.normal(0, 1, n)),
        "spike_slab": tuple(
            np.where(s, 0.1, 10.0) * rng.standard_normal(n) + shift
            for s, shift in zip(spike, (0.03, 0.0), strict=True)
        ),
    }


MAPPED = {"gaussian", "laplace", "cauchy", "student_t3", "lognormal", "bimodal", "spike_slab"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "sample, expected",
    [
        (lambda r, n: r.standard_normal(n), 2 * stats.norm.ppf(0.999) / (2 * stats.norm.ppf(0.75))),
        (lambda r, n: r.laplace(size=n), np.log(500) / np.log(2)),
        (lambda r, n: r.uniform(size=n), 0.998 / 0.5),
        (lambda r, n: r.standard_cauchy(n), np.tan(np.pi * 0.499) / np.tan(np.pi * 0.25)),
    ],
)
def test_tail_ratio_matches_the_laws_quantiles(sample, expected):
    # 10⁷ draws: the sd of the ratio is about 0.1% of it (Gaussian) to 0.7% (Cauchy, whose 0.999
    # quantile has a relative sd of sqrt(0.001 / 10⁷) / (f(q) q) ≈ 1%), under the 3% tolerance.
    value = tail_ratio(sample(np.random.default_rng(0), 10**7))
    assert value == pytest.approx(expected, rel=0.03)


def test_tail_ratio_of_an_atom_holding_the_quartiles_is_infinite():
    assert (
        tail_ratio(np.r_[np.linspace(-2, -1, 200), np.zeros(600), np.linspace(1, 2, 200)]) == np.inf
    )


@pytest.mark.slow
def test_the_rule_maps_all_but_bounded_supports():
    rng = np.random.default_rng(1)
    for name, (p, q) in _laws(rng, N).items():
        bound = rdpjax.lower_bound(p, q, ORDERS, discrete=False)
        # The rule's choice; the bound then records the map of the candidate larger at most
        # orders (the outputs' own KDE for the Student-t here).
        assert auto_transform(p, q) == ("quantile" if name in MAPPED else None), name
        if name in MAPPED:  # the larger of the map's and the outputs' own bound, α split
            mapped = rdpjax.lower_bound(
                p, q, ORDERS, transform="quantile", alpha=0.05 * (1 - KEPT_SHARE), discrete=False
            )
            kept = rdpjax.lower_bound(
                p, q, ORDERS, transform=None, alpha=0.05 * KEPT_SHARE, discrete=False
            )
            if np.prod(kept.grid_shape) > KEPT_MAX_GRID:  # heavy tails: the map's bound alone
                np.testing.assert_array_equal(bound.lower, mapped.lower)
                assert bound.n_bounds == len(ORDERS) and float(bound.alpha) == 0.05
            else:
                np.testing.assert_array_equal(bound.lower, np.maximum(mapped.lower, kept.lower))
                assert bound.n_bounds == 2 * len(ORDERS)
        else:
            kept = rdpjax.lower_bound(p, q, ORDERS, discrete=False, transform=None)
            np.testing.assert_array_equal(bound.lower, kept.lower)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, expected",
    [
        ("gaussian", "quantile"),
        ("subsampled-gaussian", "quantile"),
        ("noisy-gd", "quantile"),
        ("truncated-gaussian", None),
        ("laplace", "quantile"),
        ("subsampled-laplace", "quantile"),
    ],
)
def test_zoo_mechanisms_at_the_studies_sizes(name, expected):
    # Pilot tail ratios at 10⁴ a side, reference pairs (50 keys): Gaussian 3.9–5.4, noisy GD
    # 3.9–5.1, truncated Gaussian 1.9–2.2; Laplace 6.3–11.4, subsampled Laplace 6.9–10.7
    # (benchmarks/calibration/calibrate_zoo_map.py measures both transforms on them): only the
    # truncated
    # mechanism's bounded support stays below AUTO_TAIL_RANGE's upper end, 3.
    entry = registry.get(name)
    mech = entry.make()
    x, xp = entry.reference_pair(mech)
    for seed in range(5):
        kp, kq = jax.random.split(jax.random.key(seed))
        p = np.asarray(mech.sample(kp, x, 10_000), np.float64).ravel()
        q = np.asarray(mech.sample(kq, xp, 10_000), np.float64).ravel()
        assert auto_transform(p, q) == expected, (name, seed)


def test_gaussian_tails_are_mapped_up_to_their_size_limit_and_heavier_ones_beyond():
    rng = np.random.default_rng(3)
    big = AUTO_GAUSSIAN_MAX_N + 1
    normal = rng.standard_normal(big)
    assert AUTO_GAUSSIAN_RANGE[0] < tail_ratio(normal) <= AUTO_GAUSSIAN_RANGE[1]
    assert auto_transform(normal[:AUTO_GAUSSIAN_MAX_N], normal[:AUTO_GAUSSIAN_MAX_N]) == "quantile"
    assert auto_transform(normal, normal[::-1]) is None  # one row more: the outputs' own KDE
    laplace = rng.laplace(size=big)
    assert auto_transform(laplace, laplace[::-1]) == "quantile"  # heavier tails: at any size
    uniform = rng.uniform(size=AUTO_MIN_N)  # a bounded support, never: the KDE fits it
    assert auto_transform(uniform, uniform[::-1]) is None


@pytest.mark.slow
def test_what_the_rule_leaves_alone():
    rng = np.random.default_rng(2)
    p, q = rng.standard_cauchy(N) + 0.5, rng.standard_cauchy(N)
    assert auto_transform(p, q) == "quantile"
    small = AUTO_MIN_N - 1
    assert auto_transform(p[:small], q[:small]) is None  # below the measured sizes
    assert auto_transform(np.c_[(p,) * 4], np.c_[(q,) * 4]) is None  # d > 3: not measured
    for given in ({"bandwidth": 0.1}, {"floor": 1e-3}, {"beta": 100.0}, {"grid_size": 4096}):
        assert rdpjax.lower_bound(p, q, 2.0, **given).transform is None, given  # data units
    codes = rng.integers(0, 5, N)
    assert rdpjax.lower_bound(codes, codes[::-1], 2.0).transform is None  # discrete
    atom = np.r_[np.zeros(3 * N // 5), rng.standard_cauchy(2 * N // 5)]
    rng.shuffle(atom)  # 60% of the mass on one value, amid the rest: the quartiles coincide
    assert auto_transform(atom, atom[::-1]) is None
    assert AUTO_TAIL_RANGE[0] < 2.0 / 1.5 < AUTO_TAIL_RANGE[1]  # the clipped Gaussian's ≈ 1.48


@pytest.mark.slow
def test_vector_outputs_are_mapped_when_an_axis_asks_for_it():
    rng = np.random.default_rng(4)
    cauchy, normal, uniform = rng.standard_cauchy(N), rng.standard_normal(N), rng.uniform(size=N)
    assert auto_transform(np.c_[uniform, cauchy], np.c_[uniform, cauchy][::-1]) == "quantile"
    three = np.c_[normal, normal, normal]  # Gaussian tails, 3-D
    assert auto_transform(three, three[::-1]) == "quantile"
    both_bounded = np.c_[uniform, rng.uniform(size=N)]
    assert auto_transform(both_bounded, both_bounded[::-1]) is None  # as in 1-D: the KDE fits
    atom = np.where(rng.uniform(size=N) < 0.6, 0.0, normal)  # one axis: quartiles on one value
    assert auto_transform(np.c_[atom, cauchy], np.c_[atom, cauchy][::-1]) is None
    assert AUTO_MAX_DIM == 3
    # The default applies it, and records it; per-axis bandwidths in the map's units.
    bound = rdpjax.lower_bound(np.c_[cauchy + 0.5, uniform], np.c_[cauchy[::-1], uniform], 2.0)
    assert bound.transform == "quantile"
    assert bound.bandwidth.shape == (2,) and np.all(bound.bandwidth < 0.1)


def _bimodal_exact(lam):
    def logpdf(x, shift):
        return special.logsumexp([stats.norm.logpdf(x, shift), stats.norm.logpdf(x, 50 + shift)])

    def f(x):
        return np.exp(lam * logpdf(x, 0.3) + (1 - lam) * logpdf(x, 0.0)) / 2

    edges = [-np.inf, 0.0, 25.0, 50.0, np.inf]
    total = sum(
        integrate.quad(f, a, b, limit=400, epsrel=1e-11)[0]
        for a, b in zip(edges[:-1], edges[1:], strict=True)
    )
    return np.log(total) / (lam - 1)


def test_the_default_bound_holds_on_two_separated_modes():
    rng = np.random.default_rng(3)
    exact = np.array([_bimodal_exact(lam) for lam in ORDERS])
    lows = []
    for _ in range(8):
        p, q = _laws(rng, N)["bimodal"]
        bound = rdpjax.lower_bound(p, q, ORDERS)
        assert bound.transform == "quantile"
        lows.append(bound.lower)
    lows = np.array(lows)
    assert np.all(lows <= exact) and np.all(lows.mean(axis=0) > 0.2 * exact)


def _leak_exact(shift):
    """D_2 of 0.99·N(0, 1) + 0.01·N(10, 0.1²) against the same with the small part at 10 + shift."""

    def logpdf(x, loc):
        parts = [np.log(0.99) + stats.norm.logpdf(x), np.log(0.01) + stats.norm.logpdf(x, loc, 0.1)]
        return special.logsumexp(parts)

    def f(x):
        return np.exp(2 * logpdf(x, 10.0) - logpdf(x, 10.0 + shift))

    edges = [-np.inf, 5.0, 9.0, 11.0, np.inf]
    total = sum(
        integrate.quad(f, a, b, limit=400, epsrel=1e-11)[0]
        for a, b in zip(edges[:-1], edges[1:], strict=True)
    )
    return np.log(total)


def test_a_low_mass_leak_the_map_smooths_away_is_kept():
    # Issue 47: a 1% component moved by one of its sds. The map gives it 1% of (0, 1), under one
    # bandwidth there, and the mapped bound sees nothing; the outputs' own KDE resolves it, and
    # the default keeps the larger of the two bounds (at 0.9 α and 0.1 α).
    exact = _leak_exact(0.1)
    assert exact == pytest.approx(0.01704, abs=1e-5)  # 0.99 + 0.01 e ≈ 1.0172, log of it
    rng = np.random.default_rng(1)
    n = 10**5

    def draw(loc):
        small = rng.random(n) < 0.01
        return np.where(small, loc + 0.1 * rng.standard_normal(n), rng.standard_normal(n))

    p, q = draw(10.0), draw(10.1)
    bound = rdpjax.lower_bound(p, q, 2.0)
    mapped = rdpjax.lower_bound(p, q, 2.0, transform="quantile", alpha=0.05 * (1 - KEPT_SHARE))
    kept = rdpjax.lower_bound(p, q, 2.0, transform=None, alpha=0.05 * KEPT_SHARE)
    assert float(mapped.lower[0]) < 0.05 * exact  # the map alone: nothing
    assert float(bound.lower[0]) == float(kept.lower[0]) > 0.25 * exact  # 0.36 on this key
    assert bound.transform is None and bound.n_bounds == 2  # the outputs' own KDE won
    assert float(bound.lower[0]) < exact


def test_heavy_tails_skip_the_outputs_own_kde():
    # Cauchy outputs stretch the own KDE's grid to 2^18 points (1–2 s a bound): the map's bound,
    # at 0.9 α, is reported alone (still valid: the α left over is simply unused).
    rng = np.random.default_rng(2)
    p, q = rng.standard_cauchy(10**4) + 0.5, rng.standard_cauchy(10**4)
    kept = rdpjax.plan_bound(p, q, ORDERS, transform=None)[0]
    assert np.prod(kept.shape) > KEPT_MAX_GRID
    bound = rdpjax.lower_bound(p, q, ORDERS)
    mapped = rdpjax.lower_bound(p, q, ORDERS, transform="quantile", alpha=0.05 * (1 - KEPT_SHARE))
    np.testing.assert_array_equal(bound.lower, mapped.lower)
    assert bound.transform == "quantile" and bound.n_bounds == 3 and float(bound.alpha) == 0.05


def test_plan_bound_needs_the_map_fixed():
    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="transform='auto' is lower_bound's"):
        rdpjax.plan_bound(rng.normal(size=2000), rng.normal(size=2000), 2.0, transform="auto")


@pytest.mark.slow
def test_density_curves_follow_the_map_the_bound_applied():
    from rdpjax.auditing.densities import density_curves

    rng = np.random.default_rng(5)
    p, q = rng.standard_cauchy(N) + 0.5, rng.standard_cauchy(N)
    curves = density_curves(p, q, lam=2.0)
    assert curves.bound.transform == "quantile"
    assert len(curves.points) == curves.bound.grid_shape[0]
    assert -1.0 < curves.points.min() and curves.points.max() < 2.0  # (0, 1) and the margins
    kept = density_curves(p, q, lam=2.0, transform=None)
    assert kept.bound.transform is None and np.ptp(kept.points) > 100.0  # Cauchy's range


@pytest.mark.slow
def test_audits_and_the_command_line(tmp_path, capsys):
    def cauchy_sum(rng, database, n):  # a black box with heavy-tailed noise
        return float(np.sum(database)) + rng.standard_cauchy(n)

    x, xp = np.array([1.0, 0.0]), np.array([0.0, 0.0])
    report = rdpjax.audit(jax.random.key(6), cauchy_sum, x, xp, 2.0, n=N, progress=False)
    assert report.bound.transform == "quantile"
    # The reader is told, with what was bounded: in the details (--verbose) and the report file;
    # the plain text says the pilot's size.
    assert f"Rényi bounds on {N - N // 16:,} after a pilot of {N // 16:,}" in str(report)
    for text in (report.describe(verbose=True), report.to_markdown()):
        assert (
            f"pilot quantile map first (docs/methods.md §2.1): bounded on the {N - N // 16:,}"
            in text
        )
    streamed = rdpjax.audit(
        jax.random.key(6), cauchy_sum, x, xp, 2.0, n=N, progress=False, memory_budget=0,
        transform="auto",
    )  # fmt: skip
    assert streamed.bound.transform is None  # binned as drawn: the outputs are kept
    assert "quantile map" not in str(streamed)
    np.save(tmp_path / "p.npy", np.random.default_rng(7).standard_cauchy(N) + 0.5)
    np.save(tmp_path / "q.npy", np.random.default_rng(8).standard_cauchy(N))
    files = [str(tmp_path / "p.npy"), str(tmp_path / "q.npy")]
    assert main(["bound", *files]) == 0
    assert "after the quantile map" in capsys.readouterr().out
    assert main(["bound", *files, "--transform", "none"]) == 0
    assert "after the" not in capsys.readouterr().out
