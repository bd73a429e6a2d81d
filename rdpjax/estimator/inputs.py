"""The bound's inputs: samples checked and copied to the device, the options every plan shares.

Used by :mod:`rdpjax.estimator.api` (``plan_bound``, ``lower_bound``) and by the streamed and
black-box pipelines (:mod:`rdpjax.stream`, :mod:`rdpjax.stream.blackbox`), so that every entry point
rejects the same inputs with the same messages, before anything is traced.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.typing import DTypeLike

from rdpjax._typing import Array, ArrayLike
from rdpjax._validation import check_orders
from rdpjax.estimator.settings import Defaults

__all__ = [
    "as_samples",
    "finite_extremes",
    "to_device",
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


ALIGN = 64  # bytes
KEEP_BYTES = 2**29
"""Host buffers of :func:`to_device` kept for reuse, at most this many bytes in all (512 MiB)."""
_KEEP_FROM = 2**22  # only buffers of 4 MiB or more are kept: smaller ones cost little to fault in
_kept: list[np.ndarray] = []  # most recently used last
_lock = threading.Lock()  # guards _kept


def _host_buffer(nbytes: int) -> np.ndarray:
    """A ``uint8`` buffer of ``nbytes + ALIGN`` bytes that nothing else refers to.

    A fresh buffer's pages are faulted in (and zeroed) by the kernel on first write: about half
    the cost of copying 10^7 float32 samples into it (2.6 of 4.3 ms a side on the 2-core CPU).
    So buffers of 4 MiB or more are kept (at most :data:`KEEP_BYTES` in all) and handed out again
    once nothing refers to them any more: jax holds a reference to the array it shares until its
    own buffer is freed, so a kept buffer whose only references are the list's is free.
    """
    size = nbytes + ALIGN
    if nbytes < _KEEP_FROM or size > KEEP_BYTES:
        return np.empty(size, np.uint8)
    with _lock:
        for i in range(len(_kept)):
            # references: the list's and getrefcount's argument (no loop variable holds one)
            if _kept[i].nbytes == size and sys.getrefcount(_kept[i]) <= 2:
                _kept.append(_kept.pop(i))
                return _kept[-1]
        raw = np.empty(size, np.uint8)
        _kept.append(raw)
        while sum(b.nbytes for b in _kept) > KEEP_BYTES:
            _kept.pop(0)
        return raw


def _aligned_copy(x: np.ndarray, dtype: DTypeLike, rows: int | None, fill: float) -> np.ndarray:
    """A 64-byte aligned ``dtype`` array of :func:`_host_buffer` for ``x``'s rows.

    It has ``rows`` rows (default ``len(x)``), those past ``len(x)`` set to ``fill``; the caller
    copies ``x`` into the first ones.
    """
    dtype = np.dtype(dtype)
    shape = (x.shape[0] if rows is None else rows, *x.shape[1:])
    nbytes = math.prod(shape) * dtype.itemsize
    raw = _host_buffer(nbytes)
    start = -raw.ctypes.data % ALIGN
    out = raw[start : start + nbytes].view(dtype).reshape(shape)
    del raw  # `out` refers to it; jax's reference to `out` keeps it from being handed out again
    out[x.shape[0] :] = fill
    return out


def _to_jax(out: np.ndarray, sharding: jax.sharding.Sharding | None) -> Array:
    """``out`` to jax (shared, not copied, on the CPU), laid out by ``sharding`` if given."""
    return jax.device_put(out) if sharding is None else jax.device_put(out, sharding)


def to_device(
    x: np.ndarray,
    dtype: DTypeLike,
    rows: int | None = None,
    fill: float = 0,
    sharding: jax.sharding.Sharding | None = None,
) -> Array:
    """Host samples → jax array, in one copy.

    The array is padded with ``fill`` rows up to ``rows``, and laid out by ``sharding`` when
    given (e.g. split over the devices that will bin them).

    ``jnp.asarray`` of a large NumPy array is slow on the CPU backend (0.13 s for 1e7 float64
    with jax 0.10.2, against 0.017 s for a NumPy copy), while ``jax.device_put`` of a 64-byte
    aligned array shares its memory there instead of copying it. So the samples are copied (and
    converted) once into an aligned buffer that nothing else refers to (a fresh one, or a large
    one kept from an earlier call whose arrays are gone: :func:`_host_buffer`), and handed to
    jax; on other backends ``device_put`` copies it to the device as usual.
    """
    out = _aligned_copy(x, dtype, rows, fill)
    np.copyto(out[: x.shape[0]], x, casting="unsafe")  # the caller has checked the values
    return _to_jax(out, sharding)


COPY_BLOCK = 2**16
"""Rows a block in :func:`to_device_with_extremes`: 1e7 float32 copied with their extremes
took 2.6 ms in blocks of 2^16 rows against 3.0 (2^15), 2.8 (2^17), 2.9 (2^18) and 3.5 ms for
the whole array's min, max and copy one after the other (2-core CPU, best of 41)."""


def to_device_with_extremes(
    x: np.ndarray,
    name: str,
    dtype: DTypeLike,
    rows: int | None = None,
    fill: float = 0,
    sharding: jax.sharding.Sharding | None = None,
) -> tuple[Array, tuple[np.ndarray, np.ndarray]]:
    """:func:`to_device` of floating samples and their :func:`finite_extremes`, in one pass.

    The copy goes block by block, each block's min and max read back while it is in the cache,
    instead of two more passes over the input in memory. The extremes are those of the copy in
    ``dtype``, which holds every floating input value exactly when ``dtype`` is at least as wide
    (the callers' float32 → float32 or float64, anything else → float64).

    Raises:
      ValueError: if any value is NaN or infinite (as :func:`finite_extremes`).
    """
    out = _aligned_copy(x, dtype, rows, fill)
    x2, out2 = x.reshape(len(x), -1), out.reshape(len(out), -1)
    lo = np.full(x2.shape[1], np.inf, out.dtype)
    hi = np.full(x2.shape[1], -np.inf, out.dtype)
    for start in range(0, len(x2), COPY_BLOCK):
        rows_in = x2[start : start + COPY_BLOCK]
        block = out2[start : start + len(rows_in)]  # not the padding past len(x)
        np.copyto(block, rows_in, casting="unsafe")
        np.minimum(lo, block.min(0), out=lo)  # NaN propagates, as it does through min
        np.maximum(hi, block.max(0), out=hi)
    extremes = _checked(x, lo, hi, name)
    return _to_jax(out, sharding), extremes


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
    try:
        alpha = float(alpha)
    except (TypeError, ValueError) as err:
        raise ValueError(f"alpha must be a number in (0, 0.5); got {alpha!r}.") from err
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be a number in (0, 0.5); got {alpha!r}.")
    if variance not in ("autodiff", "eq18"):
        raise ValueError(f"variance must be 'autodiff' or 'eq18'; got {variance!r}.")
    return dict(
        lam=jax.device_put(np.asarray(lam, dtype=jax.dtypes.canonicalize_dtype(float))),
        alpha=jax.device_put(np.asarray(alpha, dtype=jax.dtypes.canonicalize_dtype(float))),
        floor=check_positive(floor, "floor", scalar=True),
        beta=check_positive(beta, "beta", scalar=True),
        discrete=bool(discrete),
        both_directions=bool(both_directions),
        variance=variance,
        second_order=bool(second_order),
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
