"""The packed 1-D linear binning: one int64 scatter-add a sample (:mod:`rdpjax.estimator.binning`).

In 1-D (the common case: one real output per draw) a chunk is scattered as *one int64 per sample*:
the cell fraction is rounded to ``b`` bits, ``q = ⌊frac · 2^b + 1/2⌋``, and the sample adds ``2^s +
q`` to its row, so that the row's sum holds its count above bit ``s`` and its Σq below; the chunk's
sums are then unpacked into the float64 pairs ``(count − Σq/2^b, Σq/2^b)`` (exactly, for chunks of
512 samples or more). ``b`` follows from the chunk size (:func:`fraction_bits`: 29 bits at 2^16
samples, 27 at 2^17, 25 at 2^18, 21 at 2^20, at most 30). Chunks of 2^21 or more (a GPU's 2^22) deal
sample ``i`` to copy ``i mod k`` of the accumulator, at most 2^18 a copy (:func:`packing`: 25 bits),
unpacked and added per chunk: no float64 atomics on a GPU (CUDA adds int64 natively), and a hot cell
(a point mass) is spread over ``k`` copies: the contention guard. Each sample thus moves to within
2^-(b+1) of a cell of its exact linear-binning split, e.g. 3.7e-9 of a cell at 2^17; the map is
still a fixed Markov kernel (a deterministic split of a unit mass between the two ends of the cell),
so the data-processing argument of :mod:`rdpjax.estimator.binning` holds as it stands. Samples off
the grid (or off the ``interior`` box) go to two extra rows of the same scatter, below and above,
whose counts give the number outside without a second pass over the chunk; under ``interior`` that
mass then goes to the box's two ends, where clamping puts it. An integer scatter-add of one word
costs far less than a float64 one of two, and this path less than the flat-grid window formulation
the pair rows replaced (measured: ``docs/performance.md``, section "The packed 1-D binning
(rdpjax/_internal/packed.py)").
"""

from __future__ import annotations

import functools
import math
from typing import cast

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from rdpjax._typing import Array

__all__ = ["EDGE_SLACK", "SPREAD_SAMPLES", "bin_1d", "fraction_bits", "packed_pairs", "packing"]

EDGE_SLACK = 1e-6
"""Cells of slack at the edges of an ``interior`` box before a sample counts as outside it."""
_MIN_FRACTION_BITS = 20
_MAX_FRACTION_BITS = 30
SPREAD_SAMPLES = 2**18
"""At most this many samples of a 1-D chunk go to one copy of the packed accumulator
(:func:`packing`)."""
FIRST = np.array([[1.0, 0.0]])  # (1, 2): broadcast over pair rows (numpy: no jax work at import)
SPLIT = np.array([[-1.0, 1.0]])
_SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
_IN_BOUNDS = lax.GatherScatterMode.PROMISE_IN_BOUNDS


def fraction_bits(chunk: int) -> int | None:
    """Bits ``b`` of the rounded cell fraction when 1-D samples are binned ``chunk`` at a time.

    They are binned with one int64 scatter-add into one accumulator (module docstring); the result
    is ``None`` for chunks of 2^21 samples or more, where fewer than 20 bits would be left
    (:func:`packing` then spreads the chunk over copies).

    With ``L = chunk.bit_length()`` a row's count (≤ chunk < 2^L) sits above bit ``b + L`` and
    its sum of fractions (≤ chunk · 2^b < 2^(b + L)) below it, so ``b = 63 − 2L`` keeps the
    packed sum below 2^63: 2^16 samples → 29 bits, 2^17 → 27, 2^20 → 21. Smaller chunks are
    capped at 30 bits (``q`` is converted through int32, which AVX2 CPUs vectorize and int64
    they do not).
    """
    bits = min(63 - 2 * chunk.bit_length(), _MAX_FRACTION_BITS)
    return bits if bits >= _MIN_FRACTION_BITS else None


