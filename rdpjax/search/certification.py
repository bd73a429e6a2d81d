"""Certification on fresh draws: the four independent keys of a search, and :func:`certify`.

The pair that :func:`~rdpjax.search.find_pair` returns is a function of the initial, search and
selection draws only; its bounds are certified with :func:`rdpjax.lower_bound` on a *third* set
of draws from a key the search never touched (:class:`SearchKeys`), so the certified bound is a
valid lower bound on ``D_λ`` at that pair, hence on ε(λ) (eq. (6) of Kutta, Askin, Dunsche,
arXiv:2212.04739v3). With L orders (and both directions, 2L bounds) each bound is computed at
level α/(L·directions) (Bonferroni, docs/methods.md §2.6), so all reported bounds hold together
with probability ≥ 1 − α.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int, check_orders
from rdpjax.estimator.api import lower_bound
from rdpjax.estimator.bound_plan import Bound
from rdpjax.mechanisms.base import Mechanism
from rdpjax.search.config import BlackBoxOptions
from rdpjax.stream import BlackBox, streamed_bound
from rdpjax.stream.options import DEFAULT_PILOT

__all__ = ["SearchKeys", "certify", "search_keys"]


class SearchKeys:
    """The four independent keys of :func:`~rdpjax.search.find_pair`.

    They are ``jax.random.split(key, 4)``.

    Attributes:
      init: initial pairs of the restarts (uniform on the domain).
      search: the search draws; restart r (of R) uses ``jax.random.split(search, R + 1)[r]`` for
        x and x' alike (common random numbers) at every order and step, and the grid pilot draws
        with the same keys; ``[R]`` gives the mutation keys of the evolutionary search.
      select: the ``select_n`` draws per side that pick the pair among the candidates (the same
        key for every candidate).
      certify: the certification draws, never used by the search: x is drawn with
        ``jax.random.split(certify)[0]`` and x' with ``[1]`` (:func:`certify`).

    A numpy black box's search uses them alike: ``init`` seeds the optuna samplers (one seed
    per restart, ``jax.random.randint(init, (R,), 0, 2**31 - 1)``); restart r scores every
    trial on draws from ``jax.random.split(search, R)[r]``; ``select`` and ``certify`` are the
    keys of :func:`rdpjax.stream.streamed_bound` (a :class:`~rdpjax.stream.BlackBox`) for the
    selection and the certification.
    """

    def __init__(self, key: jax.Array):
        self.init, self.search, self.select, self.certify = jax.random.split(key, 4)


def search_keys(key: jax.Array) -> SearchKeys:
    """Split ``key`` as :func:`~rdpjax.search.find_pair` does (see :class:`SearchKeys`)."""
    return SearchKeys(key)


def certify(
    key: jax.Array,
    mechanism: Mechanism | Callable,
    x,
    x_prime,
    lam,
    *,
    n: int,
    alpha: float = 0.05,
    family_size: int | None = None,
    both_directions: bool = False,
    black_box: BlackBoxOptions | None = None,
) -> Bound:
    """Lower bounds on ``D_λ(law A(x) ‖ law A(x'))`` from ``n`` fresh draws per side.

    Draws x with ``jax.random.split(key)[0]`` and x' with ``[1]``, applies the canonical encoding of
    discrete outputs, and calls :func:`rdpjax.lower_bound`; a numpy black box is drawn and bounded
    by :func:`rdpjax.stream.streamed_bound` (a :class:`~rdpjax.stream.BlackBox`) with ``key`` (its
    pilot: ``min(n, 2^16)`` draws per side, then the ``n`` draws). Every bound is computed at level
    ``alpha / family_size`` (Bonferroni), where ``family_size`` counts *all* bounds of the report
    this call is part of (default: the ``len(lam) × directions`` bounds of this call).

    The bound is valid for any pair that was fixed before the draws from ``key`` existed, e.g.
    one chosen by a search that never used ``key``.

    Args:
      key: a PRNG key that nothing else used.
      mechanism: the mechanism, or a numpy black box ``sample(rng, database, m)``.
      x: the database whose outputs are P (a concrete array).
      x_prime: the database whose outputs are Q (a concrete array).
      lam: one order or several.
      n: draws per side.
      alpha: family-wise error level in (0, 0.5).
      family_size: number of bounds in the whole report, at least ``len(lam) × directions``.
      both_directions: also bound ``D_λ(Q‖P)`` and keep the larger bound per λ.
      black_box: black box only: its :class:`~rdpjax.search.BlackBoxOptions` (the estimator's
        and the stream's options; the pilot defaults to ``min(n, 2^16)``).

    Returns:
      The :class:`rdpjax.Bound`; its ``level`` is ``alpha / family_size`` (shared 0.9 / 0.1
      between the quantile map's bounds and the outputs' own where the default maps them:
      :func:`rdpjax.lower_bound`).
    """
    orders = check_orders(lam)
    check_int(n, "n", 2)
    own = orders.size * (2 if both_directions else 1)
    family = own if family_size is None else family_size
    check_int(family, "family_size", own)
    level = alpha * own / family  # each of the `own` bounds at level alpha / family
    if not isinstance(mechanism, Mechanism):
        if not callable(mechanism):
            raise ValueError(f"mechanism must be a Mechanism or a callable; got {mechanism!r}")
        black_box = BlackBoxOptions() if black_box is None else black_box
        if not isinstance(black_box, BlackBoxOptions):
            raise ValueError(f"black_box must be a BlackBoxOptions; got {black_box!r}")
        return streamed_bound(
            key,
            BlackBox(mechanism, np.asarray(x), np.asarray(x_prime)),
            orders,
            n=n,
            alpha=level,
            both_directions=both_directions,
            options=black_box.bound,
            stream=black_box.with_pilot(min(n, DEFAULT_PILOT)),
        )
    if black_box is not None:
        raise ValueError("black_box= applies to numpy black boxes only")
    kp, kq = jax.random.split(key)
    with float64():
        x, x_prime = jnp.asarray(x), jnp.asarray(x_prime)
        p = mechanism.sample(kp, x, n)
        q = mechanism.sample(kq, x_prime, n)
        spec = mechanism.output(x)
        if spec.is_discrete:
            p, q = spec.encode(p), mechanism.output(x_prime).encode(q)
        p, q = np.asarray(p), np.asarray(q)
    return lower_bound(
        p,
        q,
        orders,
        alpha=level,
        discrete=spec.is_discrete,
        both_directions=both_directions,
    )
