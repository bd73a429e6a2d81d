"""What ``import rdpjax`` gives a user: the exported names, and the submodules on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import rdpjax


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing imported yet); its stdout, stripped."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_every_exported_name_exists():
    for name in rdpjax.__all__:
        assert getattr(rdpjax, name) is not None, name


def test_submodules_load_on_first_use_and_unknown_names_raise():
    code = (
        "import sys, rdpjax; assert 'rdpjax.search' not in sys.modules; "
        "rdpjax.stream.streamed_bound; rdpjax.search.find_pair; rdpjax.studies.coverage; "
        "rdpjax.stream.draws.BlackBox; rdpjax.auditing.plots.plot_bound_vs_lambda; "
        "assert 'rdpjax.search' in sys.modules and 'stream' in dir(rdpjax); "
        "assert rdpjax.find_pair is rdpjax.search.find_pair; "
        "assert rdpjax.streamed_bound is rdpjax.stream.streamed_bound; "
        "assert rdpjax.coverage is rdpjax.studies.coverage; "
        "assert 'coverage' in dir(rdpjax)"
    )
    _python(code)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        rdpjax.nonexistent  # noqa: B018


def test_import_rdpjax_leaves_scipy_and_optax_unloaded():
    """``import rdpjax`` (and the command line's) pays for jax and numpy, not for what only some
    calls need (scipy's special functions for the exact curves: 0.2 s; optax for paper 003's
    projection and the search; the search itself: 0.24 s). rdpjax.stream is loaded: the audit's
    options hold its StreamOptions (11-15 ms of a 0.9-1.1 s import, python -X importtime)."""
    heavy = ("scipy", "optax", "matplotlib", "dp_accounting", "rdpjax.search")
    code = f"import sys, rdpjax, rdpjax.cli; print([m for m in {heavy} if m in sys.modules])"
    assert _python(code) == "[]"


def test_no_module_is_named_like_a_function_it_exports():
    """``import rdpjax.X as m`` must not be ambiguous between a module and its function."""
    import importlib
    import pkgutil

    clashes = []
    for info in pkgutil.walk_packages(rdpjax.__path__, "rdpjax."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        if info.name.rsplit(".", 1)[1] in getattr(module, "__all__", ()):
            clashes.append(info.name)
    assert not clashes, clashes


def test_the_search_exports_its_option_objects():
    """find_pair's options grouped by concept (issue 46), exported by rdpjax.search."""
    from rdpjax import search

    for name in ("Pairs", "Budget", "Certification"):
        assert name in search.__all__ and getattr(search, name) is getattr(search.config, name)


# The public names of rdpjax/histogram.py and rdpjax/ldp.py before they became packages.
HISTOGRAM_NAMES = {
    "STATUS_EMPTY_BUCKET", "STATUS_OK", "STATUS_OUTSIDE", "HistogramEstimate", "bucket_counts",
    "draw_counts", "estimate_global_ldp", "estimate_global_lrdp", "estimate_ldp", "estimate_lrdp",
    "from_counts", "global_ldp_sample_size", "global_lrdp_sample_size", "ldp_sample_size",
    "lrdp_sample_size",
}  # fmt: skip
LDP_NAMES = {
    "HistogramDensity", "SeriesDensity", "histogram_bins", "histogram_density",
    "multinomial_bitwise_rr", "multinomial_kary_rr", "multinomial_laplace", "multinomial_risk",
    "private_histogram", "private_series", "privatize", "project_simplex", "series_density",
    "series_terms",
}  # fmt: skip


def test_the_histogram_and_ldp_packages_export_the_former_modules_names():
    from rdpjax import histogram, ldp
    from rdpjax.histogram import estimate_ldp
    from rdpjax.ldp import series_risk

    # The former names, and the estimators' option objects (grouped arguments, issue 46).
    assert set(histogram.__all__) == HISTOGRAM_NAMES | {
        "Accuracy",
        "HistogramSettings",
        "Regularity",
    }
    assert set(ldp.__all__) == LDP_NAMES | {"histogram_risk", "series_risk"}
    for module in (histogram, ldp):
        for name in module.__all__:
            assert getattr(module, name) is not None, name
    assert rdpjax.histogram is histogram and estimate_ldp is histogram.algorithms.estimate_ldp
    assert series_risk is rdpjax.ldp.risk.series_risk


def test_no_public_function_takes_more_than_10_parameters():
    """Issue 46: options are grouped in frozen dataclasses (rdpjax.BoundOptions,
    rdpjax.stream.StreamOptions, rdpjax.auditing.AuditOptions, rdpjax.studies.StudyOptions,
    rdpjax.search.Pairs/Budget/Certification, rdpjax.histogram.Accuracy/Regularity/
    HistogramSettings), so no public function or method of a public module takes more than 10
    named parameters (self excluded). A ``**fields`` catch-all is not counted: where there is one
    it names fields of those objects and nothing else (an unknown name is a TypeError,
    tests/test_options.py)."""
    import ast
    from pathlib import Path

    root = Path(rdpjax.__file__).parent
    over = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(part.startswith("_") and part != "__init__.py" for part in parts):
            continue
        scopes = [(ast.parse(path.read_text()), "")]
        while scopes:
            node, owner = scopes.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                    scopes.append((child, f"{owner}{child.name}."))
                elif isinstance(child, ast.FunctionDef) and not child.name.startswith("_"):
                    a = child.args
                    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                    names += [x.arg for x in (a.vararg,) if x is not None]
                    if owner and names[:1] in (["self"], ["cls"]):
                        names = names[1:]
                    if len(names) > 10:
                        over.append(f"{path.name}:{owner}{child.name} ({len(names)})")
    assert not over, over
