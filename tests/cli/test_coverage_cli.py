"""`rdpjax coverage` and benchmarks/papers/coverage.py at tiny sizes (the full study is a
benchmark)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from rdpjax.cli import build_parser, main
from rdpjax.studies import wilson_interval

# k-ary randomized response (k = 5): the zoo mechanism whose study compiles fastest.
CHEAP = "kary-randomized-response"
BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "papers" / "coverage.py"


def _exit_code(argv) -> int:
    """main's status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _check_cell(cell: dict) -> None:
    """Internal consistency of one coverage summary (counts, fractions, Wilson intervals)."""
    reps = cell["reps"]
    for j in range(len(cell["lam"])):
        k = cell["covered"][j]
        assert 0 <= k <= reps and cell["coverage"][j] == k / reps
        low, high = cell["coverage_low"][j], cell["coverage_high"][j]
        assert (low, high) == pytest.approx(wilson_interval(k, reps))
        assert low <= cell["coverage"][j] <= high
        # lower/exact averaged = (mean lower)/exact, exact being one number per order.
        assert cell["tightness"][j] == pytest.approx(cell["mean_lower"][j] / cell["exact"][j])
    both = cell["simultaneous_covered"]
    assert 0 <= both <= min(cell["covered"]) and cell["simultaneous"] == both / reps
    assert cell["simultaneous_low"] <= cell["simultaneous"] <= cell["simultaneous_high"]


