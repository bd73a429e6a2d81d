"""Streamed bounds of JAX samplers: the front doors to the driver, and the draws in memory.

:func:`streamed_bound` (user samplers) and :func:`mechanism_streamed_bound` (a zoo mechanism on
a pair) make a :class:`~rdpjax.stream.sources.JaxSource` and run the one driver
(:func:`rdpjax.stream.driver.bound_of_source`): the samplers are probed, the pilot fixes the
settings (:mod:`rdpjax.stream.pilot`), each side is drawn and binned in one compiled scan
(:mod:`rdpjax.stream.scan`, with progress reports from :mod:`rdpjax._internal.progress`), and the
bound comes from the counts. :func:`streamed_samples` gives the same draws in memory; overview
in :mod:`rdpjax.stream`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from rdpjax._keys import as_key
from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.options import BoundOptions
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.driver import bound_of_source
from rdpjax.stream.options import StreamOptions, split_options
from rdpjax.stream.pilot import check_sizes
from rdpjax.stream.samplers import (
    user_sampler,
)
from rdpjax.stream.scan import _materialize
from rdpjax.stream.sources import JaxSource, mechanism_source


def streamed_bound(
    key,
    sample_p: Callable,
    sample_q: Callable,
    lam,
    *,
    n,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: BoundOptions | None = None,
    stream: StreamOptions | None = None,
    **fields: Any,
) -> Bound:
    """A lower bound on ``D_λ(P‖Q)`` from ``n`` draws per side that never exist in full.

    Eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, as :func:`rdpjax.lower_bound`, with
    the densities (9)/(10) estimated from histograms accumulated chunk by chunk
    (:mod:`rdpjax.stream`: draws, grid, outside mass). Cost O(n · 2^d) draws and binning, split
    over the devices, plus O(L · g log g) for the bound; memory O(chunk + g) per device.

    Args:
      key: a ``jax.random`` key.
      sample_p: ``sample(key, m)`` returning ``m`` outputs of the mechanism on x.
      sample_q: the same on x'. Both return shape ``(m,)`` or ``(m, d)`` (d ≤ 3): floats
        (continuous) or integer codes (discrete). Pure and jittable with ``m`` static. The compiled
        stream is reused when the same function objects are passed again.
      lam: an order λ > 1 or a sequence of orders.
      n: draws per side (int ≥ 2, up to 2^31 and beyond), or a pair ``(n_p, n_q)``.
      alpha: family-wise error level in (0, 0.5), as in :func:`rdpjax.lower_bound`.
      both_directions: also bound ``D_λ(Q‖P)`` and report, per λ, the larger bound.
      options: the estimator's :class:`rdpjax.BoundOptions` (bandwidth, floor, β, grid size,
        variance, second order, layout, defaults; their defaults come from the pilot and the
        full n; no quantile map). With ``layout="exact"`` the grid follows each call's pilot
        draw, so a second call with new keys usually compiles the stream and the bound again
        (5 s at n = 1e6 on 2 CPU cores); ``"bucketed"`` rounds the layout so that such calls
        mostly reuse them.
      stream: the stream's :class:`~rdpjax.stream.options.StreamOptions`: the grid's range
        (default the pilot's, widened by ``margin`` widths a side), the pilot's size, the
        support of discrete codes, what happens off the range, the chunk (capped at n), the
        devices, the binning method and ``progress``. ``progress(done, total)`` is called
        from inside the scan (a ``jax.debug.callback``, on a runtime thread) up to about 128
        times (fewer on runs shorter than ~5e8 per side: at most once per 2^22 draws of a
        device) with the draws done so far over both sides (non-decreasing), ``total = n_p +
        n_q``, and once more with ``done = total``. It changes no result; the compiled stream
        depends only on whether it is given. An exception it raises is re-raised after the run.
      **fields: fields of either options object by name (``chunk=…``, ``bandwidth=…``), which
        replace those of ``options`` and ``stream``; any other name is a ``TypeError``.

    Returns:
      A :class:`rdpjax.Bound` (numpy leaves); ``outside`` holds the numbers of draws clamped
      onto the edge of the range.

    Raises:
      ValueError: for n < 2, chunk < 1, an invalid grid range or option, non-finite draws, or
        (with ``outside="raise"``) draws off the range.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from rdpjax.stream import streamed_bound
      >>> p = lambda k, m: 1.0 + 5.0 * jax.random.normal(k, (m,), jnp.float32)
      >>> q = lambda k, m: 5.0 * jax.random.normal(k, (m,), jnp.float32)
      >>> b = streamed_bound(jax.random.key(0), p, q, [2.0, 5.0], n=10**6)
      >>> bool((b.lower <= [0.04, 0.10]).all())
      True
    """
    options, stream = split_options(options, stream, fields, caller="streamed_bound")
    source = JaxSource(key, (user_sampler(sample_p), user_sampler(sample_q)), ((), ()))
    return bound_of_source(
        source,
        lam,
        n=n,
        alpha=alpha,
        both_directions=both_directions,
        options=options,
        stream=stream,
    )


def mechanism_streamed_bound(
    key,
    mechanism: Mechanism,
    x,
    x_prime,
    lam,
    *,
    n,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: BoundOptions | None = None,
    stream: StreamOptions | None = None,
    **fields: Any,
) -> Bound:
    """:func:`streamed_bound` for a zoo mechanism on the pair (x, x').

    Draws ``mechanism.sample(·, x, m)`` and ``mechanism.sample(·, x', m)``; discrete outputs
    are encoded by ``mechanism.output(x)`` and use its alphabet as the support. The mechanism
    and the databases are traced, so new parameter values or databases of the same shapes
    reuse the compiled stream.

    Args:
      key: a ``jax.random`` key, as in :func:`streamed_bound`.
      mechanism: a :class:`rdpjax.mechanisms.Mechanism`.
      x: the first of two adjacent databases.
      x_prime: the second, adjacent to ``x``.
      lam: an order λ > 1 or a sequence of orders, as in :func:`streamed_bound`.
      n: draws per side, or a pair ``(n_p, n_q)``, as in :func:`streamed_bound`.
      alpha: family-wise error level, as in :func:`streamed_bound`.
      both_directions: also bound ``D_λ(Q‖P)``.
      options: the estimator's :class:`rdpjax.BoundOptions`, as in :func:`streamed_bound`.
      stream: the :class:`~rdpjax.stream.options.StreamOptions`, as in :func:`streamed_bound`.
      **fields: fields of either options object by name, as in :func:`streamed_bound`.
    """
    options, stream = split_options(options, stream, fields, caller="mechanism_streamed_bound")
    source, stream = mechanism_source(key, mechanism, x, x_prime, stream)
    return bound_of_source(
        source,
        lam,
        n=n,
        alpha=alpha,
        both_directions=both_directions,
        options=options,
        stream=stream,
    )


def streamed_samples(key, sample_p: Callable, sample_q: Callable, *, n, chunk: int):
    """The draws :func:`streamed_bound` makes with the same key, n and chunk, in memory.

    For tests and small n: memory O(n). Runs inside ``rdpjax.float64()``, as the stream does.

    Returns:
      ``(p, q)`` arrays of ``n_p`` and ``n_q`` draws.
    """
    n_p, n_q = check_sizes(n)
    chunk = min(check_int(chunk, "chunk", 1), max(n_p, n_q))
    key = as_key(key)
    impl = str(jax.random.key_impl(key))
    _, k_p, k_q = jax.random.split(key, 3)
    out = []
    with float64():
        for k, fn, m in ((k_p, sample_p, n_p), (k_q, sample_q, n_q)):
            data = np.asarray(jax.random.key_data(k))
            out.append(
                _materialize(data, (), sampler=user_sampler(fn), n=m, chunk=chunk, impl=impl)
            )
    return tuple(out)
