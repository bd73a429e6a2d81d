"""The densities behind a bound, on its own grid: p̂, q̂ and the floored q̂_τ (for the figures).

Computed by the library's own kernels (:func:`rdpjax.estimator.binning.linear_binning`,
:func:`rdpjax.estimator.kde.fft_kde`, :func:`rdpjax.estimator.divergence.softmax_floor`) on exactly
the grid, bandwidth h, floor τ and β of the :class:`rdpjax.Bound` that :func:`rdpjax.lower_bound`
returns for the same samples and options: the curves are the p̂, q̂ and q̂_τ of eq. (10) (or the
relative frequencies of eq. (9) for discrete outputs) and (13) of Kutta, Askin, Dunsche,
arXiv:2212.04739v3, whose plug-in divergence is the bound's ``estimate``. The drawing is
:mod:`rdpjax.auditing.plots`' (matplotlib).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax.estimator.api import lower_bound, plan_bound
from rdpjax.estimator.binning import linear_binning
from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.divergence import softmax_floor
from rdpjax.estimator.grid import grid_from_range
from rdpjax.estimator.kde import fft_kde
from rdpjax.estimator.options import BoundOptions, resolve_options
from rdpjax.estimator.support import encode_pair

__all__ = ["DensityCurves", "density_curves"]


@dataclasses.dataclass(frozen=True)
class DensityCurves:
    """The densities behind a 1-D bound, on the bound's grid or support (host numpy float64).

    Attributes:
      points: ``(g,)`` grid points (continuous: in the units of the pilot quantile map, in
        (0, 1), when ``bound.transform`` says it was applied), or the support values — the index
        of each value when the outputs are vectors — (discrete).
      p_hat: ``(g,)`` KDE (eq. (10)) or relative frequencies (eq. (9)) of the samples on x.
      q_hat: ``(g,)`` the same for the samples on x'.
      q_floored: ``(g,)`` q̂_τ, the softmax floor (13) applied to ``q_hat`` (≥ τ and ≥ q̂).
      cell_volume: grid spacing Δ (``∫ f ≈ Δ Σ f``); 1 for relative frequencies.
      bound: the :class:`rdpjax.Bound` whose settings were used.
    """

    points: np.ndarray
    p_hat: np.ndarray
    q_hat: np.ndarray
    q_floored: np.ndarray
    cell_volume: float
    bound: Bound


@functools.partial(jax.jit, static_argnames=("half_width",))
def _densities(p, q, grid, bandwidth, floor, beta, half_width):
    """p̂, q̂ (eq. (10)) and q̂_τ (eq. (13)) on ``grid``, as in ``BoundPlan.__call__``."""
    (counts_p, _), (counts_q, _) = linear_binning(p, grid), linear_binning(q, grid)
    p_hat = fft_kde(counts_p, grid, bandwidth, half_width)  # Eq. (10)
    q_hat = fft_kde(counts_q, grid, bandwidth, half_width)  # Eq. (10)
    return p_hat, q_hat, softmax_floor(q_hat, floor, beta)  # Eq. (13)


def _frequencies(codes_p, codes_q, size: int, floor, beta):
    """p̂, q̂ (eq. (9)) and q̂_τ (eq. (13)) on the support, as in ``BoundPlan.__call__``."""
    p_hat = np.bincount(codes_p, minlength=size) / len(codes_p)  # Eq. (9)
    q_hat = np.bincount(codes_q, minlength=size) / len(codes_q)  # Eq. (9)
    with float64():
        q_floored = softmax_floor(jnp.asarray(q_hat), floor, beta)  # Eq. (13)
        return p_hat, q_hat, np.asarray(q_floored)


def density_curves(
    p_samples,
    q_samples,
    *,
    lam=2.0,
    bound: Bound | None = None,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: BoundOptions | None = None,
    **fields,
) -> DensityCurves:
    """p̂, q̂ and q̂_τ exactly as :func:`rdpjax.lower_bound` computes them for these samples.

    Runs :func:`rdpjax.lower_bound` (unless given its result) and takes h, τ, β and the grid
    shape from its :class:`~rdpjax.Bound`; the grid margin and kernel width come from
    :func:`rdpjax.plan_bound` with the same options (the layout :func:`rdpjax.lower_bound`
    uses: a deterministic function of the data and options). Discrete samples (as
    :func:`rdpjax.lower_bound` decides, or ``discrete=True``) give relative frequencies on the
    pooled support instead of KDEs. The floor is on q̂, the denominator of ``D_λ(P‖Q)``. Cost:
    one bound computation (none when ``bound`` is given) plus one KDE per sample,
    O(n + g log g).

    Args:
      p_samples: ``(n,)`` or ``(n, 1)`` samples, the outputs on x; discrete samples may also be
        vectors ``(n, d)``.
      q_samples: the same for the outputs on x'.
      lam: order(s) passed to :func:`rdpjax.lower_bound`; the densities do not depend on them.
      bound: the :class:`~rdpjax.Bound` :func:`rdpjax.lower_bound` already returned for these
        samples and options (:func:`rdpjax.audit` passes it), so that it is not computed again.
      alpha: as in :func:`rdpjax.lower_bound`.
      both_directions: as in :func:`rdpjax.lower_bound`.
      options: the :class:`rdpjax.BoundOptions` of the bound.
      **fields: its fields by name (``bandwidth``, ``floor``, ``discrete``, …), as in
        :func:`rdpjax.lower_bound`.

    Returns:
      A :class:`DensityCurves`.

    Raises:
      ValueError: for continuous samples of more than one dimension, or anything
        :func:`rdpjax.lower_bound` rejects.
    """
    # The map lower_bound applied is known once it has bounded ("auto" resolved); until then
    # the planning below (which only checks the data) takes the map asked for, "auto" as None.
    asked = resolve_options(options, fields, caller="density_curves")
    common = dict(alpha=alpha, both_directions=both_directions)
    transform = bound.transform if bound is not None else asked.transform
    planned = asked.replace(transform=None if transform == "auto" else transform)
    with float64():
        # Host-side planning first: rejects unsuitable data before any compilation.
        plan, p, q = plan_bound(p_samples, q_samples, lam, options=planned, **common)
    if not plan.discrete and len(plan.shape) != 1:
        raise ValueError(f"density plots need 1-D samples; got d = {len(plan.shape)} dimensions.")
    if bound is None:
        bound = lower_bound(p_samples, q_samples, lam, options=asked, **common)
        if bound.transform != planned.transform:
            with float64():
                plan, p, q = plan_bound(
                    p_samples,
                    q_samples,
                    lam,
                    options=planned.replace(transform=bound.transform),
                    **common,
                )
    if plan.shape != bound.grid_shape:  # cannot happen: the same data and options
        raise RuntimeError(f"grid {plan.shape} differs from the bound's {bound.grid_shape}")
    if plan.discrete:
        # plan_bound's codes index the pooled support of encode_pair; recover its values. The
        # plan's support may be padded with empty cells (bucketed layout): drawn without them.
        _, _, support = encode_pair(np.asarray(p_samples), np.asarray(q_samples))
        support = np.asarray(support)
        size = len(support)
        p_hat, q_hat, q_floored = _frequencies(
            np.asarray(p), np.asarray(q), size, bound.floor, bound.beta
        )
        points = (
            support.astype(np.float64) if support.ndim == 1 else np.arange(size, dtype=np.float64)
        )
        return DensityCurves(points, p_hat, q_hat, q_floored, 1.0, bound)
    with float64():
        lo = np.minimum(np.min(p, 0), np.min(q, 0)).astype(np.float64)
        hi = np.maximum(np.max(p, 0), np.max(q, 0)).astype(np.float64)
        grid = grid_from_range(lo, hi, plan.shape, plan.pad)  # the grid of BoundPlan.__call__
        p_hat, q_hat, q_floored = _densities(
            p, q, grid, bound.bandwidth, bound.floor, bound.beta, plan.half_width
        )
        return DensityCurves(
            points=np.asarray(grid.axes()[0]),
            p_hat=np.asarray(p_hat),
            q_hat=np.asarray(q_hat),
            q_floored=np.asarray(q_floored),
            cell_volume=float(grid.cell_volume),
            bound=bound,
        )


def curves_or_none(p, q, orders, common, bound) -> DensityCurves | None:
    """The densities behind an audit's ``bound`` (:func:`density_curves`), or ``None``.

    ``None`` is for continuous outputs of d > 1, which have no 1-D picture.
    """
    try:
        return density_curves(p, q, lam=orders, bound=bound, **common)
    except ValueError:  # d = 2, 3 continuous: the bound exists, the 1-D figure does not
        return None
