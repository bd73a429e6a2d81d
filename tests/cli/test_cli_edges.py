"""Edges of the command line (issue 47): unsupported claims, sizes, interruptions, bad outputs.

Each case is a mistake or an interruption that must end as one line on stderr with a set exit
status (2 for input, 130 for Ctrl-C), never a traceback or a silent wrong number.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from rdpjax.cli import main

MECH_PY = """
import numpy as np


def laplace_sum(rng, database, n):
    return np.sum(database) + rng.laplace(0.0, 1.0, size=n)


def nan_on_empty(rng, database, n):
    # Laplace noise, but NaN for the first 3 outputs of each call on a database summing to 0.
    out = np.sum(database) + rng.laplace(0.0, 1.0, size=n)
    if np.sum(database) == 0:
        out[:3] = np.nan
    return out


def jax_nan_on_empty(key, database, n):
    import jax
    import jax.numpy as jnp

    noise = jax.random.laplace(key, (n,))
    out = jnp.sum(database).astype(noise.dtype) + noise
    return jnp.where((jnp.arange(n) < 3) & (jnp.sum(database) == 0), jnp.nan, out)
"""

PAIR = ["--x", "[1]", "--x-prime", "[0]"]


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edges")
    (folder / "mech.py").write_text(MECH_PY)
    return folder


def _exit_code(argv) -> int:
    """main's status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert captured.out == ""
    return err.strip()


# ----------------------------------------------------------------------------- (ε, δ) claims


def test_a_delta_claim_without_epsilon_is_one_line(user_dir, capsys):
    argv = ["audit", f"{user_dir}/mech.py:laplace_sum", "--numpy", *PAIR, "--n", "1000"]
    assert _exit_code([*argv, "--claim-delta", "1e-5"]) == 2
    err = _one_line(capsys)
    assert err.startswith("rdpjax audit: error: --claim-delta 1e-05 needs --claim-epsilon E")


@pytest.mark.parametrize(
    "delta, message",
    [
        ("1.5", "--claim-epsilon 1 --claim-delta 1.5: delta must be in [0, 1); got 1.5"),
        ("nan", "argument --claim-delta: must be a finite number: 'nan'"),
    ],
)
def test_a_bad_delta_is_one_line(user_dir, capsys, delta, message):
    argv = ["audit", f"{user_dir}/mech.py:laplace_sum", "--numpy", *PAIR, "--n", "1000"]
    assert _exit_code([*argv, "--claim-epsilon", "1", "--claim-delta", delta]) == 2
    assert message in _one_line(capsys)


@pytest.mark.parametrize("eps, code", [("0.2", 1), ("3", 0)])
def test_an_epsilon_delta_claim_is_checked_by_rejection_sets(user_dir, capsys, eps, code):
    # Laplace noise of scale 1 on a sum of sensitivity 1: 1-DP, so (1, δ)-DP for every δ.
    # Claimed ε = 0.2 is false (refuted at n = 20,000: the certified ε(δ) is near 0.9 on these
    # draws); ε = 3 is true and cannot be refuted (probability ≤ α).
    argv = ["audit", f"{user_dir}/mech.py:laplace_sum", "--numpy", *PAIR, "--n", "20000"]
    argv += ["--claim-epsilon", eps, "--claim-delta", "1e-6", "--seed", "3"]
    assert _exit_code(argv) == code
    out = capsys.readouterr().out
    assert "rejection sets" in out and "ε(δ = 1e-06) ≥" in out
    # Issue 54: one verdict, last, naming the test and level that decided it.
    verdicts = [ln for ln in out.splitlines() if ln.startswith(("REFUTED", "not refuted"))]
    assert len(verdicts) == 1 and out.rstrip().endswith(verdicts[0]), out
    assert "(rejection sets" in verdicts[0] or "by the rejection sets" in verdicts[0]
    assert "n per database: 20,000 asked, 20,000 drawn" in out


