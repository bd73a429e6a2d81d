"""The result of an audit and its report files: a table, JSON, Markdown and figures.

:class:`AuditReport` is what :func:`rdpjax.audit` returns; :func:`write_report` writes it to a
folder (``rdpjax audit … --report DIR``): ``report.json`` (every number, every setting, the
versions, :data:`SCHEMA_VERSION`), ``report.md`` (the table and the verdict, for a person or a CI
log) and, when matplotlib is installed, ``bounds.png`` (bounds and claim against λ).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rdpjax._json import json_floats
from rdpjax._pytree import pytree_dataclass
from rdpjax.estimator.plan import DIRECTION_NAMES, Bound

__all__ = ["SCHEMA_VERSION", "AuditReport", "json_ready", "write_report"]

SCHEMA_VERSION = 2
"""Version of the JSON layout of :meth:`AuditReport.to_dict` (1: before claims existed)."""


def json_ready(value):
    """A JSON-ready copy of a setting: scalars as they are, mappings and sequences element by
    element, arrays as lists, anything else as its text (a function, a path, a dataclass)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, np.ndarray | np.generic) or hasattr(value, "__array__"):
        return np.asarray(value).tolist()
    return str(value)


def _list(value):
    """JSON-ready: arrays to lists, non-finite floats to None (as claims write them)."""
    if value is None:
        return None
    arr = np.asarray(value)
    return json_floats(arr.ravel()) if arr.dtype.kind == "f" else arr.tolist()


