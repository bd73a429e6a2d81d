"""Write an :class:`~rdpjax.auditing.report.AuditReport` to a folder: JSON, markdown, figures."""

from __future__ import annotations

import json
from pathlib import Path

import jax

from rdpjax._version import __version__
from rdpjax.auditing.plots import plot_density_curves, plot_report
from rdpjax.auditing.report import AuditReport

__all__ = ["write_report"]


def write_report(report: AuditReport, directory, *, meta: dict | None = None) -> list[Path]:
    """Write ``report.json``, ``report.md`` and (with matplotlib) figures to ``directory``.

    The figures (:func:`rdpjax.auditing.plots.plot_report`, titled with the verdict, α and n):
    ``bounds.png`` (bounds, estimates and the claim against λ; beside them, for an (ε, δ),
    ε-DP or GDP claim, the certified trade-off points against the claim's curve), or for a
    sequential audit by betting ``betting.png`` (its wealth); when the report has them
    ``densities.png`` (p̂, q̂, the floored q̂_τ and τ behind the bound), and for a sequential
    audit ``looks.png`` (the bound and the claim at every look, against n).

    Args:
      report: an :class:`AuditReport`.
      directory: the folder (created with its parents when missing).
      meta: extra records for the JSON (the command, the seed, versions); rdpjax's and jax's
        versions are added.

    Returns:
      The paths written.

    Raises:
      ValueError: if ``directory`` exists and is not a folder, or cannot be written.
    """
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError, PermissionError) as err:
        raise ValueError(f"cannot write the report to {directory}: {err}") from err
    record = report.to_dict()
    record["meta"] = {"rdpjax": __version__, "jax": jax.__version__, **(meta or {})}
    paths = [directory / "report.json", directory / "report.md"]
    paths[0].write_text(json.dumps(record, indent=1) + "\n")
    paths[1].write_text(report.to_markdown())
    try:
        import matplotlib
    except ImportError:
        return paths
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    betting = report.bound is None  # a sequential audit by betting: no Rényi bounds
    figure = directory / ("betting.png" if betting else "bounds.png")
    plt.close(plot_report(report, path=figure))
    paths.append(figure)
    if betting:
        caption = "the betting test's wealth against the pairs drawn"
    elif report.sets is not None:
        caption = "bounds against λ; certified trade-off points against the claim's curve"
    else:
        caption = "bounds and claim against λ"
    lines = ["", f"![{caption}]({figure.name})"]
    if report.looks:
        # rdpjax.auditing.sequential loads rdpjax.stream, which `import rdpjax` does not.
        from rdpjax.auditing.sequential.plot import plot_looks

        figure = directory / "looks.png"
        ax = plot_looks(report, path=figure)
        plt.close(ax.figure)
        paths.append(figure)
        lines.append("![the bound and the claim at every look](looks.png)")
    if report.densities is not None:
        figure = directory / "densities.png"
        ax = plot_density_curves(report.densities, path=figure)
        plt.close(ax.figure)
        paths.append(figure)
        lines.append("![the densities behind the bound](densities.png)")
    elif not report.looks and not betting:
        lines.append(
            "(No density figure: the draws were not kept; `rdpjax.audit(…, densities=True)` "
            "keeps them for in-memory audits of 1-D or discrete outputs.)"
        )
    with paths[1].open("a") as f:
        f.write("\n".join(lines) + "\n")
    return paths
