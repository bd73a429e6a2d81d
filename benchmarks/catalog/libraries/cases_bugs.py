"""Known shapes of DP bugs, each with its correct twin, and the zoo's published incorrect variants.

Every bug is reproduced as a JAX sampler (``rdpjax.mechanisms.from_sampler``) with the claim its
author made, next to the twin that does what the claim assumes; each cites where the shape was
reported. Shapes (Gaussian noise σ = 2 and sensitivity 1 unless said; claimed ρ = 1/(2σ²) = 1/8):

* ``gaussian_sigma``: the noise scale off by √2 (a sign/square error in σ's calibration: σ/√2 used,
  σ claimed): actual ε(λ) = λΔ²/σ², twice the claimed λΔ²/(2σ²). SmartNoise's analytic Gaussian
  had "a sign … not being set correctly, resulting in reduced sigma" and a noise scale that was
  squared (opendp/smartnoise-core#316).
* ``double_spending``: two releases of the same query charged as one: actual ε(λ) twice the claim.
  diffprivlib's LinearRegression centres X and y on "a single budget slice; composition is not
  accounted" (IBM/differential-privacy-library#104, item 2).
* ``zero_sensitivity``: the sensitivity computed from the lower bound twice (``max(|L|, |L|)``
  instead of ``max(|L|, |U|)``), zero for data bounds [0, B], so no noise: point masses that differ,
  ε(λ) = ∞. diffprivlib's LinearRegression (IBM/differential-privacy-library#105, PR #110; the
  library itself is audited in ``cases_diffprivlib.py``).
* ``clip_after_sum``: the data clipped, then the unclipped data summed (or the sum clipped only
  at the end), so one record moves the sum by 8 while sensitivity 1 is claimed: ε(λ) 64 times
  the claim. SmartNoise's DP covariance "clips and cleans the data … but reuses the old data"
  (opendp/smartnoise-sdk#622, fixed in PR #624).
* ``noise_on_sum_scaled_for_mean``: DP-SGD-style noise whose scale was computed for the mean (σ/B)
  added to the sum (B = 10): ε(λ) B² = 100 times the claim. The bug Tramèr et al. found by auditing
  (sensitivity off by the batch size; arXiv:2202.12219) and the noise-on-the-average mismatch of
  tensorflow/privacy#153.
* ``svt_*``: the sparse-vector variants of Lyu, Su, Li (arXiv:1603.01699; Lee–Clifton, Stoddard
  et al., Chen et al.) against the correct one, as StatDP ran them (Ding et al., CCS 2018,
  arXiv:1805.10277); ``noisy_max_value``: report-noisy-max releasing the noisy maximum's value
  instead of its index (Ding et al.'s incorrect variant), against the index.

The DP-SGD batch-sampling shape (fixed batches accounted as Poisson sampling) is in
``cases_dpsgd.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from case import Case, gaussian_renyi, infinite, laplace_renyi, scaled

import rdpjax
from rdpjax.claims import pure_dp, zcdp

SIGMA = 2.0
BATCH = 10  # noise_on_sum_scaled_for_mean: the batch size the noise was divided by
CLAIM = zcdp(1 / (2 * SIGMA**2))
PAIR = (jnp.array([1.0, 0.5, 0.5]), jnp.array([0.0, 0.5, 0.5]))  # x' drops one record's value
CLIP_PAIR = (jnp.array([8.0, 0.5, 0.5]), jnp.array([0.0, 0.5, 0.5]))  # an unclipped record of 8
SVT_EPS, NOISY_MAX_EPS = 1.0, 1.0

GAUSSIAN_SIGMA = "https://github.com/opendp/smartnoise-core/issues/316"
DOUBLE_SPENDING = "https://github.com/IBM/differential-privacy-library/issues/104"
ZERO_SENSITIVITY = (
    "https://github.com/IBM/differential-privacy-library/issues/105",
    "https://github.com/IBM/differential-privacy-library/pull/110",
)
CLIP_AFTER_SUM = (
    "https://github.com/opendp/smartnoise-sdk/issues/622",
    "https://github.com/opendp/smartnoise-sdk/pull/624",
)
NOISE_FOR_MEAN = (
    "https://arxiv.org/abs/2202.12219",
    "https://github.com/tensorflow/privacy/issues/153",
)
LYU = "https://arxiv.org/abs/1603.01699"
STATDP = "https://arxiv.org/abs/1805.10277"


def _sum(database):
    return jnp.sum(database)


def gaussian_sigma_bug(key, database, n):
    """σ/√2 used where σ is claimed."""
    return _sum(database) + SIGMA / jnp.sqrt(2.0) * jax.random.normal(key, (n,))


def gaussian(key, database, n):
    """The correct Gaussian mechanism: the sum plus N(0, σ²)."""
    return _sum(database) + SIGMA * jax.random.normal(key, (n,))


def double_spending_bug(key, database, n):
    """Two independent releases of the sum, charged as one."""
    return _sum(database) + SIGMA * jax.random.normal(key, (n, 2))


def sum_of_releases(outputs):
    """The auditor's statistic for two releases: their sum (sufficient for the shift, so D_λ of
    the sum equals D_λ of the pair of releases)."""
    return jnp.sum(outputs, axis=-1)


def zero_sensitivity_bug(key, database, n):
    """Noise scaled by a sensitivity of B − B = 0: the sum itself, n times."""
    return jnp.full((n,), _sum(database)) + 0.0 * jax.random.laplace(key, (n,))


def laplace(key, database, n):
    """The correct Laplace mechanism for entries in [0, 1] at ε = 1: the sum plus Lap(0, 1)."""
    return _sum(database) + jax.random.laplace(key, (n,))


def clip_after_sum_bug(key, database, n):
    """The sum of the unclipped data, clipped only at the end (to [0, 100]), plus N(0, σ²)."""
    return jnp.clip(_sum(database), 0.0, 100.0) + SIGMA * jax.random.normal(key, (n,))


def clip_then_sum(key, database, n):
    """Each record clipped to [0, 1], then summed, plus N(0, σ²)."""
    return _sum(jnp.clip(database, 0.0, 1.0)) + SIGMA * jax.random.normal(key, (n,))


def noise_scaled_for_mean_bug(key, database, n):
    """The sum plus N(0, (σ/B)²): the mean's noise scale on the sum."""
    return _sum(database) + SIGMA / BATCH * jax.random.normal(key, (n,))


