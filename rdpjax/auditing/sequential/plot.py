"""The figure of a sequential audit: the bound at each look, and the claim, against n."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_looks", "shown_orders"]


def shown_orders(report, most: int = 3) -> list[float]:
    """The orders a figure shows, at most ``most`` of them.

    They are those whose last bound came closest to (or beyond) the claim, or without a claim
    the first ``most`` orders.
    """
    last = report.looks[-1]
    lower = np.array([-np.inf if v is None else v for v in last.lower])
    if last.claimed is None:
        return [float(v) for v in last.lam[:most]]
    claimed = np.array([np.inf if v is None else v for v in last.claimed])
    margin = np.where(np.isfinite(claimed), lower - claimed, -np.inf)
    chosen = np.argsort(-margin, kind="stable")[:most]
    return sorted(float(last.lam[i]) for i in chosen)


def plot_looks(report, *, ax=None, path=None, dpi: int = 100):
    """Lower bound (solid, one colour per order) and claim (dashed) at every look, against n.

    n is the outputs drawn per database (pilot included, log axis); the look that refuted is
    circled.

    Args:
      report: an :class:`rdpjax.AuditReport` of a sequential audit (``report.looks``).
      ax: matplotlib axes to draw on (default: a new figure).
      path: where to save the figure (optional).
      dpi: resolution of the saved figure.

    Returns:
      The axes.

    Raises:
      ValueError: if the report has no looks; ImportError naming matplotlib if it is missing.
    """
    if not report.looks:
        raise ValueError("the report has no looks: it is not from a sequential audit.")
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from err
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
    for i, lam in enumerate(shown_orders(report)):
        colour = f"C{i}"
        xs, lows, claims = [], [], []
        for look in report.looks:
            if lam in look.lam:
                j = look.lam.index(lam)
                xs.append(look.drawn)
                lows.append(np.nan if look.lower[j] is None else look.lower[j])
                c = None if look.claimed is None else look.claimed[j]
                claims.append(np.nan if c is None else c)
        ax.plot(xs, lows, "o-", color=colour, label=f"lower bound, λ={lam:g}")
        if report.claim is not None and np.any(np.isfinite(claims)):
            ax.plot(xs, claims, "--", color=colour, label=f"claim, λ={lam:g}")
    last = report.looks[-1]
    if last.refuted:
        ax.axvline(last.drawn, color="0.5", lw=0.8)
        ax.annotate("refuted", (last.drawn, 0.02), xycoords=("data", "axes fraction"))
    ax.set_xscale("log")
    ax.set_xlabel("outputs drawn per database (pilot included)")
    ax.set_ylabel("ε(λ)")
    ax.set_title(f"sequential audit of {report.mechanism} (α = {report.alpha:g} over all looks)")
    ax.legend(fontsize="small")
    if path is not None:
        ax.figure.savefig(path, dpi=dpi)
    return ax