@pytree_dataclass(static=("claim", "mechanism", "n", "projected", "streamed", "settings"))
class AuditReport:
    """The result of :func:`rdpjax.audit`. A pytree; ``exact`` and ``claimed`` may be ``None``.

    Attributes:
      lam, estimate, lower, std_error: as in :class:`rdpjax.Bound` (bounds simultaneous over all
        orders and, with ``both_directions``, both directions).
      exact: ``(L,)`` the exact value of the quantity bounded — ``D_λ(P‖Q)``, or
        ``max(D_λ(P‖Q), D_λ(Q‖P))`` with both directions — when the mechanism knows it, else
        ``None``. With ``project`` the bound is still a bound on this value.
      claimed: ``(L,)`` the claim's ε(λ) at each order (``inf`` where it implies nothing), or
        ``None`` without a claim.
      refuted: ``(L,)`` bool, True where ``lower`` exceeds the claim. The bounds hold
        simultaneously at 1 − α, so a true claim is refuted anywhere with probability ≤ α.
      bound: the full :class:`rdpjax.Bound` (settings, levels, directions).
      claim: the :class:`rdpjax.claims.Claim` checked, or ``None``.
      mechanism: a name for the mechanism.
      n: outputs drawn per database.
      projected: whether a user projection was applied.
      streamed: whether the draws were binned batch by batch instead of held in memory.
      settings: the audit's settings, a JSON object (text, so that the report stays hashable).
      densities: the :class:`rdpjax.plots.DensityCurves` behind the bound (p̂, q̂, q̂_τ on its
        grid) when :func:`rdpjax.audit` was asked for them (``densities=True``) and could keep
        them (draws in memory, 1-D or discrete outputs); else ``None``.
    """

    lam: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    std_error: np.ndarray
    exact: np.ndarray | None
    claimed: np.ndarray | None
    refuted: np.ndarray
    bound: Bound
    claim: object
    mechanism: str
    n: int
    projected: bool
    streamed: bool = False
    settings: str = "{}"
    densities: object = None

    @property
    def is_refuted(self) -> bool:
        """Whether any order's lower bound exceeds the claim."""
        return bool(np.any(self.refuted))

    @property
    def violation(self) -> np.ndarray:
        """Alias of :attr:`refuted` (the name before claims were curves)."""
        return self.refuted

    @property
    def claimed_epsilon(self) -> float | None:
        """The ε of a pure ε-DP claim, else ``None``."""
        if self.claim is None or self.claim.kind != "pure_dp":
            return None
        return float(self.claim.params["epsilon"])

    def check(self):
        """The :class:`rdpjax.claims.ClaimCheck` of this report (``None`` without a claim)."""
        if self.claim is None:
            return None
        from rdpjax.claims import check_claim

        return check_claim(self.claim, self.lam, self.lower, float(self.bound.alpha))

    def verdict(self) -> str:
        """One line: whether the claim is refuted, at which order and by how much."""
        check = self.check()
        if check is not None:
            return check.verdict()
        conf = f"{1 - float(self.bound.alpha):.0%}"
        return f"no claim to check; ε(λ) ≥ lower holds simultaneously at {conf}"

    def directions(self) -> list[str]:
        """Per order, the direction the reported bound is on (``"D(P||Q)"`` or ``"D(Q||P)"``)."""
        return [DIRECTION_NAMES[int(d)] for d in np.atleast_1d(np.asarray(self.bound.direction))]

    def to_dict(self) -> dict:
        """Every number and setting, JSON-ready (non-finite values become ``None``)."""
        bound = self.bound.to_dict()
        return {
            "schema": SCHEMA_VERSION,
            "mechanism": self.mechanism,
            "n": self.n,
            "projected": self.projected,
            "streamed": self.streamed,
            "claim": None if self.claim is None else self.claim.to_dict(),
            "verdict": self.verdict(),
            "is_refuted": self.is_refuted,
            "lam": _list(self.lam),
            "estimate": _list(self.estimate),
            "lower": _list(self.lower),
            "std_error": _list(self.std_error),
            "exact": _list(self.exact),
            "claimed": _list(self.claimed),
            "refuted": _list(self.refuted),
            "direction": self.directions(),
            "alpha": float(self.bound.alpha),
            "settings": json.loads(self.settings),
            "bound": bound,
        }

    def _rows(self) -> list[list[str]]:
        rows = []
        for i, lam in enumerate(np.atleast_1d(self.lam)):
            exact = "—" if self.exact is None else f"{self.exact[i]:.6f}"
            if self.claimed is None:
                claimed = "—"
            else:
                c = float(self.claimed[i])
                claimed = f"{c:.6f}" if np.isfinite(c) else "none"
            flag = "REFUTED" if bool(self.refuted[i]) else ""
            rows.append(
                [
                    f"{lam:g}",
                    exact,
                    f"{self.estimate[i]:.6f}",
                    f"{self.lower[i]:.6f}",
                    f"{self.std_error[i]:.6f}",
                    claimed,
                    flag,
                ]
            )
        return rows

    _HEADER = ("lambda", "exact", "estimate", "lower", "std_error", "claimed", "")

    def __str__(self) -> str:
        claim = f"; claim: {self.claim}" if self.claim is not None else ""
        lines = [f"audit of {self.mechanism}, n = {self.n:,} per database{claim}"]
        learned = json.loads(self.settings).get("projection")
        if learned:
            lines.append(
                f"projection learned on {learned['n_train']:,} other outputs per database: "
                f"{learned['family']}"
            )
        lines.append(f"{self._HEADER[0]:>8} " + " ".join(f"{h:>10}" for h in self._HEADER[1:6]))
        for row in self._rows():
            line = f"{row[0]:>8} " + " ".join(f"{v:>10}" for v in row[1:6])
            lines.append(line + (f"  {row[6]}" if row[6] else ""))
        lines.append(self.verdict())
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The report as a Markdown page: what was audited, the table, the verdict."""
        conf = f"{1 - float(self.bound.alpha):.0%}"
        lines = [
            f"# Audit of {self.mechanism}",
            "",
            f"**{self.verdict()}**",
            "",
            f"- outputs per database: {self.n:,}"
            + (" (binned batch by batch)" if self.streamed else ""),
            f"- claim: {self.claim if self.claim is not None else 'none'}",
            *_projection_lines(self.settings),
            f"- lower bounds hold simultaneously at {conf} over {self.bound.n_bounds} bounds "
            f"({len(np.atleast_1d(self.lam))} orders"
            + (", both directions)" if self.bound.both_directions else ")"),
            "",
            "| " + " | ".join(h or "refuted" for h in self._HEADER) + " | direction |",
            "|" + "---|" * (len(self._HEADER) + 1),
        ]
        for row, direction in zip(self._rows(), self.directions(), strict=True):
            cell = direction.replace("|", "\\|")  # a bare | would split the table's cell
            lines.append("| " + " | ".join(row) + f" | {cell} |")
        settings = json.loads(self.settings)
        if settings:
            lines += ["", "## Settings", ""]
            lines += [f"- {k}: {json.dumps(v)}" for k, v in settings.items()]
        return "\n".join(lines) + "\n"


def write_report(report: AuditReport, directory, *, meta: dict | None = None) -> list[Path]:
    """Write ``report.json``, ``report.md`` and (with matplotlib) figures to ``directory``.

    The figures: ``bounds.png`` (bounds, estimates and the claim against λ) and, when the report
    has them, ``densities.png`` (p̂, q̂, the floored q̂_τ and τ behind the bound).

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
    import jax

    import rdpjax

    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError, PermissionError) as err:
        raise ValueError(f"cannot write the report to {directory}: {err}") from err
    record = report.to_dict()
    record["meta"] = {"rdpjax": rdpjax.__version__, "jax": jax.__version__, **(meta or {})}
    paths = [directory / "report.json", directory / "report.md"]
    paths[0].write_text(json.dumps(record, indent=1) + "\n")
    paths[1].write_text(report.to_markdown())
    try:
        import matplotlib
    except ImportError:
        return paths
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rdpjax.plots import plot_bound_vs_lambda

    figure = directory / "bounds.png"
    ax = plot_bound_vs_lambda(report, path=figure)
    plt.close(ax.figure)
    paths.append(figure)
    lines = ["", "![bounds and claim against λ](bounds.png)"]
    if report.densities is not None:
        from rdpjax.plots import plot_density_curves

        figure = directory / "densities.png"
        ax = plot_density_curves(report.densities, path=figure)
        plt.close(ax.figure)
        paths.append(figure)
        lines.append("![the densities behind the bound](densities.png)")
    else:
        lines.append(
            "(No density figure: the draws were not kept; `rdpjax.audit(…, densities=True)` "
            "keeps them for in-memory audits of 1-D or discrete outputs.)"
        )
    with paths[1].open("a") as f:
        f.write("\n".join(lines) + "\n")
    return paths


def _projection_lines(settings: str) -> list[str]:
    """The markdown bullet naming a learned projection (``project="learn"``), if there was one."""
    learned = json.loads(settings).get("projection")
    if not learned:
        return []
    return [
        f"- projection: learned ({learned['family']}) on {learned['n_train']:,} other outputs "
        "per database, then frozen"
    ]
