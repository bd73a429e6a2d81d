"""``rdpjax audit FILE.py:FUNCTION --python PATH``: the user's function run in another interpreter.

The "other" interpreter is ``sys.executable`` itself (it has numpy; the worker never imports
rdpjax), so the tests need no second environment. Every failure there is one line, exit 2.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.auditing.remote import RemoteError, RemoteSampler
from rdpjax.cli import main

MECH_PY = '''
import os
import time

import numpy as np


def noisy_sum(rng, database, n):
    """Laplace noise of scale 1 on a sum that one entry moves by 2: 2-DP, claimed 1-DP."""
    print("a print goes to stderr, not into the protocol")
    return np.sum(database) + rng.laplace(0.0, 1.0, size=n)


def fixed_sum(rng, database, n):
    """The noise for sensitivity 2: 1-DP."""
    return np.sum(database) + rng.laplace(0.0, 2.0, size=n)


def broken(rng, database, n):
    raise ValueError("bad database")


def dies(rng, database, n):
    os._exit(3)


def slow(rng, database, n):
    if n > 100:
        open(os.path.join(os.path.dirname(__file__), "started"), "w").close()
        time.sleep(60)
    return rng.laplace(0.0, 1.0, size=n)
'''

PAIR = ["--x", "[2, 1]", "--x-prime", "[0, 1]"]
AUDIT = ["--n", "20000", "--lam", "2", "5", "--claim-epsilon", "1"]


@pytest.fixture(scope="module")
def mech(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("remote")
    (folder / "mech.py").write_text(MECH_PY)
    (folder / "bad_import.py").write_text("import no_such_module_here\n")
    return folder / "mech.py"


def _run(argv, capsys) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_a_remote_audit_refutes_records_the_interpreter_and_is_reproducible(mech, tmp_path, capsys):
    argv = ["audit", f"{mech}:noisy_sum", "--python", sys.executable, *PAIR, *AUDIT]
    status, out, err = _run([*argv, "--json"], capsys)
    assert status == 1, err
    first = json.loads(out)
    assert first["mechanism"] == "noisy_sum" and first["refuted"]
    assert "a print goes to stderr" in err  # the user's prints reach stderr, not the protocol
    again = json.loads(_run([*argv, "--json"], capsys)[1])
    assert again["lower"] == first["lower"]  # the same --seed, the same draws
    other = json.loads(_run([*argv, "--json", "--seed", "1"], capsys)[1])
    assert other["lower"] != first["lower"]
    status, _, err = _run([*argv, "--quiet", "--report", str(tmp_path / "r")], capsys)
    record = json.loads((tmp_path / "r" / "report.json").read_text())
    interpreter = record["meta"]["interpreter"]
    assert interpreter["python"] == sys.executable
    assert interpreter["python_version"] == ".".join(map(str, sys.version_info[:3]))
    assert interpreter["numpy_version"] == np.__version__
    assert len(record["settings"]["mechanism_source_sha256"]) == 64


def test_the_fixed_twin_is_not_refuted_and_a_sequential_audit_runs(mech, capsys):
    argv = ["audit", f"{mech}:fixed_sum", "--python", sys.executable, *PAIR, "--quiet"]
    status, out, err = _run([*argv, *AUDIT], capsys)
    assert status == 0, err
    argv = ["audit", f"{mech}:noisy_sum", "--python", sys.executable, *PAIR, "--quiet"]
    seq = ["--claim-epsilon", "1", "--lam", "2", "5", "--until-refuted", "--max-n", "20000"]
    status, out, err = _run([*argv, *seq], capsys)
    assert status == 1 and out.startswith("REFUTED"), err


def test_the_streamed_route_takes_a_remote_sampler(mech):
    """Beyond the memory budget the draws are binned batch by batch: the same black box."""
    with RemoteSampler(sys.executable, str(mech), "noisy_sum") as sample:
        report = rdpjax.audit(
            jax.random.key(0), sample, np.array([2.0, 1.0]), np.array([0.0, 1.0]), [2.0],
            n=20_000, claim=rdpjax.claims.pure_dp(1.0), memory_budget=1_000,
            batch_size=5_000, progress=False,
        )  # fmt: skip
    assert report.streamed and report.is_refuted


def _one_line(status, out, err) -> str:
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("function", "python", "said"),
    [
        ("noisy_sum", "/no/such/python", "no Python interpreter at /no/such/python"),
        ("broken", None, "the mechanism raised in {py}: ValueError: bad database"),
        ("dies", None, "the worker in {py} died while drawing (exited with status 3)"),
        ("missing", None, "has no function 'missing'"),
    ],
)
def test_failures_are_one_line_with_exit_status_2(mech, capsys, function, python, said):
    python = python or sys.executable
    argv = ["audit", f"{mech}:{function}", "--python", python, *PAIR, *AUDIT]
    err = _one_line(*_run(argv, capsys))
    assert said.format(py=sys.executable) in err


def test_an_import_error_and_an_interpreter_without_numpy(mech, tmp_path, capsys):
    argv = ["audit", f"{mech.parent}/bad_import.py:f", "--python", sys.executable, *PAIR]
    err = _one_line(*_run(argv, capsys))
    assert "raised ModuleNotFoundError: No module named 'no_such_module_here'" in err
    bare = tmp_path / "bare-python"  # the same Python without site-packages: no numpy
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(0o755)
    err = _one_line(*_run(["audit", f"{mech}:noisy_sum", "--python", str(bare), *PAIR], capsys))
    assert "has no usable numpy" in err and "-m pip install numpy" in err
    err = _one_line(*_run(["audit", "mech:noisy_sum", "--python", sys.executable, *PAIR], capsys))
    assert "with --python name your function as FILE.py:FUNCTION" in err


def test_the_worker_exits_with_the_sampler(mech):
    """Closed, or garbage collected: its input closes and it exits (no process left behind)."""
    with pytest.raises(RemoteError, match="has no function"):
        RemoteSampler(sys.executable, str(mech), "no_such_function")
    sample = RemoteSampler(sys.executable, str(mech), "noisy_sum")
    proc = sample._proc
    assert proc.poll() is None
    sample.close()
    assert proc.poll() is not None
    sample = RemoteSampler(sys.executable, str(mech), "noisy_sum")
    proc = sample._proc
    del sample
    gc.collect()
    assert proc.wait(timeout=10) is not None


@pytest.mark.slow
def test_ctrl_c_stops_the_worker_too(mech, tmp_path, ctrl_c):
    """The rdpjax program interrupted while the worker draws: status 130, one line, and the
    worker (which ignores SIGINT) is killed."""
    (tmp_path / "mech.py").write_text(mech.read_text())
    argv = ["audit", "mech.py:slow", "--python", sys.executable, *PAIR, "--n", "1000", "--quiet"]
    status, out, err, workers = ctrl_c(argv, tmp_path)
    assert status == 130, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert len(workers) == 1
    time.sleep(0.5)
    assert (
        not Path(f"/proc/{workers[0]}").exists()
        or "Z" in Path(f"/proc/{workers[0]}/stat").read_text().split()[2]
    )


TUMULT = os.environ.get("RDPJAX_TUMULT_PYTHON")  # e.g. /tmp/tumult-venv/bin/python


@pytest.mark.skipif(not TUMULT, reason="set RDPJAX_TUMULT_PYTHON to a Python with tmlt.core")
def test_tumult_core_in_its_own_environment(capsys):
    """Tumult Core's geometric measurement (numpy < 2) audited from rdpjax (numpy 2): its own
    claim, ε = privacy_function(1) = 1, holds (docs/catalog.md has the n = 1e5 audit)."""
    root = Path(__file__).resolve().parents[2]
    reference = f"{root}/benchmarks/catalog/libraries/tumult_mechanism.py:geometric_count"
    argv = ["audit", reference, "--python", str(TUMULT), "--discrete", "--x", "[1,0,1]"]
    argv += ["--x-prime", "[0,0,1]", "--claim-epsilon", "1", "--n", "2000", "--json"]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    assert json.loads(out)["mechanism"] == "geometric_count"
