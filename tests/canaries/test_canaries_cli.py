"""``rdpjax canaries``: exit codes 0/1/2, file formats, one line on stderr for bad input."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rdpjax.cli import main


@pytest.fixture
def leaky(tmp_path):
    """Canaries whose scores give their bits away (m = 2000), as CSV with a header and .npy."""
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, 2000)
    table = np.stack([rng.normal(3.0 * bits, 1.0), bits], axis=1)
    csv, npy = tmp_path / "scores.csv", tmp_path / "scores.npy"
    np.savetxt(csv, table, delimiter=",", header="score,bit", comments="")
    np.save(npy, table)
    return csv, npy


def test_refuted_claims_exit_1_and_true_ones_0(leaky, capsys):
    csv, npy = leaky
    assert main(["canaries", str(csv), "--claim-epsilon", "1", "--claim-delta", "1e-5"]) == 1
    assert capsys.readouterr().out.startswith("REFUTED: (ε, δ)-DP")
    assert main(["canaries", str(npy), "--claim-epsilon", "1"]) == 1  # pure ε-DP
    assert main(["canaries", str(npy), "--claim-gdp", "0.5"]) == 1
    assert main(["canaries", str(csv), "--claim-gdp", "20"]) == 0
    assert main(["canaries", str(csv), "--claim-epsilon", "30", "--claim-delta", "1e-5"]) == 0
    assert capsys.readouterr().out.count("not refuted") == 2
    assert main(["canaries", str(csv)]) == 0  # no claim: bounds only


def test_json_output_has_the_bounds_and_verdict(leaky, capsys):
    csv, _ = leaky
    assert main(["canaries", str(csv), "--claim-zcdp", "0.1", "--json", "--alpha", "0.01"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["refuted"] is True and out["alpha"] == 0.01 and out["m"] == 2000
    assert out["epsilon"] > 1 and out["verdict"].startswith("REFUTED")


@pytest.mark.parametrize(
    "rows, match",
    [
        ("score,bit\n1.0,1\nnan,0\n", "scores must be finite"),
        ("1.0,1\n2.0,0\n3.0,2\n", "bits must be 0 or 1"),
        ("1.0,1\n2.0,1\n", "no out canary"),
        ("1.0,0\n2.0,0\n", "no in canary"),
        ("1.0,1,3\n2.0,0,4\n", "expected two columns"),
        ("1.0,1\n2.0\n", "could not read scores"),
        ("1.0\n2.0\n", "expected two columns"),
        ("1.0;1\n2.0;0\n", "could not convert string '1.0;1'"),  # the first row named
    ],
)
def test_bad_files_exit_2_with_one_line(tmp_path, capsys, rows, match):
    path = tmp_path / "bad.csv"
    path.write_text(rows)
    assert main(["canaries", str(path), "--claim-epsilon", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and match in captured.err, captured.err


def test_missing_file_and_bad_npy_exit_2(tmp_path, capsys):
    assert main(["canaries", str(tmp_path / "none.csv")]) == 2
    np.save(tmp_path / "flat.npy", np.zeros(5))
    assert main(["canaries", str(tmp_path / "flat.npy")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "no such file" in err[0] and "two columns" in err[1]


def test_the_program_exits_1_and_2_as_a_process(leaky, tmp_path):
    csv, _ = leaky
    run = [sys.executable, "-m", "rdpjax.cli", "canaries"]
    done = subprocess.run([*run, str(csv), "--claim-gdp", "0.5"], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout.startswith("REFUTED"), done.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1\n2 inf\n")
    done = subprocess.run([*run, str(bad)], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "bits must be 0 or 1" in done.stderr


def test_metrics_printed_and_report_written(leaky, tmp_path, capsys):
    csv, _ = leaky
    folder = tmp_path / "report"
    code = main(["canaries", str(csv), "--claim-epsilon", "1", "--report", str(folder)])
    assert code == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "metrics (AUROC and 3 operating points), together at 95%:"
    assert lines[2].startswith("AUROC ") and len(lines) == 6
    assert [ln.split("(target ")[1][:5] for ln in lines[3:]] == ["0.001", "0.01)", "0.1)"]
    as_json = main(["canaries", str(csv), "--claim-epsilon", "1", "--json"])
    printed = json.loads(capsys.readouterr().out)
    # Bonferroni over what is printed: the AUROC and 3 points share α = 0.05.
    assert as_json == 1 and printed["auroc"]["alpha"] == pytest.approx(0.05 / 4)
    assert all(p["alpha"] == pytest.approx(0.05 / 4) for p in printed["points"])
    record = json.loads((folder / "report.json").read_text())
    assert record["refuted"] is True and 0.5 < record["auroc"]["value"] <= 1.0
    assert [p["target_fpr"] for p in record["points"]] == [0.001, 0.01, 0.05, 0.1, 0.25, 0.5]
    text = (folder / "report.md").read_text()
    assert "REFUTED" in text and "![trade-off curve](tradeoff.png)" in text
    png = (folder / "tradeoff.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_report_into_a_file_is_exit_2(leaky, tmp_path, capsys):
    csv, _ = leaky
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["canaries", str(csv), "--report", str(blocker / "sub")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_json_carries_the_metrics(leaky, capsys):
    _, npy = leaky
    assert main(["canaries", str(npy), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    low, mid, high = record["points"]  # FPR 0.001, 0.01, 0.1
    assert low["certified"] is False and low["threshold"] is None  # ~1000 out scores: too few
    assert mid["certified"] and mid["fpr_interval"][1] <= 0.01 and high["tpr"] >= mid["tpr"]
    lo, hi = record["auroc"]["interval"]
    assert lo <= record["auroc"]["value"] <= hi


def _dpsgd_event(sigma, rate, steps):
    """DP-SGD's event, written here from dp_accounting (not through the command's helper)."""
    import dp_accounting

    sampled = dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma))
    return dp_accounting.SelfComposedDpEvent(sampled, steps)


def test_a_dpsgd_claim_is_checked_as_the_python_route_checks_it(leaky, tmp_path, capsys):
    """--claim-dpsgd σ,q,T: exit 1 when refuted, 0 when not, the same verdict as one_run_bits
    with from_dp_accounting(the event); σ = 5, q = 0.01, T = 10 claims ε ≈ 0.01 at δ = 10⁻⁵, far
    below what canaries that give their bits away show."""
    pytest.importorskip("dp_accounting")
    from rdpjax.canaries import one_run_bits
    from rdpjax.claims import from_dp_accounting

    csv, _ = leaky
    assert main(["canaries", str(csv), "--claim-dpsgd", "5,0.01,10", "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    claim = from_dp_accounting(_dpsgd_event(5.0, 0.01, 10))
    direct = one_run_bits(table[:, 0], table[:, 1], claim)
    assert printed["refuted"] is True and direct.refuted is True
    assert printed["claim"]["kind"] == "dp_accounting" and printed["epsilon"] == direct.epsilon
    # Weak canaries (a shift of 0.5: 0.5-GDP) against σ = 2, q = 1, T = 1 (0.5-GDP, true):
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2, 1000)
    weak = tmp_path / "weak.csv"
    np.savetxt(weak, np.stack([rng.normal(0.5 * bits, 1.0), bits], axis=1), delimiter=",")
    assert main(["canaries", str(weak), "--claim-dpsgd", "2,1,1"]) == 0
    assert capsys.readouterr().out.startswith("not refuted: DP-SGD σ=2, q=1, T=1")


@pytest.mark.parametrize(
    "value, match",
    [
        ("1,0.01", "expects NOISE_MULTIPLIER,SAMPLING_RATE,STEPS"),
        ("1,0.01,10,3", "expects NOISE_MULTIPLIER,SAMPLING_RATE,STEPS"),
        ("0,0.01,10", "noise multiplier must be a finite number > 0"),
        ("-1,0.01,10", "noise multiplier must be a finite number > 0"),
        ("nan,0.01,10", "noise multiplier must be a finite number > 0"),
        ("1,0,10", "sampling rate must be in (0, 1]"),
        ("1,1.5,10", "sampling rate must be in (0, 1]"),
        ("1,0.01,2.5", "steps must be a whole number ≥ 1"),
        ("1,0.01,0", "steps must be a whole number ≥ 1"),
        ("one,0.01,10", "not a number: 'one'"),
    ],
)
def test_bad_dpsgd_claims_exit_2_with_one_line(leaky, capsys, value, match):
    csv, _ = leaky
    with pytest.raises(SystemExit) as exit_:
        main(["canaries", str(csv), f"--claim-dpsgd={value}"])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert "--claim-dpsgd" in captured.err and match in captured.err, captured.err


def test_dpsgd_and_another_claim_exit_2(leaky, capsys):
    csv, _ = leaky
    with pytest.raises(SystemExit) as exit_:
        main(["canaries", str(csv), "--claim-dpsgd", "1,0.1,10", "--claim-gdp", "1"])
    assert exit_.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_the_seed_orders_tied_scores_as_the_library_key_does(tmp_path, capsys):
    """Integer scores tie: ``--seed S`` is ``one_run_bits(..., key=jax.random.key(S))``, and no
    flag is the library's default key; a different seed may move the bound, never the input."""
    import jax

    from rdpjax.canaries import one_run_bits

    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2, 1000)
    scores = np.round(rng.normal(1.5 * bits, 1.0))
    path = tmp_path / "tied.csv"
    np.savetxt(path, np.stack([scores, bits], axis=1), delimiter=",")
    printed = {}
    for argv in ([], ["--seed", "0"], ["--seed", "7"]):
        assert main(["canaries", str(path), "--json", *argv]) == 0
        printed[tuple(argv)] = json.loads(capsys.readouterr().out)["epsilon"]
    assert printed[()] == printed[("--seed", "0")] == one_run_bits(scores, bits).epsilon
    assert printed[("--seed", "7")] == one_run_bits(scores, bits, key=jax.random.key(7)).epsilon


