"""Claims from ``dp_accounting``: the RDP curve its RDP accountant gives a ``DpEvent``.

dp_accounting is an optional dependency, imported only when a claim is built or evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from rdpjax.claims._claim import Claim
from rdpjax.claims._kernels import _dp_accounting, _neighboring_relation

__all__ = ["from_dp_accounting"]


def _event_json(value: Any) -> Any:
    """A ``DpEvent`` as nested JSON-ready dicts: ``{"type": class name, field: value, …}``."""
    import attr

    if attr.has(type(value)):
        out = {"type": type(value).__name__}
        for field in attr.fields(type(value)):
            out[field.name] = _event_json(getattr(value, field.name))
        return out
    if isinstance(value, Mapping):
        return {str(k): _event_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_event_json(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)):
        return _event_json(value.tolist())
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def from_dp_accounting(
    event: Any, *, name: str | None = None, neighboring_relation: Any = None
) -> Claim:
    """The RDP curve that dp_accounting's RDP accountant gives a ``DpEvent``.

    At whatever orders the claim is evaluated, ``RdpAccountant(orders=λs).compose(event).rdp``
    (dp_accounting ≥ 0.4; its formulas cite e.g. Mironov, Talwar, Zhang, arXiv:1908.10530 for
    the sampled Gaussian). Orders where the accountant's series fails to converge come back as
    +inf (it says so in a warning): nothing is claimed there. λ = ∞ claims nothing.

    Args:
        event: a ``dp_accounting.DpEvent`` (composed, self-composed and sampled events included).
        name: label (default: the event's repr).
        neighboring_relation: ``None`` (``ADD_OR_REMOVE_ONE``, dp_accounting's default), a
            ``dp_accounting.NeighboringRelation`` or its name (``"REPLACE_ONE"`` is needed for
            ``RandomizedResponseDpEvent``).

    Returns:
        A :class:`Claim` of kind ``"dp_accounting"``.

    Raises:
        ImportError: dp_accounting is not installed (``pip install dp-accounting``).
        ValueError: ``event`` is not a ``DpEvent``, or the RDP accountant does not support it
            (the message names the event type and gives dp_accounting's reason).
    """
    dpa = _dp_accounting()
    if not isinstance(event, dpa.DpEvent):
        raise ValueError(f"event must be a dp_accounting.DpEvent; got {event!r}")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string or None; got {name!r}")
    relation = _neighboring_relation(neighboring_relation)
    from dp_accounting.rdp import RdpAccountant

    probe = RdpAccountant(orders=[2.0], neighboring_relation=relation)
    if not probe.supports(event):
        try:
            probe.compose(event)
            reason = "unsupported"
        except Exception as err:  # noqa: BLE001 - UnsupportedEventError carries the reason
            reason = str(err)
        raise ValueError(
            f"event: dp_accounting's RDP accountant does not support {type(event).__name__} "
            f"(neighboring_relation={relation.name}): {reason}"
        )
    return Claim(
        name=name or f"dp_accounting RDP of {event!r}",
        kind="dp_accounting",
        params={"event": _event_json(event), "neighboring_relation": relation.name},
        _source=event,
    )
