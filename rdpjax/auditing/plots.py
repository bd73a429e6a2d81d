"""Figures: the estimated densities and floor behind a bound, and bounds against n and λ.

matplotlib is not a dependency of rdpjax; it is imported inside each drawing function (install
it with ``pip install matplotlib`` or ``pip install 'rdpjax[bench]'``). Every function draws on
``ax`` (a new figure when ``None``), optionally saves the figure to ``path``, and returns the
axes; every artist carries a label, so the plotted data can be read back from ``ax.lines`` and
``ax.containers`` (error bars).

The densities are computed by the library's own kernels
(:func:`rdpjax.estimator.binning.linear_binning`, :func:`rdpjax.estimator.kde.fft_kde`,
:func:`rdpjax.estimator.divergence.softmax_floor`) on exactly the grid, bandwidth h, floor τ and β
of the :class:`rdpjax.Bound` that :func:`rdpjax.lower_bound` returns for the same samples and
options: the curves are the p̂, q̂ and q̂_τ of eq. (10) (or the relative frequencies of eq. (9) for
discrete outputs) and (13) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, whose plug-in divergence is
the bound's ``estimate``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax.auditing.report import AuditReport
from rdpjax.estimator.api import lower_bound, plan_bound
from rdpjax.estimator.binning import linear_binning
from rdpjax.estimator.divergence import softmax_floor
from rdpjax.estimator.grid import grid_from_range
from rdpjax.estimator.kde import fft_kde
from rdpjax.estimator.options import BoundOptions, resolve_options
from rdpjax.estimator.plan import Bound
from rdpjax.estimator.support import encode_pair

__all__ = [
    "DensityCurves",
    "density_curves",
    "plot_densities",
    "plot_density_curves",
    "plot_bound_vs_n",
    "plot_bound_vs_lambda",
]


def _pyplot():
    """Import ``matplotlib.pyplot`` lazily, with a clear message when it is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError(
            "rdpjax.auditing.plots needs matplotlib, which is not a dependency of rdpjax; install "
            "it with `pip install matplotlib` (or `pip install 'rdpjax[bench]'`)."
        ) from err
    return plt


def _axes(ax, figsize=(6.0, 4.0)):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def _finish(ax, path, dpi: int):
    if path is not None:
        ax.figure.savefig(path, dpi=dpi)
    return ax


# ----------------------------------------------------------------------------- densities


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


def plot_densities(
    p_samples,
    q_samples,
    *,
    ax=None,
    log: bool = True,
    lam=2.0,
    path=None,
    dpi: int = 100,
    **lower_bound_options,
):
    """Plot p̂, q̂, the floored q̂_τ and the floor level τ used by the bound, on one axis.

    The curves come from :func:`density_curves`: the same bandwidth, floor, β and grid as
    :func:`rdpjax.lower_bound` with the same options. Lines are labelled ``"p̂ (x)"``,
    ``"q̂ (x')"``, ``"q̂_τ (x', floored)"`` and ``"floor τ"``. Discrete samples are drawn as
    relative frequencies (markers) on their support.

    Args:
      p_samples: 1-D samples, the outputs on x.
      q_samples: 1-D samples, the outputs on x'.
      ax: matplotlib axes to draw on; a new figure when ``None``.
      log: logarithmic y-axis (the floor acts in the tails, visible only on a log scale).
      lam: order(s) for the bound whose settings are used (they do not depend on λ).
      path: if given, save the figure there.
      dpi: resolution of the saved figure.
      **lower_bound_options: passed to :func:`rdpjax.lower_bound`.

    Returns:
      The axes.

    Example:
      >>> import numpy as np
      >>> from rdpjax.auditing import plots
      >>> rng = np.random.default_rng(0)
      >>> ax = plots.plot_densities(1 + 5 * rng.standard_normal(10**4),
      ...                           5 * rng.standard_normal(10**4))
    """
    _pyplot()  # fail before the computation when matplotlib is missing
    curves = density_curves(p_samples, q_samples, lam=lam, **lower_bound_options)
    return plot_density_curves(curves, ax=ax, log=log, path=path, dpi=dpi)


def _output_label(bound: Bound) -> str:
    """The x axis of the densities: the outputs, or the map's (0, 1) units when they were mapped.

    With ``bound.transform`` the grid (and so :attr:`DensityCurves.points`) lies in the units of
    the pilot quantile map (:mod:`rdpjax.estimator.transform`), not in the mechanism's.
    """
    if bound.discrete:
        return "output"
    if bound.transform == "quantile":
        return "output, mapped to (0, 1) by the pilot quantile map"
    if bound.transform is not None:
        return f"output, mapped by the {bound.transform} map"
    return "output"


