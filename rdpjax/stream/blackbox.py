"""Bounds from a numpy black box at any n, in memory O(batch + grid).

:func:`rdpjax.lower_bound` takes samples that already exist; a black box ``sample(rng,
database, m)`` (numpy code, or another library's DP mechanism, called with a
``numpy.random.Generator``) drawn at n = 1e8 per side would hold 1.6 GB of float64 outputs
before the bound starts. :func:`blackbox_bound` never holds more than a few batches: it draws
``batch_size`` outputs per side at a time, bins each batch on a grid fixed beforehand (the
jitted kernels of :mod:`rdpjax.estimator.binning`), accumulates float64 counts, and computes
eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3 from the two histograms
(:meth:`rdpjax.BoundPlan.bound`), exactly as :func:`rdpjax.lower_bound`'s plan machinery does on
the same samples binned on the same grid with the same settings. It is the black-box twin of
:func:`rdpjax.stream.streamed_bound` (JAX samplers drawn inside one compiled scan) and shares
its pilot → grid/settings step and its counts → bound step.

**Draws.** ``np.random.SeedSequence(key_data)`` (the ``uint32`` words of
``jax.random.key_data(key)``) is spawned into three children, which seed
``numpy.random.default_rng`` Generators ``g_pilot, g_p, g_q``. The pilot is ``sample(g_pilot, x,
pilot)`` then ``sample(g_pilot, x', pilot)``, each side then sorted
(:func:`rdpjax.stream.sources.sorted_pilots`: the settings read strided subsamples of it, which the
order a sampler returns its batch in would otherwise change); side P is ``sample(g_p, x, m_i)`` for
the batch sizes ``m_i = min(batch_size, n_p − drawn)`` in turn (likewise Q from ``g_q`` on x'), P
and Q batches interleaved (each side's Generator sees only its own calls, so the interleaving
changes nothing).

**Grid and settings.** They must be fixed before the certifying samples exist (the data-
independence a valid bound needs), so they come from the pilot only, which is not reused in the
bound: the pilot's range widened by ``margin`` times its width on each side, the default bandwidth
and floor (:class:`rdpjax.Defaults`) from the pilot's pooled robust scale and the *full* n. Integer
(or bool) outputs are discrete codes on the support ``[0, support_size)`` (default: from the pilot's
least code, or 0, to its largest); floats are continuous, d ≤ 3 (vectors of higher dimension need
``project``, a fixed function applied to every batch, pilot included, before binning: a bound on a
fixed function of the outputs is still a bound, by data processing).

**Outside mass.** Outputs off the grid range (codes off the support) are clamped onto its edge,
a fixed map (valid by data processing), counted in ``Bound.outside`` and warned about; never
dropped. ``outside="raise"`` raises instead, as soon as a batch has such an output.

Cost: the draws, plus O(n · 2^d) for the binning, which runs on jax's runtime thread while the
next batch is drawn (dispatch is asynchronous; at most two batches are in flight), plus O(L · g
log g) for the bound. Memory O(batch_size · d + g). The binning kernel is compiled once per
batch shape and dtype: twice when ``batch_size`` does not divide n.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.options import BoundOptions
from rdpjax.stream.driver import bound_of_source
from rdpjax.stream.options import StreamOptions, split_options
from rdpjax.stream.sources import NumpySource

__all__ = ["blackbox_bound"]


def blackbox_bound(
    key,
    sample: Callable,
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
    """A lower bound on ``D_λ(A(x) ‖ A(x'))`` from a numpy black box, at any n per side.

    Eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, as :func:`rdpjax.lower_bound`,
    with the densities (9)/(10) estimated from histograms accumulated batch by batch on a grid
    fixed by a pilot draw (module docstring: draws, grid, outside mass). Departs from
    :func:`rdpjax.lower_bound` only in the grid: fixed from the pilot instead of the data's own
    range (outputs beyond it are clamped), and in 1-D the binning rounds each cell fraction to
    :func:`rdpjax.estimator.binning.packing` bits (a fixed kernel too). Memory
    O(batch_size · d + grid): a numpy Gaussian at n = 1e8 per side peaks well under 1 GB
    (``benchmarks/performance/audit_memory.py``).

    Args:
      key: a ``jax.random`` key; the only source of randomness (module docstring).
      sample: ``sample(rng, database, m)`` returning ``m`` outputs, shape ``(m,)`` or ``(m,
        d)``: floats (continuous) or integer / bool codes (discrete), with ``rng`` a
        ``numpy.random.Generator``. Must return a new array on each call (not a buffer it
        reuses: the binning of one batch may still be reading it while the next is drawn).
      x: the first of the adjacent databases, passed to ``sample`` as it is.
      x_prime: the second, adjacent to ``x``, passed the same way.
      lam: an order λ > 1 or a sequence of orders.
      n: outputs per side (int ≥ 2), or a pair ``(n_p, n_q)``.
      alpha: family-wise error level in (0, 0.5), as in :func:`rdpjax.lower_bound`.
      both_directions: also bound ``D_λ(Q‖P)`` and report, per λ, the larger bound.
      options: the estimator's :class:`rdpjax.BoundOptions`; ``discrete=None`` decides from the
        pilot's dtype (integers or bools → relative frequencies), ``True`` needs integer codes,
        ``False`` forces a KDE; the bandwidth and floor default from the pilot and the full n;
        no quantile map.
      stream: the :class:`~rdpjax.stream.options.StreamOptions`: ``batch_size`` (outputs per
        call of ``sample``), ``pilot`` (outputs per side of the pilot draw that fixes the grid,
        the discrete/continuous decision and the default bandwidth and floor; not reused in the
        bound), ``margin``, ``grid``, ``support_size`` (default the pilot's largest code + 1;
        larger codes are then clamped and counted), ``outside``, ``project`` (a fixed function
        applied to every batch and the pilot before binning, arrays ``(m, ...)`` in, ``(m,)``
        or ``(m, d ≤ 3)`` out; needed for outputs of more than three dimensions) and
        ``progress`` (called after each batch with the outputs drawn so far over both sides
        and ``total = n_p + n_q``).
      **fields: fields of either options object by name (``batch_size=…``,
        ``second_order=…``), which replace those of ``options`` and ``stream``; any other name
        is a ``TypeError``.

    Returns:
      A :class:`rdpjax.Bound` (numpy leaves); ``outside`` holds the numbers of outputs clamped
      onto the edge of the range.

    Raises:
      ValueError: for invalid options; for a batch of the wrong length, shape, dtype or
        dimension (other than the pilot's), d > 3 without ``project``, or non-finite outputs
        (naming how many); with ``outside="raise"``, for outputs off the range.

    Example:
      >>> import jax, numpy as np
      >>> from rdpjax.stream.blackbox import blackbox_bound
      >>> def noisy_sum(rng, db, m):
      ...     return np.sum(db) + 5.0 * rng.standard_normal(m)
      >>> b = blackbox_bound(jax.random.key(0), noisy_sum, np.array([1.0, 0.0]),
      ...                    np.zeros(2), [2.0, 5.0], n=10**6)
      >>> bool((b.lower <= [0.04, 0.10]).all())
      True
    """
    source = NumpySource(key, sample, x, x_prime)
    options, stream = split_options(options, stream, fields, caller="blackbox_bound")
    return bound_of_source(
        source,
        lam,
        n=n,
        alpha=alpha,
        both_directions=both_directions,
        options=options,
        stream=stream,
    )
