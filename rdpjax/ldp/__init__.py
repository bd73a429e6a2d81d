"""Locally private estimation of paper 003: the minimax-optimal estimators and their exact risks.

Duchi, Jordan, Wainwright, *Local Privacy and Minimax Bounds: Sharp Rates for Probability
Estimation* (arXiv:1305.6000); formulas restated and checked in docs/methods.md §5. α is the local
privacy level (α-LDP), not a confidence level. The channels are the zoo's
(:mod:`rdpjax.mechanisms.local`, :mod:`rdpjax.mechanisms.series`); this package is the
statistician's side: it debiases the privatized outputs ``Z_1..Z_n`` and projects the result back
onto the set of valid parameters.

* Multinomial θ ∈ Δ_d (Theorem 1: risk ≍ d/(nα²), effective sample size n ↦ nα²/d):
  :func:`multinomial_bitwise_rr` (003's randomized response), :func:`multinomial_laplace`
  (one-hot plus Laplace noise), :func:`multinomial_kary_rr` (Warner's k-ary randomized response),
  each optionally followed by :func:`project_simplex`; :func:`multinomial_risk` gives the exact
  mean squared error of the unprojected estimators.
* Densities on [0, 1] (Theorem 2: risk ≳ (nα²)^(−2β/(2β+2))): the private histogram
  (Proposition 2, :func:`histogram_density`, :func:`private_histogram`) and the orthogonal-series
  estimator (22) with the trigonometric basis (Proposition 3, :func:`series_density`,
  :func:`private_series`); bins and terms follow the propositions' rates by default
  (:func:`histogram_bins`, :func:`series_terms`); :func:`histogram_risk` and :func:`series_risk`
  give the exact integrated squared errors of the unprojected estimators.

The estimators are pure and jittable (``n``, ``d``, ``k`` are static shapes) and batched over
leading axes, so replications are one ``vmap``. Concrete inputs are validated eagerly; under
``jit`` only shapes are checked. The exact risks are host functions in float64.

Modules:

* :mod:`rdpjax.ldp.checks`: argument checks on concrete values;
* :mod:`rdpjax.ldp.simplex`: the projection onto ``total · Δ_k``;
* :mod:`rdpjax.ldp.multinomial`: the multinomial estimators (Sec. 3);
* :mod:`rdpjax.ldp.density`: the density estimators on [0, 1] and their rate rules (Sec. 4);
* :mod:`rdpjax.ldp.pipeline`: privatize through a zoo channel, then estimate;
* :mod:`rdpjax.ldp.risk`: the exact risks of the unprojected estimators.
"""

from rdpjax.ldp.density import (
    HistogramDensity,
    SeriesDensity,
    histogram_bins,
    histogram_density,
    series_density,
    series_terms,
)
from rdpjax.ldp.multinomial import multinomial_bitwise_rr, multinomial_kary_rr, multinomial_laplace
from rdpjax.ldp.pipeline import private_histogram, private_series, privatize
from rdpjax.ldp.risk import histogram_risk, multinomial_risk, series_risk
from rdpjax.ldp.simplex import project_simplex

__all__ = [
    "HistogramDensity",
    "SeriesDensity",
    "histogram_bins",
    "histogram_density",
    "histogram_risk",
    "multinomial_bitwise_rr",
    "multinomial_kary_rr",
    "multinomial_laplace",
    "multinomial_risk",
    "private_histogram",
    "private_series",
    "privatize",
    "project_simplex",
    "series_density",
    "series_risk",
    "series_terms",
]
