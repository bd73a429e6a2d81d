"""Figures: the estimated densities and floor behind a bound, and bounds against n and λ.

matplotlib is not a dependency of rdpjax; it is imported inside each drawing function (install
it with ``pip install matplotlib`` or ``pip install 'rdpjax[bench]'``). Every function draws on
``ax`` (a new figure when ``None``), optionally saves the figure to ``path``, and returns the
axes; every artist carries a label, so the plotted data can be read back from ``ax.lines`` and
``ax.containers`` (error bars).

The densities are :mod:`rdpjax.auditing.densities`' (the p̂, q̂ and q̂_τ behind the bound, on its
own grid).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from rdpjax.auditing.densities import DensityCurves, density_curves
from rdpjax.auditing.report import AuditReport
from rdpjax.estimator.bound_plan import Bound

__all__ = [
    "plot_densities",
    "plot_density_curves",
    "plot_bound_vs_n",
    "plot_bound_vs_lambda",
    "plot_report",
    "plot_tradeoff_points",
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
        if finite.any():  # an (ε, δ) claim implies no ε(λ): nothing to draw, nor to label
            ax.plot(lam[finite], claimed[finite], "s--", color="C2", ms=4, lw=1.2, label="claim")
    if title is None and isinstance(report, AuditReport):
        title = report.mechanism
    if title:
        ax.set_title(title, fontsize="small")
    ax.set_xlabel("λ")
    ax.set_ylabel("ε(λ)")
    ax.legend(fontsize="x-small")
    return _finish(ax, path, dpi)


# ----------------------------------------------------------------------------- trade-offs


def plot_tradeoff_points(report, *, ax=None, path=None, dpi: int = 100):
    """The certified trade-off points of an audit's rejection sets, against the claim's curve.

    Each certified set S gives a point (a, b): a test rejecting on S has type I error ≤ a and
    type II error ≤ b, simultaneously at the sets' level (docs/rejection.md). A claim of
    (ε, δ)-DP, ε-DP or μ-GDP allows no point below its trade-off curve f (Dong, Roth, Su,
    arXiv:1905.02383v3, eqs. (4) and (6)), so a point below it refutes the claim. Drawn too:
    the (ε, δ) curve at the certified ε(δ) (the mechanism's own curve dips below it somewhere)
    and the μ-GDP curve at the certified μ.

    Args:
      report: an :class:`rdpjax.AuditReport` whose ``sets`` is a
        :class:`rdpjax.rejection.SetTest` (a fixed-n audit of an (ε, δ), ε-DP or GDP claim), or
        that :class:`~rdpjax.rejection.SetTest` itself.
      ax: matplotlib axes; a new figure when ``None``.
      path: if given, save the figure there.
      dpi: resolution of the saved figure.

    Returns:
      The axes; the certified points are the line labelled ``"certified points"``.

    Raises:
      ValueError: for a report without certified rejection sets.
    """
    from rdpjax.claims import approx_dp, gdp
    from rdpjax.claims.hypothesis import SET_KINDS, tradeoff

    sets = report.sets if isinstance(report, AuditReport) else report
    if sets is None or not hasattr(sets, "points"):
        raise ValueError("plot_tradeoff_points needs an audit with certified rejection sets.")
    _pyplot()
    ax = _axes(ax, figsize=(5.0, 4.5))
    a = np.linspace(0.0, 1.0, 401)
    ax.plot(a, 1.0 - a, color="0.7", lw=0.8, label="no privacy loss (b = 1 − a)")
    claim = sets.claim
    if claim is not None and claim.kind in SET_KINDS:
        ax.plot(a, tradeoff(claim, a), color="C2", lw=1.5, label=f"claim: {claim}")
    if np.isfinite(sets.epsilon) and sets.epsilon > 0:
        curve = tradeoff(approx_dp(float(sets.epsilon), float(sets.delta)), a)
        ax.plot(a, curve, ":", color="C3", lw=1.2,
                label=f"certified ε(δ = {sets.delta:g}) ≥ {sets.epsilon:.3g}")  # fmt: skip
    if np.isfinite(sets.mu) and sets.mu > 0:
        ax.plot(a, tradeoff(gdp(float(sets.mu)), a), "--", color="C1", lw=1.0,
                label=f"certified μ ≥ {sets.mu:.3g} (GDP curve)")  # fmt: skip
    points = np.array(sets.points(), np.float64).reshape(-1, 2)
    if len(points):
        ax.plot(points[:, 0], points[:, 1], "o", color="k", ms=5,
                label=f"certified points (at {100 * (1 - sets.alpha):.3g}%)")  # fmt: skip
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error a", ylabel="type II error b")
    ax.set_aspect("equal")
    ax.legend(fontsize="x-small", loc="upper right")
    return _finish(ax, path, dpi)


def plot_report(report: AuditReport, *, path=None, dpi: int = 100):
    """The figure of an audit, as ``rdpjax audit --plot`` and ``--report`` write it.

    The Rényi bounds against λ with the claim's curve (when it implies one); beside them, for
    an audit with certified rejection sets, the trade-off points against the claim's trade-off
    curve (:func:`plot_tradeoff_points`). A sequential audit by betting, which has neither,
    gets its wealth path. The title says the verdict, α and n, so the figure read alone says
    whether the claim held.

    Args:
      report: an :class:`rdpjax.AuditReport`.
      path: if given, save the figure there.
      dpi: resolution of the saved figure.

    Returns:
      The matplotlib figure.
    """
    plt = _pyplot()
    tradeoffs = report.sets is not None and hasattr(report.sets, "points")
    if report.bound is None:  # betting: the log wealth against the pairs
        fig, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
        path_ = np.array(report.sets.path, np.float64).reshape(-1, 2)
        ax.plot(path_[:, 0], path_[:, 1] / np.log(10), "o-", ms=3, label="log10 wealth")
        ax.axhline(np.log10(1 / report.alpha), color="C3", ls="--", label="refutes at 1/α")
        ax.set(xlabel="pairs per side", ylabel="log10 wealth")
        ax.legend(fontsize="x-small")
    elif tradeoffs:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.5), layout="constrained")
        plot_bound_vs_lambda(report, ax=left, title="Rényi-DP lower bounds")
        plot_tradeoff_points(report, ax=right)
        right.set_title("certified trade-off points", fontsize="small")
    else:
        fig, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
        plot_bound_vs_lambda(report, ax=ax, title="")
    word = "no claim" if report.claim is None else ("REFUTED" if report.refuted else "not refuted")
    against = "" if report.claim is None else f" · {report.claim}"
    sizes = report.sizes()
    fig.suptitle(
        f"{report.mechanism}{against}\n{word} at α = {report.alpha:g} · n = {sizes['drawn']:,} "
        "drawn per database",
        fontsize="medium",
    )
    if path is not None:
        fig.savefig(path, dpi=dpi)
    return fig
