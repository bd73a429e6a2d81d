"""A one-run audit's report: the trade-off figure, ``report.md`` and ``report.json``.

:func:`plot_tradeoff` draws the empirical trade-off curve of the canary scores (type II error
1 − TPR against type I error FPR of "in iff score > t", every t), the certified operating points
of :func:`rdpjax.canaries.tpr_at_fpr` with their Clopper–Pearson intervals, and the claim's
trade-off curve (:func:`rdpjax.canaries.claim_curve`; without a claim, the Gaussian curve of the
certified μ), with the verdict, α and m in the title. :func:`write_report` writes it with the
numbers to a folder (``rdpjax canaries … --report DIR``), as
:func:`rdpjax.auditing.writer.write_report` does for audits; matplotlib is imported lazily, as
in :mod:`rdpjax.auditing.plots`.

How to read the figure: a claim's curve f bounds the errors of **every** test; an i.i.d. test
whose certified corner (upper FPR, upper 1 − TPR) lies below f would refute it. The one-run ε and
μ bounds (the title) are what stays valid when the canaries share one run; the points and the
empirical curve show where the attack operates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from rdpjax.canaries.fdp import gaussian_curve
from rdpjax.canaries.metrics import auroc, tpr_at_fpr
from rdpjax.canaries.result import OneRunResult
from rdpjax.canaries.tradeoffs import claim_curve

__all__ = ["FPRS", "empirical_tradeoff", "plot_tradeoff", "summary", "write_report"]

FPRS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5)
"""Target FPRs of the certified points in the report (:func:`summary`: together with the AUROC's
interval, all at 1 − α)."""


def empirical_tradeoff(in_scores: Any, out_scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(fpr, fnr)`` of "in iff score > t" at every distinct score t and at ±inf, FPR increasing.

    Cost: O(n log n). The curve of the raw scores, not its convex hull.
    """
    ins, outs = np.asarray(in_scores, np.float64), np.asarray(out_scores, np.float64)
    t = np.concatenate([[np.inf], np.unique(np.concatenate([ins, outs]))[::-1], [-np.inf]])
    fpr = 1.0 - np.searchsorted(np.sort(outs), t, side="right") / outs.size
    tpr = 1.0 - np.searchsorted(np.sort(ins), t, side="right") / ins.size
    return fpr, 1.0 - tpr


def summary(in_scores: Any, out_scores: Any, *, alpha: float, fprs=FPRS) -> dict[str, Any]:
    """The metrics of the report: AUROC and the operating point at each target FPR.

    Everything it reports holds together at 1 − ``alpha``: the AUROC's interval and each
    point's two intervals get ``alpha / (1 + len(fprs))`` each (Bonferroni), so that reading
    the best-looking point off several is not a multiple-testing trap (ML Privacy Meter #146).
    The ε and μ bounds of the :class:`~rdpjax.canaries.OneRunResult` hold at their own 1 − α.

    Returns:
      ``{"auroc", "points", "level"}``, ``level`` the share of ``alpha`` each metric got.
    """
    level = alpha / (1 + len(fprs))
    area = auroc(in_scores, out_scores, alpha=level)
    points = [tpr_at_fpr(in_scores, out_scores, f, alpha=level) for f in fprs]
    return {"auroc": area, "points": points, "level": level}


def plot_tradeoff(
    in_scores: Any,
    out_scores: Any,
    result: OneRunResult,
    *,
    points=None,
    ax=None,
    path=None,
    dpi: int = 100,
):
    """The empirical trade-off curve, the certified points and the claim's curve, on ``ax``.

    Args:
        in_scores: scores of the included canaries.
        out_scores: scores of the excluded ones.
        result: the :class:`~rdpjax.canaries.OneRunResult` of these scores (title and claim).
        points: :class:`~rdpjax.canaries.OperatingPoint` list (default: at :data:`FPRS`).
        ax: matplotlib axes (a new figure when ``None``).
        path: where to save the figure, or ``None``.
        dpi: resolution of the saved figure.

    Returns:
        The axes; the lines carry labels (``ax.lines``), the certified points (targets
        that no k certifies are left out) are ``ax.containers[0]``.
    """
    if ax is None:
        try:
            import matplotlib.pyplot as plt
        except ImportError as err:
            raise ImportError(
                "plot_tradeoff needs matplotlib, which is not a dependency of rdpjax; install it "
                "with `pip install matplotlib` (or `pip install 'rdpjax[bench]'`)."
            ) from err
        _, ax = plt.subplots(figsize=(6.0, 5.0), layout="constrained")
    if points is None:
        points = summary(in_scores, out_scores, alpha=result.alpha)["points"]
    fpr, fnr = empirical_tradeoff(in_scores, out_scores)
    ax.plot(fpr, fnr, drawstyle="steps-post", color="C0", label="canary scores (empirical)")
    a = np.linspace(0.0, 1.0, 401)
    if result.claim is not None:
        name = str(result.claim)
        name = name if len(name) <= 48 else name[:47] + "…"  # a long event name: the legend fits
        ax.plot(a, claim_curve(result.claim)(a), color="C3", label=f"claim: {name}")
    ax.plot(a, gaussian_curve(a, result.mu), "--", color="C2",
            label=f"certified μ = {result.mu:.3f} (GDP curve)")  # fmt: skip
    points = [p for p in points if p.certified]  # an uncertified target has no point
    if points:
        x = np.array([p.fpr for p in points])
        y = np.array([1.0 - p.tpr for p in points])
        lo_hi = np.array([[p.fpr_interval[0] for p in points], [p.fpr_interval[1] for p in points]])
        t_hi_lo = np.array(
            [[p.tpr_interval[1] for p in points], [p.tpr_interval[0] for p in points]]
        )
        ax.errorbar(x, y, xerr=np.abs(lo_hi - x), yerr=np.abs(1.0 - t_hi_lo - y), fmt="o",
                    color="k", ms=3, capsize=2,
                    label=f"points at FPR {', '.join(f'{p.target_fpr:g}' for p in points)} "
                    f"(CP intervals, each at {100 * (1 - points[0].alpha):.3g}%)")  # fmt: skip
    word = "" if result.claim is None else ("REFUTED · " if result.refuted else "not refuted · ")
    ax.set_title(
        f"{word}ε ≥ {result.epsilon:.3f} (δ = {result.delta:g}), μ ≥ {result.mu:.3f}\n"
        f"α = {result.alpha:g}, m = {result.m:,} ({result.n_in:,} in, {result.n_out:,} out)",
        fontsize=10,
    )
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error (FPR)", ylabel="type II error (1 − TPR)")
    ax.legend(fontsize=7, loc="upper right")
    if path is not None:
        ax.figure.savefig(path, dpi=dpi)
    return ax


