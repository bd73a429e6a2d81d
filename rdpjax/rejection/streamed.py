"""The rejection-set test at any n: the certification draws are counted per cell as they come.

The selection draws (``selection · n`` a side, at most :data:`MAX_SELECTION`) are drawn in memory
and fix the cells and the sets; then ``N ~ Poisson(n)`` certification draws a side (the pooled
test's Poissonization, :mod:`rdpjax.rejection.pooled`, at no loss: the stream draws exactly N) are
counted per cell as they are drawn (:meth:`rdpjax.stream.sources.Source.tally`, the cells' edges
fixed): JAX samplers inside one compiled scan a side, numpy black boxes batch by batch. Memory
O(selection + cells), so n = 10⁹ a side works as it does for the Rényi bounds. Keys: ``split(key)``
gives the selection's and the certification's, so the two parts are independent. Only per-cell
counts of the certification draws and the multiset of the selection draws are used, so the order in
which a sampler returns a batch cannot matter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from rdpjax._keys import as_key, key_rng
from rdpjax._precision import float64
from rdpjax.estimator.options import BoundOptions, or_default
from rdpjax.rejection.api import Counts, counted_set_test, selection_in_random_order
from rdpjax.rejection.options import SetOptions
from rdpjax.rejection.result import SetTest
from rdpjax.stream.batches import checked_outputs, generators
from rdpjax.stream.options import StreamOptions
from rdpjax.stream.pilot import check_sizes
from rdpjax.stream.samplers import Sampler, pilot_draw, user_sampler
from rdpjax.stream.sources import JaxSource, NumpySource, Source

__all__ = [
    "MAX_SELECTION",
    "blackbox_set_test",
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
    sample_p: Callable[..., Any] | Sampler,
    sample_q: Callable[..., Any] | Sampler,
    claim: Any = None,
    *,
    n: int,
    args: tuple[Any, Any] = ((), ()),
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    stream: StreamOptions | None = None,
) -> SetTest:
    """:func:`rdpjax.rejection.set_test` on JAX samplers, ``n`` certification draws a side.

    Args:
        key: a JAX PRNG key.
        sample_p: ``sample_p(key, m) -> (m,)`` outputs on x (or a
            :class:`~rdpjax.stream.samplers.Sampler` with ``args``).
        sample_q: the same on x'.
        claim: a claim of kind ``pure_dp``, ``approx_dp`` or ``gdp``, or ``None``.
        n: certification draws per side (up to 2^40); the selection draws ``selection · n``
            more (at most :data:`MAX_SELECTION`).
        args: each side's traced arguments for :class:`Sampler` s (a mechanism and database).
        delta: the δ of the reported ε bound (default the claim's, or 0).
        alpha: family-wise level.
        options: :class:`~rdpjax.rejection.SetOptions`.
        stream: :class:`~rdpjax.stream.StreamOptions` (chunk, devices, progress).

    Returns:
        A :class:`~rdpjax.rejection.result.SetTest` with ``streamed=True``.
    """
    options = or_default(options, SetOptions, "options", "rdpjax.rejection.SetOptions")
    samplers = [s if isinstance(s, Sampler) else user_sampler(s) for s in (sample_p, sample_q)]
    k_sel, k_cert = jax.random.split(as_key(key))
    m = selection_size(min(check_sizes(n)), options)
    with float64():
        select = tuple(
            np.asarray(pilot_draw(k, a, sampler=s, m=m))
            for k, s, a in zip(jax.random.split(k_sel), samplers, args, strict=True)
        )

    source = JaxSource(k_cert, (samplers[0], samplers[1]), args)
    return source_set_test(
        key_rng(key), selection_in_random_order(key, select), source, n, claim, delta=delta,
        alpha=alpha, options=options, stream=stream,
    )  # fmt: skip


def blackbox_set_test(
    key: Any,
    sample: Callable[..., Any],
    x: Any,
    x_prime: Any,
    claim: Any = None,
    *,
    n: int,
    delta: float | None = None,
    alpha: float = 0.05,
    options: SetOptions | None = None,
    stream: StreamOptions | None = None,
) -> SetTest:
    """:func:`rdpjax.rejection.set_test` on a numpy black box ``sample(rng, database, m)``.

    ``stream.project`` (a fixed function of a batch) is applied before the cells; batches of
    ``stream.batch_size``. Arguments otherwise as for :func:`streamed_set_test`.
    """
    options = or_default(options, SetOptions, "options", "rdpjax.rejection.SetOptions")
    stream = StreamOptions() if stream is None else stream
    project, batch = stream.project, stream.batch_size
    g_sel, _, _ = generators(key)
    k_cert = jax.random.split(as_key(key))[1]
    m = selection_size(min(check_sizes(n)), options)

    def draw(db: Any, side: str) -> np.ndarray:
        parts, done = [], 0
        while done < m:
            size = min(batch, m - done)
            parts.append(checked_outputs(sample, g_sel, db, size, project, side))
            done += size
        return np.concatenate(parts)

    select = (draw(x, "x (selection)"), draw(x_prime, "x' (selection)"))

    source = NumpySource(k_cert, sample, x, x_prime)
    return source_set_test(
        key_rng(key), selection_in_random_order(key, select), source, n, claim, delta=delta,
        alpha=alpha, options=options, stream=stream,
    )  # fmt: skip
