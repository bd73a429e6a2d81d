"""Audit a mechanism end to end: draw outputs on two adjacent databases, bound ε(λ), compare.

A lower bound on ``D_λ(law A(x) ‖ law A(x'))`` for one pair is a lower bound on
``ε(λ) = sup_{x~x'} D_λ`` (methods.md §1), and so is a bound computed on any fixed function
``g`` of the outputs (data-processing inequality): ``project`` and the zoo's canonical encodings
never make the bound invalid, only possibly looser.

The mechanism is either a zoo mechanism (:mod:`rdpjax.mechanisms`, pure JAX, drawn in one call)
or any Python callable ``sample(rng, database, n) -> array-like`` — numpy code or another
library's DP mechanism — called in batches with a ``numpy.random.Generator`` seeded from ``key``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence

import jax
import numpy as np

from rdpjax._pytree import pytree_dataclass
from rdpjax._validation import check_int
from rdpjax.bounds import Bound, lower_bound
from rdpjax.mechanisms.base import Mechanism

__all__ = ["AuditReport", "audit", "draw_outputs", "exact_divergences"]


@pytree_dataclass(static=("mechanism", "n", "projected"))
class AuditReport:
    """The result of :func:`audit`. A pytree; ``exact``/``claimed_epsilon`` may be ``None``.

    Attributes:
      lam, estimate, lower, std_error: as in :class:`rdpjax.Bound` (bounds simultaneous over all
        orders and, with ``both_directions``, both directions).
      exact: ``(L,)`` the exact value of the quantity bounded — ``D_λ(P‖Q)``, or
        ``max(D_λ(P‖Q), D_λ(Q‖P))`` with both directions — when the mechanism knows it, else
        ``None``. With ``project`` the bound is still a bound on this value.
      claimed_epsilon: the mechanism's claimed pure ε-DP level (ε(λ) ≤ ε for every λ), or None.
      violation: ``(L,)`` bool, True where ``lower`` exceeds the claimed ε (all False without a
        claim).
      bound: the full :class:`rdpjax.Bound` (settings, levels, directions).
      mechanism: a name for the mechanism.
      n: outputs drawn per database.
      projected: whether a user projection was applied.
    """

    lam: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    std_error: np.ndarray
    exact: np.ndarray | None
    claimed_epsilon: float | None
    violation: np.ndarray
    bound: Bound
    mechanism: str
    n: int
    projected: bool

    def verdict(self) -> str:
        """One line: whether the claimed ε is refuted at the bound's confidence."""
        conf = f"{1 - float(self.bound.alpha):.0%}"
        if self.claimed_epsilon is None:
            return f"no claimed ε to check; ε(λ) ≥ lower holds simultaneously at {conf}"
        if np.any(self.violation):
            worst = int(np.argmax(self.lower))
            return (
                f"VIOLATION: ε({self.lam[worst]:g}) ≥ {self.lower[worst]:.4f} > claimed "
                f"ε = {self.claimed_epsilon:g} (confidence {conf})"
            )
        return f"no violation found: every lower bound ≤ claimed ε = {self.claimed_epsilon:g}"

    def to_dict(self) -> dict:
        out = {
            "mechanism": self.mechanism,
            "n": self.n,
            "projected": self.projected,
            "claimed_epsilon": self.claimed_epsilon,
            "verdict": self.verdict(),
        }
        for name in ("lam", "estimate", "lower", "std_error", "exact", "violation"):
            v = getattr(self, name)
            out[name] = None if v is None else np.asarray(v).tolist()
        out["bound"] = self.bound.to_dict()
        return out

    def __str__(self) -> str:
        lines = [f"audit of {self.mechanism}, n = {self.n:,} per database"]
        lines.append(
            f"{'lambda':>8} {'exact':>10} {'estimate':>10} {'lower':>10} {'std_error':>10}"
        )
        for i, lam in enumerate(np.atleast_1d(self.lam)):
            exact = "—" if self.exact is None else f"{self.exact[i]:.6f}"
            lines.append(
                f"{lam:8g} {exact:>10} {self.estimate[i]:10.6f} {self.lower[i]:10.6f} "
                f"{self.std_error[i]:10.6f}"
            )
        lines.append(self.verdict())
        return "\n".join(lines)


