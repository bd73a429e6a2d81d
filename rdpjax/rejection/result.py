"""The result of a rejection-set test: certified trade-off points, ε(δ) and μ lower bounds."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rdpjax._table import Column, text_table
from rdpjax.rejection.certification import Certified

__all__ = ["SetTest"]


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


@dataclasses.dataclass(frozen=True)
class SetTest:
    """Certified rejection sets and what they imply, all simultaneously at 1 − α.

    Attributes:
        claim: the :class:`~rdpjax.claims.Claim` checked, or ``None``.
        alpha: the family-wise level.
        delta: the δ at which :attr:`epsilon` is reported (the claim's δ, else the caller's).
        epsilon: lower bound on the smallest ε with ``P(S) ≤ e^ε Q(S) + δ`` for every S, both
            ways round (``-inf``: nothing certified).
        mu: lower bound on the smallest μ for which the pair is μ-GDP (``-inf``: nothing).
        refuted: whether a certified set breaks the claim.
        sets: per candidate set, its :class:`~rdpjax.rejection.certification.Certified` numbers.
        n_select, n_certify: draws per side used to choose the sets and to certify them.
        cells: the number of cells the sets are unions of.
        streamed: whether the certification draws were counted batch by batch.
    """

    claim: Any
    alpha: float
    delta: float
    epsilon: float
    mu: float
    refuted: bool
    sets: tuple[Certified, ...]
    n_select: int
    n_certify: int
    cells: int
    streamed: bool = False

    @property
    def is_refuted(self) -> bool:
        """Same as :attr:`refuted` (the name :class:`rdpjax.AuditReport` uses)."""
        return self.refuted

    def points(self) -> list[tuple[float, float]]:
        """Certified trade-off points ``(a, b)``: type I error ≤ a, type II error ≤ b."""
        return [(s.other_upper, 1.0 - s.fav_lower) for s in self.sets]

    def verdict(self) -> str:
        """One line: the claim refuted or not, and the certified ε(δ) and μ."""
        conf = f"{100 * (1 - self.alpha):.3g}%"
        eps = (
            f"ε(δ = {self.delta:g}) ≥ {self.epsilon:.4g}"
            if np.isfinite(self.epsilon)
            else (f"no ε(δ = {self.delta:g}) > 0 certified")
        )
        mu = f"μ ≥ {self.mu:.4g}" if np.isfinite(self.mu) and self.mu > 0 else "no μ > 0 certified"
        facts = f"{eps}, {mu} (rejection sets, simultaneously at {conf})"
        if self.claim is None:
            return facts
        if self.refuted:
            return f"REFUTED: {self.claim} is false; {facts}"
        return f"not refuted: {self.claim} is consistent with the draws; {facts}"

    def table(self) -> list[str]:
        """Text rows: per certified set, its direction, counts and certified masses."""
        widths = [("set", 5), ("favours", 8), ("k_fav", 10), ("k_other", 10), ("fav ≥", 10),
                  ("other ≤", 10), ("ε(δ) ≥", 9), ("μ ≥", 8)]  # fmt: skip
        columns = [Column(h, w) for h, w in widths]
        rows = [
            [
                str(i + 1),
                "P (x)" if s.forward else "Q (x')",
                f"{s.count_fav:,}",
                f"{s.count_other:,}",
                f"{s.fav_lower:.3g}",
                f"{s.other_upper:.3g}",
                f"{s.epsilon:.4g}" if np.isfinite(s.epsilon) else "—",
                f"{s.mu:.4g}" if np.isfinite(s.mu) else "—",
            ]
            for i, s in enumerate(self.sets)
        ]
        tails = ["", *("  REFUTES" if s.refutes else "" for s in self.sets)]
        return text_table(columns, rows, tails=tails)

    def __str__(self) -> str:
        head = (
            f"rejection sets chosen on {self.n_select:,} draws per side, certified on "
            f"{self.n_certify:,} (exact binomial bounds, {len(self.sets)} sets, {self.cells} cells)"
        )
        return "\n".join([head, *self.table(), self.verdict()])

    def to_dict(self) -> dict:
        """JSON-ready: every certified number, the verdict and the sizes."""
        return {
            "claim": None if self.claim is None else self.claim.to_dict(),
            "alpha": self.alpha,
            "delta": self.delta,
            "epsilon_lower": _num(self.epsilon),
            "mu_lower": _num(self.mu),
            "refuted": self.refuted,
            "verdict": self.verdict(),
            "n_select": self.n_select,
            "n_certify": self.n_certify,
            "cells": self.cells,
            "streamed": self.streamed,
            "sets": [
                {
                    "favours": "P" if s.forward else "Q",
                    "count_favoured": s.count_fav,
                    "count_other": s.count_other,
                    "favoured_lower": s.fav_lower,
                    "other_upper": s.other_upper,
                    "type1_upper": s.other_upper,
                    "type2_upper": 1.0 - s.fav_lower,
                    "epsilon_lower": _num(s.epsilon),
                    "mu_lower": _num(s.mu),
                    "refutes": s.refutes,
                }
                for s in self.sets
            ],
        }
