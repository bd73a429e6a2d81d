"""Batches of outputs drawn outside JAX, checked and binned onto a grid fixed beforehand.

The host-side counterpart of :mod:`rdpjax.stream.scan`: a numpy black box (or any loop that
draws outputs batch by batch) checks each batch (:func:`checked_outputs`) and adds it to a
float64 accumulator (:func:`bin_batch`), which :func:`batch_counts` turns into the counts the
bound needs. Shared by :func:`rdpjax.stream.streamed_bound` (a :class:`~rdpjax.stream.BlackBox`) and
the sequential audit (:mod:`rdpjax.auditing.sequential`). :class:`BlackBoxBatches` is a black box
as a source of the looks driver (:mod:`rdpjax.stream.looks`): the Rényi looks' and the betting
test's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._keys import as_key
from rdpjax.estimator.binning import (
    bin_accumulator,
    bin_chunk,
    bin_counts,
    count_chunk,
    scan_chunks,
)
from rdpjax.estimator.grid import Grid
from rdpjax.estimator.planner import DrawPlan, Layout
from rdpjax.stream.options import DEFAULT_STREAM_CHUNK

__all__ = [
    "BIN_CHUNK",
    "BlackBoxBatches",
    "batch_counts",
    "bin_batch",
    "check_batch",
    "checked_outputs",
    "empty_carry",
    "generators",
]

BIN_CHUNK = DEFAULT_STREAM_CHUNK
"""Samples per step of the binning scan inside a batch (cache-resident temporaries)."""


@functools.partial(jax.jit, static_argnames=("layout",))
def bin_batch(acc, outside, x, low, spacing, *, layout: Layout):
    """Add one batch (codes ``(m,)`` or samples ``(m, d)``) to the accumulator.

    It runs in scan steps of :data:`BIN_CHUNK`; off-range samples are clamped into the grid
    interior (or onto the support) and counted in ``outside``. Returns the new
    ``(acc, outside)``.
    """
    grid = Grid(low=low, spacing=spacing, shape=layout.shape)

    def step(carry, chunk):
        if layout.discrete:  # code c in cell c − low (rdpjax.estimator.planner.plan_draws)
            return count_chunk(*carry, chunk - low[0].astype(chunk.dtype), clamp=True)
        return bin_chunk(*carry, chunk, grid, interior=layout.interior)

    return scan_chunks(step, (acc, outside), x, BIN_CHUNK)


@functools.partial(jax.jit, static_argnames=("layout",))
def batch_counts(acc, low, spacing, *, layout: Layout):
    """The counts (``layout.shape``) of an accumulator filled by :func:`bin_batch`."""
    if layout.discrete:
        return acc
    grid = Grid(low=low, spacing=spacing, shape=layout.shape)
    return bin_counts(acc, grid).reshape(layout.shape)


def generators(key) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """``(g_pilot, g_p, g_q)``: numpy Generators seeded from a jax key.

    The seeds come through ``np.random.SeedSequence`` of the key's ``uint32`` words, spawned
    into three children.
    """
    data = np.asarray(jax.random.key_data(as_key(key))).ravel().astype(np.uint32)
    seeds = np.random.SeedSequence([int(v) for v in data]).spawn(3)
    return tuple(np.random.default_rng(s) for s in seeds)


def empty_carry(fixed: DrawPlan):
    """An empty ``(accumulator, outside)`` pair for :func:`bin_batch` on ``fixed``'s layout."""
    if fixed.layout.discrete:
        return jnp.zeros(fixed.layout.shape, jnp.float64), jnp.zeros((), jnp.float64)
    return bin_accumulator(fixed.grid), jnp.zeros((), jnp.float64)


def checked_outputs(
    sample: Callable, rng, database, m: int, project: Callable | None, side: str
) -> np.ndarray:
    """One call ``sample(rng, database, m)`` of a black box, projected and checked.

    The outputs must be ``(m,)`` or ``(m, d)`` real numbers or integer codes (bools become codes
    0, 1).

    Raises:
      ValueError: on the wrong length or dimension, a non-numeric dtype, or non-finite values
        (naming ``side``).
    """
    return check_batch(np.asarray(sample(rng, database, m)), m, project, side)


def check_batch(out: np.ndarray, m: int, project: Callable | None, side: str) -> np.ndarray:
    """:func:`checked_outputs` of a batch ``out`` already drawn (``m`` outputs on ``side``)."""
    if out.ndim == 0 or out.shape[0] != m:
        raise ValueError(
            f"sample(rng, database, {m}) on {side} returned shape {out.shape}; expected ({m},) "
            f"or ({m}, d)."
        )
    if project is not None:
        out = np.asarray(project(out))
        if out.ndim not in (1, 2) or out.shape[0] != m:
            raise ValueError(
                f"project must map a batch of {m} outputs to shape ({m},) or ({m}, d); got "
                f"{out.shape} on {side}."
            )
    elif out.ndim > 2:
        raise ValueError(
            f"sample returned outputs of shape {out.shape[1:]} on {side}; outputs must be "
            "scalars or vectors (m,) / (m, d): pass project=, a fixed function mapping a batch "
            "to (m,) or (m, d ≤ 3)."
        )
    if out.dtype.kind not in "biuf":
        raise ValueError(
            f"sample returned {out.dtype} outputs on {side}; real numbers or integer codes "
            "are needed."
        )
    if out.dtype.kind == "b":
        out = out.view(np.uint8)  # codes 0, 1
    if out.dtype.kind == "f":
        total = out.sum()  # finite iff every value is (or an overflow, checked below)
        if not np.isfinite(total):
            bad = int(np.count_nonzero(~np.isfinite(out)))
            if bad:
                raise ValueError(
                    f"sample returned {bad} non-finite values in a batch of {m} outputs on "
                    f"{side}; a mechanism's outputs must be finite."
                )
    return out


class BlackBoxBatches:
    """Batches of a black box ``sample(rng, database, m)``, one Generator per side.

    ``g_pilot, g_p, g_q = generators(key)``: side ``s`` calls the black box with its own
    Generator (``g_p`` on x, ``g_q`` on x'), batch after batch, so the Generator carries the
    position and its state is what a checkpoint keeps (a :class:`rdpjax.stream.looks.BatchSource`).

    Args:
      sample: the black box.
      x: the first database.
      x_prime: the second.
      key: a JAX key.
      project: an optional fixed map of a batch (:func:`check_batch`).
      sides: the two sides' names in error messages.
    """

    def __init__(self, sample: Callable, x, x_prime, key, project, sides=("x", "x'")) -> None:
        self.sample, self.databases, self.project = sample, (x, x_prime), project
        self.g_pilot, *self.rngs = generators(key)
        self.sides = sides

    def draw(self, side: int, piece: int, m: int) -> np.ndarray:
        """The next ``m`` checked outputs of ``side`` (0: x, 1: x') from that side's generator."""
        del piece  # the side's Generator carries the position
        return checked_outputs(
            self.sample, self.rngs[side], self.databases[side], m, self.project, self.sides[side]
        )

    def rng_state(self) -> list:
        """The two sides' generator states (for a checkpoint)."""
        return [g.bit_generator.state for g in self.rngs]

    def restore(self, state: list) -> None:
        """Set the two sides' generators to the states :meth:`rng_state` returned."""
        for g, s in zip(self.rngs, state, strict=True):
            g.bit_generator.state = s
