"""`rdpjax audit` on the user's own code, claims on the command line, and the one-line errors.

The audits use n = 20,000 outputs per database at λ = 2, 5 and a fixed seed, so every outcome
is deterministic; the margins quoted in the docstrings are those of seed 0.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from references import laplace_exact

from rdpjax.cli import main
from rdpjax.mechanisms import registry

N = "20000"
ORDERS = ["--lam", "2", "5"]

MECH_PY = '''
import jax
import jax.numpy as jnp
import numpy as np

EPSILON = 1.0


def noisy_sum(rng, database, n):
    """A sum with Laplace noise of scale 1/ε, as for sensitivity 1; but one entry in [0, 2]
    moves the sum by 2, so this is only 2ε-DP."""
    return np.sum(database) + rng.laplace(0.0, 1.0 / EPSILON, size=n)


def fixed_sum(rng, database, n):
    """The same sum with the noise for sensitivity 2: ε-DP."""
    return np.sum(database) + rng.laplace(0.0, 2.0 / EPSILON, size=n)


def jax_sum(key, database, n):
    """fixed_sum as a JAX sampler."""
    noise = (2.0 / EPSILON) * jax.random.laplace(key, (n,))
    return jnp.sum(database).astype(noise.dtype) + noise


def jax_rr(key, database, n):
    """Randomized response at ε = 1 on the first entry (a bit): kept w.p. e/(1+e)."""
    keep = jax.random.bernoulli(key, np.e / (1.0 + np.e), (n,))
    bit = database[0].astype(jnp.int32)
    return jnp.where(keep, bit, 1 - bit)


def above_two(outputs):
    """A fixed projection: whether the output exceeds 2."""
    return (np.asarray(outputs) > 2.0).astype(np.int32)


def check(database):
    raise RuntimeError("boom in check")


def broken(rng, database, n):
    return check(database)


def jax_broken(key, database, n):
    return check(database)


VALUE = 3
'''

PAIR = ["--x", "[2, 1]", "--x-prime", "[0, 1]"]  # one entry differs, by 2


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("user")
    (folder / "mech.py").write_text(MECH_PY)
    (folder / "bad_import.py").write_text(
        "import numpy as np\n\nraise ValueError('bad at import')\n"
    )
    (folder / "not_a_folder").write_text("")
    np.save(folder / "x.npy", np.array([2.0, 1.0]))
    return folder


def _bernoulli_divergence(lam: float, p: float, q: float) -> float:
    """D_λ(Bern(p) ‖ Bern(q)) from the definition."""
    return math.log(p**lam * q ** (1 - lam) + (1 - p) ** lam * (1 - q) ** (1 - lam)) / (lam - 1)


def _exit_code(argv) -> int:
    """main's status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


# ----------------------------------------------------------------------------- claims


