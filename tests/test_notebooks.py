"""The notebooks run end to end (at a small n) in a kernel on this Python interpreter.

Each notebook but ``canaries_dpsgd.ipynb`` (fixed, small settings) reads its sample size from
``RDPJAX_NOTEBOOK_N``; the tests set it to 20000 and fail on any cell error. The kernel is
started from an explicit kernel spec whose command is
``sys.executable``, so it is this virtual environment's Python whatever kernels are installed
globally; a final probe cell checks that.

To re-execute the stored notebooks in place (outputs at n = 1e5, as committed)::

    .venv/bin/python tests/test_notebooks.py            # or RDPJAX_NOTEBOOK_N=... to change n
    .venv/bin/python tests/test_notebooks.py dpsgd.ipynb    # only the notebooks named
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # five kernels, each running a notebook end to end

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")  # the notebooks draw figures (matplotlib is in the bench extra)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = (
    "quickstart.ipynb",
    "paper_000.ipynb",
    "pair_search.ipynb",
    "dpsgd.ipynb",
    "canaries_dpsgd.ipynb",
)
FIXED_SIZE = ("canaries_dpsgd.ipynb",)  # one training run and 100 + 100: no n to override
TEST_N = "20000"
STORED_N = "100000"
# Cells run without a time limit (nbclient: None), waited for as an in-process test would be: a
# limit would fail the test on a machine that is merely loaded. The kernels' start (nbclient's
# default limit is 60 s, for four kernels starting at once) has a generous hang guard. A kernel
# that dies is reported at once either way (nbclient's DeadKernelError).
CELL_TIMEOUT_S = None
KERNEL_START_TIMEOUT_S = 1800
PROBE = "import sys; print(sys.executable)"


def _kernel_manager(spec_root: Path):
    """A kernel manager for a kernel spec that runs ``sys.executable -m ipykernel_launcher``."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec_dir = spec_root / "kernels" / "rdpjax-this-python"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "rdpjax (this Python)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(spec_root / "kernels")])
    return KernelManager(kernel_name="rdpjax-this-python", kernel_spec_manager=specs)


def _client(path: Path, workdir: Path, *, probe: bool = False):
    """A client that runs the notebook at ``path`` in ``workdir`` (the kernel's cwd).

    The sample size comes from ``RDPJAX_NOTEBOOK_N`` in this process's environment (the kernel
    inherits it). With ``probe``, a last cell prints the kernel's ``sys.executable``.
    """
    nb = nbformat.read(path, as_version=4)
    if probe:
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    return nbclient.NotebookClient(
        nb,
        km=_kernel_manager(workdir / ".kernelspec"),
        timeout=CELL_TIMEOUT_S,
        startup_timeout=KERNEL_START_TIMEOUT_S,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": str(workdir)}},
    )


def execute_all(paths, workdirs, *, probe: bool = False) -> list:
    """Execute notebooks concurrently, one kernel each (compilation is mostly single-threaded,
    so two kernels use two cores). Returns, per notebook, the executed notebook or the
    exception it raised (``nbclient.exceptions.CellExecutionError`` on a cell error)."""
    clients = [_client(p, w, probe=probe) for p, w in zip(paths, workdirs, strict=True)]

    async def run_all():
        runs = (client.async_execute() for client in clients)
        return await asyncio.gather(*runs, return_exceptions=True)

    return asyncio.run(run_all())


def _selected(session) -> tuple[str, ...]:
    """The notebooks whose ``test_notebook_runs`` is among the tests to run (``-k`` respected)."""
    chosen = {
        item.callspec.params["name"]
        for item in session.items
        if getattr(item, "originalname", None) == "test_notebook_runs" and hasattr(item, "callspec")
    }
    return tuple(name for name in NAMES if name in chosen)


@pytest.fixture(scope="module")
def executed(request, tmp_path_factory):
    """The selected notebooks executed at n = ``TEST_N`` with the inline figure backend."""
    names = _selected(request.session)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RDPJAX_NOTEBOOK_N", TEST_N)
        # The notebooks run as a user runs them: numpy-style rank promotion and jax's standard
        # dtype promotion (the suite raises on both, conftest.py, for rdpjax's own code).
        mp.delenv("JAX_NUMPY_RANK_PROMOTION", raising=False)
        mp.delenv("JAX_NUMPY_DTYPE_PROMOTION", raising=False)
        mp.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        # The kernels inherit the run's persistent compilation cache (conftest.py) and keep every
        # program in it: what one kernel compiles another reads back (the notebooks bound at the
        # same sizes; alone, 101 -> 84-91 s). Results are unchanged.
        mp.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
        workdirs = [tmp_path_factory.mktemp(Path(name).stem) for name in names]
        results = execute_all([NOTEBOOKS / name for name in names], workdirs, probe=True)
    return dict(zip(names, results, strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, executed):
    nb = executed[name]
    if isinstance(nb, BaseException):
        raise nb  # a cell error: the exception carries the cell and its traceback
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    text = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    if name not in FIXED_SIZE:
        assert f"N = {int(TEST_N):,} outputs per database" in text  # the override reached it
    assert any("image/png" in out.get("data", {}) for out in outputs)  # figures were drawn
    probe = nb.cells[-1].outputs[0]["text"].strip()
    assert Path(probe).resolve() == Path(sys.executable).resolve()


def main(argv=None) -> None:
    """Re-execute the notebooks in place at ``RDPJAX_NOTEBOOK_N`` (default 1e5): those named
    on the command line, or all of ``NAMES``."""
    import tempfile

    names = tuple(sys.argv[1:] if argv is None else argv) or NAMES
    unknown = [name for name in names if name not in NAMES]
    if unknown:
        raise SystemExit(f"unknown notebook(s) {unknown}; choose from {NAMES}")
    os.environ.setdefault("RDPJAX_NOTEBOOK_N", STORED_N)
    with tempfile.TemporaryDirectory() as tmp:
        workdirs = [Path(tmp) / Path(name).stem for name in names]
        for w in workdirs:
            w.mkdir()
        results = execute_all([NOTEBOOKS / name for name in names], workdirs)
    for name, nb in zip(names, results, strict=True):
        if isinstance(nb, BaseException):
            raise nb
        nbformat.write(nb, NOTEBOOKS / name)
        size = (NOTEBOOKS / name).stat().st_size
        print(f"{name}: executed at n = {os.environ['RDPJAX_NOTEBOOK_N']}, {size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
