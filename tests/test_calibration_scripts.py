"""Small fixed-key runs of calibration studies in benchmarks/: the 2-D grid study, the
draws-needed table and the zoo under the automatic map (their full runs are in
docs/calibration.md). The compile benchmark's HLO counter is checked by
benchmarks/performance/compiled_programs.py (issue 52: compiler text is not asserted here)."""

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from rdpjax.estimator import grid

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name):
    (path,) = BENCHMARKS.glob(f"*/{name}.py")  # benchmarks/calibration/, performance/, ...
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_multid_study_sets_and_restores_the_cells(tmp_path):
    bench = _load("calibrate_multid")
    default = dict(grid.CELLS_PER_BANDWIDTH_BY_DIM)
    out = tmp_path / "multid.json"
    argv = ["--reps", "3", "--n", "400", "--dims", "2", "--cells", "4", "8", "--out", str(out)]
    assert bench.main(argv) == 0
    assert grid.CELLS_PER_BANDWIDTH_BY_DIM == default  # restored after the study
    cells = json.loads(out.read_text())["cells"]
    assert [c["cells_per_bandwidth"] for c in cells[:2]] == [4, 8]
    # Twice the cells per bandwidth: about twice the points per axis (bucketed sizes).
    ratio = np.array(cells[1]["grid"]) / np.array(cells[0]["grid"])
    assert np.all((ratio > 1.5) & (ratio < 2.6)), ratio
    for c in cells:
        assert c["wilson"][0] <= c["simultaneous"] <= c["wilson"][1]
    # The candidates of one law share its exact values (ε(λ) = λ·2/(2·25) for σ = 5 in 2-D).
    np.testing.assert_allclose(cells[0]["exact"], [0.08, 0.2, 0.28])
    assert cells[0]["exact"] == cells[1]["exact"]
    assert "| gaussian σ=5 | 2 | 4 | 400 |" in out.with_suffix(".md").read_text()


@pytest.mark.slow
def test_zoo_map_study_bounds_the_same_draws_both_ways(tmp_path):
    bench = _load("calibrate_zoo_map")
    out = tmp_path / "zoo_map.json"
    mechanisms = ["laplace", "gaussian", "truncated-gaussian"]
    argv = ["--reps", "3", "--n", "1e4", "--mechanisms", *mechanisms, "--out", str(out)]
    assert bench.main(argv) == 0
    laplace, gaussian, truncated = json.loads(out.read_text())["cells"]
    # Closed forms of the reference pair (shift 1, scale 5): Mironov's Laplace formula and λ/50.
    lam = np.array([2.0, 5.0, 7.0])
    b = 5.0
    laplace_exact = np.log(
        lam / (2 * lam - 1) * np.exp((lam - 1) / b) + (lam - 1) / (2 * lam - 1) * np.exp(-lam / b)
    ) / (lam - 1)
    np.testing.assert_allclose(laplace["exact"], laplace_exact, rtol=1e-12)
    np.testing.assert_allclose(gaussian["exact"], lam / 50, rtol=1e-12)
    assert laplace["auto"]["mapped"] == gaussian["auto"]["mapped"] == 3
    assert truncated["auto"]["mapped"] == 0  # a bounded support: never mapped
    # Unmapped, "auto" is the outputs' own KDE on the same draws: the same bounds.
    assert truncated["auto"]["tightness"] == truncated["None"]["tightness"]
    assert laplace["auto"]["tightness"] != laplace["None"]["tightness"]
    assert gaussian["auto"]["tightness"] != gaussian["None"]["tightness"]


def test_required_n_reads_the_first_crossing():
    bench = _load("required_n")
    rows = [
        {"n": 500, "tightness": [0.2, 0.6, -1.0]},
        {"n": 1000, "tightness": [0.55, 0.4, 0.1]},
        {"n": 2000, "tightness": [0.95, 0.92, 0.3]},
    ]
    assert bench.first_n(rows, 0, 0.5) == 1000 and bench.first_n(rows, 0, 0.9) == 2000
    assert bench.first_n(rows, 1, 0.5) == 500  # the first n that reaches it
    assert bench.first_n(rows, 2, 0.5) is None
    table = bench.format_table(
        [
            {
                "mechanism": "m",
                "exact": [1.0, 2.0, 3.0],
                "rows": [dict(r, simultaneous=1.0) for r in rows],
            }
        ]
    )
    assert (
        "| m | 1 / 2 / 3 | 1,000 / 2,000 | 500 / 2,000 | > 300,000 / > 300,000 | 1.000 |" in table
    )