def _markdown(result: OneRunResult, metrics: dict[str, Any]) -> str:
    area = metrics["auroc"]
    rows = [
        f"| {p.target_fpr:g} | {p.fpr:.4g} [{p.fpr_interval[0]:.4g}, {p.fpr_interval[1]:.4g}] "
        f"| {p.tpr:.4f} [{p.tpr_interval[0]:.4f}, {p.tpr_interval[1]:.4f}] | {p.threshold:.6g} |"
        for p in metrics["points"]
    ]
    return "\n".join(
        [
            "# One-run canary audit",
            "",
            f"**{result.verdict()}**",
            "",
            f"- ε lower bound (any (ε, δ)-DP mechanism): {result.epsilon:.4f} at δ = "
            f"{result.delta:g} (Steinke {result.epsilon_steinke:.4f}, f-DP "
            f"{result.epsilon_fdp:.4f})",
            f"- certified μ (GDP): {result.mu:.4f}",
            f"- {area.describe()}",
            "",
            f"Operating points (Clopper–Pearson; the AUROC's interval and every row's two "
            f"intervals hold together at {100 * (1 - result.alpha):g}%, Bonferroni; i.i.d. "
            "reading, see `rdpjax.canaries.metrics`):",
            "",
            "| target FPR | FPR reached [interval] | TPR [interval] | threshold |",
            "|---|---|---|---|",
            *rows,
            "",
            "![trade-off curve](tradeoff.png)",
            "",
        ]
    )


def _finite(value: float) -> float | None:
    """JSON has no inf: a threshold of +inf ("in" for no score) is written as null."""
    return float(value) if np.isfinite(value) else None


def write_report(
    directory, scores: Any, bits: Any, result: OneRunResult, *, meta: dict | None = None
) -> list[Path]:
    """Write ``report.json``, ``report.md`` and (with matplotlib) ``tradeoff.png``.

    Args:
        directory: the folder (created with its parents when missing).
        scores: (m,) scores of the audit behind ``result``.
        bits: (m,) inclusion bits.
        result: its :class:`~rdpjax.canaries.OneRunResult`.
        meta: extra JSON records (the command); rdpjax's version is added.

    Returns:
        The paths written.

    Raises:
        ValueError: if ``directory`` cannot be made a folder.
    """
    from rdpjax._version import __version__

    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError, PermissionError) as err:
        raise ValueError(f"cannot write the report to {directory}: {err}") from err
    scores, bits = np.asarray(scores, np.float64), np.asarray(bits)
    ins, outs = scores[bits == 1], scores[bits == 0]
    metrics = summary(ins, outs, alpha=result.alpha)
    record = result.to_dict() | {
        "verdict": result.verdict(),
        "auroc": vars(metrics["auroc"]),
        "points": [vars(p) | {"threshold": _finite(p.threshold)} for p in metrics["points"]],
        "meta": {"rdpjax": __version__, **(meta or {})},
    }
    paths = [directory / "report.json", directory / "report.md"]
    paths[0].write_text(json.dumps(record, indent=1, default=float) + "\n")
    paths[1].write_text(_markdown(result, metrics))
    try:
        import matplotlib
    except ImportError:
        return paths
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths.append(directory / "tradeoff.png")
    ax = plot_tradeoff(ins, outs, result, points=metrics["points"], path=paths[-1])
    plt.close(ax.figure)
    return paths
