"""jax's persistent compilation cache: on by default for the ``rdpjax`` command, opt-in for code.

Most of a one-off command's wall time is XLA compilation, paid again by every run. The command
(the ``rdpjax`` script and ``python -m rdpjax.cli``, not :func:`rdpjax.cli.main` called from a
program, whose jax settings are the program's own) therefore keeps compiled programs in a
folder that later runs read back; a script or notebook opts in with
``rdpjax.enable_compilation_cache()`` before its first bound:

* where: ``$RDPJAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/rdpjax/jax``, else
  ``~/.cache/rdpjax/jax``; a ``JAX_COMPILATION_CACHE_DIR`` already set is left to jax;
* off: ``RDPJAX_NO_CACHE=1`` (or any value but ``0`` and the empty string);
* shared safely: the cache is bounded (:data:`MAX_BYTES`, least recently used entries evicted),
  which makes jax read and write it under a file lock (``jax._src.lru_cache.LRUCache`` with
  ``filelock``), so two commands running at once never see a half-written entry;
* never fatal: a folder that cannot be created leaves the command uncached.

Only XLA's compiled programs are kept: a warm run still traces and lowers each jitted function
(about 1.5 s of ``rdpjax reproduce --quick``), but nothing it finds in the cache can be stale,
since jax keys each entry on the lowered program itself.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["MAX_BYTES", "cache_dir", "enable_compilation_cache"]

MAX_BYTES = 2**31
"""Upper bound on the cache folder's size (2 GiB); jax evicts the least recently used entries."""


def cache_dir() -> Path:
    """The folder the command's compilation cache lives in (module docstring)."""
    if os.environ.get("RDPJAX_CACHE_DIR"):
        return Path(os.environ["RDPJAX_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rdpjax" / "jax"


def _disabled() -> bool:
    return os.environ.get("RDPJAX_NO_CACHE", "") not in ("", "0")


def enable_compilation_cache() -> Path | None:
    """Point jax's persistent compilation cache at :func:`cache_dir`, before any compilation.

    Programs compiled before the call are not cached; the setting is process-wide (it is jax's).

    Returns:
      The folder in use (the user's ``JAX_COMPILATION_CACHE_DIR`` when set), or ``None`` when the
      cache is off or its folder cannot be created.
    """
    if _disabled():
        return None
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):  # the user's own cache, as they set it up
        return Path(os.environ["JAX_COMPILATION_CACHE_DIR"])
    try:
        import filelock  # noqa: F401  (jax locks a bounded cache with it)
    except ImportError:
        return None
    path = cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    import jax

    jax.config.update("jax_compilation_cache_dir", str(path))
    # Every program: those of a bound take 0.1-3 s each on 2 cores, below jax's 1 s default.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)  # bounded, so file-locked
    return path
