"""The settings of the rejection-set test, :class:`SetOptions`, and their defaults."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rdpjax._validation import check_flag
from rdpjax.estimator.options import or_default
from rdpjax.rejection.cells import MAX_CELLS

__all__ = ["DEFAULT_SELECTION", "SMOOTH_SHARE", "SetOptions", "set_options"]

DEFAULT_SELECTION = 0.08
"""Fraction of each side's draws that chooses the sets (the rest certifies them). Chosen by
measurement against 0.1–0.3 on N(1,1) vs N(0,1) at n = 10³ … 10⁶ (mean certified ε at
δ = 10⁻⁵ and μ; ``benchmarks/calibration/rejection_sets.py``)."""

SMOOTH_SHARE = 0.02
"""Default kernel width for continuous outputs: this share of the cells (at least half a cell);
measured against 0.008–0.03 with :data:`DEFAULT_SELECTION`."""


@dataclasses.dataclass(frozen=True)
class SetOptions:
    """Settings of the rejection-set test (checked when made).

    Attributes:
        selection: fraction of each side's draws that chooses the sets, in (0, 1); the rest
            certifies them. Default :data:`DEFAULT_SELECTION`.
        cells: cells the sets are unions of (2 … ``MAX_CELLS``); ``None``: 16 pooled selection
            draws a cell, 16 to 4096.
        smooth: kernel width in cells for continuous outputs' ratio estimate (0: none);
            ``None``: :data:`SMOOTH_SHARE` of the cells, at least 0.5.
        both_directions: also try sets likelier under Q than P (DP claims are symmetric).
        tpr_at_fpr: target false-positive rates (each in (0, 1); a number or a sequence) at
            which to certify a distinguisher's TPR, P being the positives
            (:mod:`rdpjax.rejection.operating`): the points hold together at 1 − α on their
            own, apart from the test's bounds and its verdict, which they leave unchanged.
    """

    selection: float = DEFAULT_SELECTION
    cells: int | None = None
    smooth: float | None = None
    both_directions: bool = True
    tpr_at_fpr: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tpr_at_fpr", _targets(self.tpr_at_fpr))
        check_flag(self.both_directions, "both_directions")
        if not 0.0 < float(self.selection) < 1.0:
            raise ValueError(f"selection must be in (0, 1); got {self.selection!r}")
        if self.cells is not None and not (
            isinstance(self.cells, int | np.integer) and 2 <= self.cells <= MAX_CELLS
        ):
            raise ValueError(
                f"cells must be an int in [2, {MAX_CELLS}] or None; got {self.cells!r}"
            )
        if self.smooth is not None and not (np.isfinite(self.smooth) and self.smooth >= 0):
            raise ValueError(f"smooth must be finite and ≥ 0; got {self.smooth!r}")


def _targets(value: Any) -> tuple[float, ...]:
    """``tpr_at_fpr`` as a tuple of floats in (0, 1), sorted, without repeats."""
    values = [value] if isinstance(value, int | float | np.number) else value
    try:
        out = tuple(sorted({float(v) for v in values if not isinstance(v, bool | str)}))
        if len(out) != len(set(values)) or not all(0.0 < v < 1.0 for v in out):
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(
            f"tpr_at_fpr must be a number or a sequence of numbers in (0, 1); got {value!r}"
        ) from None
    return out


def set_options(options: SetOptions | None, fields: dict[str, Any]) -> SetOptions:
    """``options`` (default :class:`SetOptions`) with ``fields`` replaced; names checked.

    Raises:
        TypeError: on a name that is not a field, or ``options`` of another type.
    """
    options = or_default(options, SetOptions, "options", "rdpjax.rejection.SetOptions")
    names = {f.name for f in dataclasses.fields(SetOptions)}
    unknown = sorted(set(fields) - names)
    if unknown:
        raise TypeError(f"unknown option(s) {unknown}; SetOptions fields are {sorted(names)}")
    return dataclasses.replace(options, **fields) if fields else options
