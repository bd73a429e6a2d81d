"""What the streamed doors draw from: a value, bound to the caller's key at the door.

The two streamed doors, :func:`rdpjax.stream.streamed_bound` (the Rényi bound) and
:func:`rdpjax.rejection.streamed_set_test` (the certified rejection sets, fixed n or by betting
on looks), take the key first and then one of these values, whatever kind of sampler is behind
it:

* :class:`JaxSamplers`: two JAX samplers ``sample(key, m)`` (or static
  :class:`~rdpjax.stream.samplers.Sampler` s with traced ``args``), drawn inside one compiled
  scan a side;
* :class:`MechanismPair`: a zoo mechanism on the adjacent databases x and x' (JAX, traced, so
  new databases of the same shapes reuse the compiled stream; discrete outputs encoded and
  counted on the mechanism's alphabet);
* :class:`BlackBox`: a numpy black box ``sample(rng, database, m)`` on x and x', called batch
  by batch with ``numpy.random.Generator`` s spawned from the key.

Each value knows three things, which are all a door needs of it: the
:class:`~rdpjax.stream.sources.Source` that counts draws on a grid or on cells
(:meth:`Draws.source`), the selection draws a set test picks its cells on (:meth:`Draws.selection`,
independent of the source's draws), and the numpy form ``sample(rng, database, m)`` the betting
test calls batch by batch (:meth:`Draws.blackbox`). Each kind derives its keys as the separate
doors of each kind did before there were two (issue 52), so the same key gives the same draws
and the same numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

import jax
import numpy as np

from rdpjax._keys import as_key
from rdpjax._precision import float64
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.batches import checked_outputs, generators
from rdpjax.stream.options import StreamOptions
from rdpjax.stream.samplers import Sampler, mechanism_samplers, pilot_draw, user_sampler
from rdpjax.stream.sources import JaxSource, NumpySource, Source, mechanism_source

__all__ = ["BlackBox", "Draws", "JaxSamplers", "MechanismPair", "as_draws", "numpy_sampler"]


class Draws(Protocol):
    """A pair of output laws, P (on x) and Q (on x'), not yet bound to a key."""

    def source(self, key: Any, stream: StreamOptions) -> tuple[Source, StreamOptions]:
        """The :class:`~rdpjax.stream.sources.Source` of ``key``, and ``stream`` completed."""
        ...

    def selection(self, key: Any, m: int, stream: StreamOptions) -> tuple[np.ndarray, np.ndarray]:
        """``m`` draws a side from ``key``, independent of ``source(split(key)[1])``'s draws."""
        ...

    def blackbox(self) -> tuple[Callable[..., Any], Any, Any]:
        """``(sample, x, x')`` with ``sample(rng, database, m)`` a numpy black box."""
        ...


def _jax_selection(key, m: int, samplers, args) -> tuple[np.ndarray, np.ndarray]:
    """``m`` draws a side from ``split(key)[0]``: the selection of a set test on JAX samplers."""
    k_sel = jax.random.split(as_key(key))[0]
    with float64():
        p, q = (
            np.asarray(pilot_draw(k, a, sampler=s, m=m))
            for k, s, a in zip(jax.random.split(k_sel), samplers, args, strict=True)
        )
    return p, q


@dataclasses.dataclass(frozen=True)
class JaxSamplers:
    """Two JAX samplers: ``sample_p(key, m)`` outputs on x, ``sample_q(key, m)`` on x'.

    Each returns shape ``(m,)`` or ``(m, d)`` (d ≤ 3): floats (continuous) or integer codes
    (discrete), pure and jittable with ``m`` static. The compiled stream is reused when the same
    function objects come again. A :class:`~rdpjax.stream.samplers.Sampler` may stand for a
    function, with each side's traced arguments in ``args``.
    """

    sample_p: Callable[..., Any] | Sampler
    sample_q: Callable[..., Any] | Sampler
    args: tuple[Any, Any] = ((), ())

    def __post_init__(self) -> None:
        self._samplers()  # a sampler that is not callable: a ValueError now, not at the door

    def _samplers(self) -> tuple[Sampler, Sampler]:
        p, q = (
            s if isinstance(s, Sampler) else user_sampler(s) for s in (self.sample_p, self.sample_q)
        )
        return p, q

    def source(self, key, stream: StreamOptions) -> tuple[Source, StreamOptions]:
        """A :class:`~rdpjax.stream.sources.JaxSource` with keys ``split(key, 3)``."""
        return JaxSource(key, self._samplers(), self.args), stream

    def selection(self, key, m: int, stream: StreamOptions) -> tuple[np.ndarray, np.ndarray]:
        """``m`` draws a side, side i from ``split(split(key)[0])[i]``, in float64."""
        return _jax_selection(key, m, self._samplers(), self.args)

    def blackbox(self) -> tuple[Callable[..., Any], Any, Any]:
        """``sample(rng, side, m)``, side 0 for P and 1 for Q, a key drawn from ``rng``."""
        samplers, args = self._samplers(), self.args

        def sample(rng, side, m):
            key = jax.random.key(int(rng.integers(2**63 - 1)))
            with float64():
                return np.asarray(pilot_draw(key, args[side], sampler=samplers[side], m=m))

        return sample, 0, 1


@dataclasses.dataclass(frozen=True)
class MechanismPair:
    """A zoo mechanism (:class:`rdpjax.mechanisms.Mechanism`) on the adjacent x and x'."""

    mechanism: Mechanism
    x: Any
    x_prime: Any

    def source(self, key, stream: StreamOptions) -> tuple[Source, StreamOptions]:
        """:func:`~rdpjax.stream.sources.mechanism_source`: discrete outputs on its alphabet."""
        return mechanism_source(key, self.mechanism, self.x, self.x_prime, stream)

    def selection(self, key, m: int, stream: StreamOptions) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`JaxSamplers.selection`, the outputs encoded as the stream codes them."""
        sampler, args_p, args_q, _ = mechanism_samplers(self.mechanism, self.x, self.x_prime)
        return _jax_selection(key, m, (sampler, sampler), (args_p, args_q))

    def blackbox(self) -> tuple[Callable[..., Any], Any, Any]:
        """:func:`numpy_sampler` of the mechanism, on x and x'."""
        return numpy_sampler(self.mechanism), self.x, self.x_prime


@dataclasses.dataclass(frozen=True)
class BlackBox:
    """A numpy black box ``sample(rng, database, m)`` on the adjacent databases x and x'.

    ``rng`` is a ``numpy.random.Generator``; ``sample`` returns ``m`` outputs, shape ``(m,)`` or
    ``(m, d)``: floats (continuous) or integer / bool codes (discrete), a new array on each call
    (the binning of one batch may still be reading it while the next is drawn). ``x`` and
    ``x_prime`` are passed to it as they are.

    **Draws.** ``np.random.SeedSequence(key_data)`` (the ``uint32`` words of
    ``jax.random.key_data(key)``) is spawned into three children, which seed
    ``numpy.random.default_rng`` Generators ``g_pilot, g_p, g_q``
    (:func:`rdpjax.stream.batches.generators`). The pilot is ``sample(g_pilot, x, pilot)`` then
    ``sample(g_pilot, x', pilot)``, each side then sorted
    (:func:`rdpjax.stream.sources.sorted_pilots`, so that the order a sampler returns its batch
    in cannot change the settings); side P is ``sample(g_p, x, m_i)`` for the batch sizes
    ``m_i = min(batch_size, n_p − drawn)`` in turn (likewise Q from ``g_q`` on x'), P and Q
    batches interleaved (each side's Generator sees only its own calls, so the interleaving
    changes nothing). Each batch is binned on jax's runtime thread while the next is drawn (at
    most two in flight); the binning kernel is compiled once per batch shape and dtype.
    """

    sample: Callable[..., Any]
    x: Any
    x_prime: Any

    def __post_init__(self) -> None:
        if not callable(self.sample):
            raise ValueError(
                f"sample must be callable as sample(rng, database, m); got {self.sample!r}"
            )

    def source(self, key, stream: StreamOptions) -> tuple[Source, StreamOptions]:
        """A :class:`~rdpjax.stream.sources.NumpySource` (Generators spawned from ``key``)."""
        return NumpySource(key, self.sample, self.x, self.x_prime), stream

    def selection(self, key, m: int, stream: StreamOptions) -> tuple[np.ndarray, np.ndarray]:
        """``m`` outputs a side from ``generators(key)[0]`` (x first), through ``project``.

        In batches of the stream's ``batch_size``, each through ``stream.project``.
        """
        g_sel = generators(key)[0]

        def draw(db: Any, side: str) -> np.ndarray:
            parts, done = [], 0
            while done < m:
                size = min(stream.batch_size, m - done)
                parts.append(checked_outputs(self.sample, g_sel, db, size, stream.project, side))
                done += size
            return np.concatenate(parts)

        return draw(self.x, "x (selection)"), draw(self.x_prime, "x' (selection)")

    def blackbox(self) -> tuple[Callable[..., Any], Any, Any]:
        """The black box itself, on x and x'."""
        return self.sample, self.x, self.x_prime


def numpy_sampler(mechanism: Mechanism) -> Callable[..., Any]:
    """A zoo (JAX) mechanism as a black box ``sample(rng, database, m)``, codes encoded."""

    def sample(rng, database, m):
        key = jax.random.key(int(rng.integers(2**63 - 1)))
        out = mechanism.sample(key, database, m)
        spec = mechanism.output(database)
        return np.asarray(spec.encode(out) if spec.is_discrete else out)

    return sample


def as_draws(draws: Any, caller: str) -> Draws:
    """``draws`` checked to be one of this module's values.

    Raises:
        ValueError: naming ``caller`` and the three kinds, for anything else (a bare function,
            a tuple of samplers).
    """
    if isinstance(draws, JaxSamplers | MechanismPair | BlackBox):
        return draws
    raise ValueError(
        f"{caller} draws from rdpjax.stream.JaxSamplers(sample_p, sample_q), "
        f"MechanismPair(mechanism, x, x_prime) or BlackBox(sample, x, x_prime); got {draws!r}"
    )
