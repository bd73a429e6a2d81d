"""Where a sequential audit's outputs come from: a JAX sampler or a numpy black box, batch by batch.

Both give, per side, batches that are a deterministic function of the key and the batch's index
(JAX: ``mechanism.sample(fold_in(k_side, j), database, ·)``; numpy: one Generator per side,
spawned from the key by :func:`rdpjax.stream.batches.generators`, whose state is saved with every
checkpoint), so a resumed audit draws exactly what an uninterrupted one would have. Both are
sources of the looks driver (:class:`rdpjax.stream.looks.BatchSource`); the black box's batches
(:class:`rdpjax.stream.batches.BlackBoxBatches`) are also those the betting test bets on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import numpy as np

from rdpjax._keys import as_key
from rdpjax.auditing.draws import in_key_order
from rdpjax.estimator.grid import bucket_size
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.user import SamplerMechanism
from rdpjax.stream.batches import BlackBoxBatches, check_batch, checked_outputs

__all__ = ["JaxBatches", "NumpyBatches", "make_source"]

_SIDES = ("x (P)", "x' (Q)")


@functools.partial(jax.jit, static_argnums=3)
def _sample(mechanism: Mechanism, key, database, m: int):
    # The mechanism is a pytree argument: one compiled draw per (kind of mechanism, size).
    return mechanism.sample(key, database, m)


class JaxBatches:
    """Batches of a :class:`rdpjax.mechanisms.Mechanism`, drawn with keys folded off ``key``.

    Batch ``j`` of side ``s`` is the first ``m`` of ``bucket_size(m)`` draws from
    ``fold_in(k_s, j)`` (few compiled draw sizes), with ``k_pilot, k_p, k_q = split(key, 3)``;
    discrete zoo outputs are encoded as codes.
    """

    kind = "jax"
    auto_discrete = True  # real outputs with few values are counted (setup.setup_looks)

    def __init__(self, mechanism: Mechanism, x, x_prime, key, project: Callable | None):
        self.mechanism, self.databases, self.project = mechanism, (x, x_prime), project
        self.k_pilot, *self.keys = jax.random.split(as_key(key), 3)
        spec = mechanism.output(x)
        self.discrete = bool(spec.is_discrete) and project is None
        self._encoders = (spec.encode, mechanism.output(x_prime).encode) if self.discrete else None

    def _finish(self, out, side: int, m: int, name: str) -> np.ndarray:
        if self._encoders is not None:
            out = self._encoders[side](out)
        out = np.asarray(out)
        if self.project is not None:
            out = np.asarray(self.project(out))
        return check_batch(out, m, None, name)

    def pilot(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """``m`` checked pilot outputs per side, side ``s`` from ``fold_in(k_pilot, s)``."""
        return tuple(
            self._finish(
                _sample(self.mechanism, jax.random.fold_in(self.k_pilot, s), self.databases[s], m),
                s,
                m,
                f"{_SIDES[s]} (pilot)",
            )
            for s in (0, 1)
        )

    def draw(self, side: int, piece: int, m: int) -> np.ndarray:
        """Batch ``piece`` of ``side`` (0: x, 1: x'): ``m`` checked outputs (encoded, projected)."""
        key = jax.random.fold_in(self.keys[side], piece)
        out = _sample(self.mechanism, key, self.databases[side], bucket_size(m))
        if isinstance(self.mechanism, SamplerMechanism):
            # A user's sampler may return its batch sorted: the first m of its bucket_size(m)
            # outputs were then the smallest. In the key's order (sorted, then permuted) the
            # first m are m i.i.d. outputs, whatever order the sampler used. (A zoo mechanism
            # draws in i.i.d. order itself.)
            out = in_key_order(key, out)
        return self._finish(out[:m], side, m, _SIDES[side])

    def rng_state(self) -> None:
        """``None``: the batches' keys follow from ``key`` and their number; nothing to save."""
        return None

    def restore(self, state) -> None:
        """Nothing to restore (see :meth:`rng_state`)."""
        pass


class NumpyBatches(BlackBoxBatches):
    """Batches of a black box ``sample(rng, database, m)``, one generator per side, and a pilot.

    :class:`~rdpjax.stream.batches.BlackBoxBatches` (``generators(key)``: pilot, P, Q), with the
    pilot drawn from the pilot's generator and the kind of outputs read from a probe.
    """

    kind = "numpy"

    def __init__(self, sample: Callable, x, x_prime, key, project: Callable | None, discrete):
        super().__init__(sample, x, x_prime, key, project, _SIDES)
        probe = checked_outputs(sample, np.random.default_rng(0), x, 2, project, "x (probe)")
        integer = probe.dtype.kind in "biu"
        self.discrete = integer if discrete is None else bool(discrete)
        self.auto_discrete = discrete is None
        if self.discrete and not integer:
            raise ValueError("discrete=True needs a sample returning integer codes.")
        # Vectors of codes (m, d) are counted as joint outcomes: the engine numbers each row
        # seen (engine.add_batch), as a fixed-n audit's encode_pair does.
        self.vectors = self.discrete and probe.ndim != 1

    def pilot(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """``m`` checked pilot outputs per side, both drawn with the pilot's generator."""
        return tuple(
            checked_outputs(
                self.sample,
                self.g_pilot,
                self.databases[s],
                m,
                self.project,
                f"{_SIDES[s]} (pilot)",
            )
            for s in (0, 1)
        )


def make_source(mechanism, x, x_prime, key, project, discrete):
    """A :class:`JaxBatches` for a mechanism, else a :class:`NumpyBatches`.

    A :class:`~rdpjax.mechanisms.Mechanism` gets a :class:`JaxBatches`; ``discrete`` forces the
    kind of a black box's outputs.
    """
    if isinstance(mechanism, Mechanism):
        if discrete is not None:
            raise ValueError("discrete= is for a black box's outputs; a mechanism knows its own.")
        return JaxBatches(mechanism, x, x_prime, key, project)
    return NumpyBatches(mechanism, x, x_prime, key, project, discrete)
