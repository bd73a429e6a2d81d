"""An :class:`~rdpjax.auditing.report.AuditReport` as text: the lines, the table, Markdown.

What :meth:`AuditReport.describe` (``print(report)``, the command line's output),
:meth:`AuditReport.size_line` and :meth:`AuditReport.to_markdown` return: plain words first
(what was audited, n asked, drawn and used, the Rényi table, the verdict once and last), the
methods' details with ``verbose``.
"""

from __future__ import annotations

import json

import numpy as np

from rdpjax._table import Column, markdown_table, text_table

__all__ = ["HEADER", "claims_orders", "describe", "rows", "size_line", "to_markdown"]


def size_line(report) -> str:
    """:meth:`sizes` in words, one line: n asked, n drawn, and how they were used."""
    s = report.sizes()
    asked = "" if s["asked"] is None else f"{s['asked']:,} asked, "
    head = f"n per database: {asked}{s['drawn']:,} drawn"
    parts = []
    if "training" in s:
        parts.append(f"{s['training']:,} to learn the projection")
    if "betting" in s:
        parts.append(f"the betting test used the first {s['betting']:,} pairs")
        return f"{head}: {'; '.join(parts)}"
    pilot = f" after a pilot of {s['pilot']:,}" if s.get("pilot") else ""
    what = "the last look's Rényi bounds" if report.looks else "Rényi bounds"
    parts.append(f"{what} on {s['renyi']:,}{pilot}")
    if "selection" in s:
        whose = "draws of their own" if s["sets_own"] else "the same draws"
        parts.append(
            f"rejection sets chosen on {s['selection']:,} and certified on "
            f"{s['certification']:,} ({whose})"
        )
    return f"{head}: {'; '.join(parts)}"


def rows(report) -> list[list[str]]:
    """The Rényi table's text cells, one row per order (:data:`HEADER`'s columns)."""
    out = []
    for i, lam in enumerate(np.atleast_1d(report.lam)):
        exact = "—" if report.exact is None else f"{report.exact[i]:.6f}"
        if report.claimed is None:
            claimed = "—"
        else:
            c = float(report.claimed[i])
            claimed = f"{c:.6f}" if np.isfinite(c) else "none"
        flag = "REFUTED" if bool(report.refuted_at[i]) else ""
        out.append(
            [
                f"{lam:g}",
                exact,
                f"{report.estimate[i]:.6f}",
                f"{report.lower[i]:.6f}",
                f"{report.std_error[i]:.6f}",
                claimed,
                flag,
            ]
        )
    return out


HEADER = ("lambda", "exact", "estimate", "lower", "std_error", "claimed", "")


def claims_orders(report) -> bool:
    """Whether the claim implies a finite ε(λ) at some reported order (a column to show)."""
    return report.claimed is not None and bool(np.any(np.isfinite(report.claimed)))


def describe(report, verbose: bool = False) -> str:
    """The report as text, the verdict last (once).

    What was audited, n asked, drawn and used, the Rényi bounds, notes, the verdict.

    Args:
      report: an :class:`~rdpjax.auditing.report.AuditReport`.
      verbose: add the methods' details: the quantile map, the certified rejection sets
        and the pooled guesses, the betting test's best bet, the learned family.
    """
    against = f" against {report.claim}" if report.claim is not None else " (no claim)"
    lines = [f"audit of {report.mechanism}{against}", size_line(report)]
    learned = json.loads(report.settings).get("projection")
    if learned and verbose:
        lines.append(f"projection learned ({learned['family']}), then frozen")
    if report.bound is None:  # a sequential audit by betting
        details = report.sets.details() if verbose else report.sets.details()[:1]
        return "\n".join([*lines, *details, *report.notes, report.verdict()])
    if report.looks:
        lines.append(_sequential_line(report))
    if verbose:
        lines.extend(_map_lines(report.bound))
        off = json.loads(report.settings).get("sequential", {}).get("clamped_to_grid_edge")
        outside = getattr(report.bound, "outside", None)  # a streamed bound's own count
        off = off or (None if outside is None else [int(v) for v in np.ravel(outside)])
        if off and any(off):
            lines.append(
                f"{off[0]:,} and {off[1]:,} draws (P, Q) fell off the pilot's grid and were "
                "counted at its edge (a fixed map: the bounds stay valid, possibly looser)"
            )
    lines.append(_renyi_line(report))
    cells = rows(report)
    keep = 6 if claims_orders(report) else 5
    columns = [Column(HEADER[0], 8), *(Column(h, 10) for h in HEADER[1:keep])]
    tails = ["", *(f"  {row[6]}" if row[6] else "" for row in cells)]
    lines += text_table(columns, [row[:keep] for row in cells], tails=tails)
    if report.sets is not None:  # the TPR lines, asked for by name, always
        lines.extend(report.sets.details() if verbose else report.sets.extra_lines())
    lines.extend(report.notes)
    lines.append(report.verdict())
    return "\n".join(lines)


