"""Traced programs kept on disk, so that a warm command skips tracing and lowering.

jax's persistent compilation cache (:mod:`rdpjax.compilation_cache`) saves XLA's compilation,
but every process still traces each jitted function in Python and lowers it to StableHLO
before it can look the compiled program up. For the bound that is most of a warm command's
wall time: ``rdpjax reproduce --quick`` with a warm compilation cache spent 1.5 s of its 6 s
tracing and lowering its nine bound programs. This module keeps those programs as
:mod:`jax.export` artifacts next to the compilation cache: a later process deserializes one
(under a millisecond), lowers the small call into it (about 16 ms instead of 0.2-0.3 s of
tracing and lowering) and finds its compiled executable in the compilation cache.

It is on exactly when the compilation cache is (:func:`enable_program_cache`, which
:func:`rdpjax.enable_compilation_cache` calls: by default for the command line, opt-in for
code) and is used for the programs that trace slowly and whose inputs are plain data
(:func:`call`). An artifact is found again only under the same key, which holds everything
the traced program depends on:

* the program's module and name, the static arguments, the input pytree's structure (with its static
  fields, which must be plain data: numbers, strings, tuples, frozen dataclasses of them;
  anything else, e.g. a function, is not cached), and each input's shape, dtype and sharding;
* the source of every rdpjax module, the versions of jax, jaxlib and numpy, the jax settings that
  change a trace (``jax_enable_x64``, matmul precision, dtype promotion, PRNG) and the
  devices.

Module-level settings of rdpjax changed at run time by assignment are not part of the key:
a program that reads one would be found stale; turn the cache off (``RDPJAX_NO_CACHE=1``) in
a process that changes them. Artifacts are written atomically (a temporary file renamed into
place), so two processes sharing the folder never read half an artifact; an unreadable one
is rebuilt. The folder holds at most :data:`MAX_PROGRAMS` artifacts (the least
recently used are deleted).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import functools
import hashlib
import importlib.util
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any, cast

import jax
import numpy as np
from jax.core import Tracer

__all__ = ["MAX_PROGRAMS", "call", "enable_program_cache", "program_folder"]

MAX_PROGRAMS = 512
"""Artifacts kept in the folder (about 40-200 kB each); the least recently used go first."""

_MEMO_SIZE = 64
"""Deserialized programs a process keeps (each with its compiled executable), like
:data:`rdpjax.estimator.PROGRAM_BUDGET`."""

_MAGIC = b"rdpjax-program-1\n"
_SETTINGS = (
    "jax_enable_x64",
    "jax_default_matmul_precision",
    "jax_numpy_dtype_promotion",
    "jax_numpy_rank_promotion",
    "jax_default_prng_impl",
    "jax_threefry_partitionable",
)

_folder: Path | None = None
_memo: collections.OrderedDict[Any, Any] = collections.OrderedDict()
_UNEXPORTABLE = object()


class _NotPlain(Exception):
    """A static value whose text would not identify it (a function, an arbitrary object)."""


def enable_program_cache(folder: Path | str | None) -> Path | None:
    """Keep traced programs in ``folder`` (created if needed); ``None`` turns the cache off.

    Returns:
      The folder in use, or ``None`` when off: ``folder`` was ``None``, cannot be created, or
      jax's serialization (the ``flatbuffers`` package) is missing.
    """
    global _folder
    _folder = None
    _memo.clear()
    if folder is None:
        return None
    if importlib.util.find_spec("flatbuffers") is None:  # what jax.export serializes with
        return None
    path = Path(folder).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    _folder = path
    return path


def program_folder() -> Path | None:
    """The folder in use, or ``None`` when the cache is off."""
    return _folder


def call(program: Callable[..., Any], *args: Any, **static: Any) -> Any:
    """``program(*args, **static)``, through a kept artifact when the cache is on.

    ``program`` is a jitted function whose keyword arguments are its static ones. Without the
    cache, inside a trace, across several processes, or with inputs whose static fields are not
    plain data, this is the plain call. Results are the plain call's (the same StableHLO).
    """
    if _folder is None or jax.process_count() > 1:
        return program(*args, **static)
    leaves, tree = cast(tuple[list[Any], Any], jax.tree.flatten(args))
    if any(isinstance(x, Tracer) for x in leaves):
        return program(*args, **static)
    try:
        specs = [_spec(x) for x in leaves]
        key = (
            getattr(program, "__module__", None),
            getattr(program, "__qualname__", repr(program)),
            _describe(tree),
            tuple((s.shape, str(s.dtype), s.weak_type, _describe(s.sharding)) for s in specs),
            tuple(sorted((k, _describe(v)) for k, v in static.items())),
        )
    except _NotPlain:
        return program(*args, **static)
    entry = _memo.get(key)
    if entry is None:
        entry = _load_or_export(program, key, tree, specs, static)
        _memo[key] = entry
        while len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
    else:
        _memo.move_to_end(key)
    if entry is _UNEXPORTABLE:
        return program(*args, **static)
    run, out_tree = entry
    return jax.tree.unflatten(out_tree, run(*leaves))


def _spec(x: Any) -> jax.ShapeDtypeStruct:
    aval = jax.typeof(x)
    sharding = getattr(x, "sharding", None) if isinstance(x, jax.Array) else None
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=sharding)


def _describe(value: Any) -> str:
    """Text that identifies ``value`` (a static argument or a pytree structure), or _NotPlain."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, (tuple, list, frozenset)):
        parts = [_describe(v) for v in cast(Iterable[Any], value)]
        parts = sorted(parts) if isinstance(value, frozenset) else parts
        return f"{type(cast(Any, value)).__name__}({', '.join(parts)})"
    if isinstance(value, jax.tree_util.PyTreeDef):
        tree: Any = value
        if tree.num_nodes == 1 and tree.num_leaves == 1:
            return "*"
        node, children = tree.node_data(), tree.children()
        kind = "None" if node is None else f"{node[0].__module__}.{node[0].__qualname__}"
        aux = "" if node is None else _describe(node[1])
        return f"{kind}[{aux}]({', '.join(_describe(c) for c in children)})"
    if isinstance(value, jax.sharding.Mesh):
        devices: Any = value.devices
        ids = [d.id for d in devices.flat]
        return f"Mesh({value.axis_names}, {devices.shape}, {ids})"
    if isinstance(value, jax.sharding.NamedSharding):
        return f"NamedSharding({_describe(value.mesh)}, {value.spec}, {value.memory_kind})"
    if isinstance(value, jax.sharding.SingleDeviceSharding):
        device: Any = next(iter(cast(Any, value).device_set))
        return f"SingleDevice({device.id}, {value.memory_kind})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        fields = (f"{name}={_describe(getattr(value, name))}" for name in names)
        return f"{type(value).__module__}.{type(value).__qualname__}({', '.join(fields)})"
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value).items()
        return f"dict({', '.join(f'{_describe(k)}: {_describe(v)}' for k, v in items)})"
    raise _NotPlain(type(value).__name__)


