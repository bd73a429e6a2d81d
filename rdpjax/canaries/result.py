"""The outcome of a one-run canary audit: :class:`OneRunResult`."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from rdpjax.claims import Claim

__all__ = ["OneRunResult"]


@dataclasses.dataclass(frozen=True)
class OneRunResult:
    """Lower bounds from one run's canary scores, each valid at confidence 1 − α.

    Attributes:
        epsilon: ε lower bound at ``delta`` for **any** (ε, δ)-DP mechanism: the larger of
            ``epsilon_steinke`` and ``epsilon_fdp``, whose levels sum to α, so valid at 1 − α.
        epsilon_steinke: Steinke–Nasr–Jagielski's bound (arXiv:2305.08846v1 Thm 3.1/5.2): where
            :func:`rdpjax.canaries.joint.usable`, one test over the whole grid at 0.95·α
            (:mod:`rdpjax.canaries.joint`), else each pair at 0.05·α/G.
        epsilon_fdp: Mahloujifar–Melis–Chaudhuri's bound (arXiv:2410.22235) with the curve
            f_{ε,δ}: each pair at 0.05·α/G beside the joint test, else at 0.95·α/G.
        mu: certified μ: every μ'-GDP claim with μ' < ``mu`` is refuted at level α (f-DP bound
            with the Gaussian curve).
        epsilon_gaussian: the ε at ``delta`` of μ-GDP with μ = ``mu`` (the "Gaussian-shaped"
            bound jax_privacy's ``epsilon_one_run_fdp`` reports); ``None`` when δ = 0.
        delta: δ of the ε bounds.
        alpha: the error probability of each bound (and of ``refuted``).
        m: canaries (``n_in`` included, ``n_out`` not).
        grid_size: G, the number of guess pairs tried (the pair-by-pair tests' Bonferroni
            factor).
        guesses: the pair behind ``epsilon``: ``{"k_in", "k_out", "correct", "bound"}``.
        claim: the claim checked, or ``None``.
        refuted: whether the claim is refuted at level α (``None`` without a claim).
    """

    epsilon: float
    epsilon_steinke: float
    epsilon_fdp: float
    mu: float
    epsilon_gaussian: float | None
    delta: float
    alpha: float
    m: int
    n_in: int
    n_out: int
    grid_size: int
    guesses: dict
    claim: Claim | None = None
    refuted: bool | None = None

    def verdict(self) -> str:
        """One line: the bounds and, with a claim, REFUTED or not refuted."""
        g = self.guesses
        bounds = (
            f"ε ≥ {self.epsilon:.3f} at δ = {self.delta:g}, μ ≥ {self.mu:.3f} "
            f"({100 * (1 - self.alpha):g}% confidence; m = {self.m}, {g['k_in']} in + "
            f"{g['k_out']} out guesses, {g['correct']} correct)"
        )
        if self.claim is None:
            return bounds
        word = "REFUTED" if self.refuted else "not refuted"
        return f"{word}: {self.claim}: {bounds}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (the claim as :meth:`Claim.to_dict`)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["claim"] = None if self.claim is None else self.claim.to_dict()
        out["guesses"] = {k: int(v) if k != "bound" else float(v) for k, v in self.guesses.items()}
        for key in ("epsilon", "epsilon_steinke", "epsilon_fdp", "mu", "delta", "alpha"):
            out[key] = float(out[key])
        if out["epsilon_gaussian"] is not None and not math.isfinite(out["epsilon_gaussian"]):
            out["epsilon_gaussian"] = None
        return out
