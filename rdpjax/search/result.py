"""The result of a pair search, :class:`SearchResult` (JSON via :meth:`SearchResult.to_dict`).

It holds the pair, its certified bounds, the relation it was searched under, and how it was found.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rdpjax._pytree import pytree_dataclass
from rdpjax._table import Column, text_table
from rdpjax.search.derivative_free import SAMPLERS
from rdpjax.search.neighbours import describe

__all__ = ["SearchResult"]


@pytree_dataclass(
    static=(
        "method",
        "reason",
        "candidate",
        "n",
        "search_n",
        "select_n",
        "steps",
        "restarts",
        "both_directions",
        "name",
        "neighbours",
    )
)
class SearchResult:
    """The pair found and its certified bounds. A pytree of numpy arrays.

    Attributes:
      lam: ``(L,)`` orders.
      x, x_prime: ``(m,)`` or ``(m, d)``: the pair found, neighbours under ``neighbours`` (for
        ``"add-remove"`` one of them has ``m − 1`` entries).
      index: the entry in which they differ (add-remove: the entry of the larger database
        that the smaller one lacks).
      lower: ``(L,)`` certified lower bounds on ε(λ) (fresh draws; simultaneous at 1 − alpha).
      estimate, std_error, bias: ``(L,)`` of the certified :class:`rdpjax.Bound`.
      direction: ``(L,)`` 0 for ``D_λ(p_x‖p_x')``, 1 where the reverse bound was larger
        (``both_directions`` only).
      level: the level of each single bound, ``alpha / (L · directions)`` (where
        :func:`rdpjax.lower_bound`'s default maps the outputs, the map's bounds and the outputs'
        own share it, 0.9 / 0.1, and this is the level of the family reported).
      alpha: the family-wise error level.
      search_value: ``(L,)`` objective at the pair found, on the selection draws.
      trace: ``(L, restarts, steps)`` objective per step of every restart (search draws); for a
        black box the plug-in estimate of every trial.
      method: ``"gradient"`` or ``"evolutionary"``; for a black box the optuna sampler,
        ``"tpe"`` or ``"random"``.
      reason: why that method was used.
      candidate: which candidate made from a restart's final pair was chosen (one of
        :data:`CANDIDATES`: the pair itself, its nearest vertex of the box, or the pair with
        all other entries at the low or the high end of the domain).
      n, search_n, select_n: certification, search and selection draws per side.
      steps, restarts: of the search (for a black box, ``steps`` counts the trials of each
        restart, one optuna study).
      both_directions: whether both directions were certified.
      name: the mechanism's name.
      neighbours: the neighbouring relation searched: ``"replace-one"`` (one entry differs;
        always so for a JAX mechanism) or ``"add-remove"`` (one entry removed).
    """

    lam: np.ndarray
    x: np.ndarray
    x_prime: np.ndarray
    index: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    bias: np.ndarray
    direction: np.ndarray
    level: np.ndarray
    alpha: np.ndarray
    search_value: np.ndarray
    trace: np.ndarray
    method: str
    reason: str
    candidate: str
    n: int
    search_n: int
    select_n: int
    steps: int
    restarts: int
    both_directions: bool
    name: str
    neighbours: str = "replace-one"

    def to_dict(self) -> dict:
        """Plain Python values (JSON-ready), same field names."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = np.asarray(v).tolist() if isinstance(v, np.ndarray) else v
        return out

    def __str__(self) -> str:
        unit = "trials" if self.method in SAMPLERS else "steps"
        lines = [
            f"pair search for {self.name}: {self.method} search ({self.reason}); "
            f"{self.restarts} restarts × {self.steps} {unit}, {self.search_n:,} draws per side; "
            f"chosen candidate: {self.candidate}",
            describe(self.x, self.x_prime, self.index, self.neighbours),
        ]
        j = int(self.index)
        if np.shape(self.x) == np.shape(self.x_prime):
            rest = np.delete(np.asarray(self.x), j, axis=0)
            lines.append(
                f"pair: entry {j} is {_fmt(self.x[j])} in x and {_fmt(self.x_prime[j])} in x'; "
                f"the other entries {_fmt(rest)}"
            )
        else:
            larger = self.x if np.size(self.x) > np.size(self.x_prime) else self.x_prime
            lines.append(f"pair: entry {j} is {_fmt(larger[j])}; x = {_fmt(self.x)}")
        arrows = ["  D(x'||x)" if int(d) else "" for d in self.direction]
        lines += bound_table(self.lam, self.lower, self.estimate, self.std_error, ["", *arrows])
        conf = f"{1 - float(self.alpha):.3g}"
        k = len(self.lam) * (2 if self.both_directions else 1)
        level, alpha = float(self.level), float(self.alpha)
        family = f"Bonferroni over {k} bound{'s' if k > 1 else ''}, each at {level:.4g}"
        if k * level < 0.999 * alpha:  # lower_bound's default: the map's and the outputs' own
            family += f"; the outputs' own KDE beside them at {alpha - k * level:.3g} in all"
        lines.append(
            f"certified on {self.n:,} fresh draws per side: simultaneous {conf} ({family})"
        )
        return "\n".join(lines)


def _fmt(values) -> str:
    arr = np.round(np.asarray(values, np.float64), 3)
    if arr.size == 0:
        return "—"
    if arr.ndim == 0:
        return f"{float(arr):g}"
    return np.array2string(arr, separator=", ", threshold=12)


def bound_table(lam, lower, estimate, std_error, tails: list[str]) -> list[str]:
    """The text table of certified bounds per λ (``tails``: the header's, then each row's)."""
    columns = [
        Column("lambda", 8, "g"),
        *(Column(h, 10, ".6f") for h in ("lower", "estimate", "std_error")),
    ]
    values = [np.atleast_1d(np.asarray(v, np.float64)) for v in (lam, lower, estimate, std_error)]
    return text_table(columns, list(zip(*values, strict=True)), tails=tails)