def test_rows_in_exponent_form_are_data_and_a_header_is_skipped(tmp_path):
    """``numpy.savetxt``'s default format writes ``1.000e+00``: its first row is data (it was
    once dropped as a header, for its letter e); a header line of names is still skipped."""
    from rdpjax.cli.canaries import read_scores

    table = np.array([[0.5, 1], [-1.25, 0], [2.0, 1]])
    plain, named = tmp_path / "plain.csv", tmp_path / "named.csv"
    np.savetxt(plain, table, delimiter=",")
    np.savetxt(named, table, delimiter=",", header="score,bit", comments="")
    for path in (plain, named):
        scores, bits = read_scores(path)
        np.testing.assert_array_equal(scores, table[:, 0])
        np.testing.assert_array_equal(bits, table[:, 1])


def test_an_array_of_strings_is_named_by_its_type(tmp_path, capsys):
    path = tmp_path / "names.npy"
    np.save(path, np.array([["a", "1"], ["b", "0"]]))
    assert main(["canaries", str(path), "--claim-epsilon", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "real numbers; got <U1 values" in err[0]


def test_an_event_the_pld_accountant_cannot_compose_is_read_through_rdp(leaky, monkeypatch, capsys):
    """σ = 0.001 made the PLD accountant ask for 76 GiB: a MemoryError traceback and exit 1.
    (The failure is simulated, so that the test does not depend on the machine's memory.)"""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import PLDAccountant

    from rdpjax.canaries import tradeoffs

    def out_of_memory(self, event, count=1):
        raise MemoryError("Unable to allocate 76.0 GiB")

    monkeypatch.setattr(PLDAccountant, "compose", out_of_memory)
    tradeoffs._pld_pairs.cache_clear()
    try:
        csv, _ = leaky
        # σ = 5, q = 0.01, T = 10 claims ε ≈ 0.01: refuted by leaky canaries, through RDP too.
        with pytest.warns(UserWarning, match="PLD accountant cannot compose .* RDP curve"):
            assert main(["canaries", str(csv), "--claim-dpsgd", "5,0.01,10"]) == 1
    finally:
        tradeoffs._pld_pairs.cache_clear()
    assert capsys.readouterr().out.startswith("REFUTED")
