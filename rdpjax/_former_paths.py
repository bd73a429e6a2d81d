"""Former import paths of renamed modules, kept working.

No module is named like a function it exports (``rdpjax.audit`` is the function, so its module
is ``rdpjax.auditing``; ``rdpjax.reproduction`` holds ``reproduce``). Code written against the
former paths (``from rdpjax.audit import AuditReport``, ``from rdpjax.reproduce import
reproduce``) still imports: :class:`FormerPaths` on ``sys.meta_path`` answers a former name
with the module itself, loaded on first use, so that the alias costs nothing at ``import
rdpjax``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
from collections.abc import Sequence
from types import ModuleType

__all__ = ["RENAMED", "FormerPaths"]

RENAMED = {"rdpjax.audit": "rdpjax.auditing", "rdpjax.reproduce": "rdpjax.reproduction"}
"""Former module name → current module name."""


class FormerPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Find a former module name (:data:`RENAMED`) and load it as its current module."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for a former name, else ``None`` (the other finders go on)."""
        if fullname not in RENAMED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The current module (imported now if it was not)."""
        module = importlib.import_module(RENAMED[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run; undo the import system's relabelling of the module's spec."""
        module.__spec__ = self._specs.pop(module.__name__, module.__spec__)
