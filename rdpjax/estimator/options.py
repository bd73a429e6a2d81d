"""How a bound is computed from its samples: one frozen options object.

:class:`BoundOptions` holds every choice of the estimator that is not *what* is bounded (the
orders, the level α and the directions are arguments of their own): relative frequencies or a
KDE, the KDE's bandwidth and grid, the softmax floor (13), the variance formula, the second-order
correction, the grid layout policy and the pilot quantile map. :func:`rdpjax.lower_bound` and
:func:`rdpjax.plan_bound` take one (``options=``), or its fields as keywords, checked against it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from rdpjax._typing import ArrayLike
from rdpjax._validation import check_flag
from rdpjax.estimator.inputs import plan_options
from rdpjax.estimator.settings import DEFAULTS, Defaults

__all__ = ["BoundOptions", "changed_fields", "or_default", "resolve_options"]


@dataclasses.dataclass(frozen=True)
class BoundOptions:
    """The estimator's settings (Kutta, Askin, Dunsche, arXiv:2212.04739v3, §III–IV).

    Attributes:
      discrete: ``True`` for relative frequencies (eq. (9)), ``False`` for the Gaussian KDE on a
        grid (eq. (10)), ``None`` to decide from the data
        (:func:`rdpjax.estimator.support.looks_discrete`).
      bandwidth: KDE bandwidth in data units (scalar or per axis); ``None``: from ``defaults``.
      floor: τ of the softmax floor (13) (a density for continuous data, a probability for
        discrete); ``None``: from ``defaults``.
      beta: β of the softmax floor; ``None``: ``1/τ``.
      grid_size: KDE grid points per axis (at most 2^24 over all axes); ``None``: about 16 per
        bandwidth over the data range.
      variance: ``"autodiff"`` (the delta method at the actual h) or ``"eq18"`` (eq. (18), its
        h → 0 limit).
      second_order: apply the second-order bias and variance correction
        (:mod:`rdpjax.estimator.second_order`).
      layout: ``"bucketed"`` (grid sizes rounded so that compiled programs are shared) or
        ``"exact"``.
      transform: ``"auto"``, ``"quantile"`` or ``None``: the pilot quantile map
        (:mod:`rdpjax.estimator.transform`; :func:`rdpjax.lower_bound` describes each).
      defaults: the :class:`rdpjax.Defaults` rules for (h, τ, β).

    The values are checked where they are used (:func:`rdpjax.estimator.from_samples.plan_samples`),
    with the messages of the keyword each field is named after.
    """

    discrete: bool | None = None
    bandwidth: ArrayLike | None = None
    floor: ArrayLike | None = None
    beta: ArrayLike | None = None
    grid_size: int | None = None
    variance: str = "autodiff"
    second_order: bool = True
    layout: str = "bucketed"
    transform: str | None = "auto"
    defaults: Defaults = DEFAULTS

    def __post_init__(self) -> None:
        # A flag given as a string ("False") would be read by its truth: discrete=True.
        check_flag(self.discrete, "discrete", none=True)
        check_flag(self.second_order, "second_order")

    def replace(self, **changes: Any) -> BoundOptions:
        """A copy with ``changes`` (field names only; see :func:`resolve_options`)."""
        return resolve_options(self, changes, caller="BoundOptions.replace")

    def plan_options(
        self, lam: Any, *, alpha: float, both_directions: bool, discrete: bool
    ) -> dict[str, Any]:
        """The keywords every :class:`BoundPlan` shares, from these options, validated.

        :func:`rdpjax.estimator.inputs.plan_options` with this object's floor, β, variance,
        second order and defaults.
        """
        return plan_options(
            lam,
            alpha=alpha,
            floor=self.floor,
            beta=self.beta,
            discrete=discrete,
            both_directions=both_directions,
            variance=self.variance,
            second_order=self.second_order,
            defaults=self.defaults,
        )


FIELDS = tuple(f.name for f in dataclasses.fields(BoundOptions))
"""The names :func:`resolve_options` accepts as keywords."""


def resolve_options(
    options: BoundOptions | None,
    fields: Mapping[str, Any],
    *,
    caller: str,
    base: BoundOptions | None = None,
) -> BoundOptions:
    """``options`` (or ``base``, or the defaults) with the keyword ``fields`` applied.

    Args:
      options: a :class:`BoundOptions`, or ``None``.
      fields: keyword arguments naming fields of :class:`BoundOptions`.
      caller: the function's name, for the error message.
      base: the options used when ``options`` is ``None`` (default ``BoundOptions()``).

    Raises:
      TypeError: on a keyword that is not a field, or ``options`` of another type.
    """
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise TypeError(
            f"{caller}() got an unexpected keyword argument {unknown[0]!r}; the estimator's "
            f"options are the fields of rdpjax.BoundOptions: {', '.join(FIELDS)}."
        )
    chosen: BoundOptions = or_default(options, BoundOptions, "options", "rdpjax.BoundOptions", base)
    return dataclasses.replace(chosen, **fields) if fields else chosen


def or_default(value: Any, cls: type[Any], name: str, label: str, default: Any = None) -> Any:
    """``value`` if it is a ``cls``; ``default`` (or ``cls()``) if it is ``None``.

    Raises:
      TypeError: naming ``name`` and ``label`` when ``value`` is anything else.
    """
    if value is None:
        return cls() if default is None else default
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be a {label}; got {type(value).__name__}.")
    return value


def changed_fields(options: Any) -> dict[str, Any]:
    """The fields of a dataclass instance whose values differ from its class's defaults.

    For records (a report's settings): what the user chose, by name. Values that cannot be
    compared (arrays) count as changed.
    """
    base = type(options)()
    changed: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        mine, theirs = getattr(options, f.name), getattr(base, f.name)
        try:
            same = mine is theirs or bool(mine == theirs)
        except (TypeError, ValueError):  # arrays
            same = False
        if not same:
            changed[f.name] = mine
    return changed
