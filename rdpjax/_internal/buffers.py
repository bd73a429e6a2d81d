"""Host samples to jax in one copy: aligned host buffers, the large ones kept for reuse.

``jnp.asarray`` of a large NumPy array is slow on the CPU backend, while ``jax.device_put`` of a
64-byte aligned array shares its memory there. So samples are copied (and converted) once into an
aligned buffer that nothing else refers to and handed to jax (:func:`to_device`); large buffers are
kept and handed out again once jax has let them go, which :func:`_host_buffer` reads from
``sys.getrefcount``. :func:`copy_with_extremes` reads the samples' extremes during that copy, block
by block; the checks on them stay with the bound's inputs (:mod:`rdpjax.estimator.inputs`).
Moved here from ``rdpjax/estimator/inputs.py`` (issue 52: tricks in one internal package).
"""

from __future__ import annotations

import math
import sys
import threading

import jax
import numpy as np
from jax.typing import DTypeLike

from rdpjax._typing import Array

__all__ = ["ALIGN", "COPY_BLOCK", "KEEP_BYTES", "copy_with_extremes", "to_device", "to_jax"]

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


def to_jax(out: np.ndarray, sharding: jax.sharding.Sharding | None) -> Array:
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
    return to_jax(out, sharding)


COPY_BLOCK = 2**16
"""Rows a block in :func:`copy_with_extremes`: 1e7 float32 copied with their extremes
took 2.6 ms in blocks of 2^16 rows against 3.0 (2^15), 2.8 (2^17), 2.9 (2^18) and 3.5 ms for
the whole array's min, max and copy one after the other (2-core CPU, best of 41)."""


def copy_with_extremes(
    x: np.ndarray, dtype: DTypeLike, rows: int | None = None, fill: float = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(out, lo, hi)``: the aligned copy of :func:`to_device`, not yet jax's, and its extremes.

    The copy goes block by block, each block's min and max read back while it is in the cache,
    instead of two more passes over the input in memory. ``lo`` and ``hi`` are the per-axis
    extremes of the copy in ``dtype`` (``(d,)``, in that dtype; NaN propagates, as through
    ``min``), which holds every floating input value exactly when ``dtype`` is at least as wide
    (the callers' float32 → float32 or float64, anything else → float64). Hand ``out`` to
    :func:`to_jax` once the extremes are checked.
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
    return out, lo, hi
