"""The package's shape: no module over about 450 lines, no private name (or private module)
imported across subpackages, no import cycle among modules (every import, wherever it stands).

One private package is meant to be shared: ``rdpjax._internal`` (the compiler and runtime tricks,
issue 52). Any package may import its modules, but not their private names; and it sits below
every other package: it imports only itself and the shared top-level internals (:data:`SHARED`).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "rdpjax"
# Shared internals every layer may use (rdpjax/_*.py): scoped precision, the pytree decorator,
# argument checks, JSON helpers, array aliases for annotations, the table printer, the version,
# PRNG keys and the orders drawn from them.
SHARED = {"rdpjax._precision", "rdpjax._pytree", "rdpjax._validation", "rdpjax._json"}
SHARED |= {"rdpjax._typing", "rdpjax._table", "rdpjax._version"}
SHARED |= {"rdpjax._keys"}
INTERNAL = "rdpjax._internal"
"""The tricks' package (buffers, program budget, packed binning, fusion boundary, progress,
sharding, version workarounds): every package may import its modules' public names."""


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, path.name == "__init__.py"


def _package(name: str, is_init: bool) -> str:
    """The subpackage a module belongs to (``rdpjax`` for the top-level modules)."""
    parts = name.split(".")
    if is_init:
        return name
    return ".".join(parts[:2]) if len(parts) > 2 else "rdpjax"


def _top_level_imports(tree):
    """``from rdpjax… import …`` at module level (not inside functions: those are lazy)."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rdpjax"):
            yield node
        if isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING blocks, optional imports
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and (sub.module or "").startswith("rdpjax"):
                    yield sub


def test_no_module_over_450_lines():
    long = {str(p): n for _, p, _ in _modules() if (n := len(p.read_text().splitlines())) > 450}
    assert not long, long


def test_no_private_import_across_subpackages():
    names = {name for name, _, _ in _modules()}
    packages = {name for name, _, init in _modules() if init}
    bad = []
    for name, path, is_init in _modules():
        mine = _package(name, is_init)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rdpjax")):
                continue
            source = node.module
            theirs = source if source in packages else _package(source, False)
            if source in SHARED or theirs == mine or source not in names:
                continue
            # rdpjax._internal.* is private to rdpjax, not to a package: its modules are shared
            private_module = theirs != INTERNAL and any(
                p.startswith("_") for p in source.split(".")[1:]
            )
            private_names = [a.name for a in node.names if a.name.startswith("_")]
            if private_module or private_names:
                bad.append(f"{name} ← {source} {private_names or ''}")
    assert not bad, bad


def test_the_internal_package_imports_nothing_above_it():
    """``rdpjax._internal`` is the bottom layer: its modules import only each other and the
    shared top-level internals (function-level imports included), so that any package may use
    them without a cycle. (A docstring's example, such as the multi-host one of ``sharding``, is
    not an import.)"""
    names = {name for name, _, _ in _modules()}
    bad = []
    for name, path, is_init in _modules():
        if not name.startswith(INTERNAL):
            continue
        tree = ast.parse(path.read_text())
        for module in _imported_modules(name, is_init, tree, names):
            if not (module.startswith(INTERNAL) or module in SHARED):
                bad.append(f"{name} → {module}")
    assert not bad, bad


def _imported_modules(name: str, is_init: bool, tree, names: set[str]):
    """Every rdpjax module that module ``name`` imports, wherever the import stands.

    Module level, inside functions, under ``if``/``try``, relative imports and
    ``importlib.import_module("rdpjax…")`` calls alike; ``from pkg import name`` names the
    submodule ``pkg.name`` when there is one, else ``pkg`` itself (its ``__init__``), so an
    explicit import of a parent package's face counts too.
    """
    package = name.split(".") if is_init else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            if module.split(".")[0] != "rdpjax":
                continue
            for alias in node.names:
                full = f"{module}.{alias.name}"
                yield full if full in names else module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "rdpjax")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
        ):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and str(arg.value).startswith("rdpjax"):
                yield arg.value
            elif isinstance(arg, ast.JoinedStr) and arg.values:
                head = arg.values[0]
                if isinstance(head, ast.Constant) and str(head.value).startswith("rdpjax."):
                    # f"rdpjax.{name}" (a lazy __getattr__): every module that a string constant
                    # of this module names under that prefix
                    words = {c.value for c in ast.walk(tree) if isinstance(c, ast.Constant)}
                    yield from (f"{head.value}{w}" for w in words if f"{head.value}{w}" in names)


def _import_graph() -> dict[str, set[str]]:
    names = {name for name, _, _ in _modules()}
    graph = {}
    for name, path, is_init in _modules():
        tree = ast.parse(path.read_text())
        graph[name] = {m for m in _imported_modules(name, is_init, tree, names) if m in names}
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    """No cycle over every import, function-level ones included: a lazy import may defer a
    cost, never hide a cycle. (A submodule's implicit import of its parents is not an edge;
    an explicit ``import rdpjax`` or ``from rdpjax.pkg import attribute`` is.)"""
    assert not _cycles(_import_graph())


def test_the_cycle_check_sees_function_level_and_relative_imports():
    """The check itself: a cycle closed by an import inside a function, or by a relative one, is
    found (two synthetic modules parsed by the same code)."""
    names = {"rdpjax.a", "rdpjax.b", "rdpjax.pkg", "rdpjax.pkg.c"}
    a = ast.parse("import numpy\nfrom rdpjax.b import f\n")
    b = ast.parse("def f():\n    from rdpjax import a\n")
    c = ast.parse("from . import helper\nfrom .. import a\n")
    graph = {
        "rdpjax.pkg": set(),
        "rdpjax.a": set(_imported_modules("rdpjax.a", False, a, names)),
        "rdpjax.b": set(_imported_modules("rdpjax.b", False, b, names)),
        "rdpjax.pkg.c": set(_imported_modules("rdpjax.pkg.c", False, c, names)),
    }
    assert graph == {
        "rdpjax.pkg": set(),
        "rdpjax.a": {"rdpjax.b"},
        "rdpjax.b": {"rdpjax.a"},
        "rdpjax.pkg.c": {"rdpjax.pkg", "rdpjax.a"},
    }
    assert _cycles(graph) == [["rdpjax.a", "rdpjax.b"]]


def test_estimator_fully_annotated():
    """Every top-level function and method of rdpjax/estimator/*.py annotates each parameter
    (but ``self``/``cls``) and its return value; functions nested in functions are exempt."""
    missing = []
    for path in sorted((ROOT / "estimator").glob("*.py")):
        tree = ast.parse(path.read_text())
        nested = {
            id(inner)
            for outer in ast.walk(tree)
            if isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef)
            for inner in ast.walk(outer)
            if inner is not outer and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or id(node) in nested:
                continue
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            bare = [
                p.arg for p in params if p and p.annotation is None and p.arg not in ("self", "cls")
            ]
            if bare or node.returns is None:
                missing.append(f"{path.name}:{node.lineno} {node.name} {bare}")
    assert not missing, missing