def _load_or_export(
    program: Callable[..., Any],
    key: tuple[Any, ...],
    tree: Any,
    specs: list[jax.ShapeDtypeStruct],
    static: dict[str, Any],
) -> Any:
    """The jitted call of the kept artifact for ``key`` (exported now if there is none)."""
    digest = hashlib.sha256(repr((_environment(), key)).encode()).hexdigest()[:40]
    path = cast(Path, _folder) / f"{digest}.program"
    found = _read(path)
    if found is None:
        out_tree: list[Any] = []

        def flat(*leaves: Any) -> list[Any]:
            out: Any = program(*jax.tree.unflatten(tree, leaves), **static)
            out_leaves, structure = cast(tuple[list[Any], Any], jax.tree.flatten(out))
            out_tree.append(structure)
            return out_leaves

        try:
            exported = jax.export.export(jax.jit(flat))(*specs)
            found = (exported, out_tree[0])
            blob = _MAGIC + pickle.dumps((out_tree[0], bytes(exported.serialize())))
        except Exception:  # a program export cannot carry (callbacks, …): uncached, as before
            return _UNEXPORTABLE
        _write(path, blob)
    exported, out_tree = found
    return jax.jit(exported.call), out_tree


def _read(path: Path) -> tuple[Any, Any] | None:
    try:
        blob = path.read_bytes()
        if not blob.startswith(_MAGIC):
            return None
        out_tree, data = pickle.loads(blob[len(_MAGIC) :])
        exported = jax.export.deserialize(bytearray(data))
        os.utime(path)  # recently used
        return exported, out_tree
    except Exception:  # missing, half-written by a crash, or from another version: rebuilt
        return None


def _write(path: Path, blob: bytes) -> None:
    """``blob`` into ``path`` atomically, then the least recently used beyond the count deleted."""
    temporary = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as f:
            temporary = f.name
            f.write(blob)
        os.replace(temporary, path)
    except OSError:  # a full or read-only disk leaves the program uncached
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        return
    kept = sorted(path.parent.glob("*.program"), key=_mtime)
    for old in kept[: max(0, len(kept) - MAX_PROGRAMS)]:
        with contextlib.suppress(OSError):
            old.unlink()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


@functools.cache
def _fixed_environment() -> tuple[Any, ...]:
    """What cannot change in a process: rdpjax's source, jax's versions, the devices."""
    source = hashlib.sha256()
    root = Path(__file__).parent
    for module in sorted(root.rglob("*.py")):
        source.update(str(module.relative_to(root)).encode())
        source.update(module.read_bytes())
    devices = tuple((d.platform, d.device_kind, d.id) for d in cast(list[Any], jax.devices()))
    return (source.hexdigest(), jax.__version__, version("jaxlib"), np.__version__, devices)


def _environment() -> tuple[Any, ...]:
    """What every key shares: :func:`_fixed_environment` and the jax settings of a trace."""
    return (*_fixed_environment(), tuple(str(getattr(jax.config, n, None)) for n in _SETTINGS))
