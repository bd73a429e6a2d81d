"""Draws from a numpy black box, and the exact values a zoo mechanism knows.

A black box is any callable ``sample(rng, database, n) -> array-like`` (numpy code, another
library's DP mechanism) called with a ``numpy.random.Generator`` seeded from a JAX key; a zoo
mechanism (:class:`rdpjax.mechanisms.Mechanism`) draws with JAX and may know ``D_λ`` exactly.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from rdpjax._keys import random_order
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.user import from_sampler

__all__ = [
    "OutputDimensionError",
    "mechanism_name",
    "check_finite_outputs",
    "draw_outputs",
    "exact_divergences",
    "mechanism_source_sha256",
    "probe_outputs",
    "progress_bar",
    "seed_from_key",
    "user_function",
    "with_projection",
]


class OutputDimensionError(ValueError):
    """Continuous outputs of more than 3 coordinates, found before the draws.

    Found on a probe or on the pilot: the Rényi bounds take d ≤ 3 and the betting test on
    rejection sets d = 1, so a projection is needed.

    Attributes:
      dim: the outputs' number of coordinates.
      most: the most the test takes (3, or 1).
      shape: the shapes of a batch the test takes, in words ("(m,)" or "(m,) or (m, d ≤ 3)").
    """

    def __init__(self, dim: int, where: str = "on 2 outputs, before drawing", most: int = 3):
        self.dim, self.most = int(dim), int(most)
        self.shape = "(m,) or (m, d ≤ 3)" if most > 1 else "(m,)"
        super().__init__(
            f"the outputs have d = {self.dim} coordinates (checked {where}); the test takes "
            f"continuous outputs of d ≤ {most}: pass project='learn' (a score learned on a part "
            f"of the draws, then frozen) or a fixed function mapping a batch to {self.shape}."
        )


def progress_bar(total: int, progress: bool | None, desc: str):
    """:func:`rdpjax._internal.progress.progress_bar`, imported on first use.

    ``import rdpjax`` does not load :mod:`rdpjax.stream`.
    """
    from rdpjax._internal.progress import progress_bar as bar

    return bar(total, progress, desc)


def seed_from_key(key) -> int:
    """A numpy seed from a JAX PRNG key (its first and last 32-bit words)."""
    data = np.asarray(jax.random.key_data(key)).ravel()
    return int(np.uint64(data[-1]) | (np.uint64(data[0]) << np.uint64(32)))


def draw_outputs(
    sample: Callable,
    key,
    database,
    n: int,
    *,
    batch_size: int = 10**6,
    progress: bool | None = None,
    bar=None,
    transform: Callable | None = None,
) -> np.ndarray:
    """Draw ``n`` outputs from a black-box ``sample(rng, database, n) -> array-like``.

    Called in batches of at most ``batch_size`` with one ``numpy.random.Generator`` seeded from
    ``key``; a progress bar goes to stderr when a run takes longer than two seconds (always with
    ``progress=True``, never with ``progress=False``; ``bar``: a tqdm bar to advance instead).
    ``transform`` (a projection) is applied to each batch as it arrives, so only its outputs are
    kept. The draws are put in a random order drawn from ``key`` (:func:`random_order`), so the
    result does not depend on the order in which ``sample`` returns a batch, nor on
    ``batch_size``.

    Raises:
      ValueError: if a batch has the wrong length or a different shape from the others.
    """
    rng = np.random.default_rng(seed_from_key(key))
    # A second Generator (from the same key) puts the draws in a random order: a black box may
    # return its i.i.d. batch sorted or grouped (np.repeat of a multinomial), and what is fitted
    # on part of the rows (the pilot map, a learned projection's training rows) must not depend
    # on that. Sorting first makes the order the key's alone (and the batch size's not at all).
    parts, drawn, shape = [], 0, None
    with contextlib.ExitStack() as stack:
        if bar is None:
            bar = stack.enter_context(progress_bar(n, progress, "drawing"))
        while drawn < n:
            size = min(batch_size, n - drawn)
            out = np.asarray(sample(rng, database, size))
            if out.ndim == 0 or out.shape[0] != size:
                raise ValueError(
                    f"sample(rng, database, {size}) returned shape {out.shape}; "
                    f"expected ({size}, ...)."
                )
            if shape is None:
                shape = out.shape[1:]
            elif out.shape[1:] != shape:
                raise ValueError(f"sample returned outputs of shape {shape}, then {out.shape[1:]}.")
            if transform is not None:
                out = np.asarray(transform(out))
                if out.ndim == 0 or out.shape[0] != size:
                    raise ValueError(
                        f"project returned shape {out.shape} for {size} outputs; "
                        f"expected ({size}, ...)."
                    )
            parts.append(out)
            drawn += size
            bar.update(size)
    return in_key_order(key, np.concatenate(parts) if len(parts) > 1 else parts[0])


def in_key_order(key: Any, outputs: Any) -> np.ndarray:
    """``outputs`` (host) in :func:`random_order` from a Generator of ``key``'s own.

    A sampler may return its i.i.d. draws sorted or grouped: :func:`draw_outputs` orders a black
    box's this way, and :func:`rdpjax.audit` a user's JAX sampler's (a zoo mechanism draws in
    i.i.d. order itself).
    """
    shuffle = np.random.default_rng([seed_from_key(key), ORDER_TAG])
    return random_order(shuffle, np.asarray(outputs))


def probe_outputs(
    sample: Callable[..., Any], x: Any, project: Callable[..., Any] | None
) -> np.ndarray:
    """2 outputs of a black box on ``x`` (projected), from a generator of their own.

    Raises:
      ValueError: if they are not real numbers or integer codes (strings, objects, complex),
        in the black box's terms, before any draw is counted.
    """
    probe = np.asarray(sample(np.random.default_rng(0), x, 2))
    probe = probe if project is None else np.asarray(project(probe))
    if probe.dtype.kind not in "biuf":
        who = "sample" if project is None else "project"
        raise ValueError(
            f"{who} returned {probe.dtype} outputs on x (probe); real numbers or integer codes "
            "are needed."
        )
    return probe


ORDER_TAG = 0x0D3E
"""Tag of the Generator that orders each black-box batch (:func:`random_order`)."""


def check_finite_outputs(out: np.ndarray, side: str, *, projected: bool = False) -> None:
    """Raise unless every output in ``out`` (one side's draws, ``(n,)`` or ``(n, ...)``) is finite.

    The message names the side and counts the outputs (rows) with a NaN or an infinite value, so
    that a mechanism's bad outputs are not reported in the estimator's terms. One pass: the sum
    is finite iff every value is (or it overflowed, which the count then rules out).

    Args:
      out: the draws of one side.
      side: the database they were drawn on, as the report names it (``"x"``, ``"x'"``).
      projected: whether ``out`` went through the user's projection.

    Raises:
      ValueError: "the mechanism returned 3 NaN outputs on x (of 1,000)".
    """
    out = np.asarray(out)
    if out.dtype.kind not in "fc":
        return
    with np.errstate(over="ignore", invalid="ignore"):  # inf − inf, an overflow: counted below
        if np.isfinite(out.sum()):
            return
    rows = out.reshape(len(out), -1)
    nan = int(np.count_nonzero(np.isnan(rows).any(axis=1)))
    inf = int(np.count_nonzero(np.isinf(rows).any(axis=1)))
    if not nan and not inf:
        return  # a finite sum's overflow
    kinds = " and ".join(
        f"{count:,} {kind}" for count, kind in ((nan, "NaN"), (inf, "infinite")) if count
    )
    who = "the mechanism, then the projection," if projected else "the mechanism"
    raise ValueError(
        f"{who} returned {kinds} outputs on {side} (of {len(out):,}); a mechanism's outputs "
        "must be finite."
    )


def user_function(mechanism) -> Callable | None:
    """The user's own function behind ``mechanism``, or ``None`` for a zoo mechanism.

    That is a black box ``sample(rng, database, n)`` itself, or the JAX sampler a
    :func:`rdpjax.mechanisms.from_sampler` mechanism wraps.
    """
    if not isinstance(mechanism, Mechanism):
        return mechanism if callable(mechanism) else None
    from rdpjax.mechanisms.user import SamplerMechanism

    return mechanism.sample_fn if isinstance(mechanism, SamplerMechanism) else None


def mechanism_source_sha256(function: Callable) -> str | None:
    """The SHA-256 (hex) of ``function``'s source text, or ``None`` when Python cannot find it.

    The source is :func:`inspect.getsource`'s (through ``functools.wraps`` wrappers): the
    function's own lines, not the module's, so a report can tell which code was audited. A
    lambda typed at a prompt, a C function or a callable object has no source: ``None``, unless
    it says its own (a ``source_sha256`` attribute, as
    :class:`rdpjax.auditing.remote.RemoteSampler` does for the function it runs elsewhere).
    """
    own = getattr(function, "source_sha256", None)
    if isinstance(own, str):
        return own
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode()).hexdigest()


def exact_divergences(mechanism: Mechanism, x, x_prime, orders, both_directions: bool):
    """The exact value of what the bound bounds, per order, or ``None``.

    That is ``D_λ(P‖Q)``, or the larger of both directions; ``None`` when the mechanism does not
    know it for some order.
    """
    values = []
    for lam_ in orders:
        fwd = mechanism.divergence(lam_, x, x_prime)
        rev = mechanism.divergence(lam_, x_prime, x) if both_directions else fwd
        if fwd is None or rev is None:
            return None
        values.append(max(fwd, rev))
    return np.asarray(values, np.float64)


def mechanism_name(mechanism: Any) -> str:
    """A zoo mechanism's ``name``, else the callable's ``__name__`` (else its type's)."""
    if isinstance(mechanism, Mechanism):
        return mechanism.name
    return getattr(mechanism, "__name__", type(mechanism).__name__)


def with_projection(mechanism: Mechanism, project: Callable[..., Any]) -> Mechanism:
    """A JAX sampler drawing ``project(mechanism.sample(…))``; ``project`` must be traceable."""

    def projected(key, database, m):
        return project(mechanism.sample(key, database, m))

    return from_sampler(projected, name=mechanism.name)