def packing(chunk: int) -> tuple[int, int]:
    """``(bits, copies)`` of the packed 1-D binning of a chunk of ``chunk`` samples.

    One copy at :func:`fraction_bits` bits when that leaves 20 or more, otherwise the samples dealt
    to the fewest power-of-two copies that hold at most :data:`SPREAD_SAMPLES` each, at the bits of
    that many (2^21 → 8 copies, 2^22 → 16, both at 25 bits).
    """
    bits = fraction_bits(chunk)
    if bits is not None:
        return bits, 1
    copies = 1 << (math.ceil(chunk / SPREAD_SAMPLES) - 1).bit_length()
    return cast(int, fraction_bits(math.ceil(chunk / copies))), copies  # ≤ 2^18 a copy: 25 bits


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3, 4))
def packed_pairs(row: Array, position: Array, bits: int, size: int, copies: int = 1) -> Array:
    """Float64 pair rows ``(size + 3, 2)`` of 1-D samples at cell positions ``position``.

    A sample with ``row < 0`` is binned: it lies in cell ``⌊position⌋`` (``position`` ∈
    ``[0, size − 1]``) at fraction ``frac = position − ⌊position⌋``; any other sample goes whole
    to row ``row`` (one of the three rows past the grid's ``size``: the discard row, below,
    above). They come from one int64 scatter-add: each sample adds ``2^shift + q``,
    ``q = ⌊frac · 2^bits + 1/2⌋``, so that a row's sum holds its count above bit ``shift`` and its
    Σq below (see :func:`fraction_bits`). Column 1 gets ``Σq / 2^bits``, column 0 the rest of the
    count, from integer sums (exact in float64 for chunks of 512 samples or more, where
    Σq < 2^(63 − L) ≤ 2^53; smaller chunks round Σq to float64's 2^-53); the two columns add up to
    the count.

    Cell and ``q`` come from one rounding, ``v = ⌊position · 2^bits + 1/2⌋ = cell · 2^bits + q``
    (exact while ``position · 2^bits < 2^52``: ``bits`` is lowered for grids of 2^22 points or
    more), as ``v >> bits`` and ``v mod 2^bits``; a fraction that rounds up to 1 thus lands at
    fraction 0 of the next cell, the same split of the sample's mass.
    One float64 → int64 conversion a sample, instead of a floor, a subtraction and two
    conversions: the same counts (timed: ``docs/performance.md``, section "The packed 1-D
    binning (rdpjax/_internal/packed.py)").

    Differentiable in ``position`` as linear binning is (the rounding has no derivative to
    give): the tangent is that of the float64 pairs ``(1 − frac, frac)`` of cell
    ``min(⌊position⌋, size − 2)`` (the pair search differentiates the KDE through the samples'
    positions).

    With ``copies`` > 1, sample ``i`` adds to copy ``i mod copies`` of the rows (each copy
    holding at most ``⌈c / copies⌉`` samples, which ``bits`` must fit: :func:`packing`), and
    the copies' integer parts are added after unpacking.

    A row that takes a NaN position (e.g. the discard row) holds garbage (a NaN converts to some
    integer; int64 sums wrap around); such rows must never be read.
    """
    rows = size + 3
    bits = min(bits, 52 - (size - 1).bit_length())  # position · 2^bits < 2^52: exact
    shift = bits + (-(-row.shape[0] // copies)).bit_length()
    scaled = (position * 2.0**bits + 0.5).astype(jnp.int64)  # cell · 2^bits + q
    index = jnp.where(row < 0, (scaled >> bits).astype(jnp.int32), row)
    if copies > 1:
        index = index + (jnp.arange(row.shape[0], dtype=jnp.int32) % copies) * rows
    update = (jnp.int64(1) << shift) + (scaled & ((1 << bits) - 1))
    packed = lax.scatter_add(
        jnp.zeros(rows * copies, jnp.int64), index[:, None], update, _SCATTER, mode=_IN_BOUNDS
    )  # every index in [0, rows · copies): the grid's cells, or the rows past it
    parts = jnp.stack([packed >> shift, packed & ((1 << shift) - 1)], axis=-1)
    if copies > 1:  # integer sums over the copies: exact while Σq < 2^63 (chunk · 2^bits)
        parts = parts.reshape(copies, rows, 2).sum(axis=0)
    parts = parts.astype(jnp.float64)  # exact for chunks ≥ 512 (docstring)
    moved = parts[:, 1:] * 2.0**-bits
    # (count, 0) + moved · (−1, 1), written with broadcasts: stacking the two float columns
    # made XLA's CPU loop 4× slower (101 against 27 µs for 47,578 rows).
    return parts * FIRST + moved * SPLIT


@packed_pairs.defjvp
def packed_pairs_jvp(
    bits: int, size: int, copies: int, primals: tuple[Array, Array], tangents: tuple[Array, Array]
) -> tuple[Array, Array]:
    row, position = primals
    d_position = tangents[1]
    cell = jnp.minimum(jnp.floor(position), size - 2).astype(jnp.int32)
    d_pairs = (
        jnp.zeros((size + 3, 2), jnp.float64)
        .at[jnp.where(row < 0, cell, row)]
        .add(d_position[:, None] * SPLIT, mode="promise_in_bounds")
    )
    return cast(Array, packed_pairs(row, position, bits, size, copies)), d_pairs


def bin_1d(
    acc: Array,
    outside: Array,
    u: Array,
    *,
    valid: Array | None,
    interior: tuple[tuple[int, int], ...] | None,
) -> tuple[Array, Array]:
    """:func:`bin_chunk` for 1-D samples at cell positions ``u``, one int64 scatter-add a sample.

    See the module docstring. Off-grid samples go to two extra rows (below, above), so that their
    number comes out of the same scatter rather than a second pass over the chunk; under
    ``interior`` their mass is then put on the box's ends, which is where clamping puts it.
    """
    size = acc.shape[0] - 1
    discard, below, above = size, size + 1, size + 2
    if interior is None:
        (lo, hi), slack = (0, size - 1), 0.0
        u = jnp.where(jnp.isnan(u), -jnp.inf, u)  # NaN: off the grid, counted below
    else:
        (lo, hi), slack = interior[0], EDGE_SLACK
    inside = jnp.clip(u, lo, hi)
    row = jnp.where(u < lo - slack, below, jnp.where(u > hi + slack, above, -1))  # −1: binned
    if interior is not None:  # non-finite samples are neither binned nor counted
        row = jnp.where(jnp.isfinite(u), row, discard)
    if valid is not None:
        row = jnp.where(valid, row, discard)
    bits, copies = packing(u.shape[0])
    pairs = cast(Array, packed_pairs(row, inside, bits, size, copies))
    off = pairs[below:].sum(axis=-1)  # (below, above) counts, exact integers
    acc = acc + pairs[:below]
    if interior is not None:  # clamped onto the box: all of a sample's mass on its end point
        acc = acc.at[lo, 0].add(off[0])
        acc = acc.at[hi, 0].add(off[1]) if hi < size - 1 else acc.at[hi - 1, 1].add(off[1])
    return acc, outside + off.sum()