@pytest.mark.slow
def test_coverage_json_has_the_fields_and_they_agree(capsys):
    argv = ["coverage", CHEAP, "--param", "k=4", "--lam", "2", "5", "--n", "2000", "--n", "3e3"]
    assert main([*argv, "--reps", "20", "--both-directions", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # silent under --json: no progress lines
    out = json.loads(captured.out)
    meta = out["meta"]
    assert meta["command"].startswith("rdpjax coverage kary-randomized-response --param k=4")
    assert (meta["reps"], meta["alpha"], meta["seed"], meta["both_directions"]) == (
        20,
        0.05,
        0,
        True,
    )
    assert [c["n"] for c in out["cells"]] == [2000, 3000]
    for cell in out["cells"]:
        assert cell["mechanism"] == "kary-randomized-response(k=4)"
        assert cell["lam"] == [2.0, 5.0] and cell["reps"] == 20 and cell["both_directions"]
        _check_cell(cell)
        # The bound is valid in most replications (nominal ≥ 0.95 simultaneously): if the true
        # simultaneous coverage were 0.95, P(fewer than 15 of 20) < 0.3%.
        assert cell["simultaneous_covered"] >= 15


@pytest.mark.slow
def test_coverage_text_output_and_progress(capsys):
    assert main(["coverage", CHEAP, "--n", "2000", "--reps", "10", "--lam", "3"]) == 0
    captured = capsys.readouterr()
    assert "[1/1] kary-randomized-response, n = 2,000, R = 10" in captured.err
    lines = captured.out.splitlines()
    assert "nominal: each bound ≥ 0.95 (level α/K, K = 1)" in captured.out
    header = next(line for line in lines if line.startswith("| mechanism"))
    assert "coverage (95% CI)" in header and "simultaneous" in header and "lower/exact" in header
    assert any(line.startswith("| kary-randomized-response | 2,000 | 10 | 3 |") for line in lines)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no-such-mechanism"], "unknown mechanism 'no-such-mechanism'"),
        (["laplace", "--reps", "0"], "--reps"),
        (["laplace", "--reps", "2.5"], "--reps"),
        (["laplace", "--n", "1"], "--n"),
        (["laplace", "--lam", "1"], "--lam"),
        (["laplace", "--lam", "0.5", "2"], "--lam"),
        (["laplace", "--alpha", "0.6"], "--alpha"),
        (["laplace", "--param", "width=2"], "unknown parameter"),
        (["laplace", "--param", "scale=-1"], "scale"),
        ([], "name a MECHANISM"),
        (["--experiment", "nope"], "unknown experiment 'nope'"),
        (["laplace", "--all"], "not both"),
        (["--all", "--param", "scale=2"], "--param"),
        (["laplace", "--cpu-devices", "0"], "--cpu-devices"),
        (["laplace", "--cpu-devices", "two"], "--cpu-devices"),
    ],
)
def test_coverage_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert _exit_code(["coverage", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("rdpjax coverage: error:") and message in err, err
    assert "\n" not in err and "Traceback" not in err and captured.out == ""


@pytest.mark.slow
def test_cpu_devices_split_the_study_in_a_fresh_process_and_are_refused_once_jax_runs(capsys):
    """``--cpu-devices 2`` in a fresh process: JAX gets two CPU devices (the results' meta says
    so) and the study, split over them, counts the same replications as on one device, its
    means equal to rounding. In a process where JAX has started, another count is refused."""
    argv = ["coverage", CHEAP, "--n", "2000", "--reps", "10", "--lam", "3", "--json"]
    one = len(jax.devices("cpu"))  # JAX has started here: one CPU device, as by default
    assert one == 1
    assert main(argv) == 0
    single = json.loads(capsys.readouterr().out)
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    run = subprocess.run(
        [sys.executable, "-m", "rdpjax.cli", *argv, "--cpu-devices", "2"],
        capture_output=True,
        text=True,
        env={**env, "JAX_PLATFORMS": "cpu"},
    )
    assert run.returncode == 0, run.stderr
    split = json.loads(run.stdout)
    assert (single["meta"]["devices"], split["meta"]["devices"]) == ("1 cpu", "2 cpu")
    (a,), (b,) = single["cells"], split["cells"]
    assert (a["covered"], a["simultaneous_covered"]) == (b["covered"], b["simultaneous_covered"])
    assert b["mean_lower"] == pytest.approx(a["mean_lower"], rel=1e-9, abs=1e-12)
    assert b["tightness"] == pytest.approx(a["tightness"], rel=1e-9, abs=1e-12)

    assert main([*argv, "--cpu-devices", "1"]) == 0  # the count JAX has: accepted
    capsys.readouterr()
    assert _exit_code([*argv, "--cpu-devices", "2"]) == 2
    err = capsys.readouterr().err
    assert "--cpu-devices 2: JAX has already started in this process with 1 CPU device" in err


def test_every_subcommand_help_has_an_example_and_lists_its_options(capsys):
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    assert set(subparsers) == {
        "bound",
        "audit",
        "coverage",
        "reproduce",
        "demo",
        "search",
        "canaries",
    }
    for name, sub in subparsers.items():
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert sub.description and "examples:\n  rdpjax " + name in text, name
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in text, (name, flag)


def _benchmark():
    spec = importlib.util.spec_from_file_location("coverage_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_coverage_benchmark_writes_and_resumes(tmp_path, capsys):
    bench = _benchmark()
    out = tmp_path / "coverage.json"
    argv = ["--n", "2e3", "--reps", "5", "--experiments", "gaussian", "--out", str(out)]
    assert bench.main(argv) == 0
    first = json.loads(out.read_text())
    assert first["meta"]["reps"] == 5 and first["meta"]["lam"] == [2.0, 5.0, 7.0]
    assert "--n 2000 --reps 5" in first["meta"]["command"]
    assert "--experiments gaussian" in first["meta"]["command"]
    (cell,) = first["cells"]
    assert (cell["mechanism"], cell["n"]) == ("Gaussian", 2000)
    _check_cell(cell)
    assert "| Gaussian | 2,000 | 5 | 2 |" in out.with_suffix(".md").read_text()
    err = capsys.readouterr().err
    assert "reproduce with: python benchmarks/papers/coverage.py" in err and "1 to run" in err
    # A second run finds the cell and computes nothing.
    assert bench.main(argv) == 0
    assert "1 cells in" in capsys.readouterr().err
    assert json.loads(out.read_text())["cells"] == first["cells"]
    # Other settings do not mix into the same file.
    with pytest.raises(SystemExit, match="other settings"):
        bench.main([*argv[:3], "6", *argv[4:]])
