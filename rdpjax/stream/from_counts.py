"""The step after the draws: accumulated counts → the bound, shared by every streamed route.

The outside-mass policy (``"clip"`` warns and counts, ``"raise"`` raises), then eq. (16) of
Kutta, Askin, Dunsche, arXiv:2212.04739v3 from the two histograms
(:meth:`rdpjax.BoundPlan.bound`). What the counts were binned onto is the
:class:`rdpjax.estimator.planner.DrawPlan` fixed before the draws.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.estimator.api import bound_program
from rdpjax.estimator.bound_plan import Binned, Bound
from rdpjax.estimator.inputs import check_finite_bound
from rdpjax.estimator.planner import DrawPlan

__all__ = ["bound_from_counts"]


def bound_from_counts(
    fixed: DrawPlan, counts, outside_counts, sizes, *, outside: str, stacklevel: int
) -> Bound:
    """Eq. (16) from the accumulated counts (:meth:`rdpjax.BoundPlan.bound`).

    It applies the outside-mass policy (:mod:`rdpjax.stream`) first. ``counts``,
    ``outside_counts`` and ``sizes`` are (P, Q) pairs of host arrays and ints. Runs inside
    ``rdpjax.float64()``.
    """
    counted = np.array([float(c) for c in outside_counts])
    if np.any(counted > 0):
        message = (
            f"{counted.astype(int).tolist()} draws (P, Q) fell outside the grid range or support"
        )
        if outside == "raise":
            raise ValueError(message + "; pass a wider grid= or outside='clip'.")
        warnings.warn(
            message + " and were clamped onto its edge (the bound stays valid, possibly "
            "looser); see Bound.outside.",
            stacklevel=stacklevel + 1,
        )
    (counts_p, counts_q), (n_p, n_q) = counts, sizes
    binned = Binned(
        counts_p=counts_p,
        counts_q=counts_q,
        n_p=jnp.asarray(n_p, jnp.int64),
        n_q=jnp.asarray(n_q, jnp.int64),
        outside=jnp.stack([jnp.asarray(c, jnp.float64) for c in outside_counts]),
        grid=fixed.grid,
        bandwidth=fixed.bandwidth,
        floor=jnp.asarray(fixed.floor, jnp.float64),
        beta=jnp.asarray(fixed.beta, jnp.float64),
    )
    bound = jax.tree.map(np.asarray, bound_program(fixed.plan, binned))
    check_finite_bound(bound)
    return bound