def test_bound_checks_a_delta_claim_too(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(0)
    np.save(tmp_path / "p.npy", rng.laplace(1.0, 1.0, 20_000))
    np.save(tmp_path / "q.npy", rng.laplace(0.0, 1.0, 20_000))
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--json"]
    assert _exit_code([*argv, "--claim-epsilon", "0.2", "--claim-delta", "0.01"]) == 1
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["is_refuted"] and out["sets"]["refuted"] and out["claim"]["kind"] == "approx_dp"


# ----------------------------------------------------------------------------- sizes


def test_sizes_beyond_2_to_the_40_are_refused(capsys):
    assert _exit_code(["audit", "laplace", "--n", "2e12"]) == 2
    err = _one_line(capsys)
    assert err.startswith("rdpjax audit: error: --n 2e+12: at most 2^40")
    assert _exit_code(["audit", "laplace", "--until-refuted", "--max-n", "1.2e12"]) == 2
    assert _one_line(capsys).startswith("rdpjax audit: error: --max-n 1.2e+12: at most 2^40")


def test_a_huge_n_warns_with_its_scale_before_drawing(monkeypatch, capsys):
    """--n 2e10: 4e10 draws, 4000 s = 1.1 hours at 10^7 per second, 4.6 days at 10^5."""
    from rdpjax.cli.audit import LARGE_N, size_warning

    assert size_warning(LARGE_N) is None
    calls = []

    def audit(*args, **kwargs):  # the warning is out before the audit starts
        calls.append(capsys.readouterr().err)
        raise KeyboardInterrupt

    monkeypatch.setattr("rdpjax.auditing.audit", audit)
    assert _exit_code(["audit", "laplace", "--n", "2e10"]) == 130
    (before,) = calls
    assert before.count("\n") == 1
    assert before.startswith("rdpjax audit: warning: --n 2e+10 draws 4e+10 outputs in all")
    assert "1.1 hours at 10^7 draws per second, 4.6 days at 10^5" in before
    assert "Ctrl-C" in before and "--until-refuted" in before
    assert capsys.readouterr().err.startswith("rdpjax audit: interrupted")


# ----------------------------------------------------------------------------- Ctrl-C


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ([], "the draws of a fixed-n audit are not kept; an audit with --until-refuted"),
        (["--until-refuted"], "the draws were not kept (add --report DIR"),
        (["--until-refuted", "--report", "{d}"], "the outputs drawn so far are kept in {d}"),
    ],
)
def test_ctrl_c_is_one_line_with_status_130(monkeypatch, capsys, tmp_path, extra, said):
    def audit(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("rdpjax.auditing.audit", audit)
    extra = [a.replace("{d}", str(tmp_path)) for a in extra]
    assert _exit_code(["audit", "laplace", *extra]) == 130
    err = _one_line(capsys)
    assert err.startswith("rdpjax audit: interrupted; ")
    assert said.replace("{d}", str(tmp_path)) in err
    assert "--resume DIR" in err or f"--resume {tmp_path}" in err


SLOW_PY = """
import pathlib
import time

import numpy as np


def slow(rng, database, n):
    if n > 2:  # not the shape probe
        pathlib.Path(__file__).with_name("started").touch()
        # Short sleeps, as a mechanism that computes returns to the interpreter: the kernel may
        # hand SIGINT to one of JAX's threads, and a long sleep in the main thread is then not
        # interrupted (Python runs the handler when the main thread next runs bytecode).
        for _ in range(1200):
            time.sleep(0.05)
    return rng.laplace(0.0, 1.0, size=n)
"""


def test_a_real_sigint_during_a_fixed_n_audit(tmp_path, ctrl_c):
    """The rdpjax program interrupted while it draws: status 130 and one line, no traceback."""
    (tmp_path / "slow.py").write_text(SLOW_PY)
    argv = ["audit", f"{tmp_path}/slow.py:slow", "--numpy", *PAIR, "--n", "1000", "--quiet"]
    status, out, err, _ = ctrl_c(argv, tmp_path)
    assert status == 130, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("rdpjax audit: interrupted; the draws of a fixed-n audit are not kept")


# ----------------------------------------------------------------------------- NaN outputs


@pytest.mark.parametrize("function", ["nan_on_empty --numpy", "jax_nan_on_empty"])
def test_nan_outputs_are_named_by_side(user_dir, capsys, function):
    """x' = [0] sums to 0: 3 NaN outputs there, in the one call (batch) of 1,000 draws."""
    name, *flags = function.split()
    argv = ["audit", f"{user_dir}/mech.py:{name}", *flags, *PAIR, "--n", "1000", "--quiet"]
    assert _exit_code(argv) == 2
    err = _one_line(capsys)
    assert err.startswith("rdpjax audit: error: the mechanism returned 3 NaN outputs on x' ")
    assert "(of 1,000)" in err and "p_samples" not in err and "q_samples" not in err


# ----------------------------------------------------------------------------- vector codes

VECTORS_PY = """
import numpy as np


def dice(rng, database, n):
    return rng.integers(0, 3, size=(n, 3)) + int(np.sum(database))
"""


@pytest.mark.parametrize("sizes", [["--n", "2000"], ["--until-refuted", "--max-n", "2000"]])
def test_integer_vectors_are_audited_fixed_n_and_sequentially(tmp_path, capsys, sizes):
    """Outputs (m, 3) of codes: both audits count joint outcomes. The supports overlap only on
    {1, 2}³ ({1, 2, 3}³ on x, {0, 1, 2}³ on x'), so the claim ε = 1 is refuted (exit 1)."""
    (tmp_path / "vectors.py").write_text(VECTORS_PY)
    argv = ["audit", f"{tmp_path}/vectors.py:dice", "--numpy", *PAIR, "--claim-epsilon", "1"]
    assert _exit_code([*argv, *sizes, "--json"]) == 1, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert report["bound"]["discrete"] and report["is_refuted"]
    function = VECTORS_PY.split("\n\n\n")[1]  # the function's own lines
    digest = hashlib.sha256(function.encode()).hexdigest()
    assert report["settings"]["mechanism_source_sha256"] == digest
    assert report["settings"]["transform_applied"] is None


# ----------------------------------------------------------------------------- report settings

NUMPY_SOURCE = """def noisy(rng, database, n):
    return float(np.sum(database)) + rng.laplace(0.0, 1.0, size=n)
"""

JAX_SOURCE = """def noisy(key, database, n):
    noise = jax.random.laplace(key, (n,))
    return jnp.sum(database).astype(noise.dtype) + noise
"""


@pytest.mark.parametrize(
    ("imports", "source", "flags"),
    [
        ("import numpy as np\n", NUMPY_SOURCE, ["--numpy"]),
        ("import jax\nimport jax.numpy as jnp\n", JAX_SOURCE, []),
    ],
)
def test_the_report_records_the_map_applied_and_the_source_hash(
    tmp_path, capsys, imports, source, flags
):
    """A 1-D Laplace at n = 2000 under transform "auto": the pilot quantile map is applied (its
    tails are a Laplace law's), and report.json says so; the function's own lines are hashed."""
    (tmp_path / "mech.py").write_text(f"{imports}\n\n# a comment outside the function\n{source}")
    folder = tmp_path / "report"
    argv = ["audit", f"{tmp_path}/mech.py:noisy", *flags, *PAIR, "--n", "2000"]
    assert _exit_code([*argv, "--quiet", "--report", str(folder)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    record = json.loads((folder / "report.json").read_text())
    assert record["settings"]["transform_applied"] == "quantile" == record["bound"]["transform"]
    assert record["meta"]["transform"] is None  # the option as given: not set
    digest = hashlib.sha256(source.encode()).hexdigest()
    assert record["settings"]["mechanism_source_sha256"] == digest
    markdown = (folder / "report.md").read_text()
    assert '- transform_applied: "quantile"' in markdown and digest in markdown
    assert _exit_code([*argv, "--transform", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["transform_applied"] is None


def test_a_zoo_audit_records_no_source_hash(capsys):
    assert _exit_code(["audit", "laplace", "--n", "1000", "--json"]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert "mechanism_source_sha256" not in settings and "transform_applied" in settings


def test_bound_shows_the_claim_beside_the_bounds_and_writes_a_report(tmp_path, capsys):
    """Issue 47: `rdpjax bound` with a claim prints a claimed column (ρλ for ρ-zCDP, typed here
    from the definition) and, with --report, writes the audit's report files."""
    import numpy as np

    rng = np.random.default_rng(3)
    np.save(tmp_path / "p.npy", 1.0 + rng.standard_normal(5000))  # N(1, 1) vs N(0, 1): λ/2
    np.save(tmp_path / "q.npy", rng.standard_normal(5000))
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--lam", "2", "5"]
    out_dir = tmp_path / "report"
    assert main([*argv, "--claim-zcdp", "0.05", "--report", str(out_dir)]) == 1
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.split()[:1] == ["lambda"])
    assert "claimed" in header.split()
    record = json.loads((out_dir / "report.json").read_text())
    assert record["claimed"] == [pytest.approx(0.05 * 2), pytest.approx(0.05 * 5)]
    assert record["is_refuted"] and record["settings"]["samples"]["p"].endswith("p.npy")
    assert (out_dir / "report.md").read_text().startswith("# Audit of samples")
    assert main([*argv, "--report", str(out_dir)]) == 0  # no claim: the bounds alone
    assert "claimed" not in capsys.readouterr().out


def test_a_zero_delta_is_the_epsilon_claim(user_dir, capsys):
    # --claim-delta 0 is ε-DP: the same audit, report and exit status as --claim-epsilon alone.
    argv = ["audit", f"{user_dir}/mech.py:laplace_sum", "--numpy", *PAIR, "--n", "5000"]
    argv += ["--claim-epsilon", "0.5", "--seed", "2", "--json"]
    codes, outs = [], []
    for extra in ([], ["--claim-delta", "0"]):
        codes.append(_exit_code([*argv, *extra]))
        outs.append(json.loads(capsys.readouterr().out))
    assert codes[0] == codes[1] and outs[0] == outs[1]
    assert outs[0]["claim"]["kind"] == "pure_dp"


# ----------------------------------------------------------------------------- fast mistakes


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "gaussian", "--n", "abc"],
        ["audit", "gaussian", "--alpha", "2"],
        ["canaries", "scores.csv", "--alpha", "0"],
        ["coverage", "--reps", "0"],
    ],
)
def test_a_mistake_is_answered_before_jax_is_imported(argv):
    """Issue 54: `--n abc` took seconds, jax's import, before its one line. The parse now comes
    first (benchmarks/performance/cli_mistakes.py times it; no timed test here)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from rdpjax.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as e:\n"
        "    status = e.code\n"
        "print(status, 'jax' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert done.stderr.count("\n") == 1 and "error:" in done.stderr


def test_interrupts_of_resumed_audits_exit_130(tmp_path):
    """Ctrl-C at several moments of `--until-refuted` audits, resumed from their checkpoint
    (benchmarks/performance/interrupts.py, here 5 of its 50 interrupts): every interrupted run
    ends with 130 (or, in the interpreter's first ~50 ms, killed by SIGINT: a shell's 130 too),
    never 139 nor 0."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks/performance/interrupts.py"
    spec = importlib.util.spec_from_file_location("interrupts_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.run(5, seed=1, max_delay=4.0)
    assert result["odd"] == [], result
    assert any(k.startswith("130") for k in result["statuses"]), result


def test_a_slow_sampler_hears_how_long_before_the_draws():
    """Issue 54: a numpy black box at ~20,000 outputs/s and the default n: the note comes
    before the draws, with the time, the default n named, and the sequential alternative."""
    import time

    import numpy as np

    from rdpjax.cli._sizes import time_notice

    def slow(rng, database, n):
        time.sleep(n / 20_000)
        return np.sum(database) + rng.laplace(0.0, 1.0, size=n)

    note = time_notice(slow, [1.0], 10**6, n_given=False)
    assert note is not None and "minutes" in note
    assert "n = 1,000,000 per database is the default" in note
    assert "--n 1e5 would take about" in note and "--until-refuted --max-n 1e6" in note
    assert time_notice(slow, [1.0], 10**6, n_given=True).count("default") == 0
    assert time_notice(slow, [1.0], 10**4, n_given=False) is None  # 1 s of draws: no note


def test_main_leaves_the_ctrl_c_handler_as_it_found_it(monkeypatch, capsys):
    """In-process (a notebook, a test), an interrupted main() returns 130 and leaves SIGINT's
    handler as it was: only the `rdpjax` program itself ignores a late Ctrl-C, as it exits."""
    import signal

    def audit(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("rdpjax.auditing.audit", audit)
    before = signal.getsignal(signal.SIGINT)
    assert _exit_code(["audit", "laplace", "--n", "1000"]) == 130
    assert signal.getsignal(signal.SIGINT) is before
    assert capsys.readouterr().err.startswith("rdpjax audit: interrupted")