def to_markdown(report) -> str:
    """The report as a Markdown page: what was audited, the table, the verdict."""
    if report.bound is None:  # a sequential audit by betting
        return "\n".join(
            [f"# Audit of {report.mechanism}", "", f"**{report.verdict()}**", "",
             f"- claim: {report.claim}", f"- {size_line(report)}", "", "```",
             *report.sets.details(), "```", ""]
        )  # fmt: skip
    conf = f"{1 - float(report.bound.alpha):.4g}"
    if report.looks:
        conf += f" (look {report.looks[-1].k}'s share of the audit's α = {report.alpha:g})"
    lines = [
        f"# Audit of {report.mechanism}",
        "",
        f"**{report.verdict()}**",
        "",
        *[f"> {note}\n" for note in report.notes],
        f"- {size_line(report)}" + (" (binned batch by batch)" if report.streamed else ""),
        f"- claim: {report.claim if report.claim is not None else 'none'}",
        *_projection_lines(report.settings),
        *[f"- {line}" for line in _map_lines(report.bound)],
        *([f"- {_sequential_line(report)}"] if report.looks else []),
        f"- lower bounds hold simultaneously at {conf} over {report.bound.n_bounds} bounds "
        f"({len(np.atleast_1d(report.lam))} orders"
        + (", both directions)" if report.bound.both_directions else ")"),
        "",
        *markdown_table(
            (*(h or "refuted" for h in HEADER), "direction"),
            [(*row, d) for row, d in zip(rows(report), report.directions(), strict=True)],
        ),
    ]
    if report.sets is not None:
        lines += ["", "## Certified rejection sets", "", "```", *report.sets.details(), "```"]
    if report.looks:
        lines += ["", "## Looks", "", *_looks_table(report.looks)]
    settings = json.loads(report.settings)
    if settings:
        lines += ["", "## Settings", ""]
        lines += [f"- {k}: {json.dumps(v)}" for k, v in settings.items()]
    return "\n".join(lines) + "\n"


def _sequential_line(report) -> str:
    last = report.looks[-1]
    planned = len(json.loads(report.settings)["sequential"]["schedule"]["sizes"])
    why = "the claim was refuted" if last.refuted else "the last look"
    return (
        f"sequential: stopped at look {last.k} of {planned} ({why}) after {last.drawn:,} "
        f"outputs per database (pilot included); every look's bounds hold together at "
        f"{1 - report.alpha:.0%} (α = {report.alpha:g} spent over the looks)"
    )


def _looks_table(looks) -> list[str]:
    """Markdown table: per look, n, level, and the order whose bound is closest to the claim."""
    table = []
    for look in looks:
        lower = np.array([-np.inf if v is None else v for v in look.lower])
        if look.claimed is not None:
            claimed = np.array([np.inf if v is None else v for v in look.claimed])
            i = int(np.argmax(np.where(np.isfinite(claimed), lower - claimed, -np.inf)))
            cl = f"{claimed[i]:.4g}" if np.isfinite(claimed[i]) else "none"
        else:
            i, cl = int(np.argmax(lower)), "—"
        table.append(
            (
                look.k,
                f"{look.n:,}",
                f"{look.drawn:,}",
                f"{look.alpha:.3g}",
                f"{look.lam[i]:g}",
                f"{lower[i]:.4g}",
                cl,
                "yes" if look.refuted else "",
            )
        )
    header = ("look", "n", "drawn", "level α_k", "λ", "lower", "claimed", "refuted")
    return markdown_table(header, table)


def _renyi_line(report) -> str:
    """The title of the Rényi table: its level, over what, and whether the claim speaks to it."""
    bound = report.bound
    orders = len(np.atleast_1d(report.lam))
    over = f"{orders} order{'s' if orders > 1 else ''}" + (
        ", both directions" if bound.both_directions else ""
    )
    line = (
        f"Rényi-DP lower bounds ε(λ) ≥ lower, simultaneously at {1 - float(bound.alpha):.4g} "
        f"({over})"
    )
    if report.claim is not None and not claims_orders(report):
        line += "; the claim implies no ε(λ), so these are for information"
    return line


def _map_lines(bound) -> list[str]:
    """Say so when the bound's outputs went through the pilot quantile map (``transform``)."""
    if bound.transform is None:
        return []
    n_p, n_q = int(bound.n_p), int(bound.n_q)
    return [
        f"outputs mapped by the pilot quantile map first (docs/methods.md §2.1): bounded on the "
        f"{n_p:,} and {n_q:,} outputs left after its pilot"
    ]


def _projection_lines(settings: str) -> list[str]:
    """The markdown bullet naming a learned projection (``project="learn"``), if there was one."""
    learned = json.loads(settings).get("projection")
    if not learned:
        return []
    return [
        f"- projection: learned ({learned['family']}) on {learned['n_train']:,} other outputs "
        "per database, then frozen"
    ]
