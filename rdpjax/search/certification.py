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

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int, check_orders
from rdpjax.estimator.api import lower_bound
from rdpjax.estimator.plan import Bound
from rdpjax.mechanisms.base import Mechanism

__all__ = ["SearchKeys", "certify", "search_keys"]


class SearchKeys:
    """The four independent keys of :func:`~rdpjax.search.find_pair`: ``jax.random.split(key,
    4)``.

    Attributes:
      init: initial pairs of the restarts (uniform on the domain).
      search: the search draws; restart r (of R) uses ``jax.random.split(search, R + 1)[r]`` for
        x and x' alike (common random numbers) at every order and step, and the grid pilot draws
        with the same keys; ``[R]`` gives the mutation keys of the evolutionary search.
      select: the ``select_n`` draws per side that pick the pair among the candidates (the same
        key for every candidate).
      certify: the certification draws, never used by the search: x is drawn with
        ``jax.random.split(certify)[0]`` and x' with ``[1]`` (:func:`certify`).
    """

    def __init__(self, key: jax.Array):
        self.init, self.search, self.select, self.certify = jax.random.split(key, 4)


def search_keys(key: jax.Array) -> SearchKeys:
    """Split ``key`` as :func:`~rdpjax.search.find_pair` does (see :class:`SearchKeys`)."""
    return SearchKeys(key)


def certify(
    mechanism: Mechanism,
    x,
    x_prime,
    lam,
    *,
    key: jax.Array,
    n: int,
    alpha: float = 0.05,
    family_size: int | None = None,
    both_directions: bool = False,
) -> Bound:
    """Lower bounds on ``D_λ(law A(x) ‖ law A(x'))`` from ``n`` fresh draws per side.

    Draws x with ``jax.random.split(key)[0]`` and x' with ``[1]``, applies the canonical encoding
    of discrete outputs, and calls :func:`rdpjax.lower_bound`. Every bound is computed at level
    ``alpha / family_size`` (Bonferroni), where ``family_size`` counts *all* bounds of the report
    this call is part of (default: the ``len(lam) × directions`` bounds of this call).

    Args:
      mechanism: the mechanism.
      x, x_prime: the databases (concrete arrays).
      lam: one order or several.
      key: a PRNG key that nothing else used.
      n: draws per side.
      alpha: family-wise error level in (0, 0.5).
      family_size: number of bounds in the whole report, at least ``len(lam) × directions``.
      both_directions: also bound ``D_λ(Q‖P)`` and keep the larger bound per λ.

    Returns:
      The :class:`rdpjax.Bound`; its ``level`` is ``alpha / family_size``.
    """
    orders = check_orders(lam)
    check_int(n, "n", 2)
    own = orders.size * (2 if both_directions else 1)
    family = own if family_size is None else family_size
    check_int(family, "family_size", own)
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
        alpha=alpha * own / family,  # each of the `own` bounds at level alpha / family
        discrete=spec.is_discrete,
        both_directions=both_directions,
    )
