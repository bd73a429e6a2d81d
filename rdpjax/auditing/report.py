"""The result of an audit and its report files: a table, JSON, Markdown and figures.

:class:`AuditReport` is what :func:`rdpjax.audit` returns; :func:`rdpjax.write_report` writes it to
a
folder (``rdpjax audit … --report DIR``): ``report.json`` (every number, every setting, the
versions, :data:`SCHEMA_VERSION`), ``report.md`` (the table and the verdict, for a person or a CI
log) and, when matplotlib is installed, ``bounds.png`` (bounds and claim against λ).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from rdpjax._json import json_floats
from rdpjax._pytree import pytree_dataclass
from rdpjax.estimator.bound_plan import DIRECTION_NAMES, Bound

__all__ = ["SCHEMA_VERSION", "AuditReport", "Look", "json_ready"]

SCHEMA_VERSION = 5
"""Version of the JSON layout of :meth:`AuditReport.to_dict` (1: before claims existed; 2:
before sequential audits added ``looks``; 3: before rejection sets added ``sets``, and a
sequential audit by betting a ``bound`` of ``null``; 4: before ``refuted`` became the verdict,
a bool, and the per-order flags ``refuted_at``)."""


def json_ready(value):
    """A JSON-ready copy of a setting.

    Scalars are kept as they are, mappings and sequences copied element by element, arrays
    written as lists, anything else as its text (a function, a path, a dataclass).
    """
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


@dataclasses.dataclass(frozen=True)
class Look:
    """One look of a sequential audit (:mod:`rdpjax.auditing.sequential`).

    Attributes:
      k: the look's number (1, 2, …).
      n: certifying outputs per database in its bound.
      drawn: outputs drawn per database so far (``n`` plus the pilot).
      alpha: the family-wise level its bounds hold at (its share of the audit's α).
      lam, lower, estimate: orders, simultaneous lower bounds and estimates (``None``: not finite).
      claimed: the claim at the orders (``None`` entries: it implies nothing), or ``None``.
      refuted: whether some order's bound exceeded the claim (the audit stopped there).
    """

    k: int
    n: int
    drawn: int
    alpha: float
    lam: tuple
    lower: tuple
    estimate: tuple
    claimed: tuple | None
    refuted: bool

    @classmethod
    def from_dict(cls, d: dict) -> Look:
        """The look :meth:`to_dict` wrote as ``d`` (lists back to tuples)."""
        tup = {k: tuple(d[k]) for k in ("lam", "lower", "estimate")}
        claimed = None if d.get("claimed") is None else tuple(d["claimed"])
        return cls(
            k=int(d["k"]),
            n=int(d["n"]),
            drawn=int(d["drawn"]),
            alpha=float(d["alpha"]),
            claimed=claimed,
            refuted=bool(d["refuted"]),
            **tup,
        )

    def to_dict(self) -> dict:
        """JSON-ready: the tuples as lists (their entries are floats or ``None`` already)."""
        lists = {k: list(getattr(self, k)) for k in ("lam", "lower", "estimate")}
        claimed = None if self.claimed is None else list(self.claimed)
        return dataclasses.asdict(self) | lists | {"claimed": claimed}


@pytree_dataclass(
    static=(
        "claim",
        "mechanism",
        "n",
        "projected",
        "streamed",
        "settings",
        "looks",
        "notes",
        "sets",
    )
)
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
      refuted_at: ``(L,)`` bool, True at the orders where ``lower`` exceeds the claim. The
        bounds hold simultaneously at 1 − α, so a true claim is refuted anywhere with
        probability ≤ α. The verdict, which also counts the rejection sets, is :attr:`refuted`.
      bound: the full :class:`rdpjax.Bound` (settings, levels, directions); ``None`` for a
        sequential audit by betting, which has no Rényi bounds (``lam`` etc. are then empty).
      claim: the :class:`rdpjax.claims.Claim` checked, or ``None``.
      mechanism: a name for the mechanism.
      n: outputs per database the audit drew for its statistics (a learned projection's
        training outputs not included; a sequential audit's: the last look's). :meth:`sizes`
        says n asked, n drawn in all and what each part went to.
      projected: whether a user projection was applied.
      streamed: whether the draws were binned batch by batch instead of held in memory.
      settings: the audit's settings, a JSON object (text, so that the report stays hashable):
        the orders and who chose them, α, the directions, the options set
        (``estimator_options``), the map the bound applied (``transform_applied``: ``None`` or
        ``"quantile"``, whatever was asked) and, for the user's own function, the SHA-256 of
        its source (``mechanism_source_sha256``; ``None`` when Python cannot find it).
      densities: the :class:`rdpjax.auditing.densities.DensityCurves` behind the bound (p̂, q̂, q̂_τ on
        its grid) when :func:`rdpjax.audit` was asked for them (``densities=True``) and could keep
        them (draws in memory, 1-D or discrete outputs); else ``None``.
      looks: a sequential audit's :class:`Look` s, in order (the report's numbers are the last
        one's); empty for a fixed-n audit.
      notes: lines a reader must see beside the verdict, e.g. that the supports seem to differ
        (:func:`rdpjax.estimator.support.support_gap`).
      sets: the :class:`rdpjax.rejection.SetTest` of an (ε, δ) or μ-GDP claim (certified
        rejection sets on the same draws; ``settings["test"] == "both"``): the Rényi bounds then
        hold at α/2 and the sets at α/2, together at 1 − α. For a sequential audit by betting,
        its :class:`rdpjax.rejection.betting.BettingResult` (at α). Else ``None``.
    """

    lam: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    std_error: np.ndarray
    exact: np.ndarray | None
    claimed: np.ndarray | None
    refuted_at: np.ndarray
    bound: Bound | None
    claim: object
    mechanism: str
    n: int
    projected: bool
    streamed: bool = False
    settings: str = "{}"
    densities: object = None
    looks: tuple = ()
    notes: tuple = ()
    sets: Any = None

    @classmethod
    def from_bound(
        cls, bound: Bound, *, claim: Any, mechanism: str, n: int, settings: dict, **fields: Any
    ) -> AuditReport:
        """The report of ``bound`` checked against ``claim`` (``None``: nothing checked).

        ``claimed`` is ``claim(λ)`` at the bound's orders and ``refuted_at`` where ``lower``
        exceeds it; ``settings`` is recorded as JSON; ``fields`` are the other attributes
        (``exact``, ``projected``, ``streamed``, ``densities``, ``looks``, ``notes``).
        """
        lam = np.asarray(bound.lam, np.float64)
        lower = np.asarray(bound.lower, np.float64)
        claimed = None if claim is None else np.asarray(claim(lam), np.float64)
        fields.setdefault("exact", None)
        fields.setdefault("projected", False)
        return cls(
            lam=lam,
            estimate=np.asarray(bound.estimate),
            lower=lower,
            std_error=np.asarray(bound.std_error),
            claimed=claimed,
            refuted_at=np.zeros(lower.shape, bool) if claimed is None else lower > claimed,
            bound=bound,
            claim=claim,
            mechanism=mechanism,
            n=n,
            settings=json.dumps(settings),
            **fields,
        )

    @property
    def alpha(self) -> float:
        """The family-wise level of everything the report says.

        That is the bound's α, or for a sequential audit the α its looks share (each look holds
        at its own part of it).
        """
        if self.looks or self.sets is not None:
            return float(json.loads(self.settings)["alpha"])
        return float(self.bound.alpha)

    @property
    def refuted(self) -> bool:
        """The verdict: whether the claim is refuted (:meth:`verdict` says it in words).

        True when an order's lower bound, a certified rejection set or the betting test breaks
        the claim; per order, :attr:`refuted_at`.
        """
        return bool(np.any(self.refuted_at)) or (self.sets is not None and self.sets.refuted)

    @property
    def is_refuted(self) -> bool:
        """Same as :attr:`refuted`."""
        return self.refuted

    def check(self):
        """The :class:`rdpjax.claims.ClaimCheck` of this report (``None`` without a claim)."""
        if self.claim is None or self.bound is None:  # no claim, or no Rényi bounds (betting)
            return None
        from rdpjax.claims import check_claim

        return check_claim(self.claim, self.lam, self.lower, self.alpha)

    def verdict(self) -> str:
        """One line: the verdict, the test that decided it, its level and the number behind it.

        The number is the certified one that matters for the claim's kind: ε(λ), ε(δ) or μ.

        With both families (Rényi bounds and rejection sets, each at α/2) the line names the
        one that refuted the claim (the sets first: their ε(δ) or μ is in the claim's own
        terms), and says when the other did too.
        """
        check, sets = self.check(), self.sets
        if self.bound is None:  # a sequential audit by betting: the sets' own verdict
            return sets.verdict()
        if sets is None:
            if check is not None:
                return check.verdict()
            return f"no claim to check; ε(λ) ≥ lower holds simultaneously at {1 - self.alpha:.0%}"
        levels = f"each at α/2 = {self.alpha / 2:g}"
        if check is None:
            return (
                f"no claim to check; {sets.facts()}, and ε(λ) ≥ lower (rejection sets and Rényi "
                f"bounds, {levels}: together at {1 - self.alpha:.0%})"
            )
        if sets.refuted:
            also = "; the Rényi bounds refute it too" if check.refuted else ""
            return (
                f"REFUTED by the rejection sets (at α/2 = {sets.alpha:g}): {self.claim} is false; "
                f"{sets.facts()}{also}"
            )
        if check.refuted:
            body = check.verdict().removeprefix("REFUTED: ").split("; the bounds hold")[0]
            return (
                f"REFUTED by the Rényi bounds (at α/2 = {float(self.bound.alpha):g}): {body}; "
                f"the rejection sets certify {sets.facts()}"
            )
        return (
            f"not refuted: {self.claim} is consistent with the draws at α = {self.alpha:g} "
            f"(rejection sets and Rényi bounds, {levels}); {sets.facts()}"
        )

    def sizes(self) -> dict[str, int | None]:
        """Outputs per database: how many were asked for, drawn, and what each part went to.

        Keys: ``asked`` (the ``n``, or a sequential audit's ``max_n``; ``None`` in a report
        written before it was recorded) and ``drawn`` (all outputs drawn per database); then,
        where they apply, ``training`` (to learn the projection), ``pilot`` (the quantile map's,
        or the looks' grid), ``renyi`` (what the Rényi bounds certified on), ``selection`` and
        ``certification`` (the rejection sets'), ``sets_own`` (whether the sets drew outputs of
        their own; a streamed audit's two statistics count one pass, and its pilot is the sets'
        selection) and ``betting`` (the pairs a betting test used).
        """
        settings = json.loads(self.settings)
        asked = settings.get("n_asked", settings.get("max_n"))
        learned = settings.get("projection") or {}
        out: dict = {"asked": asked}
        if learned:
            out["training"] = int(learned["n_train"])
        trained = out.get("training", 0)
        if self.bound is None:  # betting
            return out | {"drawn": trained + int(self.sets.drawn), "betting": int(self.sets.n)}
        renyi = int(min(int(self.bound.n_p), int(self.bound.n_q)))
        if self.looks:
            drawn = int(self.looks[-1].drawn)
            return out | {"drawn": trained + drawn, "pilot": drawn - renyi, "renyi": renyi}
        shared = settings.get("one_pass")  # a streamed audit: both statistics on one pass
        out["drawn"] = (int(self.n) if shared is None else int(shared["drawn"])) + trained
        if shared is not None:
            out["pilot"] = int(shared["planning"])
        elif renyi < self.n:
            out["pilot"] = int(self.n) - renyi
        out["renyi"] = renyi
        if self.sets is not None:
            out["selection"] = int(self.sets.n_select)
            out["certification"] = int(self.sets.n_certify if shared is None else shared["counted"])
            out["sets_own"] = bool(self.sets.streamed) and shared is None
            if out["sets_own"]:  # their selection and their Poisson certification draws
                pooled = self.sets.pooled
                own = max(pooled.drawn) if pooled is not None else int(self.sets.n_certify)
                out["drawn"] += int(self.sets.n_select) + int(own)
        return out

    def size_line(self) -> str:
        """:meth:`sizes` in words, one line: n asked, n drawn, and how they were used."""
        from rdpjax.auditing.text import size_line

        return size_line(self)

    def directions(self) -> list[str]:
        """Per order, the direction the reported bound is on (``"D(P||Q)"`` or ``"D(Q||P)"``)."""
        if self.bound is None:
            return []
        return [DIRECTION_NAMES[int(d)] for d in np.atleast_1d(np.asarray(self.bound.direction))]

    def to_dict(self) -> dict:
        """Every number and setting, JSON-ready (non-finite values become ``None``)."""
        bound = None if self.bound is None else self.bound.to_dict()
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
            "refuted": self.refuted,
            "refuted_at": _list(self.refuted_at),
            "direction": self.directions(),
            "alpha": self.alpha,
            "settings": json.loads(self.settings),
            "bound": bound,
            "looks": [look.to_dict() for look in self.looks],
            "notes": list(self.notes),
            "sets": None if self.sets is None else self.sets.to_dict(),
        }

    def describe(self, verbose: bool = False) -> str:
        """The report as text, the verdict last (once).

        What was audited, n asked, drawn and used, the Rényi bounds, notes, the verdict
        (:mod:`rdpjax.auditing.text`).

        Args:
          verbose: add the methods' details: the quantile map, the certified rejection sets
            and the pooled guesses, the betting test's best bet, the learned family.
        """
        from rdpjax.auditing.text import describe

        return describe(self, verbose)

    def __str__(self) -> str:
        return self.describe()

    def to_markdown(self) -> str:
        """The report as a Markdown page: what was audited, the table, the verdict."""
        from rdpjax.auditing.text import to_markdown

        return to_markdown(self)
