"""The package's shape: no module over about 450 lines, no private name (or private module)
imported across subpackages, no import cycle among modules (static, module-level imports)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "rdpjax"
# Shared internals every layer may use (rdpjax/_*.py): scoped precision, the pytree decorator,
# argument checks, JSON helpers, version workarounds, array aliases for annotations, the table
# printer, the CPU fusion boundary.
SHARED = {"rdpjax._precision", "rdpjax._pytree", "rdpjax._validation", "rdpjax._json"}
SHARED |= {"rdpjax._workarounds", "rdpjax._typing", "rdpjax._table", "rdpjax._fusion"}


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
            private_module = any(p.startswith("_") for p in source.split(".")[1:])
            private_names = [a.name for a in node.names if a.name.startswith("_")]
            if private_module or private_names:
                bad.append(f"{name} ← {source} {private_names or ''}")
    assert not bad, bad


def test_no_import_cycle():
    graph = {}
    names = {name for name, _, _ in _modules()}
    for name, path, _ in _modules():
        edges = set()
        for node in _top_level_imports(ast.parse(path.read_text())):
            for alias in node.names:  # `from rdpjax.pkg import module` names a module
                full = f"{node.module}.{alias.name}"
                edges.add(full if full in names else node.module)
        graph[name] = {e for e in edges if e in names and e != name}
    # A package's __init__ re-exporting its own modules is the face, not a cycle.
    for name in graph:
        graph[name] = {e for e in graph[name] if not name.startswith(e + ".")}
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(" → ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, cycles


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
