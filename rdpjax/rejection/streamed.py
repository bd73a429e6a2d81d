"""The rejection-set test on streamed draws: fixed n, counted per cell, or by betting on looks.

:func:`streamed_set_test` takes the key and a value that says what to draw from
(:mod:`rdpjax.stream.draws`: JAX samplers, a zoo mechanism on a pair, a numpy black box), as
:func:`rdpjax.stream.streamed_bound` does, and ``n``: a whole number, or a
:class:`~rdpjax.stream.Looks` for the anytime-valid test by betting
(:mod:`rdpjax.rejection.betting`).

At fixed n, the selection draws (``selection · n`` a side, at most :data:`MAX_SELECTION`) are
drawn in memory and fix the cells and the sets; then ``N ~ Poisson(n)`` certification draws a
side (the pooled test's Poissonization, :mod:`rdpjax.rejection.pooled`, at no loss: the stream
draws exactly N) are counted per cell as they are drawn (:meth:`rdpjax.stream.sources.Source.tally`,
the cells' edges fixed): JAX samplers inside one compiled scan a side, numpy black boxes batch by
batch. Memory O(selection + cells), so n = 10⁹ a side works as it does for the Rényi bounds. Keys:
``split(key)`` gives the selection's and the certification's, so the two parts are independent.
Only per-cell counts of the certification draws and the multiset of the selection draws are used,
so the order in which a sampler returns a batch cannot matter.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from rdpjax._keys import as_key, key_rng
from rdpjax._precision import float64
from rdpjax.estimator.options import BoundOptions, or_default
from rdpjax.rejection.api import Counts, counted_set_test, selection_in_random_order
from rdpjax.rejection.betting import betting_test
from rdpjax.rejection.betting_result import BettingResult
from rdpjax.rejection.options import SetOptions
from rdpjax.rejection.result import SetTest
from rdpjax.stream.draws import Draws, as_draws
from rdpjax.stream.options import Looks, StreamOptions
from rdpjax.stream.pilot import check_sizes
from rdpjax.stream.sources import Source

__all__ = [
    "MAX_SELECTION",
    "selection_size",
    "source_set_test",
    "streamed_set_test",
]

MAX_SELECTION = 2**24
"""Most selection draws a side held in memory (128 MiB of float64)."""


def selection_size(n: int, options: SetOptions) -> int:
    """Selection draws a side for ``n`` asked: ``⌊selection · n⌋`` in [2, MAX_SELECTION]."""
    return int(min(max(2, np.floor(options.selection * n)), MAX_SELECTION))


def source_set_test(
    rng: np.random.Generator,
    select: tuple[np.ndarray, np.ndarray],
    source: Source,
    n: int | tuple[int, int],
    claim: Any = None,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    stream: StreamOptions | None = None,
) -> SetTest:
    """The test on selection draws and a source of certification draws as cell codes.

    Args:
        rng: draws the Poisson sizes and the pooled test's ties (from the key).
        select: selection draws of P and Q (1-D, in memory).
        source: a :class:`~rdpjax.stream.sources.Source` of fresh 1-D draws, independent of
            ``select``; it counts them on the cells as it draws
            (:meth:`~rdpjax.stream.sources.Source.tally`, no Rényi grid).
        n: the mean certification draws per side, or a pair (the stream draws
            ``Poisson(n)``).
        claim: a claim of kind ``pure_dp``, ``approx_dp`` or ``gdp``, or ``None``.
        delta: the δ of the reported ε bound (default the claim's, or 0).
        alpha: family-wise level in (0, 0.5).
        options: :class:`~rdpjax.rejection.SetOptions`.
        stream: the :class:`~rdpjax.stream.StreamOptions` (chunk, batch size, progress).
    """
    sizes = check_sizes(n)
    stream = StreamOptions() if stream is None else stream

    rate = float(min(sizes))
    drawn = (int(rng.poisson(rate)), int(rng.poisson(rate)))

    def count(edges: np.ndarray) -> Counts:
        counting = stream.replace(pilot=2)  # the cells are fixed: no pilot needed
        n_stream = (max(drawn[0], 1), max(drawn[1], 1))
        with float64():  # float64 counts: exact to 2^53 draws
            source.kind(BoundOptions(), counting)
            tally = source.tally(None, n_stream, counting, cells=edges)
        assert tally.cells is not None
        c_p, c_q = (np.rint(c).astype(np.int64) for c in tally.cells)
        poisson = (c_p, c_q) if min(drawn) > 0 else None  # a stream of one draw is not Poisson(0)
        return Counts(c_p, c_q, poisson, rate)

    return counted_set_test(
        rng, select, count, sizes, claim, delta=delta, alpha=alpha, options=options,
        streamed=True,
    )  # fmt: skip


def streamed_set_test(
    key: Any,
    draws: Draws,
    claim: Any = None,
    *,
    n: int | Looks,
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    stream: StreamOptions | None = None,
) -> SetTest | BettingResult:
    """:func:`rdpjax.rejection.set_test` on draws that never exist in full, or by betting.

    ``n`` a whole number: ``selection · n`` selection draws a side (at most
    :data:`MAX_SELECTION`) fix the cells and the sets, then ``Poisson(n)`` certification draws a
    side are counted per cell as they come (module docstring). ``n`` a
    :class:`~rdpjax.stream.Looks`: the anytime-valid test by betting on sets
    (:mod:`rdpjax.rejection.betting`), drawing batches of at most ``stream.batch_size`` pairs
    until the claim is refuted or ``Looks.max_n`` (default 10⁵) a side.

    Args:
        key: a JAX PRNG key; the only source of randomness.
        draws: what to draw from (:mod:`rdpjax.stream.draws`): :class:`~rdpjax.stream.JaxSamplers`,
            :class:`~rdpjax.stream.MechanismPair` or :class:`~rdpjax.stream.BlackBox`.
        claim: a claim of kind ``pure_dp``, ``approx_dp`` or ``gdp``; ``None`` (fixed n only):
            the bounds alone.
        n: certification draws per side (up to 2^40), or a :class:`~rdpjax.stream.Looks`.
        delta: the δ of the reported ε bound (default the claim's, or 0); fixed n only.
        alpha: family-wise level.
        options: :class:`~rdpjax.rejection.SetOptions`; fixed n only.
        stream: :class:`~rdpjax.stream.StreamOptions`: chunk, devices and progress; a black
            box's ``batch_size`` and ``project`` (a fixed function of a batch, applied before
            the cells; the betting test's batches and projection for every kind of draws).

    Returns:
        A :class:`~rdpjax.rejection.result.SetTest` with ``streamed=True``; with looks, a
        :class:`~rdpjax.rejection.BettingResult`.

    Raises:
        ValueError: for ``draws`` of another type, and as :func:`rdpjax.rejection.set_test`; with
            looks, for ``delta``, ``options``, a schedule or a checkpoint folder (a betting audit
            with a checkpoint: :func:`rdpjax.audit` with ``n=Looks(checkpoint=…)``).

    Example:
        >>> import jax, numpy as np
        >>> from rdpjax.claims import gdp
        >>> from rdpjax.stream import BlackBox, Looks
        >>> def noisy_sum(rng, db, m):
        ...     return np.sum(db) + rng.normal(size=m)
        >>> box = BlackBox(noisy_sum, [1.0], [0.0])
        >>> r = streamed_set_test(jax.random.key(0), box, gdp(0.5), n=Looks(max_n=10**5))
        >>> r.refuted, r.n < 1000
        (True, True)
    """
    draws = as_draws(draws, "streamed_set_test")
    stream = or_default(stream, StreamOptions, "stream", "rdpjax.stream.StreamOptions")
    if isinstance(n, Looks):
        return _betting(key, draws, claim, n, delta, alpha, options, stream)
    options = or_default(options, SetOptions, "options", "rdpjax.rejection.SetOptions")
    m = selection_size(min(check_sizes(n)), options)
    select = draws.selection(key, m, stream)
    source, stream = draws.source(jax.random.split(as_key(key))[1], stream)
    return source_set_test(
        key_rng(key), selection_in_random_order(key, select), source, n, claim, delta=delta,
        alpha=alpha, options=options, stream=stream,
    )  # fmt: skip


def _betting(key, draws: Draws, claim, looks: Looks, delta, alpha, options, stream):
    """The betting test of ``streamed_set_test(…, n=looks)``: what it refuses, then the test."""
    for name, value in (("delta", delta), ("options", options), ("schedule", looks.schedule)):
        if value is not None:
            raise ValueError(
                f"streamed_set_test with n=Looks(...) bets on sets and takes no {name}; "
                "drop it, or pass a whole number n for the fixed-n test."
            )
    if looks.checkpoint is not None:
        raise ValueError(
            "streamed_set_test keeps no checkpoint; rdpjax.audit(..., n=Looks(checkpoint=…)) "
            "saves a betting test's state and resumes it."
        )
    max_n = int(looks.max_n) if looks.max_n is not None else 10**5
    sample, x, x_prime = draws.blackbox()
    return betting_test(
        key, sample, x, x_prime, claim, alpha=alpha, max_n=max_n, batch=stream.batch_size,
        project=stream.project,
    )  # fmt: skip