def _shape(name, kind, fn, claim, n, description, cites, exact, pair=PAIR, twin=None, **opts):
    return Case(
        name=name,
        library="synthetic",
        kind=kind,
        mechanism=rdpjax.mechanisms.from_sampler(fn, name=name, claim=claim),
        x=pair[0],
        x_prime=pair[1],
        claim=claim,
        n=n,
        description=description,
        claim_source="the author's analysis (the formula the code was meant to implement)",
        exact=exact,
        exact_note="closed form",
        options=opts,
        cites=tuple([cites] if isinstance(cites, str) else cites),
        twin=twin,
    )


def _zoo(name, kind, mechanism, pair, n, description, cites, twin):
    return Case(
        name=name,
        library="rdpjax zoo",
        kind=kind,
        mechanism=mechanism,
        x=pair[0],
        x_prime=pair[1],
        claim=mechanism.claim,
        n=n,
        description=description,
        claim_source="the ε its paper claims",
        exact=None,  # the zoo mechanism's own exact values (enumeration / quadrature)
        exact_note="zoo (exact pmf / quadrature)",
        cites=cites,
        twin=twin,
    )


def cases() -> list[Case]:
    """The synthetic bug shapes and the zoo's incorrect variants, each beside its twin."""
    g = gaussian_renyi(1.0, SIGMA)
    out = []
    for bug, twin in (
        (
            _shape("gaussian_sigma", "bug", gaussian_sigma_bug, CLAIM, 3_000,
                   "Gaussian noise σ/√2 where σ is claimed", GAUSSIAN_SIGMA, scaled(g, 2.0),
                   twin="gaussian_sigma.twin"),
            _shape("gaussian_sigma.twin", "correct", gaussian, CLAIM, 3_000,
                   "Gaussian noise σ", GAUSSIAN_SIGMA, g, twin="gaussian_sigma"),
        ),
        (
            _shape("double_spending", "bug", double_spending_bug, CLAIM, 3_000,
                   "two Gaussian releases of the sum charged as one", DOUBLE_SPENDING,
                   scaled(g, 2.0), twin="double_spending.twin", project=sum_of_releases),
            _shape("double_spending.twin", "correct", gaussian, CLAIM, 3_000,
                   "one Gaussian release", DOUBLE_SPENDING, g, twin="double_spending"),
        ),
        (
            _shape("zero_sensitivity", "bug", zero_sensitivity_bug, pure_dp(1.0), 100,
                   "Laplace noise scaled by a sensitivity B − B = 0", ZERO_SENSITIVITY,
                   infinite, twin="zero_sensitivity.twin", discrete=True),
            _shape("zero_sensitivity.twin", "correct", laplace, pure_dp(1.0), 100,
                   "Laplace noise scaled by the sensitivity B − 0 = 1", ZERO_SENSITIVITY,
                   laplace_renyi(1.0, 1.0), twin="zero_sensitivity"),
        ),
        (
            _shape("clip_after_sum", "bug", clip_after_sum_bug, CLAIM, 100,
                   "unclipped records summed (clipped after the sum)", CLIP_AFTER_SUM,
                   gaussian_renyi(8.0, SIGMA), pair=CLIP_PAIR, twin="clip_after_sum.twin"),
            _shape("clip_after_sum.twin", "correct", clip_then_sum, CLAIM, 100,
                   "records clipped to [0, 1], then summed", CLIP_AFTER_SUM, g, pair=CLIP_PAIR,
                   twin="clip_after_sum"),
        ),
        (
            _shape("noise_on_sum_scaled_for_mean", "bug", noise_scaled_for_mean_bug, CLAIM, 100,
                   f"noise σ/B (B = {BATCH}) added to the sum", NOISE_FOR_MEAN,
                   scaled(g, BATCH**2), twin="noise_on_sum_scaled_for_mean.twin"),
            _shape("noise_on_sum_scaled_for_mean.twin", "correct", gaussian, CLAIM, 100,
                   "noise σ added to the sum", NOISE_FOR_MEAN, g,
                   twin="noise_on_sum_scaled_for_mean"),
        ),
    ):  # fmt: skip
        out += [bug, twin]
    return out + zoo_cases()


