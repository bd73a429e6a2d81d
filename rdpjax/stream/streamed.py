"""The streamed Rényi bound's door, and the draws of JAX samplers in memory.

:func:`streamed_bound` takes the key and a value that says what to draw from
(:mod:`rdpjax.stream.draws`: JAX samplers, a zoo mechanism on a pair, or a numpy black box),
binds the key to it as a :class:`~rdpjax.stream.sources.Source` and runs the one driver
(:func:`rdpjax.stream.driver.bound_of_source`): the source is probed, the pilot fixes the
settings (:mod:`rdpjax.stream.pilot`), each side is drawn and counted (a compiled scan,
:mod:`rdpjax.stream.scan`, with progress reports from :mod:`rdpjax._internal.progress`; or numpy
batches), and the bound comes from the counts. :func:`streamed_samples` gives a JAX stream's
draws in memory; overview in :mod:`rdpjax.stream`.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from rdpjax._keys import as_key
from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.options import BoundOptions
from rdpjax.stream.draws import Draws, JaxSamplers, MechanismPair, as_draws
from rdpjax.stream.driver import bound_of_source
from rdpjax.stream.options import StreamOptions, split_options
from rdpjax.stream.pilot import check_sizes
from rdpjax.stream.scan import _materialize
from rdpjax.stream.sources import JaxSource


def streamed_bound(
    key,
    draws: Draws,
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
    the densities (9)/(10) estimated from histograms accumulated chunk by chunk (JAX samplers,
    inside one compiled scan a side) or batch by batch (a numpy black box): :mod:`rdpjax.stream`
    for the draws, the grid and the outside mass. Departs from :func:`rdpjax.lower_bound` only in
    the grid: fixed from a pilot draw instead of the data's own range (outputs beyond it are
    clamped), and no quantile map. Cost O(n · 2^d) draws and binning, split over the devices,
    plus O(L · g log g) for the bound; memory O(chunk + g) per device (O(batch_size · d + g)
    for a black box: a numpy Gaussian at n = 1e8 per side peaks well under 1 GB,
    ``benchmarks/performance/audit_memory.py``).

    Args:
      key: a ``jax.random`` key; the only source of randomness.
      draws: what to draw from (:mod:`rdpjax.stream.draws`): :class:`~rdpjax.stream.JaxSamplers`
        ``(sample_p, sample_q)`` (``sample(key, m)`` returning ``(m,)`` or ``(m, d)``, d ≤ 3,
        floats or integer codes, pure and jittable with ``m`` static),
        :class:`~rdpjax.stream.MechanismPair` ``(mechanism, x, x_prime)`` (a zoo mechanism,
        traced: new databases of the same shapes reuse the compiled stream; discrete outputs on
        its alphabet) or :class:`~rdpjax.stream.BlackBox` ``(sample, x, x_prime)`` (numpy
        ``sample(rng, database, m)``, called with ``stream.batch_size`` outputs at a time).
      lam: an order λ > 1 or a sequence of orders.
      n: draws per side (int ≥ 2, up to 2^31 and beyond), or a pair ``(n_p, n_q)``.
      alpha: family-wise error level in (0, 0.5), as in :func:`rdpjax.lower_bound`.
      both_directions: also bound ``D_λ(Q‖P)`` and report, per λ, the larger bound.
      options: the estimator's :class:`rdpjax.BoundOptions` (bandwidth, floor, β, grid size,
        variance, second order, layout, defaults; their defaults come from the pilot and the
        full n; no quantile map). With ``layout="exact"`` the grid follows each call's pilot
        draw, so a second call with new keys usually compiles the stream and the bound again
        (5 s at n = 1e6 on 2 CPU cores); ``"bucketed"`` rounds the layout so that such calls
        mostly reuse them. ``discrete=None`` decides from the pilot's dtype (integers or bools
        → relative frequencies).
      stream: the stream's :class:`~rdpjax.stream.options.StreamOptions`: the grid's range
        (default the pilot's, widened by ``margin`` widths a side), the pilot's size, the
        support of discrete codes, what happens off the range, the chunk (capped at n), a black
        box's ``batch_size`` and ``project`` (a fixed function of every batch, pilot included:
        needed for outputs of more than three dimensions), the devices, the binning method and
        ``progress``. ``progress(done, total)`` is called with the draws done so far over both
        sides (non-decreasing) and ``total = n_p + n_q``: for JAX samplers from inside the scan
        (a ``jax.debug.callback``, on a runtime thread) up to about 128 times (at most once per
        2^22 draws of a device) and once more with ``done = total``; for a black box after each
        batch. It changes no result; the compiled stream depends only on whether it is given.
        An exception it raises is re-raised after the run.
      **fields: fields of either options object by name (``chunk=…``, ``bandwidth=…``), which
        replace those of ``options`` and ``stream``; any other name is a ``TypeError``.

    Returns:
      A :class:`rdpjax.Bound` (numpy leaves); ``outside`` holds the numbers of draws clamped
      onto the edge of the range.

    Raises:
      ValueError: for ``draws`` of another type, n < 2, chunk < 1, an invalid grid range or
        option, non-finite draws, a batch of the wrong length, shape or dtype, d > 3 without
        ``project``, or (with ``outside="raise"``) draws off the range.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from rdpjax.stream import JaxSamplers, streamed_bound
      >>> p = lambda k, m: 1.0 + 5.0 * jax.random.normal(k, (m,), jnp.float32)
      >>> q = lambda k, m: 5.0 * jax.random.normal(k, (m,), jnp.float32)
      >>> b = streamed_bound(jax.random.key(0), JaxSamplers(p, q), [2.0, 5.0], n=10**6)
      >>> bool((b.lower <= [0.04, 0.10]).all())
      True
    """
    draws = as_draws(draws, "streamed_bound")
    options, stream = split_options(options, stream, fields, caller="streamed_bound")
    source, stream = draws.source(key, stream)
    return bound_of_source(
        source,
        lam,
        n=n,
        alpha=alpha,
        both_directions=both_directions,
        options=options,
        stream=stream,
    )


