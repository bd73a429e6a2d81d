"""The zoo with its reference parameters and pairs, and the table printed by ``python -m``."""

from __future__ import annotations

import math
from typing import NamedTuple

import jax

from rdpjax.databases import paper_pair
from rdpjax.mechanisms.additive import Gaussian, Laplace
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.local import (
    KaryRandomizedResponse,
    LaplaceHistogram,
    OneHotRandomizedResponse,
)
from rdpjax.mechanisms.noisy_gd import NoisyGradientDescent
from rdpjax.mechanisms.noisy_max import ReportNoisyMax
from rdpjax.mechanisms.randomized_response import RandomizedResponse
from rdpjax.mechanisms.series import OrthogonalSeries
from rdpjax.mechanisms.shuffle import ShuffledRandomizedResponse
from rdpjax.mechanisms.sparse_vector import SparseVector
from rdpjax.mechanisms.subsampled import PoissonSubsampled
from rdpjax.mechanisms.truncated import TruncatedGaussian, TruncatedLaplace

__all__ = ["ORDERS", "ZooEntry", "format_table", "reference_zoo"]

ORDERS = (2, 5, 7)


class ZooEntry(NamedTuple):
    """One row of the zoo: a mechanism at its reference parameters and pair.

    ``paper_values`` holds the reference values of methods.md §3 at λ = 2, 5, 7, as printed there
    (strings, so that their number of decimals is known), for the seven mechanisms of 000.
    """

    label: str
    mechanism: Mechanism
    x: jax.Array
    x_prime: jax.Array
    paper_values: tuple[str, str, str] | None = None


def reference_zoo() -> list[ZooEntry]:
    """Every mechanism at the parameters of its paper (000: Sec. V; 001, 003: methods.md §4–5)."""
    pair = paper_pair()
    entries = [
        ZooEntry("Laplace b=5", Laplace(5.0), *pair, ("0.037015", "0.084103", "0.107113")),
        ZooEntry("Gaussian b=5", Gaussian(5.0), *pair, ("0.04", "0.10", "0.14")),
        ZooEntry("Gaussian b=5, d=2", Gaussian(5.0), *paper_pair(dim=2)),
        ZooEntry(
            "Subsampled Laplace b=5, γ=0.5",
            PoissonSubsampled(Laplace(5.0), 0.5),
            *pair,
            ("0.009383", "0.023060", "0.031493"),
        ),
        ZooEntry(
            "Subsampled Gaussian b=5, γ=0.5",
            PoissonSubsampled(Gaussian(5.0), 0.5),
            *pair,
            ("0.010151", "0.026168", "0.037412"),
        ),
        ZooEntry(
            "Randomized response ε0=1.5",
            RandomizedResponse(1.5),
            *pair,
            ("1.309634", "1.449647", "1.466431"),
        ),
        ZooEntry(
            "Shuffled RR ε0=1.5, m=10",
            ShuffledRandomizedResponse(1.5),
            *pair,
            ("0.239396", "0.437170", "0.530391"),
        ),
        ZooEntry(
            "Noisy GD η=0.2, b=1, K=10",
            NoisyGradientDescent(0.2, 1.0, 10),
            *pair,
            ("0.0072547", "0.0181367", "0.0253913"),
        ),
    ]
    others: list[tuple[str, Mechanism]] = [
        ("Truncated Laplace B=1", TruncatedLaplace(1.0)),
        ("Truncated Gaussian s=0.5", TruncatedGaussian(0.5)),
        ("k-ary RR α=1, k=5", KaryRandomizedResponse(1.0, 5)),
        ("One-hot RR α=1, k=5", OneHotRandomizedResponse(1.0, 5)),
        ("Laplace histogram α=1, 5 bins", LaplaceHistogram(1.0, 5)),
        ("Orthogonal series α=1, k=3", OrthogonalSeries(1.0, 3)),
        ("Orthogonal series α=1, k=2", OrthogonalSeries(1.0, 2)),
        ("Orthogonal series α=1, k=2, literal", OrthogonalSeries(1.0, 2, ties="literal")),
        ("Report noisy max ε=1 (index)", ReportNoisyMax(1.0)),
        ("Report noisy max ε=1 (exponential)", ReportNoisyMax(1.0, noise="exponential")),
        ("Report noisy max ε=1 (value)", ReportNoisyMax(1.0, output_kind="value")),
        ("Sparse vector ε=1, c=1 (Lyu Alg. 1)", SparseVector(1.0)),
        ("Sparse vector ε=1, c=1 (Lee-Clifton)", SparseVector(1.0, variant="lee_clifton")),
        ("Sparse vector ε=1 (Stoddard)", SparseVector(1.0, variant="stoddard")),
        ("Sparse vector ε=1 (Chen)", SparseVector(1.0, variant="chen")),
    ]
    entries += [ZooEntry(label, mech, *mech.reference_pair()) for label, mech in others]
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
    header = (
        f"{'mechanism':<42}{'D_2':>11}{'D_5':>11}{'D_7':>11}{'D_inf':>11}{'epsilon':>9}"
        "  paper 000 (§3)"
    )
    lines = [header, "-" * len(header)]
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
        cells = "".join(f"{_fmt(v):>11}" for v in values)
        label = entry.label if mech.claim_holds else entry.label + " ✗"
        lines.append(f"{label:<42}{cells}{eps_text:>9}  {check}".rstrip())
    lines.append("")
    lines.append("✗ = published variant whose claimed ε is false (claim_holds is False).")
    lines.append("Pairs: pair (21) of arXiv:2212.04739 for paper 000; reference_pair() otherwise.")
    return "\n".join(lines)
