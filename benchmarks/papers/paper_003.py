"""Paper 003 (Duchi, Jordan, Wainwright, arXiv:1305.6000): measured rates and privacy audits.

Rates. Mean squared error of the locally private estimators of :mod:`rdpjax.ldp`, with R
replications per point in one ``vmap``, data privatized by the zoo's channels
(:func:`rdpjax.ldp.privatize`):

* multinomial (d = 10): error vs n (theory −1) and vs α (theory −2, Theorem 1), for 003's bitwise
  randomized response, the Laplace one-hot channel and Warner's k-ary randomized response, each
  projected onto Δ_d, beside the non-private relative frequencies (−1). Only for the k-ary
  response, the α-row is fitted on its own small-α grid (``kary_alphas``, n with nα²/d² ≥ 10):
  its risk ∝ (1 + d/(e^α − 1))² is ∝ α⁻² only for α ≪ 1. Its fit on the grid of the other rows
  (about −2.4) is printed beside it as a reference row;
* the effective sample size n_eff = n · MSE(non-private) / MSE(private) over a grid of (d, α),
  compared with Theorem 1's nα²/d;
* densities on [0, 1]: the private histogram (Proposition 2, theory −1/2 in nα²) and the
  orthogonal-series estimator (22) (Proposition 3, −2β/(2β+2) in nα²) for β = 1 and 2, on
  polynomial densities whose Fourier coefficients decay like m^(−2) and m^(−3); the non-private
  histogram and series estimators as references (−2/3 and −2β/(2β+1) in n).

Slopes are least-squares fits of log error on log n (or log α, log nα²); their standard errors
propagate the replication standard errors of each point as if the points were independent. They
are not: each sweep uses common random numbers (one key, so nested samples along n and the same
draws along α), which keeps every point unbiased and makes the slopes less noisy than that
standard error says. Beside each fitted slope: the paper's exponent and the slope of the exact
risk of the unprojected estimator on the same grid (:func:`rdpjax.ldp.multinomial_risk`,
:func:`rdpjax.ldp.series_risk`, :func:`rdpjax.ldp.histogram_risk`).

Privacy audits. Each channel at α = 1 audited with :func:`rdpjax.auditing.audit` on a worst-case
pair of inputs: relative frequencies for discrete outputs, the Laplace histogram through the two
coordinates that differ (``project=``); the literal even-k orthogonal-series sampler must be
caught (lower bound above α), the tie-split one must not.

    python benchmarks/papers/paper_003.py --quick            # ≈ 7 CPU-minutes (2 cores)
    python benchmarks/papers/paper_003.py                    # the full grid (R = 200; not yet run)
    python benchmarks/papers/paper_003.py --quick --audits   # only the privacy audits

Outputs: ``benchmarks/results/papers/paper_003.{json,md}`` and ``paper_003_*.png`` (``--audits``:
``paper_003_audits.{json,md}``); ``--out PREFIX`` changes the prefix.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import rdpjax.ldp as ldp
from rdpjax.auditing import audit
from rdpjax.mechanisms import (
    KaryRandomizedResponse,
    LaplaceHistogram,
    OneHotRandomizedResponse,
    OrthogonalSeries,
)
from rdpjax.mechanisms.series import trigonometric_basis

RESULTS = Path(__file__).resolve().parents[1] / "results" / "papers"
TOLERANCE = 0.15  # the acceptance band for |measured − theory| slopes


# --------------------------------------------------------------------------------------------
# Test densities with closed forms.


@dataclasses.dataclass(frozen=True)
class PolynomialDensity:
    """``f = 1 + c√2 Σ_{m≥1} m^{−s} cos(2πmx)`` (s = 2) or ``sin(2πmx)`` (s = 3) on [0, 1].

    Bernoulli-polynomial sums make f a polynomial: ``Σ cos(2πmx)/m² = π² B_2(x)`` and
    ``Σ sin(2πmx)/m³ = (2π³/3) B_3(x)``, so the density, its CDF (for inverse-CDF sampling), its
    bin masses and ``∫f² = 1 + c² ζ(2s)`` are exact, and its trigonometric coefficients are
    ``θ_1 = 1``, ``θ_{2m} = c m^{−2}`` (s = 2) or ``θ_{2m+1} = c m^{−3}`` (s = 3). With
    coefficients ~ m^(−s) it lies in the periodic Sobolev ellipsoid of every order β < s − 1/2
    (β = 1 for s = 2, β = 2 for s = 3).
    """

    s: int
    c: float

    @property
    def name(self) -> str:
        return f"f_s{self.s}"

    def _amp(self) -> float:
        return self.c * math.sqrt(2.0) * (math.pi**2 if self.s == 2 else 2.0 * math.pi**3 / 3.0)

    def pdf(self, x):
        b = x**2 - x + 1.0 / 6.0 if self.s == 2 else x**3 - 1.5 * x**2 + 0.5 * x
        return 1.0 + self._amp() * b

    def cdf(self, x):
        if self.s == 2:
            b = x**3 / 3.0 - x**2 / 2.0 + x / 6.0
        else:
            b = x**4 / 4.0 - x**3 / 2.0 + x**2 / 4.0
        return x + self._amp() * b

    @property
    def norm_sq(self) -> float:
        zeta = math.pi**4 / 90.0 if self.s == 2 else math.pi**6 / 945.0
        return 1.0 + self.c**2 * zeta

    def coefficients(self, k: int) -> np.ndarray:
        j = np.arange(1, k + 1)
        m = j // 2
        theta = np.zeros(k)
        theta[0] = 1.0
        on = (j % 2 == 0) if self.s == 2 else ((j % 2 == 1) & (j > 1))
        theta[on] = self.c * m[on] ** (-float(self.s))
        return theta

    def bin_masses(self, k: int) -> np.ndarray:
        edges = np.linspace(0.0, 1.0, k + 1)
        return np.diff(self.cdf(edges))

    def sample(self, key, n: int) -> jax.Array:
        """Inverse CDF by bisection (the CDF is increasing: f > 0), 30 halvings."""
        u = jax.random.uniform(key, (n,))

        def halve(_, bounds):
            lo, hi = bounds
            mid = 0.5 * (lo + hi)
            below = self.cdf(mid) < u
            return jnp.where(below, mid, lo), jnp.where(below, hi, mid)

        lo, hi = jax.lax.fori_loop(0, 30, halve, (jnp.zeros(n), jnp.ones(n)))
        return jnp.clip(0.5 * (lo + hi), 0.0, 1.0)

    def check(self) -> None:
        """Closed forms against quadrature (scipy), once per run."""
        from scipy.integrate import quad

        assert math.isclose(quad(self.pdf, 0, 1)[0], 1.0, rel_tol=1e-9)
        assert min(self.pdf(t) for t in np.linspace(0, 1, 1001)) > 0
        assert math.isclose(quad(lambda t: self.pdf(t) ** 2, 0, 1)[0], self.norm_sq, rel_tol=1e-9)
        basis = lambda t, j: float(trigonometric_basis(t, 7, xp=np)[j])  # noqa: E731
        coef = [
            quad(lambda t, j=j: self.pdf(t) * basis(t, j), 0, 1, limit=200)[0] for j in range(7)
        ]
        np.testing.assert_allclose(coef, self.coefficients(7), atol=1e-9)


F_BETA1 = PolynomialDensity(s=2, c=0.3)
F_BETA2 = PolynomialDensity(s=3, c=0.4)


# --------------------------------------------------------------------------------------------
# Replications.
#
# Every estimator here is the projection of an *unprojected* estimate that is affine in the
# sample mean of the privatized outputs. The data are therefore drawn, privatized and reduced in
# chunks of a fixed size (a ``fori_loop`` whose trip count is traced), and the chunk estimates
# are averaged: with equal chunks this is exactly the estimator on all n outputs, memory stays
# O(reps · chunk · d), and one compilation serves every n. Replications are one ``vmap``.


def summarize(errors) -> dict:
    e = np.asarray(errors, np.float64)
    return {"mse": float(e.mean()), "se": float(e.std(ddof=1) / math.sqrt(e.size))}


def fit_slope(x, mse, se) -> tuple[float, float]:
    """Least squares of log mse on log x; the s.e. propagates se/mse of each point."""
    lx = np.log(np.asarray(x, np.float64))
    w = (lx - lx.mean()) / np.sum((lx - lx.mean()) ** 2)
    slope = float(np.sum(w * np.log(mse)))
    return slope, float(np.sqrt(np.sum((w * np.asarray(se) / np.asarray(mse)) ** 2)))


def _chunked_mean(key, n_chunks, chunk_estimate, shape):
    """Mean over ``n_chunks`` of ``chunk_estimate(key_i)`` (keys folded in by index)."""

    def body(i, total):
        return total + chunk_estimate(jax.random.fold_in(key, i))

    return jax.lax.fori_loop(0, n_chunks, body, jnp.zeros(shape)) / n_chunks


def _round_up(value: float, chunk: int) -> int:
    return int(math.ceil(value / chunk)) * chunk


# --------------------------------------------------------------------------------------------
# Multinomial.

CHANNELS = ("bitwise_rr", "laplace", "kary_rr")
MULTINOMIAL_CHUNK = 1000
# Theorem 1 holds once n ≳ d²/α²; the sweeps that need it take n with nα²/d² ≥ this factor.
REGIME_FACTOR = 10


def multinomial_theta(d: int) -> np.ndarray:
    theta = np.arange(d, 2 * d, dtype=np.float64)  # θ_j ∝ d + j: interior, max/min < 2
    return theta / theta.sum()


@functools.partial(jax.jit, static_argnames=("reps", "chunk"))
def multinomial_errors(key, theta, alpha, n_chunks, *, reps: int, chunk: int):
    """Squared errors ``‖θ̂ − θ‖²`` per replication: projected and unprojected, per channel."""
    d = theta.shape[0]
    log_theta = jnp.log(theta)

    def chunk_estimate(key_):
        kx, k1, k2, k3 = jax.random.split(key_, 4)
        x = jax.random.categorical(kx, log_theta, shape=(chunk,))
        bits = ldp.privatize(k1, OneHotRandomizedResponse(alpha, d), x)
        lap = ldp.privatize(k2, LaplaceHistogram(alpha, d), (x + 0.5) / d)  # bin x
        codes = ldp.privatize(k3, KaryRandomizedResponse(alpha, d), x)
        return jnp.stack(
            [
                ldp.multinomial_bitwise_rr(bits, alpha, project=False),
                ldp.multinomial_laplace(lap, project=False),
                ldp.multinomial_kary_rr(codes, alpha, d, project=False),
                jnp.bincount(x, length=d) / chunk,  # non-private relative frequencies
            ]
        )

    def one(key_):
        unprojected = _chunked_mean(key_, n_chunks, chunk_estimate, (4, d))
        out = {"none": jnp.sum((unprojected[3] - theta) ** 2)}
        for i, name in enumerate(CHANNELS):
            out[name] = jnp.sum((ldp.project_simplex(unprojected[i]) - theta) ** 2)
            out[name + "_unprojected"] = jnp.sum((unprojected[i] - theta) ** 2)
        return out

    return jax.vmap(one)(jax.random.split(key, reps))


def multinomial_point(key, d, alpha, n, reps) -> dict:
    theta = multinomial_theta(d)
    chunk = MULTINOMIAL_CHUNK
    if n % chunk:
        raise ValueError(f"n must be a multiple of {chunk}; got {n}")
    errs = multinomial_errors(
        key, jnp.asarray(theta, jnp.float32), jnp.float32(alpha), n // chunk, reps=reps, chunk=chunk
    )
    point = {"d": d, "alpha": alpha, "n": n, "reps": reps}
    for name, e in errs.items():
        point[name] = summarize(e)
    for name in (*CHANNELS, "none"):
        point[name]["exact_unprojected"] = float(ldp.multinomial_risk(theta, alpha, n, name))
    return point


def run_multinomial(key, cfg) -> dict:
    d = cfg["d"]
    k_n, k_a, k_e = jax.random.split(key, 3)
    # Common random numbers: one key per sweep, so the points share data and uniforms (nested
    # samples along n; the same draws scaled along α). Each point's MSE is still unbiased; the
    # positive correlation makes the slopes far less noisy and the printed s.e. conservative.
    vs_n = [multinomial_point(k_n, d, cfg["alpha"], n, cfg["reps"]) for n in cfg["ns"]]
    vs_alpha = [
        multinomial_point(k_a, d, a, cfg["n_alpha"], cfg["reps_alpha"]) for a in cfg["alphas"]
    ]
    # Warner's k-ary RR has risk ∝ (1 + d/(e^α − 1))², which is ∝ α⁻² only for α ≪ 1
    # (e^α − 1 ≈ α and d/(e^α − 1) ≫ 1); on the grid above (α up to 1) its slope is about −2.4.
    # Its α-row is therefore fitted on a separate small-α grid, with n in Theorem 1's regime
    # n ≳ d²/α² at the smallest α (same factor as the effective-sample-size grid). Its own key
    # (folded from the α-sweep key, which stays unchanged), common random numbers along α.
    n_small = _round_up(
        max(cfg["n_alpha"], REGIME_FACTOR * d**2 / min(cfg["kary_alphas"]) ** 2),
        MULTINOMIAL_CHUNK,
    )
    k_s = jax.random.fold_in(k_a, 1)
    vs_alpha_kary = [
        multinomial_point(k_s, d, a, n_small, cfg["reps_alpha"]) for a in cfg["kary_alphas"]
    ]
    ess = []
    grid = [(dd, a) for dd in cfg["ess_d"] for a in cfg["ess_alpha"]]
    for k, (dd, a) in zip(jax.random.split(k_e, len(grid)), grid, strict=True):
        # Theorem 1's regime n ≳ d²/α²: here nα²/d² ≥ 10. Replications: about ess_budget
        # privatized entries per channel, within [ess_reps_min, ess_reps_max].
        n = _round_up(max(cfg["ess_n"], REGIME_FACTOR * dd**2 / a**2), MULTINOMIAL_CHUNK)
        reps = int(np.clip(cfg["ess_budget"] // (n * dd), cfg["ess_reps_min"], cfg["ess_reps_max"]))
        p = multinomial_point(k, dd, a, n, reps)
        row = {"d": dd, "alpha": a, "n": n, "reps": reps, "alpha2_over_d": a**2 / dd}
        for name in CHANNELS:
            n_eff = n * p["none"]["mse"] / p[name]["mse"]
            exact = n * p["none"]["exact_unprojected"] / p[name]["exact_unprojected"]
            row[name] = {
                "n_eff_over_n": n_eff / n,
                "constant": n_eff / (n * a**2 / dd),  # Theorem 1: ≍ 1
                "exact_unprojected_constant": exact / (n * a**2 / dd),
                "mse": p[name]["mse"],
            }
        row["none_mse"] = p["none"]["mse"]
        ess.append(row)
    return {
        "d": d,
        "theta": multinomial_theta(d).tolist(),
        "vs_n": vs_n,
        "vs_alpha": vs_alpha,
        "vs_alpha_kary_small": vs_alpha_kary,  # only the kary_rr row is fitted on these points
        "effective_sample_size": ess,
    }


# --------------------------------------------------------------------------------------------
# Densities.

DENSITY_CHUNK = 64


def _density_errors(key, alpha, n_chunks_private, n_chunks_plain, *, density, kind, k, reps, chunk):
    """Integrated squared errors per replication with k bins / terms: the private estimator on
    ``n_chunks_private`` chunks and the non-private one on ``n_chunks_plain`` chunks."""
    masses = jnp.asarray(density.bin_masses(k), jnp.float32)
    coef = jnp.asarray(density.coefficients(k), jnp.float32)

    def private_chunk(key_):
        kx, kz = jax.random.split(key_)
        x = density.sample(kx, chunk)
        if kind == "histogram":
            z = ldp.privatize(kz, LaplaceHistogram(alpha, k), x)
            return ldp.histogram_density(z, project=False).heights
        mech = OrthogonalSeries(alpha, k)  # ties="split": α-LDP and unbiased for every k
        return ldp.series_density(mech.values(ldp.privatize(kz, mech, x))).coefficients

    def plain_chunk(key_):
        x = density.sample(key_, chunk)
        if kind == "histogram":
            z = jax.nn.one_hot(jnp.clip(jnp.floor(x * k), 0, k - 1).astype(jnp.int32), k)
            return ldp.histogram_density(z, project=False).heights
        return ldp.series_density(trigonometric_basis(x[:, None], k)).coefficients  # φ(X_i)

    def one(key_):
        k_private, k_plain = jax.random.split(key_)
        private = _chunked_mean(k_private, n_chunks_private, private_chunk, (k,))
        plain = _chunked_mean(k_plain, n_chunks_plain, plain_chunk, (k,))
        if kind == "histogram":
            est = ldp.HistogramDensity(ldp.project_simplex(private, total=k))  # Π_k
            ref = ldp.HistogramDensity(plain)  # already in kΔ_k
            return (
                est.squared_error(masses, density.norm_sq),
                ref.squared_error(masses, density.norm_sq),
            )
        return (
            ldp.SeriesDensity(private).squared_error(coef, density.norm_sq),
            ldp.SeriesDensity(plain).squared_error(coef, density.norm_sq),
        )

    return jax.vmap(one)(jax.random.split(key, reps))


_DENSITY_STATIC = ("density", "kind", "k", "reps", "chunk")
density_errors = jax.jit(_density_errors, static_argnames=_DENSITY_STATIC)
# One compilation per (estimator, k): in the quick grid compilation dominates (≈ 10–20 s of CPU
# per sampler kernel against ≈ 2–3 s without XLA's backend optimizations, which make the kernels
# about 3× slower to run). Same numbers either way.
density_errors_fast_compile = jax.jit(
    _density_errors,
    static_argnames=_DENSITY_STATIC,
    compiler_options={"xla_backend_optimization_level": 0},
)


def density_points(
    key, density, kind, k, reps, *, n_private, alpha, n_plain, fast_compile=False
) -> tuple[dict, dict]:
    chunk = DENSITY_CHUNK
    errors = density_errors_fast_compile if fast_compile else density_errors
    private, plain = errors(
        key,
        jnp.float32(alpha),
        n_private // chunk,
        n_plain // chunk,
        density=density,
        kind=kind,
        k=k,
        reps=reps,
        chunk=chunk,
    )
    p = {"n": n_private, "alpha": alpha, "k": k, "n_alpha2": n_private * alpha**2, "reps": reps}
    q = {"n": n_plain, "k": k, "reps": reps}
    p.update(summarize(private))
    q.update(summarize(plain))
    if kind == "series":
        coef = density.coefficients(k)
        p["exact"] = ldp.series_risk(coef, density.norm_sq, alpha, n_private)
        q["exact"] = ldp.series_risk(coef, density.norm_sq, None, n_plain, pdf=density.pdf)
    else:
        masses = density.bin_masses(k)
        p["exact"] = ldp.histogram_risk(masses, density.norm_sq, alpha, n_private)
        q["exact"] = ldp.histogram_risk(masses, density.norm_sq, None, n_plain)
    return p, q


DENSITY_STUDIES = {
    # name: (density, estimator, β of the rates)
    "histogram": (F_BETA1, "histogram", 1.0),
    "series_beta1": (F_BETA1, "series", 1.0),
    "series_beta2": (F_BETA2, "series", 2.0),
}


def run_densities(key, cfg) -> dict:
    """Private: k = (nα²)^{1/(2β+2)} (Propositions 2–3; β = 1 for the histogram). For each odd k
    of the list, nα² = k^{2β+2} exactly: n = k^{2β+2} rounded up to whole chunks and α ≈ 1 set
    to match (n-sweep), or n fixed and α = √(k^{2β+2}/n) (α-sweep). Non-private reference:
    k = n^{1/(2β+1)} (the histogram: n^{1/3}), n = k^{2β+1} rounded up to whole chunks."""
    out = {}
    chunk = DENSITY_CHUNK
    n_fixed = _round_up(cfg["density_n_alpha"], chunk)
    for key_s, (name, (density, kind, beta)) in zip(
        jax.random.split(key, len(DENSITY_STUDIES)), DENSITY_STUDIES.items(), strict=True
    ):
        private_power, plain_power = 2 * beta + 2, 2 * beta + 1
        vs_n, vs_alpha, plain = [], [], []
        key_n, key_a = jax.random.split(key_s)  # common random numbers along each sweep
        for k in cfg["density_k"][name]:
            target, target_plain = float(k) ** private_power, float(k) ** plain_power
            n = _round_up(target, chunk)
            p, q = density_points(
                key_n,
                density,
                kind,
                k,
                cfg["density_reps"],
                n_private=n,
                alpha=math.sqrt(target / n),
                n_plain=_round_up(target_plain, chunk),
                fast_compile=cfg["fast_compile"],
            )
            vs_n.append(p)
            if target_plain >= chunk:  # else rounding n up to a chunk would break k = n^{1/(2β+1)}
                plain.append(q)
            if target <= n_fixed:  # α ≤ 1
                p, _ = density_points(
                    key_a,
                    density,
                    kind,
                    k,
                    cfg["density_reps"],
                    n_private=n_fixed,
                    alpha=math.sqrt(target / n_fixed),
                    n_plain=chunk,
                    fast_compile=cfg["fast_compile"],
                )
                vs_alpha.append(p)
        out[name] = {
            "density": density.name,
            "beta": beta,
            "vs_n": vs_n,
            "vs_alpha": vs_alpha,
            "nonprivate": plain,
        }
    return out


# --------------------------------------------------------------------------------------------
# Slopes.


def slopes(multinomial: dict, densities: dict) -> list[dict]:
    """Fitted slopes beside the paper's exponents and the slopes of the exact risks."""
    rows = []

    def add(estimator, axis, x, mse, se, theory, exact=None, regime="", reference=False):
        if len(set(x)) < 2:
            return
        slope, slope_se = fit_slope(x, np.asarray(mse), np.asarray(se))
        row = {
            "estimator": estimator,
            "axis": axis,
            "range": [float(min(x)), float(max(x))],
            "regime": regime,
            "reference_only": reference,  # shown for comparison, not an acceptance row
            "measured": slope,
            "se": slope_se,
            "theory": theory,
            "within_tolerance": bool(abs(slope - theory) <= TOLERANCE),
        }
        if exact is not None:  # the exact risk of the unprojected estimator on the same grid
            row["exact_risk_slope"] = fit_slope(x, np.asarray(exact), np.zeros(len(x)))[0]
            row["within_tolerance_of_exact"] = bool(
                abs(slope - row["exact_risk_slope"]) <= TOLERANCE
            )
        rows.append(row)

    def grid(points, axis):
        return "{" + ", ".join(f"{p[axis]:g}" for p in points) + "}"

    def multinomial_row(name, axis, points, theory, regime, suffix="", reference=False):
        label = f"multinomial {name}" + (" (projected)" if name != "none" else " (non-private)")
        add(
            label + suffix,
            axis,
            [p[axis] for p in points],
            [p[name]["mse"] for p in points],
            [p[name]["se"] for p in points],
            theory,
            [p[name]["exact_unprojected"] for p in points],
            regime,
            reference,
        )

    d = multinomial["d"]
    pts = multinomial["vs_n"]
    regime = f"α = {pts[0]['alpha']:g}, d = {d}, n ∈ {grid(pts, 'n')}"
    for name in (*CHANNELS, "none"):
        multinomial_row(name, "n", pts, -1.0, regime)
    pts = multinomial["vs_alpha"]
    regime = f"n = {pts[0]['n']:,}, d = {d}, α ∈ {grid(pts, 'alpha')}"
    for name in ("bitwise_rr", "laplace"):
        multinomial_row(name, "alpha", pts, -2.0, regime)
    # Warner's k-ary RR vs α: fitted on the small-α grid, where its risk ∝ (1 + d/(e^α − 1))²
    # behaves like α⁻² (the regime of the asymptotic statement); the grid of the other rows is
    # kept beside it as a reference row.
    small = multinomial.get("vs_alpha_kary_small", [])
    if small:
        a_max = max(p["alpha"] for p in small)
        multinomial_row(
            "kary_rr",
            "alpha",
            small,
            -2.0,
            f"small α (this row only): n = {small[0]['n']:,} (nα²/d² ≥ {REGIME_FACTOR}), d = {d},"
            f" α ∈ {grid(small, 'alpha')}; d/(e^α−1) ≥ {d / math.expm1(a_max):.0f},"
            f" (e^α−1)/α ≤ {math.expm1(a_max) / a_max:.2f}",
        )
    multinomial_row(
        "kary_rr",
        "alpha",
        pts,
        -2.0,
        f"{regime}: outside the small-α regime ((e^α−1)/α up to"
        f" {math.expm1(max(p['alpha'] for p in pts)) / max(p['alpha'] for p in pts):.2f});"
        " reference only",
        suffix=", original grid",
        reference=bool(small),
    )

    for name, study in densities.items():
        beta, label = study["beta"], f"{name} ({study['density']})"
        theory = -0.5 if name == "histogram" else -2 * beta / (2 * beta + 2)
        power = 2 * beta + 2
        for sweep, axis in (
            ("vs_n", "n alpha^2 (n varies)"),
            ("vs_alpha", "n alpha^2 (alpha varies)"),
        ):
            pts = study[sweep]
            if len(pts) >= 2:
                exact = [p["exact"] for p in pts] if "exact" in pts[0] else None
                x = [p["n_alpha2"] for p in pts]
                fixed = "α ≈ 1" if sweep == "vs_n" else f"n = {pts[0]['n']:,}, α ≤ 1"
                regime = f"{fixed}, k = (nα²)^(1/{power:g}) ∈ {grid(pts, 'k')}"
                add(
                    label,
                    axis,
                    x,
                    [p["mse"] for p in pts],
                    [p["se"] for p in pts],
                    theory,
                    exact,
                    regime,
                )
        pts = study["nonprivate"]
        theory = -2.0 / 3.0 if name == "histogram" else -2 * beta / (2 * beta + 1)
        exact = [p["exact"] for p in pts] if "exact" in pts[0] else None
        add(
            f"{name} non-private ({study['density']})",
            "n",
            [p["n"] for p in pts],
            [p["mse"] for p in pts],
            [p["se"] for p in pts],
            theory,
            exact,
            f"k = n^(1/{power - 1:g}) ∈ {grid(pts, 'k')}",
        )
    return rows


