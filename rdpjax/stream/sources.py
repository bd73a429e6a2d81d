"""Sources: a pair of output laws the stream draws from, behind one protocol.

A :class:`Source` says what its outputs are (integer codes or floats, their dimension), draws
the pilot the grid and the settings are fixed from, and counts ``n`` draws per side on that
grid and, in the same pass, on the rejection sets' cells (:meth:`Source.tally`). The driver
(:func:`rdpjax.stream.driver.tally_bound`) does the rest, the same for every source. Two kinds
exist:

* :class:`JaxSource`: two JAX samplers (``sample(key, m)``, or a zoo mechanism on x and x'),
  drawn and binned inside one compiled scan per side, split over the devices
  (:mod:`rdpjax.stream.scan`); keys ``split(key, 3)``: the pilot's, P's, Q's.
* :class:`NumpySource`: a numpy black box ``sample(rng, database, m)`` on x and x', called batch
  by batch with ``numpy.random.Generator`` s spawned from the key
  (:func:`rdpjax.stream.batches.generators`), each batch binned on jax's runtime thread while
  the next is drawn. Integer rows ``(m, d)`` are coded by the pilot's
  :class:`~rdpjax.stream.rows.RowBook` (rows the pilot missed share the code 0).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax
import numpy as np

from rdpjax._internal.progress import progress_run
from rdpjax._internal.sharding import draw_mesh
from rdpjax._internal.threads import both
from rdpjax._keys import as_key, sorted_rows
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.planner import DrawPlan
from rdpjax.stream.batches import (
    batch_counts,
    bin_batch,
    checked_outputs,
    empty_carry,
    generators,
)
from rdpjax.stream.options import StreamOptions
from rdpjax.stream.rows import RowBook
from rdpjax.stream.samplers import Sampler, mechanism_samplers, output_kind, pilot_draw
from rdpjax.stream.scan import _stream_side

__all__ = ["JaxSource", "NumpySource", "Source", "Tally", "mechanism_source", "sorted_pilots"]


class Tally(NamedTuple):
    """What one pass of ``sizes`` draws a side counted, every statistic on the same draws.

    Attributes:
      counts: the Rényi bound's counts per side on ``fixed``'s grid or support (``None``
        without a ``fixed``).
      outside: per side, the draws clamped onto the grid's edge or the support.
      cells: per side, the counts on the rejection sets' cells (``None`` without ``cells``).
    """

    counts: tuple[np.ndarray, np.ndarray] | None
    outside: tuple[Any, Any]
    cells: tuple[np.ndarray, np.ndarray] | None


_IN_FLIGHT = 2
"""Numpy batches dispatched to the binning kernel and not yet binned, at most (bounds memory)."""


def sorted_pilots(pilots: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Each side's pilot rows on the host, sorted (rows of a vector output lexicographically).

    The settings read the pilot through strided subsamples (the pooled scale), so a sampler
    that returned its batch sorted, or in any order of its own, would change them; sorted
    first, the pilot depends on its multiset only (issue 51), and a strided subsample of it is a
    systematic one across its quantiles. (The rejection sets, which split their selection by
    position, put it in an order drawn from the key: :mod:`rdpjax.rejection.api`.) The sides
    (numpy or jax arrays) are copied and sorted side by side (:mod:`rdpjax._internal.threads`).
    """
    # sorted_rows copies a jax array to the host first (np.asarray).
    return both(sorted_rows, pilots[0], pilots[1], items=int(np.size(pilots[0])))


class Source(Protocol):
    """A pair of output laws, P (on x) and Q (on x'), that the stream can draw from."""

    def kind(self, options: BoundOptions, stream: StreamOptions) -> tuple[bool, int]:
        """``(integer codes?, dimension d)`` of the outputs (checked to agree on both sides)."""
        ...

    def pilot(self) -> tuple[np.ndarray, np.ndarray]:
        """The pilot draws of both sides (numpy), independent of the counted draws.

        Each side sorted (:func:`sorted_pilots`): the order the sampler returned them in cannot
        matter.
        """
        ...

    def tally(
        self,
        fixed: DrawPlan | None,
        sizes: tuple[int, int],
        stream: StreamOptions,
        cells: np.ndarray | None = None,
    ) -> Tally:
        """Draw ``sizes`` outputs a side; count them on ``fixed``'s grid and on ``cells``.

        ``cells`` are the sorted edges of the rejection sets' cells (1-D outputs or codes);
        either statistic may be absent (``None``), and both count the same draws.
        """
        ...