def zoo_cases() -> list[Case]:
    """The zoo's sparse-vector and report-noisy-max variants, incorrect beside correct."""
    from rdpjax.mechanisms import ReportNoisyMax, SparseVector

    svt = {v: SparseVector(SVT_EPS, variant=v) for v in ("lyu", "lee_clifton", "stoddard", "chen")}
    lc_pair = SparseVector.lee_clifton_pair()
    ref_pair = svt["lyu"].reference_pair()
    value, index = (ReportNoisyMax(NOISY_MAX_EPS, output_kind=k) for k in ("value", "index"))
    cites = (LYU, STATDP)
    return [
        _zoo("svt_lee_clifton", "bug", svt["lee_clifton"], lc_pair, 30_000,
             "sparse vector, Lee–Clifton (ν scale 4/(3ε)): real ε = (1 + 6c)ε/4", cites,
             "svt_lyu.lee_clifton_pair"),
        _zoo("svt_lyu.lee_clifton_pair", "correct", svt["lyu"], lc_pair, 30_000,
             "sparse vector, Lyu et al. Alg. 1 (correct), on the Lee–Clifton pair", cites,
             "svt_lee_clifton"),
        _zoo("svt_stoddard", "bug", svt["stoddard"], ref_pair, 300,
             "sparse vector, Stoddard et al. (no query noise, never stops): ε = ∞", cites,
             "svt_lyu"),
        _zoo("svt_chen", "bug", svt["chen"], ref_pair, 100_000,
             "sparse vector, Chen et al. (query noise 2/ε, never stops)", cites, "svt_lyu"),
        _zoo("svt_lyu", "correct", svt["lyu"], ref_pair, 100_000,
             "sparse vector, Lyu et al. Alg. 1 (correct)", cites, "svt_stoddard, svt_chen"),
        _zoo("noisy_max_value", "bug", value, value.reference_pair(), 30_000,
             "report noisy max releasing the noisy maximum's value", (STATDP,),
             "noisy_max_index"),
        _zoo("noisy_max_index", "correct", index, index.reference_pair(), 30_000,
             "report noisy max releasing the index", (STATDP,), "noisy_max_value"),
    ]  # fmt: skip