# --------------------------------------------------------------------------------------------
# Privacy audits.


def audit_cases(alpha: float, d: int) -> list[tuple]:
    """(label, mechanism, x, x', project): worst-case pairs of inputs for each channel."""
    cases = [
        ("Warner k-ary RR", KaryRandomizedResponse(alpha, d), 0, 1, None),
        ("bitwise RR (one-hot)", OneHotRandomizedResponse(alpha, d), 0, 1, None),
        # Bins 0 and d−1; only coordinates 0 and d−1 differ in law (the rest are identical
        # Laplace noise), so projecting onto them loses nothing and keeps d = 2 for the KDE.
        (
            "Laplace histogram",
            LaplaceHistogram(alpha, d),
            0.0,
            1.0,
            lambda z, last=d - 1: np.asarray(z)[:, [0, last]],
        ),
    ]
    for k, ties in ((2, "literal"), (2, "split"), (4, "literal"), (4, "split"), (3, "split")):
        mech = OrthogonalSeries(alpha, k, ties)
        x, xp = mech.reference_pair()  # the grid pair with the largest exact D_∞
        cases.append((f"orthogonal series k={k} {ties}", mech, float(x), float(xp), None))
    return cases


def run_audits(key, cfg) -> list[dict]:
    rows = []
    cases = audit_cases(cfg["audit_alpha"], cfg["audit_d"])
    for key_c, (label, mech, x, xp, project) in zip(
        jax.random.split(key, len(cases)), cases, strict=True
    ):
        t0 = time.perf_counter()
        report = audit(key_c, mech, x, xp, cfg["audit_lams"], n=cfg["audit_n"], project=project)
        exact_inf = max(mech.divergence(math.inf, x, xp), mech.divergence(math.inf, xp, x))
        rows.append(
            {
                "mechanism": label,
                "x": x,
                "x_prime": xp,
                "projected": project is not None,
                "claimed_alpha": (
                    None
                    if report.claim is None or report.claim.kind != "pure_dp"
                    else float(report.claim.params["epsilon"])
                ),
                "claim_holds": mech.claim_holds,
                "exact_D_inf": exact_inf,
                "lam": report.lam.tolist(),
                "exact": report.exact.tolist(),
                "estimate": report.estimate.tolist(),
                "lower": report.lower.tolist(),
                "violation": bool(report.refuted_at.any()),
                "verdict": report.verdict(),
                "seconds": time.perf_counter() - t0,
            }
        )
        print(
            f"  audit {label}: max lower {max(report.lower):.4f} ({report.verdict()})", flush=True
        )
    return rows