def plot_density_curves(curves: DensityCurves, *, ax=None, log: bool = True, path=None, dpi=100):
    """Plot :class:`DensityCurves` already computed (as :func:`plot_densities` does from samples).

    Args:
      curves: from :func:`density_curves`, or an :class:`rdpjax.AuditReport`'s ``densities``.
      ax: matplotlib axes to draw on; a new figure when ``None`` (as in :func:`plot_densities`).
      log: logarithmic y-axis.
      path: if given, save the figure there.
      dpi: resolution of the saved figure.

    Returns:
      The axes.
    """
    _pyplot()
    bound = curves.bound
    ax = _axes(ax)
    x = curves.points
    style = dict(marker=".", ms=3, ls="none") if bound.discrete else dict(lw=1.2)
    ax.plot(x, curves.p_hat, color="C0", label="p̂ (x)", **style)
    ax.plot(x, curves.q_hat, color="C1", label="q̂ (x')", **style)
    floored_style = dict(marker="_", ms=5, ls="none") if bound.discrete else dict(lw=1.0, ls="--")
    ax.plot(x, curves.q_floored, color="C3", label="q̂_τ (x', floored)", **floored_style)
    ax.axhline(float(bound.floor), color="0.4", lw=0.8, ls=":", label="floor τ")
    if log:
        ax.set_yscale("log")
        top = max(curves.p_hat.max(), curves.q_hat.max())
        ax.set_ylim(min(float(bound.floor), top) * 1e-2, top * 3)
    if bound.discrete:
        title = f"relative frequencies, τ = {float(bound.floor):.3g}, β = {float(bound.beta):.3g}"
        title += f", support {int(bound.support)}"
    else:
        h = float(np.asarray(bound.bandwidth).ravel()[0])
        title = (
            f"h = {h:.3g}, τ = {float(bound.floor):.3g}, β = {float(bound.beta):.3g}, "
            f"grid {bound.grid_shape[0]}"
        )
    ax.set_title(title, fontsize="small")
    ax.set_xlabel(_output_label(bound))
    ax.set_ylabel("probability" if bound.discrete else "density")
    ax.legend(fontsize="small")
    return _finish(ax, path, dpi)


# ----------------------------------------------------------------------------- bounds


def _fields(result, exact=None):
    """``(lam, estimate, lower, std_error, exact or None)`` of a Bound or an AuditReport."""
    if isinstance(result, AuditReport):
        values = result.lam, result.estimate, result.lower, result.std_error
        exact = result.exact if exact is None else exact
    elif isinstance(result, Bound):
        values = result.lam, result.estimate, result.lower, result.std_error
    else:
        raise ValueError(
            f"expected an rdpjax.Bound or rdpjax.AuditReport; got {type(result).__name__}."
        )
    lam, est, lower, se = (np.atleast_1d(np.asarray(v, np.float64)) for v in values)
    if exact is not None:
        exact = np.broadcast_to(np.asarray(exact, np.float64), lam.shape)
    return lam, est, lower, se, exact


def _as_pairs(results) -> list[tuple[int, object]]:
    if isinstance(results, Mapping):
        pairs = list(results.items())
    else:
        pairs = [tuple(item) for item in results]
    if not pairs or any(len(item) != 2 for item in pairs):
        raise ValueError("results must be a non-empty dict {n: result} or list of (n, result).")
    pairs = [(int(n), r) for n, r in pairs]
    if any(n < 1 for n, _ in pairs):
        raise ValueError("every n in results must be a positive sample size.")
    return sorted(pairs, key=lambda item: item[0])


