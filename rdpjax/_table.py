"""The one table printer: Markdown tables for reports and result files, aligned text for terminals.

Every table rdpjax prints goes through here (the reproduce and coverage tables, the audit
report, the bound, the search result, the demo and the zoo), so that the layout rules live in
one place: Markdown cells are escaped the same way everywhere, and text columns are described
once (header, width, number format) rather than as two parallel f-strings for the header and
the rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

__all__ = ["Column", "markdown_table", "text_table"]


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|")  # a bare | would split the cell in two


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The lines of a Markdown table: the header, the rule, then one line per row.

    Args:
      header: the column titles.
      rows: the cells of each row, as many as ``header`` has titles; each is written with
        ``str`` and any ``|`` in it escaped.

    Returns:
      The table's lines (join them with newlines).

    Raises:
      ValueError: if a row does not have one cell per column.
    """
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells for {len(header)} columns.")
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return lines


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of a :func:`text_table`.

    Attributes:
      header: the column title.
      width: the column width in characters (a wider value widens its row, not the column).
      fmt: the format spec of a value after the alignment and width, e.g. ``".6f"``, ``"g"``,
        ``","`` (empty: ``format(value)``).
      align: ``">"`` (right, the default) or ``"<"`` (left), for the title and the values.
    """

    header: str
    width: int
    fmt: str = ""
    align: str = ">"

    def title(self) -> str:
        """The header cell."""
        return f"{self.header:{self.align}{self.width}}"

    def value(self, value: object) -> str:
        """One value's cell."""
        return f"{value:{self.align}{self.width}{self.fmt}}"


def text_table(
    columns: Sequence[Column],
    rows: Iterable[Sequence[object]],
    *,
    sep: str = " ",
    tails: Iterable[str] | None = None,
) -> list[str]:
    """The lines of an aligned text table: the header line, then one line per row.

    Args:
      columns: the :class:`Column` of each value.
      rows: the values of each row, one per column.
      sep: what separates two columns.
      tails: text appended to the header line and then to each row in turn (free-form last
        columns such as a direction arrow); as many as there are rows, plus one for the header.

    Returns:
      The table's lines (join them with newlines).

    Raises:
      ValueError: if a row does not have one value per column, or the tails do not match.
    """
    lines = [sep.join(c.title() for c in columns)]
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"a table row has {len(row)} values for {len(columns)} columns.")
        lines.append(sep.join(c.value(v) for c, v in zip(columns, row, strict=True)))
    if tails is not None:
        tails = list(tails)
        if len(tails) != len(lines):
            raise ValueError(f"{len(tails)} tails for a header and {len(lines) - 1} rows.")
        lines = [line + tail for line, tail in zip(lines, tails, strict=True)]
    return lines