# --------------------------------------------------------------------------------------------
# Output.


def markdown(result: dict) -> str:
    lines = [f"# Paper 003: measured rates and privacy audits ({result['mode']})", ""]
    lines += [f"Reproduce: `{result['command']}`", ""]
    if "slopes" in result:
        lines += [
            "## Slopes vs theory",
            "",
            "Exact-risk slope: the slope, on the same grid, of the exact risk of the unprojected"
            " estimator (for the private histogram an upper bound), printed beside the measured"
            " one. Regime: the grid and fixed parameters of the sweep. The last two columns say"
            f" whether the measured slope is within ±{TOLERANCE} of the paper's exponent and of"
            " the exact-risk slope.",
            "",
            "| estimator | axis | range | regime | measured ± s.e. | exact-risk slope | theory"
            " | ok (theory) | ok (exact) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in result["slopes"]:
            exact = f"{r['exact_risk_slope']:.3f}" if "exact_risk_slope" in r else "—"
            ok_exact = r.get("within_tolerance_of_exact")
            ok_exact = "—" if ok_exact is None else ("yes" if ok_exact else "NO")
            ok = "yes" if r["within_tolerance"] else "NO"
            if r.get("reference_only"):
                ok += " (reference row)"
            lines.append(
                f"| {r['estimator']} | {r['axis']} | {r['range'][0]:.3g}–{r['range'][1]:.3g} | "
                f"{r.get('regime', '')} | {r['measured']:.3f} ± {r['se']:.3f} | {exact} | "
                f"{r['theory']:.3f} | {ok} | {ok_exact} |"
            )
        kary = [r for r in result["slopes"] if r["estimator"].startswith("multinomial kary_rr")]
        kary = [r for r in kary if r["axis"] == "alpha"]
        small = [r for r in kary if not r["estimator"].endswith("original grid")]
        original = [r for r in kary if r["estimator"].endswith("original grid")]
        if small and original:
            sm, o = small[0], original[0]
            lines += [
                "",
                "Warner's k-ary RR vs α (only that row) is fitted on a small-α grid"
                f" (α {sm['range'][0]:g}–{sm['range'][1]:g}, n in Theorem 1's regime"
                f" nα²/d² ≥ {REGIME_FACTOR}): its risk ∝ (1 + d/(e^α − 1))² behaves like α⁻² only"
                " for α ≪ 1 (e^α − 1 ≈ α, d/(e^α − 1) ≫ 1), the regime of the asymptotic"
                f" statement. There: {sm['measured']:.3f} ± {sm['se']:.3f} (exact risk"
                f" {sm['exact_risk_slope']:.3f}). On the grid of the other α-rows"
                f" ({o['range'][0]:g}–{o['range'][1]:g}) the same estimator gives"
                f" {o['measured']:.3f} ± {o['se']:.3f} (exact risk {o['exact_risk_slope']:.3f}):"
                " outside the small-α regime the slope is not −2, so the regime matters. That row"
                " is kept for reference and is not an acceptance row.",
            ]
        lines += [
            "",
            "## Effective sample size (multinomial, Theorem 1: n_eff ≍ nα²/d)",
            "",
            "n_eff = n · MSE(non-private) / MSE(private, projected); the constant is "
            "n_eff / (nα²/d) (exact unprojected value in parentheses).",
            "",
            "| d | α | n | α²/d | bitwise RR n_eff/n | const. | Laplace n_eff/n | const. "
            "| k-ary RR n_eff/n | const. |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in result["multinomial"]["effective_sample_size"]:
            cells = [f"{r['d']}", f"{r['alpha']:g}", f"{r['n']:,}", f"{r['alpha2_over_d']:.4f}"]
            for name in CHANNELS:
                c = r[name]
                cells += [
                    f"{c['n_eff_over_n']:.4f}",
                    f"{c['constant']:.3f} ({c['exact_unprojected_constant']:.3f})",
                ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if "audits" in result:
        lines += [
            "## Privacy audits (α-LDP claims, 95% simultaneous lower bounds on ε(λ))",
            "",
            "| mechanism | pair | claimed α | exact D_∞ | λ | exact D_λ | lower | verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in result["audits"]:
            lam = ", ".join(f"{v:g}" for v in r["lam"])
            exact = ", ".join(f"{v:.3f}" for v in r["exact"])
            lower = ", ".join(f"{v:.3f}" for v in r["lower"])
            pair = f"({r['x']:g}, {r['x_prime']:g})" + (" proj." if r["projected"] else "")
            verdict = "VIOLATION" if r["violation"] else "no violation"
            lines.append(
                f"| {r['mechanism']} | {pair} | {r['claimed_alpha']:g} | {r['exact_D_inf']:.3f} | "
                f"{lam} | {exact} | {lower} | {verdict} |"
            )
        lines.append("")
    return "\n".join(lines)


def _save(fig, prefix: Path, suffix: str) -> str:
    """Write ``fig`` as ``<prefix>_<suffix>.png`` (120 dpi), close it, return the file name."""
    import matplotlib.pyplot as plt

    path = prefix.with_name(f"{prefix.name}_{suffix}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path.name


def plots(result: dict, prefix: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    mult = result["multinomial"]
    for axis, key in (("n", "vs_n"), ("alpha", "vs_alpha")):
        pts = mult[key]
        x = np.array([p[axis] for p in pts])
        fig, ax = plt.subplots(figsize=(6, 4.2))
        for name, color in zip((*CHANNELS, "none"), ("C0", "C1", "C2", "k"), strict=True):
            if name == "none" and axis == "alpha":
                continue
            mse = np.array([p[name]["mse"] for p in pts])
            se = np.array([p[name]["se"] for p in pts])
            label = name if name != "none" else "non-private"
            ax.errorbar(x, mse, 2 * se, fmt="o", color=color, label=f"{label} (projected)")
            ax.plot(x, [p[name]["exact_unprojected"] for p in pts], "--", color=color, lw=1)
        small = mult.get("vs_alpha_kary_small", [])
        if axis == "alpha" and small:  # the k-ary RR row's own small-α grid (larger n)
            xs = [p["alpha"] for p in small]
            ax.errorbar(
                xs,
                [p["kary_rr"]["mse"] for p in small],
                [2 * p["kary_rr"]["se"] for p in small],
                fmt="^",
                color="C2",
                label=f"kary_rr, small α, n = {small[0]['n']:,} (projected)",
            )
            ax.plot(xs, [p["kary_rr"]["exact_unprojected"] for p in small], "--", color="C2", lw=1)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel=axis if axis == "n" else "α",
            ylabel="E‖θ̂ − θ‖²",
            title=f"multinomial d = {mult['d']}: MSE vs {axis} (dashed: exact, unprojected)",
        )
        ax.legend(fontsize=8)
        files.append(_save(fig, prefix, f"multinomial_{axis}"))

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for (name, study), color in zip(result["densities"].items(), ("C0", "C1", "C2"), strict=True):
        for sweep, marker, what in (
            ("vs_n", "o-", "n varies"),
            ("vs_alpha", "s--", "α varies"),
            ("nonprivate", "x:", "non-private, x = n"),
        ):
            pts = study[sweep]
            if pts:
                x = [p["n"] if sweep == "nonprivate" else p["n_alpha2"] for p in pts]
                ax.plot(x, [p["mse"] for p in pts], marker, color=color, label=f"{name} ({what})")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="nα² (private) / n (non-private)",
        ylabel="∫(f̂ − f)²",
        title="densities: integrated squared error",
    )
    ax.legend(fontsize=7)
    files.append(_save(fig, prefix, "densities"))

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    ess = mult["effective_sample_size"]
    for name, color in zip(CHANNELS, ("C0", "C1", "C2"), strict=True):
        ax.plot(
            [r["alpha2_over_d"] for r in ess],
            [r[name]["n_eff_over_n"] for r in ess],
            "o",
            color=color,
            label=name,
        )
    grid = np.array([min(r["alpha2_over_d"] for r in ess), max(r["alpha2_over_d"] for r in ess)])
    ax.plot(grid, grid, "k--", lw=1, label="n_eff/n = α²/d")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="α²/d",
        ylabel="n_eff / n",
        title="effective sample size (projected estimators)",
    )
    ax.legend(fontsize=8)
    files.append(_save(fig, prefix, "effective_sample_size"))
    return files


CONFIGS = {
    "quick": dict(
        reps=50,
        reps_alpha=30,
        density_reps=40,
        fast_compile=True,
        d=10,
        alpha=1.0,
        ns=[5_000, 10_000, 20_000, 50_000, 100_000],
        n_alpha=100_000,
        alphas=[0.25, 0.35, 0.5, 0.7, 1.0],
        kary_alphas=[0.05, 0.1, 0.2],  # Warner's k-ary RR vs α only: the small-α regime
        ess_d=[2, 5, 10, 20],
        ess_alpha=[0.25, 0.5, 1.0],
        ess_n=10_000,
        ess_budget=10**7,
        ess_reps_min=30,
        ess_reps_max=300,
        density_k={
            "histogram": [5, 9, 13, 17],
            "series_beta1": [3, 5, 9, 13, 17],
            "series_beta2": [3, 5, 7],
        },
        density_n_alpha=50_000,
        audit_alpha=1.0,
        audit_d=4,
        audit_lams=[2.0, 5.0, 10.0],
        audit_n=200_000,
    ),
    "full": dict(
        reps=200,
        reps_alpha=100,
        density_reps=200,
        fast_compile=False,
        d=10,
        alpha=1.0,
        ns=[5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000],
        n_alpha=500_000,
        alphas=[0.15, 0.25, 0.35, 0.5, 0.7, 1.0],
        kary_alphas=[0.05, 0.1, 0.2],
        ess_d=[2, 5, 10, 20, 30],  # OneHotRandomizedResponse takes d ≤ 30
        ess_alpha=[0.25, 0.5, 1.0],
        ess_n=20_000,
        ess_budget=5 * 10**7,
        ess_reps_min=100,
        ess_reps_max=1000,
        density_k={
            "histogram": [5, 7, 9, 13, 17, 25],
            "series_beta1": [3, 5, 7, 9, 13, 17, 25],
            "series_beta2": [3, 5, 7, 9],
        },
        density_n_alpha=200_000,
        audit_alpha=1.0,
        audit_d=4,
        audit_lams=[2.0, 5.0, 10.0],
        audit_n=1_000_000,
    ),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small grid, a few minutes")
    parser.add_argument("--audits", action="store_true", help="only the privacy audits")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        default=None,
        help="output prefix (default benchmarks/results/papers/paper_003[_audits])",
    )
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    cfg = CONFIGS[mode]
    prefix = (
        Path(args.out)
        if args.out
        else RESULTS / ("paper_003_audits" if args.audits else "paper_003")
    )
    prefix.parent.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/papers/paper_003.py" + " ".join(
        [""]
        + (["--quick"] if args.quick else [])
        + (["--audits"] if args.audits else [])
        + ([f"--seed {args.seed}"] if args.seed else [])
        + ([f"--out {args.out}"] if args.out else [])
    )
    print(f"reproduce with: {command}", flush=True)
    key = jax.random.key(args.seed)
    k_mult, k_dens, k_aud = jax.random.split(key, 3)
    start = time.perf_counter()
    result = {
        "mode": mode,
        "command": command,
        "seed": args.seed,
        "config": cfg,
        "jax": jax.__version__,
        "tolerance": TOLERANCE,
    }
    if not args.audits:
        F_BETA1.check()
        F_BETA2.check()
        print("multinomial …", flush=True)
        result["multinomial"] = run_multinomial(k_mult, cfg)
        print(f"  {time.perf_counter() - start:.0f}s; densities …", flush=True)
        result["densities"] = run_densities(k_dens, cfg)
        result["slopes"] = slopes(result["multinomial"], result["densities"])
        print(f"  {time.perf_counter() - start:.0f}s", flush=True)
    print("privacy audits …", flush=True)
    result["audits"] = run_audits(k_aud, cfg)
    result["seconds"] = time.perf_counter() - start
    if not args.audits:
        result["plots"] = plots(result, prefix)
    text = markdown(result)
    prefix.with_suffix(".json").write_text(json.dumps(result, indent=1, default=float))
    prefix.with_suffix(".md").write_text(text + f"\nRun time: {result['seconds']:.0f} s.\n")
    print(text)
    print(f"wrote {prefix}.json, {prefix}.md" + (", plots" if not args.audits else ""))
    print(f"reproduce with: {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