def streamed_samples(key, draws: JaxSamplers | MechanismPair, *, n, chunk: int):
    """The draws :func:`streamed_bound` makes from ``draws`` with the same key, n and chunk.

    In memory, for tests and small n: memory O(n). Runs inside ``rdpjax.float64()``, as the
    stream does. A zoo mechanism's discrete outputs come encoded, as the stream counts them.

    Args:
      key: the stream's key.
      draws: :class:`~rdpjax.stream.JaxSamplers` or :class:`~rdpjax.stream.MechanismPair` (a
        :class:`~rdpjax.stream.BlackBox` draws in numpy: call it).
      n: draws per side, an int or a pair ``(n_p, n_q)``.
      chunk: the stream's chunk (its draws are ``fold_in(k_side, i)`` per chunk ``i``).

    Returns:
      ``(p, q)`` arrays of ``n_p`` and ``n_q`` draws.

    Raises:
      ValueError: for a black box or anything else, or for sizes or a chunk below their
        least values.
    """
    if not isinstance(draws, JaxSamplers | MechanismPair):
        raise ValueError(
            "streamed_samples materializes the draws of JaxSamplers(sample_p, sample_q) or "
            f"MechanismPair(mechanism, x, x_prime); got {draws!r}"
        )
    n_p, n_q = check_sizes(n)
    chunk = min(check_int(chunk, "chunk", 1), max(n_p, n_q))
    key = as_key(key)
    impl = str(jax.random.key_impl(key))
    source, _ = draws.source(key, StreamOptions())
    assert isinstance(source, JaxSource)
    out = []
    with float64():
        sides = zip((source.k_p, source.k_q), source.samplers, source.args, (n_p, n_q), strict=True)
        for k, sampler, args, m in sides:
            data = np.asarray(jax.random.key_data(k))
            out.append(_materialize(data, args, sampler=sampler, n=m, chunk=chunk, impl=impl))
    return tuple(out)
