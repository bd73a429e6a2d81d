"""Work-arounds for bugs of particular jax/jaxlib releases, applied once when rdpjax is imported.

jaxlib 0.11.1 and 0.11.2, CPU backend: a vmapped bound computation (``lax.map`` over batches of
replications, as in :func:`rdpjax.stream.replicated_bounds`, ``rdpjax coverage`` and the
throughput benchmark) can hang for ever, every thread idle, waiting on XLA's CPU thread pool
(seen on 2 cores at R = 10 replications of n = 1e5; jaxlib 0.10.2, 0.11.0 and 0.12.0 finish the
same program). XLA's ``--xla_cpu_multi_thread_eigen=false`` avoids it; it has to be in
``XLA_FLAGS`` before the CPU backend starts, so rdpjax adds it on import when the backend has
not started yet, and warns when it is too late. It only concerns the CPU backend.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import warnings
from collections.abc import MutableMapping

CPU_POOL_FLAG = "--xla_cpu_multi_thread_eigen=false"
CPU_POOL_HANG_JAXLIB = ("0.11.1", "0.11.2")


def _backends_started() -> bool:
    if "jax" not in sys.modules:  # no backend without jax; and importing it here is slow
        return False
    from jax._src import xla_bridge  # no public equivalent

    return xla_bridge.backends_are_initialized()


def cpu_pool_hang_workaround(
    jaxlib_version: str | None = None,
    environ: MutableMapping[str, str] | None = None,
    backends_started: bool | None = None,
) -> str:
    """Adds :data:`CPU_POOL_FLAG` to ``XLA_FLAGS`` on the jaxlib releases that need it.

    Args:
      jaxlib_version: the installed jaxlib's version (default: read from jaxlib).
      environ: the environment to change (default ``os.environ``).
      backends_started: whether a jax backend has started (default: asked from jax).

    Returns:
      ``"not needed"`` (another jaxlib), ``"already set"`` (the user's ``XLA_FLAGS`` already
      choose ``xla_cpu_multi_thread_eigen``), ``"set"`` (added) or ``"too late"`` (a backend
      had started; a ``UserWarning`` says what to do).
    """
    if jaxlib_version is None:
        try:  # the installed distribution's version, without importing jaxlib
            jaxlib_version = importlib.metadata.version("jaxlib")
        except importlib.metadata.PackageNotFoundError:
            return "not needed"
    if jaxlib_version not in CPU_POOL_HANG_JAXLIB:
        return "not needed"
    environ = os.environ if environ is None else environ
    flags = environ.get("XLA_FLAGS", "")
    if "xla_cpu_multi_thread_eigen" in flags:
        return "already set"
    if _backends_started() if backends_started is None else backends_started:
        warnings.warn(
            f"jaxlib {jaxlib_version} can hang on rdpjax's vmapped computations on the CPU "
            f"(XLA's thread pool). Set XLA_FLAGS={CPU_POOL_FLAG} before jax starts (i.e. "
            "import rdpjax before running any jax computation), or use jaxlib 0.11.0 or "
            ">= 0.12.",
            UserWarning,
            stacklevel=3,
        )
        return "too late"
    environ["XLA_FLAGS"] = f"{flags} {CPU_POOL_FLAG}".strip()
    return "set"
