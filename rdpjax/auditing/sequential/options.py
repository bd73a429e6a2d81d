"""The estimator's options a sequential audit takes, typed: :class:`LookOptions`.

A sequential audit fixes its grid, floor and β per look before the draws (:mod:`.setup`) and
bounds each look from the running totals (:mod:`.engine`); of :func:`rdpjax.audit`'s options it
reads the few in :data:`OPTIONS`. :func:`look_options` takes them from the audit's
:class:`~rdpjax.auditing.AuditOptions` (refusing any other option of the estimator or the stream
that was set), and :meth:`LookOptions.chosen` gives the ones the user set, as the checkpoint's
fingerprint records them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rdpjax.estimator.options import changed_fields

__all__ = ["OPTIONS", "LookOptions", "look_options"]

OPTIONS = ("bandwidth", "floor", "beta", "variance", "second_order", "margin", "pilot", "discrete")
"""Estimator options a sequential audit takes (``pilot``: outputs per side of the pilot of
continuous outputs, default :data:`rdpjax.auditing.sequential.setup.DEFAULT_PILOT`; ``margin``:
widening of its range, in multiples of its width per side, default 0.5; the others as in
:func:`rdpjax.lower_bound`)."""


@dataclasses.dataclass(frozen=True)
class LookOptions:
    """What the looks' setup and bounds read, with the defaults they apply when not set.

    Attributes:
      bandwidth: the KDE bandwidth of continuous outputs (``None``: from the pilot).
      floor, beta: the softmax floor and its β (``None``: the schedule's per-look defaults).
      variance: how the delta method's gradient is taken (as :func:`rdpjax.lower_bound`).
      second_order: keep the bound's second-order terms.
      margin: the pilot's range widened by this many widths per side.
      pilot: outputs per side of the pilot of continuous outputs (``None``: the default).
      discrete: count the outputs as codes (``None``: from the source).
      both_directions: also bound ``D_λ(Q‖P)``.
      chosen_fields: the names the user set (the fingerprint records those only).
    """

    bandwidth: Any = None
    floor: float | None = None
    beta: float | None = None
    variance: str = "autodiff"
    second_order: bool = True
    margin: float = 0.5
    pilot: int | None = None
    discrete: bool | None = None
    both_directions: bool = True
    chosen_fields: tuple[str, ...] = ()

    def chosen(self) -> dict[str, Any]:
        """The options the user set, by name (the checkpoint's fingerprint records these)."""
        return {name: getattr(self, name) for name in self.chosen_fields}


def look_options(options: Any, both_directions: bool) -> LookOptions:
    """The :class:`LookOptions` of an :class:`~rdpjax.auditing.AuditOptions`.

    Raises:
      ValueError: when another option of the estimator or the stream was set.
    """
    chosen = {**changed_fields(options.bound), **changed_fields(options.stream)}
    chosen.pop("batch_size", None)  # the looks' batches: read from options.stream
    unknown = sorted(set(chosen) - set(OPTIONS))
    if unknown:
        raise ValueError(
            f"{', '.join(unknown)}: not an option of a sequential audit (it takes {OPTIONS})."
        )
    return LookOptions(**chosen, both_directions=bool(both_directions), chosen_fields=tuple(chosen))
