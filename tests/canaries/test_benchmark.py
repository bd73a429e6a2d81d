"""benchmarks/calibration/canaries.py on a few fixed keys: it runs, and its cells say what they
measure (the full runs are in docs/canaries.md)."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "calibration" / "canaries.py"


def _load(name="canaries.py"):
    """The benchmark script ``name`` of benchmarks/calibration, imported as a module."""
    spec = importlib.util.spec_from_file_location(f"bench_{name[:-3]}", SCRIPT.with_name(name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_validity_and_power_cells(tmp_path):
    pytest.importorskip("jax_privacy")
    bench = _load()
    out = tmp_path / "canaries.json"
    common = ["--m", "300", "--eps", "4", "--reps", "4", "--out", str(out)]
    assert bench.main(["--part", "validity", *common]) == 0
    assert bench.main(["--part", "power", *common]) == 0
    result = json.loads(out.read_text())
    null, gaussian, laplace = result["validity"]
    assert null["cell"] == "null" and null["epsilon_zero"]["reps"] == 4
    assert gaussian["cell"] == "gaussian" and set(gaussian) >= {"epsilon_below", "zcdp_kept"}
    assert laplace["epsilon_below"]["count"] >= 3  # fixed keys; each miss has probability ≤ 0.05
    (power,) = result["power"]
    # The ratios are those of the means printed beside them.
    assert power["ratio_epsilon"] == pytest.approx(
        power["ours_epsilon"] / power["jax_epsilon_one_run"]
    )
    assert power["ours_mu"] <= power["mu"] and len(result["commands"]["power"]) == 1


@pytest.mark.slow
def test_dpsgd_run_bounds_stay_below_the_accountant(tmp_path):
    """A small DP-SGD run (m = 200 canaries, 10 steps): the one-run bounds stay below the
    accountant's ε and the true μ (fixed key), and the accountant's claim stands."""
    pytest.importorskip("sklearn")
    spec = importlib.util.spec_from_file_location(
        "canaries_dpsgd", SCRIPT.with_name("canaries_dpsgd.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "dpsgd.json"
    argv = ["--m", "200", "--steps", "10", "--width", "1100", "--epsilon", "8", "--runs", "50"]
    argv += ["--out", str(out)]
    assert module.main(argv) == 0
    result = json.loads(out.read_text())
    assert result["epsilon_accountant"] == pytest.approx(8.0, rel=1e-2)
    one = result["one_run"]
    assert 0.0 < one["epsilon"] < result["epsilon_accountant"]  # the canaries are seen, validly
    assert one["mu"] < result["mu_true"] and not one["refuted"] and not result["approx_dp_refuted"]
    assert result["test_accuracy"] > 0.5
    many = result["many_run"]  # 50 + 50 runs of one canary: valid, so below the truth
    assert many["runs_per_side"] == 50 and not many["refuted"] and many["mu"] < result["mu_true"]


def _dpsgd():
    spec = importlib.util.spec_from_file_location(
        "canaries_dpsgd", SCRIPT.with_name("canaries_dpsgd.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_runs_equals_train():
    """The closed-form per-example gradients of ``train_runs`` against autodiff's in ``train``,
    on the same noise key (float32: agreement to a few ulps of the parameters' scale)."""
    pytest.importorskip("sklearn")
    jax = pytest.importorskip("jax")
    bench = _dpsgd()
    rng = np.random.default_rng(0)
    phi, y, _, _ = bench._data(64, rng)
    phi, y = phi[:40], y[:40]
    u = bench._canaries(phi, 1, rng)[0]
    keys = jax.random.split(jax.random.key(1), 2)
    runs = bench.train_runs(phi, y, u, 3.0, 15, 0.5, keys)
    for key, theta in zip(keys, runs, strict=True):
        direct = bench.train(phi, y, u, 3.0, 15, 0.5, key)
        np.testing.assert_allclose(theta, direct, atol=1e-5 * np.abs(direct).max())
    assert not np.allclose(runs[0], runs[1])  # different keys, different runs


def test_mislabelled_canaries_run_once_and_stay_below_the_accountant(tmp_path):
    """The black-box mode, small (m = 150 mislabelled held-out images, 10 steps, one run):
    the scores are the negative losses on the wrong labels (scipy's log-softmax), the bounds
    stay below the accountant and the true μ (fixed key), and the claim stands."""
    pytest.importorskip("sklearn")
    from scipy.special import log_softmax

    bench = _dpsgd()
    rng = np.random.default_rng(0)
    theta, phi = rng.normal(size=(2, 7, 10)), rng.normal(size=(5, 7))
    labels = rng.integers(0, 10, 5)
    want = -np.stack([log_softmax(phi @ t, axis=1)[np.arange(5), labels] for t in theta])
    np.testing.assert_allclose(bench._losses(theta, phi, labels), want, rtol=1e-12)
    out = tmp_path / "black.json"
    argv = ["--canaries", "mislabelled", "--m", "150", "--steps", "10", "--width", "256"]
    assert bench.main([*argv, "--epsilon", "8", "--runs", "0", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["canaries"] == "mislabelled" and result["m"] == 150
    one = result["one_run"]
    assert one["epsilon"] < result["epsilon_accountant"] and one["mu"] < result["mu_true"]
    assert not one["refuted"] and not result["approx_dp_refuted"] and "many_run" not in result
    assert one["n_in"] + one["n_out"] == 150 and result["test_accuracy"] > 0.5


def test_canary_split_scan_scores_the_library_split(tmp_path):
    """benchmarks/calibration/canary_split.py on two laws, 3 keys: its ``even`` rule is the
    pair-by-pair f-DP bound at 0.95·α/G (the library's where the joint test is not used),
    computed directly on the same scores, and every adaptive rule's pairs have exactly the
    totals' guesses."""
    pytest.importorskip("jax_privacy")
    from rdpjax.canaries import fdp
    from rdpjax.canaries.guesses import correct_guesses, guess_grid

    bench = _load("canary_split.py")
    out = tmp_path / "split.json"
    argv = ["--part", "scan", "--m", "400", "--laws", "gauss", "sparse", "--reps", "3"]
    assert bench.main([*argv, "--out", str(out)]) == 0
    cells = json.loads(out.read_text())["scan"]
    assert [c["law"] for c in cells] == ["gauss", "sparse"]
    for cell in cells:
        law = bench.LAWS.index(cell["law"])
        fdp_bounds = []
        for r in range(3):
            rng = np.random.default_rng([7, 400, law, r])
            scores, bits = bench._law(cell["law"], rng, 400)
            grid = guess_grid(400, alpha=0.05)
            count = correct_guesses(scores, bits, grid)
            level = 0.95 * 0.05 / grid.shape[0]
            fdp_bounds.append(fdp.epsilon_lower(400, grid.sum(1), count, 1e-5, level).max())
            totals = bench.guess_totals(400)
            pairs = bench.choose_pairs(scores, totals, 1.5)
            assert np.array_equal(pairs.sum(axis=1), totals)
        assert cell["mean"]["even"] == pytest.approx(np.mean(fdp_bounds), rel=1e-12)


def test_canary_joint_compares_the_rules_on_the_same_scores(tmp_path):
    """benchmarks/calibration/canary_joint.py on two laws, 2 keys: the library's ε is the joint
    rule's where the joint test is usable (m = 400, δ = 10⁻⁵) and the pair-by-pair rule's where
    it is not (δ = 10⁻⁴: mδ = 0.04), as the script checks per replication."""
    pytest.importorskip("jax_privacy")
    bench = _load("canary_joint.py")
    out = tmp_path / "joint.json"
    for delta in ("1e-5", "1e-4"):
        argv = ["--m", "400", "--laws", "gauss", "sparse", "--reps", "2", "--delta", delta]
        assert bench.main([*argv, "--shares", "0.05", "--out", str(out)]) == 0
    cells = json.loads(out.read_text())["cells"]
    assert [(c["law"], c["delta"]) for c in cells] == [
        ("gauss", 1e-5),
        ("sparse", 1e-5),
        ("gauss", 1e-4),
        ("sparse", 1e-4),
    ]
    for c in cells:
        rule = "joint_0.05" if c["delta"] == 1e-5 else "pairwise"
        assert c["joint_used"] == (c["delta"] == 1e-5)
        assert c["mean"]["library"] == c["mean"][rule]
