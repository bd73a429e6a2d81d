"""Samplers as static jit arguments: the user's ``sample_fn(key, m)`` and the zoo's mechanisms.

A :class:`Sampler` is hashable and compares by its function, so it can be a static argument of
the compiled stream (:mod:`rdpjax.stream.scan`) and of the replications
(:mod:`rdpjax.stream.replicate`): passing the same function again reuses the compiled code,
while the traced ``args`` (a mechanism and its database) may change freely. Also here: the
abstract probe of a sampler's output kind (codes or floats, dimension d) and the pilot draw.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp

from rdpjax.mechanisms.base import Mechanism, identity_code


@dataclasses.dataclass(frozen=True)
class Sampler:
    """A static (hashable) sampler: ``fn(key, m, *args)``, then ``encode`` for codes.

    Equal functions give equal samplers, so passing the same ``sample_fn`` again reuses the
    compiled stream; the traced ``args`` (a mechanism and its database) may change freely.
    """

    fn: Callable
    encode: Callable | None = None

    def __call__(self, key, m: int, args) -> jnp.ndarray:
        """``m`` draws ``fn(key, m, *args)``, encoded to codes when ``encode`` is set."""
        out = jnp.asarray(self.fn(key, m, *args))
        return out if self.encode is None else self.encode(out)


def mechanism_fn(key, m, mechanism, database):
    """``m`` draws of ``mechanism`` on ``database`` by its traced kernel (no concrete checks)."""
    return mechanism._sample(key, database, m)


def user_sampler(fn: Callable) -> Sampler:
    """The :class:`Sampler` of a user's ``sample_fn(key, m)``; ``ValueError`` if not callable."""
    if not callable(fn):
        raise ValueError(f"a sampler must be callable as sample_fn(key, m); got {fn!r}.")
    return Sampler(fn=fn)


def mechanism_samplers(mechanism: Mechanism, x, x_prime):
    """``(sampler, args_p, args_q, spec)`` that draw ``mechanism`` on x and on x'.

    The databases are checked by the mechanism; discrete outputs are encoded by its encoder
    (identity by default); ``spec`` is ``mechanism.output(x)``. Raises ``ValueError`` for
    anything but a :class:`rdpjax.mechanisms.Mechanism`.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError("a rdpjax.mechanisms mechanism (a pure JAX sampler) is needed.")
    x, x_prime = jnp.asarray(x), jnp.asarray(x_prime)
    mechanism.check_database(x)
    mechanism.check_database(x_prime)
    spec = mechanism.output(x)
    encode = None
    if spec.is_discrete:
        encode = spec.encoder if spec.encoder is not None else identity_code
    sampler = Sampler(fn=mechanism_fn, encode=encode)
    return sampler, (mechanism, x), (mechanism, x_prime), spec


@functools.partial(jax.jit, static_argnames=("sampler", "m"))
def pilot_draw(key, args, *, sampler, m):
    """``m`` pilot draws of ``sampler`` with ``args`` (one compiled call)."""
    return sampler(key, m, args)


@functools.partial(jax.jit, static_argnames=("sampler",))
def probe(key, args, *, sampler):
    """Three draws of ``sampler``, whose abstract shape :func:`output_kind` reads."""
    return sampler(key, 3, args)


def output_kind(sampler: Sampler, args, key) -> tuple[bool, int]:
    """(integer codes?, dimension d) of a sampler's output, from its abstract evaluation."""
    out = probe.eval_shape(key, args, sampler=sampler)  # traced once per sampler
    if out.ndim not in (1, 2) or out.shape[0] != 3:
        raise ValueError(
            f"a sampler must return shape (m,) or (m, d) for m draws; got {out.shape}."
        )
    integer = bool(jnp.issubdtype(out.dtype, jnp.integer) or out.dtype == jnp.bool_)
    return integer, 1 if out.ndim == 1 else int(out.shape[1])
