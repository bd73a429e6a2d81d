"""End to end: privatize each individual's value through a zoo channel, then estimate (003).

Duchi, Jordan, Wainwright, arXiv:1305.6000, non-interactive α-LDP: each ``Z_i ~ Q(· | X_i)``
independently (:func:`privatize`, one ``vmap``), then the estimators of
:mod:`rdpjax.ldp.density` with the propositions' default sizes (:func:`private_histogram`,
Proposition 2; :func:`private_series`, sampler (20) and estimator (22), Proposition 3).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._validation import check_int
from rdpjax.ldp.checks import concrete
from rdpjax.ldp.density import (
    HistogramDensity,
    SeriesDensity,
    histogram_bins,
    histogram_density,
    series_density,
    series_terms,
)
from rdpjax.mechanisms import (
    KaryRandomizedResponse,
    LaplaceHistogram,
    OneHotRandomizedResponse,
    OrthogonalSeries,
)
from rdpjax.mechanisms.base import Mechanism


@jax.jit
def _privatize(key: jax.Array, mechanism: Mechanism, data: jax.Array) -> jax.Array:
    keys = jax.random.split(key, data.shape[0])
    return jax.vmap(lambda k_, x: mechanism.sample(k_, x, 1)[0])(keys, data)


def privatize(key: jax.Array, mechanism: Mechanism, data: Any) -> jax.Array:
    """``Z_i ~ Q(· | X_i)`` independently for each individual (non-interactive α-LDP).

    Args:
        key: PRNG key.
        mechanism: a zoo mechanism whose input ("database") is one individual's value, e.g.
            ``KaryRandomizedResponse``, ``OneHotRandomizedResponse`` (categories in [0, k)),
            ``LaplaceHistogram``, ``OrthogonalSeries`` (points of [0, 1]).
        data: the values ``X_1..X_n``, shape ``(n,)``.

    Returns:
        ``(n, ...)`` outputs: row i is one draw of ``mechanism.sample(·, X_i, 1)``.

    Raises:
        ValueError: for a non-mechanism, empty or non-1-D data, or concrete values outside the
            mechanism's input range.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a rdpjax mechanism; got {type(mechanism).__name__}")
    data = jnp.asarray(data)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"data must be a non-empty 1-D array of values; got shape {data.shape}")
    host = concrete(data)
    if host is not None:
        if isinstance(mechanism, (KaryRandomizedResponse, OneHotRandomizedResponse)):
            if not np.all((host == np.round(host)) & (host >= 0) & (host < mechanism.k)):
                raise ValueError(f"data must be integer categories in [0, {mechanism.k})")
        elif isinstance(mechanism, (LaplaceHistogram, OrthogonalSeries)):
            if not np.all((host >= 0.0) & (host <= 1.0)):
                raise ValueError("data must be points of [0, 1]")
        elif not np.all(np.isfinite(host)):
            raise ValueError("data must be finite")
    return _privatize(key, mechanism, data)


def _check_points(data: Any) -> jax.Array:
    data = jnp.asarray(data)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"data must be a non-empty 1-D array of points; got shape {data.shape}")
    return data


def private_histogram(
    key: jax.Array, data: Any, alpha: Any, *, bins: int | None = None, project: bool = True
) -> HistogramDensity:
    """Privatize ``X_1..X_n ∈ [0, 1]`` with ``LaplaceHistogram`` and return the histogram.

    Args:
        key: PRNG key.
        data: shape ``(n,)``, points of [0, 1].
        alpha: privacy level α > 0.
        bins: number of bins; default :func:`histogram_bins` (Proposition 2: k ≍ (nα²)^{1/4}).
        project: as in :func:`histogram_density`.

    Returns:
        A :class:`HistogramDensity`.
    """
    data = _check_points(data)
    bins = histogram_bins(data.shape[0], alpha) if bins is None else bins
    z = privatize(key, LaplaceHistogram(alpha, check_int(bins, "bins", 2)), data)
    return histogram_density(z, project=project)


def private_series(
    key: jax.Array,
    data: Any,
    alpha: Any,
    *,
    beta: float = 1.0,
    terms: int | None = None,
    ties: str = "split",
) -> SeriesDensity:
    """Privatize ``X_1..X_n ∈ [0, 1]`` with sampler (20) and return estimator (22).

    Args:
        key: PRNG key.
        data: shape ``(n,)``, points of [0, 1].
        alpha: privacy level α > 0.
        beta: smoothness β ≥ 1 used by the default number of terms.
        terms: number k of basis functions (1..30, the sampler's limit); default
            :func:`series_terms` (Proposition 3: k ≍ (nα²)^{1/(2β+2)}).
        ties: ``"split"`` (default; α-LDP and unbiased for every k) or ``"literal"`` (003's
            published form: for even k neither α-LDP nor unbiased, docs/methods.md §5).

    Returns:
        A :class:`SeriesDensity`.

    Raises:
        ValueError: when the default rule asks for more than 30 terms (pass ``terms``).
    """
    data = _check_points(data)
    if terms is None:
        terms = series_terms(data.shape[0], alpha, beta)
        if terms > 30:
            raise ValueError(
                f"the rate of Proposition 3 asks for {terms} terms, above the sampler's 30; "
                "pass terms= explicitly"
            )
    mechanism = OrthogonalSeries(alpha, check_int(terms, "terms", 1), ties)
    return series_density(mechanism.values(privatize(key, mechanism, data)))
