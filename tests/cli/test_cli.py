import json
import os

import jax
import numpy as np
import pytest

from rdpjax.cli import main, read_samples


@pytest.fixture
def samples(tmp_path):
    kp, kq = jax.random.split(jax.random.key(0))
    p = 1.0 + 5.0 * np.asarray(jax.random.normal(kp, (20000,)))
    q = 5.0 * np.asarray(jax.random.normal(kq, (20000,)))
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    np.savetxt(tmp_path / "p.csv", p, delimiter=",")
    np.savetxt(tmp_path / "q.txt", q)
    return tmp_path


def test_bound_npy_json(samples, capsys):
    assert (
        main(
            [
                "bound",
                str(samples / "p.npy"),
                str(samples / "q.npy"),
                "--lam",
                "2",
                "5",
                "7",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["lam"] == [2.0, 5.0, 7.0]
    assert len(out["lower"]) == 3 and out["simultaneous"] is True and out["discrete"] is False
    assert all(lo <= lam / 50 for lo, lam in zip(out["lower"], out["lam"], strict=True))


def test_bound_reads_a_sorted_file_as_the_same_samples(samples, capsys):
    """A file may hold its samples sorted: the rows are put in the seed's order first, so the
    bound is that of the same samples as drawn, and another seed may differ (issue 51)."""
    p = np.load(samples / "p.npy")
    np.save(samples / "p_sorted.npy", np.sort(p)[::-1])
    runs = {}
    for name, extra in (("drawn", []), ("sorted", []), ("seed 1", ["--seed", "1"])):
        path = samples / ("p_sorted.npy" if name == "sorted" else "p.npy")
        argv = ["bound", str(path), str(samples / "q.npy"), "--lam", "2", "5", "--json", *extra]
        assert main(argv) == 0
        runs[name] = json.loads(capsys.readouterr().out)["lower"]
    assert runs["sorted"] == runs["drawn"]
    assert runs["seed 1"] != runs["drawn"]


def test_bound_csv_txt_table_matches_npy(samples, capsys):
    assert (
        main(["bound", str(samples / "p.csv"), str(samples / "q.txt"), "--lam", "2", "--json"]) == 0
    )
    from_text = json.loads(capsys.readouterr().out)
    assert (
        main(["bound", str(samples / "p.npy"), str(samples / "q.npy"), "--lam", "2", "--json"]) == 0
    )
    from_npy = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(
        from_text["lower"], from_npy["lower"], rtol=1e-6
    )  # csv keeps 18 digits
    assert main(["bound", str(samples / "p.csv"), str(samples / "q.txt"), "--lam", "2"]) == 0
    table = capsys.readouterr().out
    assert "lower" in table and "std_error" in table


def test_bound_discrete_flag(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "p.npy", rng.integers(0, 2, 5000).astype(float))
    np.save(tmp_path / "q.npy", rng.integers(0, 2, 5000).astype(float))
    assert (
        main(
            [
                "bound",
                str(tmp_path / "p.npy"),
                str(tmp_path / "q.npy"),
                "--lam",
                "2",
                "--discrete",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["discrete"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.npy", "q.npy", "--lam", "2"], "no such file"),
        (["p.npy", "q.npy", "--lam", "0.5"], "lam"),
        (["p.npy", "q.npy", "--lam", "2", "--alpha", "0.7"], "alpha"),
        (["bad.csv", "q.npy", "--lam", "2"], "could not read"),
        (["p.json", "q.npy", "--lam", "2"], "unsupported file type"),
        (["nan.npy", "q.npy", "--lam", "2"], "non-finite"),
        (["p.npy", "empty.csv", "--lam", "2"], "no samples"),  # was numpy's warning, then this
    ],
)
def test_bound_errors_are_one_line_exit_2(samples, capsys, args, message):
    (samples / "bad.csv").write_text("1.0,2.0\nnot,a number\n")
    (samples / "empty.csv").write_text("# a comment and no sample\n\n")
    (samples / "p.json").write_text("[1, 2]")
    np.save(samples / "nan.npy", np.array([1.0, np.nan, 3.0]))
    args = [str(samples / a) if a.endswith((".npy", ".csv", ".json")) else a for a in args]
    assert main(["bound", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rdpjax bound: error:") and message in err and "\n" not in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bound", "p.npy"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["bound", "p.npy", "q.npy", "--lam", "2", "--floor", "-1"])
    assert exc.value.code == 2
    # One line each, pointing to the help.
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and all(line.startswith("rdpjax bound: error:") for line in lines)
    assert "--floor" in lines[1] and "see `rdpjax bound --help`" in lines[1]


def test_help_is_complete(capsys):
    """Every subcommand's help: tests/cli/test_coverage_cli.py checks its options and example."""
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for command in ("bound", "audit", "coverage", "reproduce", "demo", "search"):
        assert command in text


def test_version(capsys):
    import rdpjax

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"rdpjax {rdpjax.__version__}\n"


def test_read_samples_2d_csv(tmp_path):
    np.savetxt(tmp_path / "x.csv", np.arange(12.0).reshape(6, 2), delimiter=",")
    assert read_samples(tmp_path / "x.csv").shape == (6, 2)


def test_demo_small_n_json(capsys):
    assert main(["demo", "--n", "20000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["rows"]) == 6
    assert all(r["lower"] <= r["exact"] for r in out["rows"])


def test_audit_command_catches_the_literal_series_and_plots(tmp_path, capsys):
    """The published sampler with ties broken literally is not 1-LDP for even k: refuted against
    its own claim (exit status 1), every bound below the exact value. The plot's folder is
    created."""
    png = tmp_path / "new" / "folder" / "audit.png"
    argv = ["audit", "orthogonal-series", "--param", "k=2", "--param", "ties=literal"]
    assert main([*argv, "--lam", "2", "5", "7", "--n", "50000", "--json", "--plot", str(png)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert (
        all(out["refuted_at"])
        and out["refuted"] is True
        and out["is_refuted"]
        and out["verdict"].startswith("REFUTED")
    )
    assert out["claim"]["kind"] == "pure_dp" and out["claim"]["params"]["epsilon"] == 1.0
    assert all(lo <= ex for lo, ex in zip(out["lower"], out["exact"], strict=True))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["laplace", "--param", "scale=-1"], "scale"),
        (["laplace", "--param", "width=2"], "unknown parameter"),
        (["laplace", "--param", "scale"], "NAME=VALUE"),
        (["laplace", "--param", "scale=abc"], "scale must be a number > 0; got 'abc'"),
        (["kary-randomized-response", "--param", "k=2.7"], "k must be a whole number ≥ 2"),
        (["sparse-vector", "--param", "variant=xyz"], "one of lyu, lee_clifton, stoddard, chen"),
        (["no-such", "--param", "k=2"], "unknown mechanism 'no-such'; choose one of: gaussian"),
    ],
)
def test_audit_command_errors(capsys, argv, message):
    assert main(["audit", *argv, "--n", "1000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rdpjax audit: error:") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_reproduce_writes_results_and_figures(tmp_path, capsys):
    """A miniature `rdpjax reproduce --out` (the full one lives in
    benchmarks/papers/paper_000.py)."""
    from rdpjax.auditing import audit
    from rdpjax.mechanisms.databases import paper_pair
    from rdpjax.studies.reproduction import EXPERIMENTS, ORDERS, cell_key

    argv = ["reproduce", "--n", "2000", "5e3", "--reps", "3", "--coverage-n", "2000"]
    argv += ["--experiment", "gaussian", "--experiment", "Shuffled RR", "--out", str(tmp_path)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "[2/2] Shuffled RR: bounds at n = 2,000, 5,000; coverage" in captured.err
    assert "| mechanism | n | λ | exact | estimate | lower | lower/exact |" in captured.out
    results = json.loads((tmp_path / "results.json").read_text())
    rows = results["rows"]
    assert len(rows) == 12 and {r["mechanism"] for r in rows} == {"Gaussian", "Shuffled RR"}
    assert [r["n"] for r in rows[:6]] == [2000] * 3 + [5000] * 3 and rows[0]["lam"] == 2.0
    assert "| Gaussian | 5,000 | 7 |" in (tmp_path / "results.md").read_text()
    figures = {
        f"figures/{slug}_{kind}.png"
        for slug in ("gaussian", "shuffled-rr")
        for kind in ("densities", "bound_vs_lambda", "bound_vs_n")
    }
    assert set(results["meta"]["figures"]) == figures
    for name in figures:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The rows are what rdpjax.audit reports for the same key (one direction, and the outputs'
    # own KDE: reproduce bounds with transform=None, the estimator its coverage column measures).
    x, xp = paper_pair()
    report = audit(
        cell_key(0, "Gaussian", 5000, purpose=0),
        EXPERIMENTS["Gaussian"](),
        x,
        xp,
        ORDERS,
        n=5000,
        both_directions=False,
        transform=None,
    )
    gaussian = [r for r in rows if r["mechanism"] == "Gaussian" and r["n"] == 5000]
    np.testing.assert_array_equal([r["lower"] for r in gaussian], report.lower)
    np.testing.assert_array_equal([r["exact"] for r in gaussian], report.exact)


def test_reproduce_bad_input_is_one_line(capsys):
    assert main(["reproduce", "--quick", "--experiment", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rdpjax reproduce: error: unknown experiment 'nope'")
    assert err.count("\n") == 1


def test_txt_with_commas_and_a_commented_header(tmp_path):
    (tmp_path / "x.txt").write_text("# value\n1.5,2.0\n3.0,4.5\n")
    np.testing.assert_array_equal(read_samples(tmp_path / "x.txt"), [[1.5, 2.0], [3.0, 4.5]])


@pytest.mark.slow
def test_warnings_are_one_line_on_the_command_line(tmp_path):
    import subprocess
    import sys

    rng = np.random.default_rng(14)
    np.save(tmp_path / "p.npy", rng.integers(0, 500, 3000))
    np.save(tmp_path / "q.npy", rng.integers(0, 500, 3000))
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--lam", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "rdpjax.cli", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "RDPJAX_NO_CACHE": "1"},
    )
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("rdpjax: warning: integer outputs"), lines


@pytest.mark.parametrize("value", ["-1", "99999999999999999999", "1.5"])
@pytest.mark.parametrize("command", ["bound", "canaries", "search", "coverage"])
def test_a_seed_out_of_range_is_a_usage_error(capsys, command, value):
    """``jax.random.key`` takes a 64-bit integer: a larger seed was an OverflowError traceback."""
    files = {"bound": ["p.npy", "q.npy"], "canaries": ["scores.csv"]}.get(command, [])
    with pytest.raises(SystemExit) as exc:
        main([command, *files, "--seed", value])
    assert exc.value.code == 2
    assert "a seed must be" in capsys.readouterr().err