def _seed_from_key(key) -> int:
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
) -> np.ndarray:
    """Draw ``n`` outputs from a black-box ``sample(rng, database, n) -> array-like``.

    Called in batches of at most ``batch_size`` with one ``numpy.random.Generator`` seeded from
    ``key``; a progress line goes to stderr when a run takes longer than two seconds (or always
    with ``progress=True``, never with ``progress=False``).

    Raises:
      ValueError: if a batch has the wrong length or a different shape from the others.
    """
    rng = np.random.default_rng(_seed_from_key(key))
    parts, drawn, start, shown = [], 0, time.perf_counter(), False
    while drawn < n:
        size = min(batch_size, n - drawn)
        out = np.asarray(sample(rng, database, size))
        if out.ndim == 0 or out.shape[0] != size:
            raise ValueError(
                f"sample(rng, database, {size}) returned shape {out.shape}; expected ({size}, ...)."
            )
        if parts and out.shape[1:] != parts[0].shape[1:]:
            raise ValueError(
                f"sample returned outputs of shape {out.shape[1:]}, then {parts[0].shape[1:]}."
            )
        parts.append(out)
        drawn += size
        slow = time.perf_counter() - start > 2.0
        if progress or (progress is None and slow):
            shown = True
            print(f"\r  drawing: {drawn:,}/{n:,} outputs", end="", file=sys.stderr, flush=True)
    if shown:
        print(file=sys.stderr)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def exact_divergences(mechanism: Mechanism, x, x_prime, orders, both_directions: bool):
    """The exact value of what the bound bounds, per order: ``D_λ(P‖Q)``, or the larger of
    both directions; ``None`` when the mechanism does not know it for some order."""
    values = []
    for lam_ in orders:
        fwd = mechanism.divergence(lam_, x, x_prime)
        rev = mechanism.divergence(lam_, x_prime, x) if both_directions else fwd
        if fwd is None or rev is None:
            return None
        values.append(max(fwd, rev))
    return np.asarray(values, np.float64)


def _as_orders(lam) -> list[float]:
    return [float(v) for v in np.atleast_1d(np.asarray(lam, np.float64))]


def audit(
    mechanism: Mechanism | Callable,
    x,
    x_prime,
    lam: float | Sequence[float],
    *,
    n: int,
    key,
    alpha: float = 0.05,
    both_directions: bool = True,
    project: Callable | None = None,
    claimed_epsilon: float | None = None,
    batch_size: int = 10**6,
    **estimator_options,
) -> AuditReport:
    """Audit ``mechanism`` on the adjacent databases ``x``, ``x'``.

    Draws ``n`` outputs on each, applies the canonical encoding of a discrete zoo mechanism
    (or the user's ``project``), computes simultaneous lower bounds with
    :func:`rdpjax.lower_bound`, and compares them with the exact value and the claimed ε.

    Args:
      mechanism: a zoo mechanism, or any callable ``sample(rng, database, n) -> array-like``
        with ``rng`` a ``numpy.random.Generator``.
      x, x_prime: the two adjacent databases.
      lam: one order λ > 1 or several.
      n: outputs per database (an integer ≥ 2; ``1e6`` is accepted).
      key: a JAX PRNG key (the only source of randomness).
      alpha: family-wise error level of the reported bounds.
      both_directions: also bound ``D_λ(Q‖P)`` (ε(λ) is a supremum over *ordered* pairs).
      project: a fixed function applied to the outputs (arrays in, array out) before bounding.
      claimed_epsilon: the ε to check; default the zoo mechanism's ``epsilon``.
      batch_size: outputs per call of a black-box sampler.
      **estimator_options: passed to :func:`rdpjax.lower_bound` (``bandwidth``, ``floor``, …).

    Returns:
      An :class:`AuditReport`.

    Raises:
      ValueError: on a bad ``n`` or any input :func:`rdpjax.lower_bound` rejects.
    """
    if isinstance(n, bool) or not float(n).is_integer() or n < 2:
        raise ValueError(f"n must be a whole number ≥ 2; got {n!r}.")
    n = int(n)
    batch_size = check_int(batch_size, "batch_size", 1)
    kp, kq = jax.random.split(key)
    orders = _as_orders(lam)
    exact = None
    if isinstance(mechanism, Mechanism):
        name = mechanism.name
        p = mechanism.sample(kp, x, n)
        q = mechanism.sample(kq, x_prime, n)
        if project is None and mechanism.output(x).is_discrete:
            p, q = mechanism.output(x).encode(p), mechanism.output(x_prime).encode(q)
        if claimed_epsilon is None:
            claimed_epsilon = mechanism.epsilon
        exact = exact_divergences(mechanism, x, x_prime, orders, both_directions)
    elif callable(mechanism):
        name = getattr(mechanism, "__name__", type(mechanism).__name__)
        p = draw_outputs(mechanism, kp, x, n, batch_size=batch_size)
        q = draw_outputs(mechanism, kq, x_prime, n, batch_size=batch_size)
    else:
        raise ValueError(
            "mechanism must be a rdpjax.mechanisms mechanism or a callable "
            f"sample(rng, database, n); got {type(mechanism).__name__}."
        )
    if project is not None:
        p, q = project(p), project(q)
    bound = lower_bound(
        np.asarray(p),
        np.asarray(q),
        orders,
        alpha=alpha,
        both_directions=both_directions,
        **estimator_options,
    )
    lower = np.asarray(bound.lower)
    claim = None if claimed_epsilon is None else float(claimed_epsilon)
    violation = (
        lower > claim if claim is not None and math.isfinite(claim) else np.zeros_like(lower, bool)
    )
    return AuditReport(
        lam=np.asarray(bound.lam),
        estimate=np.asarray(bound.estimate),
        lower=lower,
        std_error=np.asarray(bound.std_error),
        exact=exact,
        claimed_epsilon=claim,
        violation=violation,
        bound=bound,
        mechanism=name,
        n=n,
        projected=project is not None,
    )
