"""Streamed bounds: the front end of the stream, from the arguments to the :class:`rdpjax.Bound`.

:func:`streamed_bound` (user samplers), :func:`mechanism_streamed_bound` (a zoo mechanism on
a pair) and :func:`streamed_samples` (the same draws in memory); overview in
:mod:`rdpjax.stream`. A streamed bound checks the arguments, probes the samplers, draws the pilot
and fixes the settings (:mod:`rdpjax.stream.plan`), runs the compiled scan on each side
(:mod:`rdpjax.stream.scan`, with progress reports from :mod:`rdpjax.stream.progress`), then
computes the bound from the counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.estimator.grid import check_layout
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.plan import Bound
from rdpjax.estimator.sharding import draw_mesh
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.options import StreamOptions, split_options
from rdpjax.stream.plan import as_key, bound_from_counts, check_sizes, fix_settings, streamable
from rdpjax.stream.progress import _progress_run
from rdpjax.stream.samplers import (
    Sampler,
    mechanism_samplers,
    output_kind,
    pilot_draw,
    user_sampler,
)
from rdpjax.stream.scan import _materialize, _stream_side


def _streamed(
    key,
    samplers: tuple[Sampler, Sampler],
    args: tuple,
    lam,
    *,
    n,
    alpha: float,
    both_directions: bool,
    options: BoundOptions,
    stream: StreamOptions,
) -> Bound:
    options = streamable(options)
    check_layout(options.layout)
    n_p, n_q = check_sizes(n)
    chunk, pilot, progress = min(stream.chunk, max(n_p, n_q)), stream.pilot_size, stream.progress
    if -(-max(n_p, n_q) // chunk) > 2**31 - 1:
        raise ValueError(f"n / chunk must stay below 2^31 chunks; got n={n}, chunk={chunk}.")
    mesh = draw_mesh(stream.devices)
    key = as_key(key)
    impl = str(jax.random.key_impl(key))
    k_pilot, k_p, k_q = jax.random.split(key, 3)
    kp_pilot, kq_pilot = jax.random.split(k_pilot)
    with float64():
        kinds = [output_kind(s, a, key) for s, a in zip(samplers, args, strict=True)]
        if kinds[0] != kinds[1]:
            raise ValueError(
                "sample_p and sample_q must return the same kind of output; got "
                f"(integer, d) = {kinds[0]} and {kinds[1]}."
            )

        def draw_pilot():
            return tuple(
                np.asarray(pilot_draw(k, a, sampler=s, m=pilot))
                for k, s, a in zip((kp_pilot, kq_pilot), samplers, args, strict=True)
            )

        fixed = fix_settings(
            draw_pilot,
            lam,
            kind=kinds[0],
            sizes=(n_p, n_q),
            alpha=alpha,
            both_directions=both_directions,
            options=options,
            stream=stream,
        )
        with _progress_run(progress, (n_p, n_q), chunk) as run_id:
            results = []
            for side, (k, s, a, m) in enumerate(
                zip((k_p, k_q), samplers, args, (n_p, n_q), strict=True)
            ):
                results.append(
                    _stream_side(
                        np.asarray(jax.random.key_data(k)),
                        a,
                        fixed.low,
                        fixed.spacing,
                        np.int32(2 * run_id + side),
                        sampler=s,
                        n=m,
                        chunk=chunk,
                        layout=fixed.layout,
                        method=stream.binning,
                        mesh=mesh,
                        impl=impl,
                        progress=progress is not None,
                    )
                )
            # Host copies: the bound's compilation is then shared with lower_bound's (jit keys
            # include input shardings, and the stream's outputs live on the mesh).
            (counts_p, out_p, bad_p), (counts_q, out_q, bad_q) = jax.device_get(results)
        nonfinite = np.array([float(bad_p), float(bad_q)])
        if np.any(nonfinite > 0):
            raise ValueError(
                f"the samplers returned {nonfinite.astype(int).tolist()} non-finite values "
                "(P, Q); a mechanism's outputs must be finite."
            )
        return bound_from_counts(
            fixed,
            (counts_p, counts_q),
            (out_p, out_q),
            (n_p, n_q),
            outside=stream.outside,
            stacklevel=3,
        )


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
    samplers = (user_sampler(sample_p), user_sampler(sample_q))
    return _streamed(
        key,
        samplers,
        ((), ()),
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
    sampler, args_p, args_q, spec = mechanism_samplers(mechanism, x, x_prime)
    if spec.is_discrete and stream.support_size is None and spec.alphabet_size:
        stream = dataclasses.replace(stream, support_size=spec.alphabet_size)
    return _streamed(
        key,
        (sampler, sampler),
        (args_p, args_q),
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
