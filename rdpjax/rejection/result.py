"""The result of a rejection-set test: certified trade-off points, ε(δ) and μ lower bounds."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from rdpjax._table import Column, text_table
from rdpjax.rejection.certification import Certified
from rdpjax.rejection.operating import OPERATING_POINTS, OperatingPoint
from rdpjax.rejection.pooled import Pooled
from rdpjax.rejection.statistics import registered

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
        pooled: the pooled-guess bound on ε(δ) (:mod:`rdpjax.rejection.pooled`), or ``None``
            when its Poisson draw asked for more draws than there were.
        levels: the shares of α of the pooled-guess bound and of the certified masses.
        extras: the registered statistics asked for (:mod:`rdpjax.rejection.statistics`), by
            name, each at α on its own and not part of :attr:`refuted`; e.g.
            ``"operating_points"`` (:attr:`operating_points`).
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
    pooled: Pooled | None = None
    levels: tuple[float, float] = (float("nan"), float("nan"))
    extras: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def operating_points(self) -> tuple[OperatingPoint, ...]:
        """The certified TPR at each FPR of ``SetOptions.tpr_at_fpr`` (``()`` if none asked).

        :class:`~rdpjax.rejection.operating.OperatingPoint` s, P the positives, together at
        1 − α on their own (:mod:`rdpjax.rejection.operating`).
        """
        return tuple(self.extras.get(OPERATING_POINTS.name, ()))

    @property
    def is_refuted(self) -> bool:
        """Same as :attr:`refuted` (the name :class:`rdpjax.AuditReport` uses)."""
        return self.refuted

    def gaussian_epsilon(self, delta: float | None = None) -> float:
        """ε(δ) of a Gaussian mechanism with the certified μ: Gaussian-shaped, not a bound.

        What a GDP fit reports (jax_privacy's ``epsilon_from_gdp``): if the pair is μ-GDP at
        the certified μ, it is (ε, δ)-DP at this ε and no smaller (Dong, Roth, Su,
        arXiv:1905.02383v3, Cor. 2.13). A lower bound on ε(δ) only for mechanisms of that shape.

        Args:
            delta: δ in (0, 1); default :attr:`delta`, or 10⁻⁵ where that is 0.
        """
        from scipy import optimize

        from rdpjax.claims import gdp, hockey_stick

        d = (self.delta or 1e-5) if delta is None else float(delta)
        if not 0.0 < d < 1.0:
            raise ValueError(f"delta must be in (0, 1); got {delta!r}")
        if not (np.isfinite(self.mu) and self.mu > 0):
            return 0.0
        curve = gdp(float(self.mu))
        f = lambda e: float(hockey_stick(curve, e)) - d  # noqa: E731
        if f(0.0) <= 0:
            return 0.0
        hi = 1.0
        while f(hi) > 0:
            hi *= 2.0
        return float(optimize.brentq(f, 0.0, hi, xtol=1e-10))

    def points(self) -> list[tuple[float, float]]:
        """Certified trade-off points ``(a, b)``: type I error ≤ a, type II error ≤ b."""
        return [(s.other_upper, 1.0 - s.fav_lower) for s in self.sets]

    def facts(self) -> str:
        """The certified numbers that matter for the claim's kind, beside what it claims.

        ε(δ) for an (ε, δ) or ε-DP claim, μ for a GDP claim (with the ε(δ) of a Gaussian
        mechanism at the certified μ, when refuted), both without a claim.
        """
        kind = None if self.claim is None else self.claim.kind
        # At δ = 0 the quantity is ε-DP's ε itself (a Gaussian's is +∞: the bound is finite).
        name = f"ε(δ = {self.delta:g})" if self.delta > 0 else "the ε of ε-DP"
        # A certified ε ≤ 0 says no more than ε ≥ 0 does (worded as for μ, not as "ε ≥ -0.0004").
        certified = bool(np.isfinite(self.epsilon) and self.epsilon > 0)
        short = name if self.delta > 0 else "ε"
        eps = f"{name} ≥ {self.epsilon:.4g}" if certified else f"no {short} > 0 certified"
        mu = f"μ ≥ {self.mu:.4g}" if np.isfinite(self.mu) and self.mu > 0 else "no μ > 0 certified"
        if kind in ("approx_dp", "pure_dp"):
            claimed = float(self.claim.params["epsilon"])
            if certified:
                above = "above" if self.epsilon > claimed else "not above"
                eps += f", {above} the claimed {claimed:g}"
            return eps
        if kind == "gdp":
            claimed = float(self.claim.params["mu"])
            if np.isfinite(self.mu) and self.mu > 0:
                above = "above" if self.mu > claimed else "not above"
                mu += f", {above} the claimed {claimed:g}"
            if self.refuted:
                mu += (
                    f"; a Gaussian mechanism with μ = {self.mu:.4g} has ε(δ = "
                    f"{self.delta or 1e-5:g}) = {self.gaussian_epsilon():.4g}"
                )
            return mu
        return f"{eps}, {mu}"

    def verdict(self) -> str:
        """One line: the claim refuted or not, and the certified ε(δ) or μ behind it."""
        conf = f"{100 * (1 - self.alpha):.3g}%"
        if self.claim is None:
            return f"{self.facts()} (rejection sets, simultaneously at {conf})"
        if self.refuted:
            return f"REFUTED: {self.claim} is false; {self.facts()} (certified at {conf})"
        return (
            f"not refuted: {self.claim} is consistent with the draws; {self.facts()} "
            f"(certified at {conf})"
        )

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

    def guess_line(self) -> str:
        """One line on the pooled-guess bound: what was guessed, how many right, at what level."""
        g = None if self.pooled is None else self.pooled.guess
        if self.pooled is None:
            return "pooled guesses: not run (the Poisson draw exceeded the certification draws)"
        if g is None:
            return (
                f"pooled guesses: nothing certified ({self.pooled.tests} tests on "
                f"{sum(self.pooled.drawn):,} pooled draws)"
            )
        return (
            f"pooled guesses ({g.ordering}): {g.correct:,} right of {g.top + g.bottom:,} "
            f"({g.top:,} guessed x at one end, {g.bottom:,} guessed x' at the other"
            f"{f', {g.dirty} removed for δ' if g.dirty else ''}), ε(δ) ≥ {g.epsilon:.4g} at "
            f"level {g.level:.2g} (its chain of nested guesses; {self.pooled.tests} guesses tested)"
        )

    def details(self) -> list[str]:
        """The lines behind the verdict: the sizes, the certified sets, the pooled guesses."""
        head = (
            f"rejection sets chosen on {self.n_select:,} draws per side, certified on "
            f"{self.n_certify:,} (exact binomial bounds, {len(self.sets)} sets, {self.cells} cells)"
        )
        return [head, *self.table(), self.guess_line(), *self.extra_lines()]

    def extra_lines(self) -> list[str]:
        """The text of the registered statistics asked for (none unless asked for)."""
        return [line for st in registered() if st.name in self.extras
                for line in st.lines(self.extras[st.name])]  # fmt: skip

    def __str__(self) -> str:
        return "\n".join([*self.details(), self.verdict()])

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
            "levels": {"pooled": self.levels[0], "sets": self.levels[1]},
            "pooled": None
            if self.pooled is None
            else {
                "epsilon_lower": _num(self.pooled.epsilon),
                "rate": self.pooled.rate,
                "drawn": list(self.pooled.drawn),
                "tests": self.pooled.tests,
                "guess": None
                if self.pooled.guess is None
                else dataclasses.asdict(self.pooled.guess),
            },
            **{
                st.name: st.to_json(self.extras[st.name])
                for st in registered()
                if st.name in self.extras
            },  # fmt: skip
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