def plot_bound_vs_n(results, *, ax=None, exact=None, path=None, dpi: int = 100):
    """Lower bound, and estimate ± one standard error, against the sample size n (log x-axis).

    One colour per order λ. For order λ the lines are labelled ``"lower, λ=2"``,
    ``"estimate ± s.e., λ=2"`` and ``"exact, λ=2"`` (the exact value as a horizontal line).

    Args:
      results: ``{n: result}`` or a sequence of ``(n, result)``, each result an
        :class:`rdpjax.Bound` or :class:`rdpjax.AuditReport` for the same orders; n is the
        sample size per database.
      ax: matplotlib axes; a new figure when ``None``.
      exact: the exact value per order (scalar or ``(L,)``); default the ``exact`` of the first
        :class:`rdpjax.AuditReport` that has one. Without either, no exact lines are drawn.
      path: if given, save the figure there.
      dpi: resolution of the saved figure.

    Returns:
      The axes.

    Raises:
      ValueError: on an empty or malformed ``results``, or results for different orders.
    """
    _pyplot()
    pairs = _as_pairs(results)
    rows = [_fields(r, exact) for _, r in pairs]
    lam = rows[0][0]
    if any(r[0].shape != lam.shape or np.any(r[0] != lam) for r in rows):
        raise ValueError("every result in plot_bound_vs_n must be for the same orders λ.")
    ns = np.array([n for n, _ in pairs], np.float64)
    ax = _axes(ax)
    for i, order in enumerate(lam):
        color = f"C{i}"
        tag = f"λ={order:g}"
        est = np.array([r[1][i] for r in rows])
        lower = np.array([r[2][i] for r in rows])
        se = np.array([r[3][i] for r in rows])
        ax.plot(ns, lower, "^-", color=color, ms=5, label=f"lower, {tag}")
        ax.errorbar(
            ns,
            est,
            yerr=se,
            color=color,
            fmt="o",
            ms=3,
            capsize=2,
            alpha=0.6,
            label=f"estimate ± s.e., {tag}",
        )
        truth = [r[4] for r in rows if r[4] is not None]
        if truth:
            ax.axhline(float(truth[0][i]), color=color, ls="--", lw=1.0, label=f"exact, {tag}")
    ax.set_xscale("log")
    ax.set_xlabel("n per database")
    ax.set_ylabel("ε(λ)")
    # A compact legend: colour = order, style = quantity (the artists keep their full labels).
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=f"C{i}", lw=2, label=f"λ={o:g}") for i, o in enumerate(lam)]
    handles += [
        Line2D([], [], color="0.3", marker="^", label="lower bound"),
        Line2D([], [], color="0.3", marker="o", ls="none", alpha=0.6, label="estimate ± s.e."),
    ]
    if any(r[4] is not None for r in rows):
        handles.append(Line2D([], [], color="0.3", ls="--", label="exact"))
    ax.legend(handles=handles, fontsize="x-small", ncol=2)
    return _finish(ax, path, dpi)


def plot_bound_vs_lambda(
    report, *, ax=None, exact=None, claimed_epsilon=None, title=None, path=None, dpi: int = 100
):
    """Lower bound (and estimate ± s.e.) against λ, with the exact ε(λ) and the claim.

    Lines are labelled ``"lower"``, ``"estimate ± s.e."``, ``"exact"`` (when known), and
    ``"claimed ε"`` (a horizontal line, given ``claimed_epsilon``) or else ``"claim"`` (the
    report's claim curve at its orders).

    Args:
      report: an :class:`rdpjax.AuditReport` (exact value and claim taken from it) or an
        :class:`rdpjax.Bound`.
      ax: matplotlib axes; a new figure when ``None``.
      exact: the exact value per order, overriding the report's.
      claimed_epsilon: a claimed pure ε drawn as a horizontal line, in place of the report's
        claim curve.
      title: axes title; default the audited mechanism's name.
      path: if given, save the figure there.
      dpi: resolution of the saved figure.

    Returns:
      The axes.
    """
    _pyplot()
    lam, est, lower, se, exact = _fields(report, exact)
    ax = _axes(ax)
    if exact is not None:
        ax.plot(lam, exact, "k.-", lw=1.0, label="exact")
    ax.errorbar(
        lam, est, yerr=se, fmt="o", color="C0", ms=3, capsize=2, alpha=0.6, label="estimate ± s.e."
    )
    ax.plot(lam, lower, "^", color="C3", ms=6, label="lower")
    if claimed_epsilon is not None and math.isfinite(claimed_epsilon):
        ax.axhline(claimed_epsilon, color="C2", ls=":", lw=1.2, label="claimed ε")
    elif isinstance(report, AuditReport) and report.claimed is not None:
        claimed = np.asarray(report.claimed, np.float64)
        finite = np.isfinite(claimed)
        ax.plot(lam[finite], claimed[finite], "s--", color="C2", ms=4, lw=1.2, label="claim")
    if title is None and isinstance(report, AuditReport):
        title = report.mechanism
    if title:
        ax.set_title(title, fontsize="small")
    ax.set_xlabel("λ")
    ax.set_ylabel("ε(λ)")
    ax.legend(fontsize="x-small")
    return _finish(ax, path, dpi)