class JaxSource:
    """Two JAX samplers with their traced arguments (a zoo mechanism and a database, or none).

    Args:
      key: the stream's key; split in three: the pilot's, P's and Q's.
      samplers: the :class:`~rdpjax.stream.samplers.Sampler` of each side.
      args: each side's traced arguments.
    """

    def __init__(self, key, samplers: tuple[Sampler, Sampler], args: tuple[Any, Any]):
        self.key = as_key(key)
        self.samplers, self.args = samplers, args
        k_pilot, self.k_p, self.k_q = jax.random.split(self.key, 3)
        self.pilot_keys = jax.random.split(k_pilot)
        self.pilot_size = 0
        self.pilots: tuple[np.ndarray, np.ndarray] | None = None

    def kind(self, options: BoundOptions, stream: StreamOptions) -> tuple[bool, int]:
        """The samplers' output kind, from their abstract evaluation (nothing is drawn)."""
        self.pilot_size = stream.pilot_size
        kinds = [output_kind(s, a, self.key) for s, a in zip(self.samplers, self.args, strict=True)]
        if kinds[0] != kinds[1]:
            raise ValueError(
                "sample_p and sample_q must return the same kind of output; got "
                f"(integer, d) = {kinds[0]} and {kinds[1]}."
            )
        return kinds[0]

    def pilot(self) -> tuple[np.ndarray, np.ndarray]:
        """``stream.pilot_size`` draws a side from the pilot keys.

        Drawn when a setting first needs them, then kept (a one-pass audit reads them twice).
        """
        if self.pilots is None or len(self.pilots[0]) != self.pilot_size:
            # Both sides dispatched before either is copied; the copies and sorts side by side.
            drawn = [
                pilot_draw(k, a, sampler=s, m=self.pilot_size)
                for k, s, a in zip(self.pilot_keys, self.samplers, self.args, strict=True)
            ]
            self.pilots = sorted_pilots((drawn[0], drawn[1]))
        return self.pilots

    def tally(
        self,
        fixed: DrawPlan | None,
        sizes: tuple[int, int],
        stream: StreamOptions,
        cells: np.ndarray | None = None,
    ) -> Tally:
        """:meth:`Source.tally`: one compiled scan a side.

        It draws and counts ``stream.chunk`` draws a device a step, every statistic as it draws.
        """
        n_p, n_q = sizes
        chunk, progress = min(stream.chunk, max(n_p, n_q)), stream.progress
        if -(-max(n_p, n_q) // chunk) > 2**31 - 1:
            raise ValueError(
                f"n / chunk must stay below 2^31 chunks; got n={sizes}, chunk={chunk}."
            )
        mesh = draw_mesh(stream.devices)
        impl = str(jax.random.key_impl(self.key))
        with progress_run(progress, (n_p, n_q), chunk) as run_id:
            results = []
            for side, (k, s, a, m) in enumerate(
                zip((self.k_p, self.k_q), self.samplers, self.args, sizes, strict=True)
            ):
                results.append(
                    _stream_side(
                        np.asarray(jax.random.key_data(k)),
                        a,
                        np.zeros(1) if fixed is None else fixed.low,
                        np.ones(1) if fixed is None else fixed.spacing,
                        np.int32(2 * run_id + side),
                        None if cells is None else np.asarray(cells, np.float64),
                        sampler=s,
                        n=m,
                        chunk=chunk,
                        layout=None if fixed is None else fixed.layout,
                        method=stream.binning,
                        mesh=mesh,
                        impl=impl,
                        progress=progress is not None,
                        cells=None if cells is None else len(cells) + 1,
                    )
                )
            # Host copies: the bound's compilation is then shared with lower_bound's (jit keys
            # include input shardings, and the stream's outputs live on the mesh).
            (counts_p, out_p, bad_p, cells_p), (counts_q, out_q, bad_q, cells_q) = jax.device_get(
                results
            )
        nonfinite = np.array([float(bad_p), float(bad_q)])
        if np.any(nonfinite > 0):
            bad_p, bad_q = (int(v) for v in nonfinite)
            raise ValueError(
                f"the mechanism returned {bad_p:,} non-finite (NaN or infinite) values on x (P) "
                f"and {bad_q:,} on x' (Q); a mechanism's outputs must be finite."
            )
        return Tally(
            None if fixed is None else (counts_p, counts_q),
            (out_p, out_q),
            None if cells is None else (cells_p, cells_q),
        )


def mechanism_source(key, mechanism, x, x_prime, stream: StreamOptions):
    """A zoo mechanism on x and x' as a :class:`JaxSource`, and ``stream`` with its support.

    Discrete outputs are encoded by the mechanism's encoder and, unless ``stream`` names a
    ``support_size``, counted on its alphabet. Returns ``(source, stream)``.
    """
    sampler, args_p, args_q, spec = mechanism_samplers(mechanism, x, x_prime)
    if spec.is_discrete and stream.support_size is None and spec.alphabet_size:
        stream = stream.replace(support_size=spec.alphabet_size)
    return JaxSource(key, (sampler, sampler), (args_p, args_q)), stream


def _kind(out: np.ndarray) -> tuple[bool, tuple[int, ...]]:
    return out.dtype.kind in "biu", out.shape[1:]


class NumpySource:
    """A numpy black box ``sample(rng, database, m)`` on the adjacent databases x and x'.

    Args:
      key: the stream's key; ``numpy.random.SeedSequence`` of its words spawns the Generators
        of the pilot, of P and of Q (:func:`rdpjax.stream.batches.generators`).
      sample: the black box; it must return a new array on each call (not a buffer it reuses:
        the binning of one batch may still be reading it while the next is drawn).
      x: the first database, passed to ``sample`` as it is.
      x_prime: the second, adjacent to ``x``.
    """

    def __init__(self, key, sample: Callable[..., Any], x: Any, x_prime: Any):
        if not callable(sample):
            raise ValueError(
                f"sample must be callable as sample(rng, database, m); got {sample!r}."
            )
        self.sample, self.x, self.x_prime = sample, x, x_prime
        self.g_pilot, self.g_p, self.g_q = generators(key)
        self.pilots: tuple[np.ndarray, np.ndarray] | None = None
        self.tail: tuple[int, ...] = ()
        self.integer = self.discrete = False
        self.project: Callable[..., Any] | None = None
        self.rows: RowBook | None = None  # the code book of integer vector outputs

    def kind(self, options: BoundOptions, stream: StreamOptions) -> tuple[bool, int]:
        """Draws the pilot (the only way to see a black box's outputs) and checks its shape."""
        self.project, m = stream.project, stream.pilot_size
        self.pilots = sorted_pilots(
            (
                checked_outputs(self.sample, self.g_pilot, self.x, m, self.project, "x (pilot)"),
                checked_outputs(
                    self.sample, self.g_pilot, self.x_prime, m, self.project, "x' (pilot)"
                ),
            ),
        )
        kinds = [_kind(a) for a in self.pilots]
        if kinds[0] != kinds[1]:
            raise ValueError(
                "sample must return the same kind of output on x and x'; got (integer, shape) "
                f"= {kinds[0]} and {kinds[1]} in the pilot draw."
            )
        self.integer, self.tail = kinds[0]
        d = self.tail[0] if self.tail else 1
        self.discrete = self.integer if options.discrete is None else bool(options.discrete)
        if self.discrete and self.tail:
            if not self.integer or len(self.tail) != 1:
                raise ValueError(
                    f"discrete vector outputs must be integer rows (m, d); got (m, "
                    f"{', '.join(map(str, self.tail))}) of {self.pilots[0].dtype}: pass project=."
                )
            if stream.support_size is not None:
                raise ValueError("support_size is for integer codes of shape (m,), not rows.")
            # Integer rows: one code per distinct pilot row, 0 for rows the pilot did not see.
            self.rows = RowBook(np.concatenate(self.pilots))
            self.pilots = (self.rows(self.pilots[0]), self.rows(self.pilots[1]))
            return True, 1
        if not self.discrete and not 1 <= d <= 3:
            raise ValueError(
                f"continuous outputs must have dimension 1 ≤ d ≤ 3; got d = {d}: pass project=, "
                "a fixed function mapping a batch to (m,) or (m, d ≤ 3)."
            )
        return self.integer, d

    def pilot(self) -> tuple[np.ndarray, np.ndarray]:
        """The pilot draws :meth:`kind` made."""
        assert self.pilots is not None, "kind() draws the pilot first"
        return self.pilots

    def tally(
        self,
        fixed: DrawPlan | None,
        sizes: tuple[int, int],
        stream: StreamOptions,
        cells: np.ndarray | None = None,
    ) -> Tally:
        """:meth:`Source.tally`: batches of ``stream.batch_size`` a side in turn.

        Each batch is binned (on jax's thread) while the next is drawn. The cells of a batch are
        counted on the host (``numpy.searchsorted``, as ``rdpjax.rejection.cells.cell_codes``).
        """
        outside, progress = stream.outside, stream.progress
        cells_size = None if cells is None else len(cells) + 1
        sides = [
            dict(
                rng=g, database=db, n=m, drawn=0, name=name,
                carry=None if fixed is None else empty_carry(fixed),
                cells=None if cells_size is None else np.zeros(cells_size, np.int64),
            )
            for g, db, m, name in zip(
                (self.g_p, self.g_q), (self.x, self.x_prime), sizes, ("x (P)", "x' (Q)"),
                strict=True,
            )
        ]  # fmt: skip
        in_flight: collections.deque = collections.deque()  # (side, carry) pairs

        def check_outside(name: str, carry) -> None:
            off = int(float(carry[1]))
            if outside == "raise" and off:
                raise ValueError(
                    f"{off} outputs on {name} fell outside the grid range or support fixed by "
                    "the pilot; pass a larger margin= (or support_size=) or outside='clip'."
                )

        total = sum(sizes)
        while any(s["drawn"] < s["n"] for s in sides):
            for s in sides:
                if s["drawn"] == s["n"]:
                    continue
                m = min(stream.batch_size, s["n"] - s["drawn"])
                out = checked_outputs(
                    self.sample, s["rng"], s["database"], m, self.project, s["name"]
                )
                if _kind(out) != (self.integer, self.tail):
                    raise ValueError(
                        f"sample returned outputs of (integer, shape) = {_kind(out)} on "
                        f"{s['name']}, but {(self.integer, self.tail)} in the pilot draw."
                    )
                if self.rows is not None:
                    out = self.rows(out)
                if cells is not None:
                    # The cell e_{i−1} ≤ x < e_i (rdpjax.rejection.cells.cell_codes).
                    x64 = out.reshape(m, -1)[:, 0].astype(np.float64)
                    codes = np.searchsorted(cells, x64, side="right")
                    s["cells"] += np.bincount(codes, minlength=cells_size)
                s["drawn"] += m
                if progress is not None:
                    progress(sides[0]["drawn"] + sides[1]["drawn"], total)
                if fixed is None:
                    continue
                if not self.discrete and out.ndim == 1:
                    out = out[:, None]
                s["carry"] = bin_batch(
                    *s["carry"], out, fixed.low, fixed.spacing, layout=fixed.layout
                )
                del out
                in_flight.append((s["name"], s["carry"]))
                if len(in_flight) > _IN_FLIGHT:  # wait for the binning to catch up
                    name, carry = in_flight.popleft()
                    jax.block_until_ready(carry)
                    check_outside(name, carry)
        tallies = None if cells is None else (sides[0]["cells"], sides[1]["cells"])
        if fixed is None:
            return Tally(None, (np.zeros(()), np.zeros(())), tallies)
        for s in sides:
            check_outside(s["name"], s["carry"])
        counts = tuple(
            np.asarray(batch_counts(s["carry"][0], fixed.low, fixed.spacing, layout=fixed.layout))
            for s in sides
        )
        return Tally(counts, tuple(np.asarray(s["carry"][1]) for s in sides), tallies)  # pyright: ignore[reportArgumentType]
