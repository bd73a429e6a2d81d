"""The :class:`Claim` value type: a privacy claim as a curve λ ↦ claimed ε(λ), and its validators.

A :class:`Claim` stores what was claimed (``kind`` and JSON-ready ``params``) and evaluates the
tightest ε(λ) that claim implies through :mod:`rdpjax.claims._kernels`; the constructors are in
:mod:`rdpjax.claims.curves` and :mod:`rdpjax.claims.accounting`. The small validators here
(``_real``, ``_nonnegative``, ``_orders_array``) are shared by every module of the package.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from rdpjax.claims._kernels import (
    _accountant_rdp,
    _call_curve,
    _dp_accounting,
    _linear_curve,
    _neighboring_relation,
    _rr_curve,
    _tabulated_curve,
)

KINDS = ("pure_dp", "approx_dp", "zcdp", "gdp", "rdp", "dp_accounting")


# --------------------------------------------------------------------------------------------
# Small helpers.


class _FrozenDict(dict):
    """A read-only, hashable ``dict`` (still a ``dict`` for ``json.dumps`` and ``isinstance``)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Claim.params is read-only; build a new claim instead")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _FrozenDict({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _real(value: Any, name: str) -> float:
    """``value`` as a float, or a ``ValueError`` naming ``name`` (bools and strings refused)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a real number; got {value!r}")
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - tracers and exotic objects: same message
        raise ValueError(f"{name} must be a concrete real number; got {value!r}") from None
    if arr.shape != () or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a real scalar; got {value!r}")
    return float(arr)


def _nonnegative(value: Any, name: str) -> float:
    x = _real(value, name)
    if not (math.isfinite(x) and x >= 0.0):
        raise ValueError(f"{name} must be finite and in [0, inf); got {value!r}")
    return x


def _orders_array(lam: Any, name: str = "lam") -> np.ndarray:
    """``np.atleast_1d(lam)`` as float64 with every entry in (1, inf], else ``ValueError``."""
    try:
        arr = np.atleast_1d(np.asarray(lam))
        if arr.dtype.kind == "O":
            arr = arr.astype(np.float64)
    except Exception:  # noqa: BLE001 - tracers, strings in an object array, ...
        raise ValueError(f"{name} must be concrete real numbers in (1, inf]; got {lam!r}") from None
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be real numbers in (1, inf]; got {lam!r}")
    arr = arr.astype(np.float64)
    bad = np.isnan(arr) | (arr <= 1.0)
    if np.any(bad):
        raise ValueError(f"{name} must be in (1, inf] (no NaN); got {arr[bad][0]!r}")
    return arr


# --------------------------------------------------------------------------------------------
# Claims.


@dataclasses.dataclass(frozen=True)
class Claim:
    """A privacy claim as a curve λ ↦ claimed ε(λ), the tightest bound the claim implies.

    Build claims with :func:`pure_dp`, :func:`approx_dp`, :func:`zcdp`, :func:`gdp`, :func:`rdp` or
    :func:`from_dp_accounting`; instances are immutable, hashable and compare by value.

    Attributes:
        name: human label, e.g. ``"ρ-zCDP, ρ = 0.02"``.
        kind: one of ``"pure_dp"``, ``"approx_dp"``, ``"zcdp"``, ``"gdp"``, ``"rdp"``,
            ``"dp_accounting"``. An ``"approx_dp"`` claim (δ > 0) implies no finite ε(λ): its
            curve is +inf everywhere and it is checked by :mod:`rdpjax.rejection` instead.
        params: JSON-ready, read-only parameters (``{"rho": 0.02}``; a tabulated RDP claim
            stores ``orders`` and ``values``, ``None`` standing for +inf).
        orders: the orders of a tabulated claim, ascending; ``None`` when the claim is
            defined at every λ > 1.
    """

    name: str
    kind: str
    params: dict
    orders: tuple[float, ...] | None = None
    _source: Any = dataclasses.field(default=None, repr=False)  # user curve or DpEvent

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        object.__setattr__(self, "params", _freeze(dict(self.params)))
        if self.orders is not None:
            object.__setattr__(self, "orders", tuple(float(o) for o in self.orders))

    def __hash__(self) -> int:
        try:
            source = hash(self._source)
        except TypeError:  # an unhashable callable object: identity
            source = id(self._source)
        return hash((self.name, self.kind, self.params, self.orders, source))

    def __call__(self, lam: Any) -> Any:
        """The claimed ε(λ) at each order: a scalar order gives a scalar, an array an array.

        Args:
            lam: order(s) λ in (1, inf], scalar or array.

        A tabulated claim gives, at any λ, the smallest tabulated value at an order ≥ λ (D_λ is
        non-decreasing in λ: van Erven & Harremoës, arXiv:1206.2459v2, Thm 3), so a bound at an
        order between or off the table's orders is compared with what the table implies there.
        This is the one place that rule lives: :func:`rdpjax.claims.check_claim`,
        :func:`rdpjax.audit` and the sequential audit's looks all compare ``lower > claim(lam)``
        and report ``claim(lam)`` as "claimed"; which orders an audit bounds for a table is
        :func:`rdpjax.claims.orders.tabulated_claim_orders`.

        Returns:
            a ``numpy.float64`` for a scalar λ, else a float64 array of ``lam``'s shape; +inf
            where the claim implies nothing (above a tabulated claim's largest order, at λ = ∞
            for zCDP/GDP).

        Raises:
            ValueError: for λ ≤ 1, NaN or non-numeric λ; for a user curve returning a negative
                or NaN value.
        """
        arr = _orders_array(lam)
        flat = arr.ravel()
        p = self.params
        if self.kind == "pure_dp":
            out = _rr_curve(flat, p["epsilon"])
        elif self.kind == "approx_dp":  # δ > 0: no finite ε(λ) at any order
            out = np.full(flat.shape, np.inf)
        elif self.kind == "zcdp":
            out = _linear_curve(flat, p["rho"])  # Bun & Steinke, Def. 1.1
        elif self.kind == "gdp":
            out = _linear_curve(flat, 0.5 * p["mu"] ** 2)  # λμ²/2
        elif self.kind == "rdp" and self.orders is not None:
            values = np.array([np.inf if v is None else v for v in p["values"]], np.float64)
            out = _tabulated_curve(flat, np.asarray(self.orders), values)
        elif self.kind == "rdp":
            if not callable(self._source):
                raise ValueError("this rdp claim has no curve; build it with rdp(curve)")
            out = _call_curve(self._source, flat)
        else:
            _dp_accounting()
            relation = _neighboring_relation(p["neighboring_relation"])
            out = _accountant_rdp(self._source, relation, flat)
        out = np.asarray(out, dtype=np.float64).reshape(np.shape(lam))
        return out[()] if out.ndim == 0 else out

    def to_dict(self) -> dict:
        """JSON-ready ``{"name", "kind", "params", "orders"}``."""
        return {
            "name": self.name,
            "kind": self.kind,
            "params": json.loads(json.dumps(self.params)),
            "orders": None if self.orders is None else list(self.orders),
        }

    def __str__(self) -> str:
        return self.name


def as_claim(obj: Any) -> Claim | None:
    """``None`` → ``None``; a :class:`Claim` → itself; anything else → ``ValueError``.

    A plain number is deliberately not read as ε: ε-DP, ρ-zCDP and μ-GDP with the same number
    are very different claims, so the caller says which.

    Raises:
        ValueError: for anything but ``None`` or a :class:`Claim`.
    """
    if obj is None or isinstance(obj, Claim):
        return obj
    hint = ""
    if isinstance(obj, (int, float, np.number)) and not isinstance(obj, (bool, np.bool_)):
        hint = f"; a number is not taken as ε: for ε-DP use pure_dp({obj!r})"
    raise ValueError(
        "claim must be None or a Claim built with pure_dp(ε), approx_dp(ε, δ), zcdp(ρ), gdp(μ), "
        "rdp(curve) or "
        f"from_dp_accounting(event); got {obj!r} ({type(obj).__name__}){hint}"
    )
