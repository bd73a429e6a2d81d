"""The bound's inputs: samples checked and copied to the device, the options every plan shares.

Used by :mod:`rdpjax.estimator.api` (``plan_bound``, ``lower_bound``) and by the streamed and
black-box pipelines (:mod:`rdpjax.stream`, :class:`rdpjax.stream.BlackBox`), so that every entry
point rejects the same inputs with the same messages, before anything is traced. The copy itself
(aligned host buffers that jax shares, the large ones kept for reuse) is a runtime trick:
:mod:`rdpjax._internal.buffers`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.typing import DTypeLike

from rdpjax._internal.buffers import copy_with_extremes, to_jax
from rdpjax._typing import Array, ArrayLike
from rdpjax._validation import check_flag, check_level, check_orders
from rdpjax.estimator.settings import Defaults

__all__ = [
    "as_samples",
    "finite_extremes",
    "to_device_with_extremes",
    "check_positive",
    "plan_options",
    "check_bandwidth",
    "check_grid_size",
]


def as_samples(x: ArrayLike, name: str) -> np.ndarray:
    """``x`` as a numpy array of samples, or a ``ValueError`` naming ``name``.

    Samples are numeric (bool, integer or float), of shape ``(n,)`` or ``(n, d)`` with n ≥ 2 and
    d ≥ 1.
    """
    try:
        arr = np.asarray(x)
    except Exception as err:  # noqa: BLE001 - report any conversion failure the same way
        raise ValueError(f"{name} could not be converted to an array: {err}") from err
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric (got dtype {arr.dtype}).")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (n,) or (n, d); got shape {arr.shape}.")
    if arr.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 samples; got {arr.shape[0]}.")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} has zero columns.")
    return arr


def finite_extremes(arr: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-axis ``(min, max)`` of checked samples (:func:`as_samples`) as float64 ``(d,)`` arrays.

    Raises ``ValueError`` if any value is NaN or infinite.

    The extremes are taken in the input's dtype (exact; no wrap-around for small ints), and
    they decide finiteness: min and max propagate NaN and reach ±inf, so two reductions with no
    boolean temporary replace ``np.isfinite`` over every value (a third of its cost at 1e7).
    """
    arr2 = arr.reshape(len(arr), -1)
    return _checked(arr, arr2.min(0), arr2.max(0), name)


def _checked(
    arr: np.ndarray, lo: np.ndarray, hi: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` as float64, or a ``ValueError`` with the number of non-finite values."""
    lo, hi = lo.astype(np.float64), hi.astype(np.float64)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        bad = int(np.sum(~np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} non-finite value(s) (NaN or inf).")
    return lo, hi


def to_device_with_extremes(
    x: np.ndarray,
    name: str,
    dtype: DTypeLike,
    rows: int | None = None,
    fill: float = 0,
    sharding: jax.sharding.Sharding | None = None,
) -> tuple[Array, tuple[np.ndarray, np.ndarray]]:
    """Floating samples copied to jax (:mod:`rdpjax._internal.buffers`) and their extremes.

    One pass: the extremes are those of :func:`finite_extremes`, read block by block during the
    copy (:func:`rdpjax._internal.buffers.copy_with_extremes`) and checked before jax gets it.

    Raises:
      ValueError: if any value is NaN or infinite (as :func:`finite_extremes`).
    """
    out, lo, hi = copy_with_extremes(x, dtype, rows, fill)
    extremes = _checked(x, lo, hi, name)
    return to_jax(out, sharding), extremes


def check_positive(
    value: ArrayLike | None, name: str, *, scalar: bool = False
) -> np.ndarray | None:
    """``value`` as a float64 array, finite and > 0 (one number with ``scalar``), or ``None``.

    ``None`` is returned as it is; anything else raises a ``ValueError`` naming ``name``.
    """
    if value is None:
        return None
    try:
        arr = np.asarray(value, np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a positive number; got {value!r}.") from err
    if scalar and arr.ndim != 0:
        raise ValueError(f"{name} must be a single number; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0; got {value!r}.")
    return arr


def plan_options(
    lam: ArrayLike | Sequence[float],
    *,
    alpha: float,
    floor: ArrayLike | None,
    beta: ArrayLike | None,
    discrete: bool,
    both_directions: bool,
    variance: str,
    second_order: bool,
    defaults: Defaults,
) -> dict[str, Any]:
    """Validate the options every plan shares.

    Returns the keyword arguments of :class:`BoundPlan` other than the layout and the bandwidth.
    """
    lam = check_orders(lam)
    alpha = check_level(alpha)
    if variance not in ("autodiff", "eq18"):
        raise ValueError(f"variance must be 'autodiff' or 'eq18'; got {variance!r}.")
    return dict(
        lam=jax.device_put(np.asarray(lam, dtype=jax.dtypes.canonicalize_dtype(float))),
        alpha=jax.device_put(np.asarray(alpha, dtype=jax.dtypes.canonicalize_dtype(float))),
        floor=check_positive(floor, "floor", scalar=True),
        beta=check_positive(beta, "beta", scalar=True),
        discrete=bool(discrete),
        both_directions=check_flag(both_directions, "both_directions"),
        variance=variance,
        second_order=check_flag(second_order, "second_order"),
        defaults=defaults,
    )


def check_bandwidth(bandwidth: ArrayLike | None, d: int) -> np.ndarray | None:
    """The bandwidth checked by :func:`check_positive`, with 1 or ``d`` entries, or ``None``."""
    bandwidth = check_positive(bandwidth, "bandwidth")
    if bandwidth is not None and bandwidth.size not in (1, d):
        raise ValueError(f"bandwidth must be a scalar or have {d} entries; got {bandwidth.size}.")
    return bandwidth


def check_grid_size(grid_size: int | None) -> None:
    """Raise ``ValueError`` unless ``grid_size`` is ``None`` or an integer ≥ 8 (not a bool)."""
    if grid_size is not None and (
        isinstance(grid_size, bool) or int(grid_size) != grid_size or grid_size < 8
    ):
        raise ValueError(f"grid_size must be an integer ≥ 8; got {grid_size!r}.")


def check_finite_bound(bound: Any) -> None:
    """``ValueError`` when a :class:`~rdpjax.estimator.bound_plan.Bound` is not finite.

    Its estimate, lower bound or standard error: the message says why — a floor τ that is 0 or
    infinite (outputs whose density leaves float64: magnitudes near ``10^±300`` over several
    axes) or the samples too far apart for the floor.
    """
    floor = float(np.asarray(bound.floor))
    for name in ("estimate", "lower", "std_error"):
        if np.all(np.isfinite(np.asarray(getattr(bound, name)))):
            continue
        if floor == 0 or not math.isfinite(floor):
            raise ValueError(
                f"the {name} is not finite: the outputs' magnitude puts their density beyond "
                f"float64 (the floor τ is {floor:.3g}); rescale them by a constant first (the "
                "bound does not depend on the outputs' units)."
            )
        raise ValueError(
            f"the {name} is not finite: the samples are too far apart for the floor "
            f"τ={floor:.3g} (try a larger floor or bandwidth)."
        )
