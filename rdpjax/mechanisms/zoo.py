"""The zoo with its reference parameters and pairs, and the table printed by ``python -m``.

The mechanisms, their parameters and labels come from :mod:`rdpjax.mechanisms.registry`; this
module only picks the rows (some entries appear with several parameter values) and keeps the
reference values printed in docs/methods.md §3 for the seven mechanisms of paper 000.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax

from rdpjax._table import Column, text_table
from rdpjax.mechanisms import registry
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.databases import paper_pair

__all__ = ["ORDERS", "ZooEntry", "format_table", "reference_zoo"]

ORDERS = (2, 5, 7)


class ZooEntry(NamedTuple):
    """One row of the zoo: a mechanism at its reference parameters and pair.

    ``paper_values``: the reference values of docs/methods.md §3 at λ = 2, 5, 7, as printed there
    (strings, so that their number of decimals is known), for the seven mechanisms of 000.
    """

    label: str
    mechanism: Mechanism
    x: jax.Array
    x_prime: jax.Array
    paper_values: tuple[str, str, str] | None = None


# The rows of the table: (registry name, parameters other than the paper's,
# docs/methods.md §3 values).
_ROWS: list[tuple[str, dict, tuple[str, str, str] | None]] = [
    ("laplace", {}, ("0.037015", "0.084103", "0.107113")),
    ("gaussian", {}, ("0.04", "0.10", "0.14")),
    ("subsampled-laplace", {}, ("0.009383", "0.023060", "0.031493")),
    ("subsampled-gaussian", {}, ("0.010151", "0.026168", "0.037412")),
    ("randomized-response", {}, ("1.309634", "1.449647", "1.466431")),
    ("shuffled-randomized-response", {}, ("0.239396", "0.437170", "0.530391")),
    ("noisy-gd", {}, ("0.0072547", "0.0181367", "0.0253913")),
    ("truncated-laplace", {}, None),
    ("truncated-gaussian", {}, None),
    ("kary-randomized-response", {}, None),
    ("onehot-randomized-response", {}, None),
    ("laplace-histogram", {}, None),
    ("orthogonal-series", {}, None),
    ("orthogonal-series", {"k": 2}, None),
    ("orthogonal-series", {"k": 2, "ties": "literal"}, None),
    ("report-noisy-max", {}, None),
    ("report-noisy-max", {"noise": "exponential"}, None),
    ("report-noisy-max", {"output_kind": "value"}, None),
    ("sparse-vector", {}, None),
    ("sparse-vector", {"variant": "lee_clifton"}, None),
    ("sparse-vector", {"variant": "stoddard"}, None),
    ("sparse-vector", {"variant": "chen"}, None),
]


def _row(name: str, params: dict, paper_values=None) -> ZooEntry:
    entry = registry.get(name)
    mech = entry.make(**params)
    return ZooEntry(entry.label(**params), mech, *entry.reference_pair(mech), paper_values)


def reference_zoo() -> list[ZooEntry]:
    """Every mechanism at the parameters of its paper, on its reference pair.

    The parameters are those of 000: Sec. V; 001, 003: docs/methods.md §4–5. The mechanisms are
    named and built by :mod:`rdpjax.mechanisms.registry`.
    """
    entries = [_row(name, params, values) for name, params, values in _ROWS]
    gaussian = registry.get("gaussian")  # the vector sum of (21) in d = 2, after the scalar one
    entries.insert(2, ZooEntry(gaussian.label() + ", d=2", gaussian.make(), *paper_pair(dim=2)))
    return entries


def matches_paper(value: float, printed: str) -> bool:
    """``value`` agrees with a printed reference to its last printed decimal (half a unit)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - float(printed)) <= 0.5 * 10.0**-decimals


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if math.isinf(value):
        return "inf"
    return f"{value:.7f}"


def format_table(entries: list[ZooEntry] | None = None) -> str:
    """The zoo as a text table: exact D_λ at λ = 2, 5, 7, ∞ on each reference pair, and ε."""
    entries = reference_zoo() if entries is None else entries
    columns = [
        Column("mechanism", 42, align="<"),
        *(Column(name, 11) for name in ("D_2", "D_5", "D_7", "D_inf")),
        Column("epsilon", 9),
    ]
    rows, tails = [], ["  paper 000 (§3)"]
    for entry in entries:
        mech = entry.mechanism
        values = [mech.divergence(lam, entry.x, entry.x_prime) for lam in (*ORDERS, math.inf)]
        eps = mech.epsilon
        eps_text = "—" if eps is None else f"{eps:.4g}"
        if entry.paper_values is None:
            check = ""
        else:
            ok = all(
                v is not None and matches_paper(v, ref)
                for v, ref in zip(values[:3], entry.paper_values, strict=True)
            )
            check = ("matches " if ok else "MISMATCH ") + ", ".join(entry.paper_values)
        label = entry.label if mech.claim_holds else entry.label + " ✗"
        rows.append((label, *(_fmt(v) for v in values), eps_text))
        tails.append(f"  {check}")
    header, *body = (line.rstrip() for line in text_table(columns, rows, sep="", tails=tails))
    lines = [header, "-" * len(header), *body]
    lines.append("")
    lines.append("✗ = published variant whose claimed ε is false (claim_holds is False).")
    lines.append("Pairs: pair (21) of arXiv:2212.04739 for paper 000; reference_pair() otherwise.")
    return "\n".join(lines)