@pytest.mark.slow
def test_sequential_ceiling_needs_the_closed_form_levels(tmp_path):
    """One case: a median ≤ n95/3 needs level Φ̄((z_α + z_0.95)/√3) at n95/3 (power 1/2 there),
    0.0287 at α = 0.05; for two cases far apart, the later one's stops count that first level as
    power (its drift is ~0 there) and need the rest from their own segment; the script's JSON."""
    from scipy.stats import norm

    bench = _load("sequential_ceiling")
    one = bench.least_total_alpha([1000], 3.0)
    expected = norm.sf((norm.isf(0.05) + norm.isf(0.05)) / np.sqrt(3))
    np.testing.assert_allclose(one["total"], expected, rtol=1e-9)
    np.testing.assert_allclose(expected, 0.0287, atol=1e-4)
    far = bench.least_total_alpha([100, 10**8], 3.0)  # nearly independent segments
    z_third = (norm.isf(0.05) + norm.isf(0.05)) / np.sqrt(3)
    second = norm.sf(z_third - norm.ppf(0.5 - expected))
    np.testing.assert_allclose(far["total"], expected + second, rtol=1e-3)
    out = tmp_path / "ceiling.json"
    assert bench.main(["--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["gaussian_limit"]["total"] > 0.05  # the three cases of sequential.json
    assert 2.0 < result["oracle_sprt"]["ratio"] < 2.7


@pytest.mark.slow
def test_multid_map_study_factorizes_the_exact_values_and_the_oracle(tmp_path):
    bench = _load("calibrate_multid_map")
    offzoo = importlib.import_module("calibrate_offzoo")  # on the path the study put it on
    gaussian = bench.CELLS["gaussian"]
    exact, oracle = offzoo.exact_and_oracle(gaussian.axes, 10_000)
    lam = np.array([2.0, 5.0, 7.0])
    np.testing.assert_allclose(exact, lam * 2 * 0.2**2 / 2, rtol=1e-9)  # λ‖δ‖²/2, δ = (0.2, 0.2)
    # A Gaussian shift is rotation invariant: the 1-D shift of length 0.2·√2 has the same oracle.
    law = gaussian.axes[0]
    diagonal = offzoo.Law("g", law.logpdf, law.draw, 0.2 * np.sqrt(2.0))
    np.testing.assert_allclose(oracle, offzoo.exact_and_oracle(diagonal, 10_000)[1], rtol=1e-6)
    # The correlated Gaussian: D_λ = λ μᵀΣ⁻¹μ / 2 with Σ, μ as its label says, and its draws
    # have that covariance and that mean shift (5 standard errors).
    corr = bench.CELLS["gaussian_corr"]
    sigma, mu = np.array([[1.0, 0.8], [0.8, 1.0]]), np.array([0.1, -0.1])
    np.testing.assert_allclose(
        offzoo.exact_and_oracle(corr.axes, 10_000)[0],
        lam * (mu @ np.linalg.solve(sigma, mu)) / 2,
        rtol=1e-9,
    )
    m = 200_000
    p, q = corr.draw(np.random.default_rng(0), m)
    np.testing.assert_allclose(np.cov(q.T), sigma, atol=5 * np.sqrt(2.0 / m))
    np.testing.assert_allclose(p.mean(0) - q.mean(0), mu, atol=5 * np.sqrt(2.0 / m))
    # An unshifted axis adds nothing: the uniform × t3 law has the 1-D t3 values.
    mixed = bench.CELLS["uniform_t3"]
    np.testing.assert_allclose(
        offzoo.exact_and_oracle(mixed.axes, 10_000),
        offzoo.exact_and_oracle(offzoo.LAWS["student_t3"], 10_000),
        rtol=1e-7,
    )
    out = tmp_path / "multid_map.json"
    argv = ["--reps", "2", "--n", "2000", "--laws", "gaussian", "--out", str(out)]
    assert bench.main(argv) == 0
    (cell,) = json.loads(out.read_text())["cells"]
    assert cell["exact"] == exact.tolist()
    assert cell["None"]["tightness"] != cell["quantile"]["tightness"]  # the same draws, two maps
    assert cell["quantile"]["auto_maps"] == 2  # a 2-D Gaussian at 2,000 a side: mapped
    study = json.loads(out.read_text())
    assert study["meta"]["complete"] is True
    # --resume keeps what the file holds (marked here) and runs only the missing cell.
    study["cells"][0]["None"]["seconds"] = -1.0
    out.write_text(json.dumps(study))
    assert bench.main(argv[:3] + ["2000", "1000"] + argv[4:] + ["--resume"]) == 0
    kept, added = json.loads(out.read_text())["cells"]
    assert kept["None"]["seconds"] == -1.0 and kept["n"] == 2000
    assert added["n"] == 1000 and added["None"]["seconds"] > 0


def test_tabulated_claims_study_runs_both_order_sets(tmp_path):
    bench = _load("tabulated_claims")
    out = tmp_path / "tabulated.json"
    assert bench.main(["--reps", "3", "--n", "2000", "--only", "0", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert {r["n_orders"] for r in rows} == {4, 151}  # small-n claim grid vs the table's orders
    assert len(result["table_orders"]) == 151 and len(result["paired_same_draws"]) == 5
    for r in rows:
        assert r["refuted"]["ci95"][0] <= r["refuted"]["rate"] <= r["refuted"]["ci95"][1]


@pytest.mark.slow
def test_low_mass_leak_and_support_gap_studies_run(tmp_path):
    leak = _load("low_mass_leak")
    # D_2 = log(0.99 + 0.01 e): the leak lives in the 1% component alone.
    assert leak.exact(2.0) == pytest.approx(np.log(0.99 + 0.01 * np.e), rel=1e-8)
    out = tmp_path / "leak.json"
    argv = ["--reps", "2", "--n", "1e4", "--transforms", "auto", "none", "--out", str(out)]
    assert leak.main(argv) == 0
    (cell,) = json.loads(out.read_text())["cells"]
    assert set(cell) >= {"auto", "None"} and cell["reps"] == 2
    gap = _load("support_gap")
    out = tmp_path / "gap.json"
    argv = ["--reps", "5", "--n", "1e4", "--laws", "gap_50%", "uniform_10k", "--out", str(out)]
    assert gap.main(argv) == 0
    noted = {c["law"]: c["new"]["noted"] for c in json.loads(out.read_text())["cells"]}
    assert noted == {"gap_50%": 1.0, "uniform_10k": 0.0}


@pytest.mark.slow
def test_order_study_sees_the_old_fault_and_restores_the_test(tmp_path):
    bench = _load("order")
    from rdpjax.rejection import betting

    shuffled = betting._shuffled
    out = tmp_path / "order.json"
    argv = ["--part", "betting", "--law", "gaussian", "--reps", "60", "--max-n", "4000"]
    assert bench.main([*argv, "--control", "--out", str(out)]) == 0
    rows = {r["order"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["sorted"]["same_as_drawn"] == rows["reversed"]["same_as_drawn"] == 60
    # The old test (the given order) on the same sorted draws: a different result somewhere.
    assert rows[bench.CONTROL]["same_as_drawn"] < 60
    assert betting._shuffled is shuffled  # the control's stand-in is undone
    for r in rows.values():
        assert r["wilson"][0] <= r["rate"] <= r["wilson"][1]


@pytest.mark.slow
def test_ties_study_refutes_the_rounded_gaussian_and_keeps_a_constants_wealth(monkeypatch):
    bench = _load("betting_ties")
    monkeypatch.setattr(bench, "MAX_N", 4000)
    assert bench.rounded_is_not_gdp(0.6) and not bench.rounded_is_not_gdp(1.0)  # exact law
    rounded = bench.run(bench.rounded, bench.gdp(0.6), reps=10, seed=2001)
    assert rounded["refuted"] == 10  # 0 to 5 of 10 while the sets were scored on ranks
    constant = bench.run(bench.constant, bench.gdp(0.5), reps=4, seed=1006)
    assert constant["refuted"] == 0 and constant["min_final_log_wealth"] == 0.0
    rows = bench.compare({"validity": {"c": constant}, "power": {}},
                         {"validity": {"c": constant}, "power": {}})  # fmt: skip
    assert rows["validity"]["c"]["after_ci"][0] == 0.0


CHEAP_COMPILER_CHECKS = (
    "fusion_conditional_kept",
    "fusion_conditional_under_vmap",
    "bound_compile_entry_counts",
)
BENCHMARK_ONLY_CHECKS = ("program_budget", "padding_floor_programs")
"""jax's own program counts behind two tests of ``tests/estimator/test_bounds.py`` (the budget
keeps memory level; samples up to the padding floor compile nothing on a repeat), which check
what a user sees; they run with the benchmark (``python benchmarks/performance/compiled_programs.py
--quick``), not again in the suite."""


def test_compiled_programs_cheap_checks_hold():
    """benchmarks/performance/compiled_programs.py's checks on small programs, in process (about
    a second), so that the script cannot rot; its full run is slow (the next test)."""
    bench = _load("compiled_programs")
    results = bench.run_checks(CHEAP_COMPILER_CHECKS, quick=True)
    assert all(c.ok is not False for c in results.values()), bench.table(results)


@pytest.mark.slow
def test_compiled_programs_other_checks_hold(tmp_path):
    """The rest of compiled_programs.py's checks (studies, streams, fusion boundaries) but
    :data:`BENCHMARK_ONLY_CHECKS`: each holds. In a fresh process, as the script runs: they count
    what is compiled the first time, which a test process that compiled the same programs before
    cannot see."""
    import subprocess

    bench = _load("compiled_programs")
    names = [n for n in bench.CHECKS if n not in CHEAP_COMPILER_CHECKS + BENCHMARK_ONLY_CHECKS]
    assert set(BENCHMARK_ONLY_CHECKS) <= set(bench.CHECKS)  # renamed there: rename here
    script = Path(bench.__file__)
    root = script.parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = ["--quick", "--only", *names, "--out", str(tmp_path / "c.json")]
    done = subprocess.run([sys.executable, str(script), *argv], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    checks = json.loads((tmp_path / "c.json").read_text())
    assert checks, "the script wrote no checks"