@pytest.mark.slow
def test_a_wrong_sensitivity_is_refuted_and_the_fixed_twin_is_not(user_dir, tmp_path, capsys):
    """noisy_sum adds Laplace(1) to a sum that moves by 2: D_λ is that of Laplace shift 2,
    scale 1 (1.60 at λ = 2, 1.85 at λ = 5), far above the ε-DP curve of ε = 1 (0.74, 0.92).
    Refuted: exit status 1, the lower bounds 35 standard errors above the claim. fixed_sum
    (scale 2) is 1-DP, so it is refuted with probability ≤ α = 0.05 at any seed; at seed 0 its
    bounds sit 8 and 13 standard errors below the claim. Exit status 0, and its report and plot
    go to folders that did not exist."""
    base = [*PAIR, "--numpy", "--claim-epsilon", "1", "--n", N, *ORDERS, "--json"]
    assert main(["audit", f"{user_dir}/mech.py:noisy_sum", *base]) == 1
    bug = json.loads(capsys.readouterr().out)
    assert bug["claim"]["kind"] == "pure_dp" and bug["claim"]["params"]["epsilon"] == 1.0
    assert (
        bug["is_refuted"]
        and bug["refuted"] is True
        and all(bug["refuted_at"])
        and bug["verdict"].startswith("REFUTED")
    )
    lower, claimed, se = (np.array(bug[k]) for k in ("lower", "claimed", "std_error"))
    assert np.all(lower - claimed > 20 * se)
    exact = [laplace_exact(lam, b=0.5) for lam in bug["lam"]]  # shift 2, scale 1
    assert np.all(lower <= exact)

    report, png = tmp_path / "new" / "report", tmp_path / "plots" / "fixed.png"
    more = ["--report", str(report), "--plot", str(png), "--seed", "0"]
    assert main(["audit", f"{user_dir}/mech.py:fixed_sum", *base, *more]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert not fixed["is_refuted"] and fixed["verdict"].startswith("not refuted")
    lower, claimed, se = (np.array(fixed[k]) for k in ("lower", "claimed", "std_error"))
    assert np.all(claimed - lower > 4 * se)
    assert np.all(lower <= [laplace_exact(lam, b=1.0) for lam in fixed["lam"]])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    record = json.loads((report / "report.json").read_text())
    meta = record["meta"]
    assert meta["command"].startswith("rdpjax audit ") and "--claim-epsilon 1" in meta["command"]
    assert (meta["seed"], meta["n"], meta["claim_epsilon"], meta["numpy"]) == (0, 20000, 1, True)
    assert meta["lam"] == [2.0, 5.0] and {"rdpjax", "jax"} <= set(meta)
    assert (report / "report.md").read_text().startswith("# Audit of fixed_sum")


@pytest.mark.slow
def test_a_jax_sampler_file_and_quiet(user_dir, capsys):
    """jax_sum is fixed_sum in JAX (default mode: from_sampler). A 0.05-zCDP claim says
    ε(λ) ≤ 0.1 at λ = 2 where the truth is 0.62: refuted, and --quiet prints the verdict only."""
    argv = ["audit", f"{user_dir}/mech.py:jax_sum", *PAIR, "--n", N, *ORDERS]
    assert main([*argv, "--claim-zcdp", "0.05", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("REFUTED") and "zCDP" in out


def test_project_is_applied_to_the_outputs(user_dir, capsys):
    """With --project above_two the bound is on Bernoulli outputs: P(out > 2) is
    p = 1 − e^{−1/2}/2 on x (sum 3) and q = e^{−1/2}/2 on x' (sum 1), so D_λ is that of
    randomized response at log(p/q) = 0.83: at most 0.16 at λ = 2, far below the 0.62 of the raw
    outputs. The bound is discrete, positive and below this truth."""
    argv = ["audit", f"{user_dir}/mech.py:fixed_sum", "--numpy", *PAIR, "--n", N, *ORDERS]
    assert main([*argv, "--project", f"{user_dir}/mech.py:above_two", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["projected"] and out["bound"]["discrete"] is True and out["claim"] is None
    q = 0.5 * math.exp(-0.5)
    exact = [_bernoulli_divergence(lam, 1.0 - q, q) for lam in out["lam"]]
    lower = np.array(out["lower"])
    assert np.all(lower > 0) and np.all(lower <= exact)


def test_a_discrete_jax_sampler(user_dir, capsys):
    """--discrete: jax_rr's integer outputs are counted (relative frequencies). Randomized
    response at ε = 1 is 2-DP a fortiori: not refuted, and the bound is below its exact D_λ."""
    argv = ["audit", f"{user_dir}/mech.py:jax_rr", "--discrete", "--x", "[1]", "--x-prime", "[0]"]
    assert main([*argv, "--n", N, *ORDERS, "--claim-epsilon", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bound"]["discrete"] is True and not out["is_refuted"]
    p = np.e / (1.0 + np.e)
    exact = [_bernoulli_divergence(lam, p, 1.0 - p) for lam in out["lam"]]
    assert np.all(np.array(out["lower"]) <= exact) and np.all(np.array(out["lower"]) > 0)


@pytest.mark.slow
def test_bound_checks_a_zcdp_claim(tmp_path, capsys):
    """Samples of N(1, 1) and N(0, 1): D_λ = λ/2, i.e. exactly 0.5-zCDP. A 0.1-zCDP claim
    (0.2 at λ = 2, truth 1) is refuted: exit 1. A 2-zCDP claim (4 at λ = 2) is not: exit 0."""
    rng = np.random.default_rng(0)
    np.save(tmp_path / "p.npy", 1.0 + rng.standard_normal(20000))
    np.save(tmp_path / "q.npy", rng.standard_normal(20000))
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--lam", "2"]
    assert main([*argv, "--claim-zcdp", "0.1", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["claim"]["kind"] == "zcdp" and out["refuted_at"] == [True] and out["refuted"] is True
    assert out["verdict"].startswith("REFUTED") and out["claimed"] == [pytest.approx(0.2)]
    assert 0.2 < out["lower"][0] <= 1.0
    assert main([*argv, "--claim-zcdp", "2"]) == 0
    text = capsys.readouterr().out
    assert "lower" in text and text.splitlines()[-1].startswith("not refuted")
    assert _exit_code([*argv, "--claim-zcdp", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rdpjax bound: error: --claim-zcdp -1:") and "\n" not in err


def test_audit_checks_a_dpsgd_claim(capsys):
    """The zoo's Gaussian (scale 5, sensitivity 1: ε(λ) = λ/50) against --claim-dpsgd 5,0.01,10
    (ε(λ) about 10⁻⁵λ at small λ, dp_accounting's RDP of 10 steps at q = 0.01): refuted, exit 1."""
    pytest.importorskip("dp_accounting")
    argv = ["audit", "gaussian", "--n", N, *ORDERS, "--claim-dpsgd", "5,0.01,10", "--json"]
    assert main(argv) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["claim"]["kind"] == "dp_accounting" and out["refuted"] is True


@pytest.mark.slow
def test_bound_with_a_claim_and_no_orders_uses_the_validated_grid(tmp_path, capsys):
    """No --lam: the claim grid for this n (λ ≤ 5 below 10⁴ a side) in both directions, the
    configuration whose error rates docs/claims.md reports; --lam keeps one direction."""
    from rdpjax.claims.orders import CLAIM_ORDERS, SMALL_N_CLAIM_ORDERS

    rng = np.random.default_rng(1)
    for n, grid in ((5_000, SMALL_N_CLAIM_ORDERS), (10_000, CLAIM_ORDERS)):
        np.save(tmp_path / "p.npy", 1.0 + rng.standard_normal(n))
        np.save(tmp_path / "q.npy", rng.standard_normal(n))
        argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--claim-zcdp", "0.5"]
        assert main([*argv, "--json"]) == 0  # the truth: exactly 0.5-zCDP
        out = json.loads(capsys.readouterr().out)
        assert out["lam"] == list(grid) and out["both_directions"]
        # × 2 families: Gaussian samples are mapped by default and their own KDE is bounded too.
        assert out["n_bounds"] == 2 * 2 * len(grid)
    assert main([*argv, "--lam", "2", "--json"]) == 0
    assert not json.loads(capsys.readouterr().out)["both_directions"]


# ----------------------------------------------------------------------------- user code


@pytest.mark.parametrize(
    ("reference", "mode", "frames"),
    [
        ("mech.py:broken", ["--numpy"], ["in broken", "in check"]),
        ("mech.py:jax_broken", [], ["in jax_broken", "in check"]),  # raised under jax.jit
        ("bad_import.py:f", [], ["in <module>"]),
    ],
)
def test_an_error_in_user_code_prints_their_traceback(user_dir, capsys, reference, mode, frames):
    argv = ["audit", f"{user_dir}/{reference}", *mode, *PAIR, "--n", "1000"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.rstrip("\n").splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert all(f'File "{user_dir}' in line for line in lines if line.startswith('  File "'))
    assert all(frame in captured.err for frame in frames)
    message = "RuntimeError: boom in check" if "mech" in reference else "ValueError: bad at import"
    assert lines[-2] == message
    assert lines[-1] == f"rdpjax audit: error in {user_dir}/{reference}: {message}"
    assert captured.out == ""


def test_a_module_reference_is_imported_from_the_current_folder(tmp_path, monkeypatch):
    """package.module:function: imported by name, the current folder first on the path during
    the import only; the function comes back guarded (its errors become UserCodeError)."""
    from rdpjax.cli._loading import UserCodeError, load_function

    package = tmp_path / "rdpjax_test_userpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = "def double(v):\n    return 2 * v\n\n\ndef fail(v):\n    raise KeyError(v)\n"
    (package / "mech.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    path_before = list(sys.path)
    assert load_function("rdpjax_test_userpkg.mech:double")(3) == 6
    assert sys.path == path_before
    with pytest.raises(UserCodeError) as info:
        load_function("rdpjax_test_userpkg.mech:fail")("k")
    assert isinstance(info.value.original, KeyError)
    assert info.value.reference == "rdpjax_test_userpkg.mech:fail"


def test_numpy_code_run_as_a_jax_sampler_gets_a_hint(user_dir, capsys):
    assert main(["audit", f"{user_dir}/mech.py:noisy_sum", *PAIR, "--n", "1000"]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"rdpjax audit: error in {user_dir}/mech.py:noisy_sum: AttributeError")
    assert last.endswith("add --numpy)")


# ----------------------------------------------------------------------------- mistakes


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{d}/missing.py:f", *PAIR], "missing.py: no such file"),
        (["{d}/mech.py:nothing", *PAIR], "has no attribute 'nothing'; it defines above_two"),
        (["{d}/mech.py:VALUE", *PAIR], "is not a function"),
        (["no_such_module.sub:f", *PAIR], "no module named 'no_such_module'"),
        (["{d}/mech.py", *PAIR], "name the function too"),
        (["{d}/mech.py:noisy_sum", "--numpy"], "--x and --x-prime required"),
        (["{d}/mech.py:noisy_sum", "--x", "[2, 1", "--x-prime", "[0]"], "expected a JSON list"),
        (["{d}/mech.py:noisy_sum", "--x", "[[1], [1, 2]]", "--x-prime", "[0]"], "lengths"),
        (["{d}/mech.py:noisy_sum", "--x", '["a"]', "--x-prime", "[0]"], "must be numbers"),
        (["{d}/mech.py:noisy_sum", "--x", "{d}/none.npy", "--x-prime", "[0]"], "no such file"),
        (["{d}/mech.py:noisy_sum", "--param", "k=2", *PAIR], "--param sets a zoo"),
        (["{d}/mech.py:noisy_sum", *PAIR, "--project", "{d}/mech.py:nope"], "no attribute"),
        (["laplace", "--numpy"], "--numpy describes your own function"),
        (["laplace", "--x", "[1]"], "give both --x and --x-prime"),
        (["laplace", "--param", "scale=abc"], "--param scale=abc: scale must be a number > 0"),
        (["kary-randomized-response", "--param", "k=2.7"], "k must be a whole number ≥ 2"),
        (["sparse-vector", "--param", "variant=xyz"], "one of lyu, lee_clifton, stoddard"),
        (["laplace", "--claim-epsilon", "-1"], "--claim-epsilon -1: epsilon must be"),
        (["laplace", "--claim-epsilon", "abc"], "--claim-epsilon: not a number"),
        (["laplace", "--claim-epsilon", "1", "--claim-zcdp", "1"], "not allowed with"),
        (["laplace", "--claim-rdp", "2=0.1,x"], "ORDER=EPSILON"),
        (["laplace", "--claim-rdp", "1=0.1"], "order λ must be finite and > 1"),
        (["laplace", "--claim-dpsgd", "1,2,10"], "sampling rate must be in (0, 1]"),
        (["laplace", "--claim-dpsgd", "1,0.1,10", "--claim-gdp", "1"], "not allowed with"),
        (["laplace", "--json", "--quiet"], "not allowed with"),
        (["laplace", "--plot", "{d}/not_a_folder/a.png"], "is a file, not a folder"),
        (["laplace", "--plot", "{d}/a.xyz"], "unsupported file type '.xyz'"),
        (["laplace", "--report", "{d}/not_a_folder"], "exists and is not a folder"),
    ],
)
def test_mistakes_are_one_line_with_exit_status_2(user_dir, capsys, argv, message):
    argv = [a.replace("{d}", str(user_dir)) for a in argv]
    assert _exit_code(["audit", *argv, "--n", "1000"]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("rdpjax audit: error:") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and captured.out == ""


def test_an_npy_database_is_read(user_dir, capsys):
    """--x FILE.npy is read; the error that follows concerns the other database only."""
    argv = ["audit", f"{user_dir}/mech.py:noisy_sum", "--numpy", "--x", f"{user_dir}/x.npy"]
    assert main([*argv, "--x-prime", "[1, 2"]) == 2
    assert "--x-prime '[1, 2'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- registry


def test_registry_parses_typed_parameters_and_builds_the_zoo():
    """Every entry builds at its paper's parameters, each default passes its own type, and
    parsing keeps types: whole numbers stay ints (1e1 → 10), 2.7 is refused, not truncated."""
    for entry in registry.ENTRIES.values():
        mech = entry.make()
        assert entry.label().startswith(entry.title)
        x, x_prime = entry.reference_pair(mech)
        assert np.shape(x) == np.shape(x_prime)
        for param in entry.params:
            assert param.check(param.default) == param.default
    orth = registry.get("orthogonal-series")
    assert orth.parse(["k=1e1", "alpha=0.5", "ties=literal"]) == {
        "k": 10,
        "alpha": 0.5,
        "ties": "literal",
    }
    assert orth.make(k=2, ties="literal").ties == "literal"
    with pytest.raises(ValueError, match="whole number"):
        orth.parse(["k=2.7"])
    with pytest.raises(ValueError, match="whole number"):
        orth.make(k=2.7)
    with pytest.raises(ValueError, match="unknown parameter 'width'"):
        orth.make(width=1)
    with pytest.raises(ValueError, match="choose one of: gaussian"):
        registry.get("nope")
    assert [e.title for e in registry.experiments()] == [
        "Laplace",
        "Gaussian",
        "Subsampled Laplace",
        "Subsampled Gaussian",
        "Randomized response",
        "Shuffled RR",
        "Noisy GD",
    ]


def test_audit_help_lists_the_zoo_parameters(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = capsys.readouterr().out
    for entry in registry.ENTRIES.values():
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(entry.name + " "))
        assert all(f"{p.name}=" in line for p in entry.params), line
    assert "FILE.py:FUNCTION" in text
