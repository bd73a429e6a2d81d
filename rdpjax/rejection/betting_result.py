"""The outcome of the betting test (:func:`rdpjax.rejection.betting.betting_test`).

:class:`BettingResult` holds the verdict, the e-value and the path of the wealth;
:func:`describe` puts the richest strategy's last bet in words.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rdpjax.claims import Claim
from rdpjax.rejection.bets import Bets

__all__ = ["BettingResult", "describe"]

_FAMILIES = ("v", "|v − c|", "code rank")


@dataclasses.dataclass(frozen=True)
class BettingResult:
    """The outcome of :func:`betting_test`.

    Attributes:
        refuted: the hedged wealth reached ``1/alpha`` (the claim is refuted at level alpha).
        n: pairs (outputs per side) used: at the refutation, else ``max_n``.
        drawn: outputs drawn per side (the last batch may run past ``n``).
        alpha: the level.
        claim: the claim tested.
        e_value: the hedged wealth at ``n``, an e-value for the claim (≥ 1/alpha iff refuted).
        path: ``(pairs, log wealth)`` at the end of each batch (and at the stop).
        strategy: the richest strategy at ``n`` and its last bet: its fraction of the aGRAPA
            bet, the set, the direction, ε, δ(ε) and λ.
    """

    refuted: bool
    n: int
    drawn: int
    alpha: float
    claim: Claim
    e_value: float
    path: tuple[tuple[int, float], ...]
    strategy: dict[str, Any]

    @property
    def is_refuted(self) -> bool:
        """Same as :attr:`refuted` (the name :class:`rdpjax.AuditReport` uses)."""
        return self.refuted

    def verdict(self) -> str:
        """One line: refuted or not, after how many outputs a side, with the e-value."""
        e = f"{self.e_value:.3g}" if np.isfinite(self.e_value) else "inf"
        if self.refuted:
            return (
                f"REFUTED: {self.claim} is false; the betting e-value reached {e} ≥ 1/α = "
                f"{1 / self.alpha:g} after {self.n:,} outputs per side (anytime-valid at "
                f"{100 * (1 - self.alpha):.3g}%)"
            )
        return (
            f"not refuted: {self.claim} survived {self.n:,} outputs per side (betting e-value "
            f"{e} < 1/α = {1 / self.alpha:g})"
        )

    def details(self) -> list[str]:
        """The lines behind the verdict: the draws, and the bet that grew the most."""
        s = self.strategy
        head = [f"sequential test by betting on rejection sets: {self.drawn:,} outputs drawn "
                f"per side, {len(self.path)} batches"]  # fmt: skip
        if s.get("set") is None:
            return [*head, "no bet placed yet"]
        return [*head, f"the bet that grew the most: on S = {s['set']}, the claim's bound on "
                f"{s['direction']} at ε = {s['epsilon']:.3g} (δ(ε) = {s['delta']:.3g}), "
                f"staking {s['lam']:.3g} of the wealth"]  # fmt: skip

    def __str__(self) -> str:
        return "\n".join([*self.details(), self.verdict()])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (the claim as :meth:`Claim.to_dict`; an infinite e-value as null)."""
        e = self.e_value if np.isfinite(self.e_value) else None
        return {
            "refuted": self.refuted,
            "n": self.n,
            "drawn": self.drawn,
            "alpha": self.alpha,
            "claim": self.claim.to_dict(),
            "e_value": e,
            "path": [[n, w] for n, w in self.path],
            "strategy": dict(self.strategy),
        }


def describe(bets: Bets, j: int, scale: float) -> dict[str, Any]:
    """Strategy ``j`` (betting ``scale`` of aGRAPA) and its bet of the first row, in words."""
    family = int(bets.family[0])
    below = bool(bets.below[0])
    t = float(bets.threshold[0])
    name = _FAMILIES[family]
    if family == 2:
        words = f"the {int(t + 0.5)} codes of highest past P/Q ratio"
        words = words if below else "all codes but " + words
    else:
        words = f"{{{name} {'<' if below else '≥'} {t:.6g}}}"
    out = {
        "strategy": j,
        "scale": scale,
        "set": words,
        "center": float(bets.center[0]) if family == 1 else None,
        "direction": "Q(S) − e^ε P(S)" if bool(bets.swap[0]) else "P(S) − e^ε Q(S)",
        "epsilon": float(bets.epsilon[0]),
        "delta": float(bets.delta[0]),
        "lam": float(bets.lam[0]),
    }
    return out
