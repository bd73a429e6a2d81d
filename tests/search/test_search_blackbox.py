"""Tests of the black-box pair search: :func:`rdpjax.search.find_pair` on numpy callables.

One search is run once per module with a fixed key and a small budget, on a mechanism whose
worst pairs lie in the middle of [0, 1]^10 (mean 1/2), far from the paper's pair (21), and whose
exact divergence is known in closed form: a coin whose bias is a logistic "soft vote" on the
mean (the discrete twin of benchmarks/calibration/blackbox_search.py's soft vote; discrete outputs
keep the
compiled kernels few). The other tests reuse it or run tiny searches; every black-box run uses
the same draw sizes, so the bound's compiled kernels are shared.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax import mechanisms
from rdpjax.mechanisms.databases import paper_pair
from rdpjax.search import Budget, Certification, Pairs, certify, find_pair, search_keys
from rdpjax.search.neighbours import pair, reference_params, variants
from rdpjax.search.space import SearchSpace
from rdpjax.stream import BlackBox, streamed_bound

pytest.importorskip("optuna")  # the `search` extra (and the `test` extra) install it

TAU = 0.1
ORDERS = [2.0, 5.0]
SIZES = dict(search_n=1024, select_n=2048)  # one set of sizes: shared compilations
CERTIFICATION = Certification(n=3000)


def _bias(db) -> float:
    """P(output = 1): 0.2 + 0.6 · logistic((mean − 1/2) / τ)."""
    return 0.2 + 0.6 / (1.0 + np.exp(-(np.mean(db) - 0.5) / TAU))


def soft_vote(rng, db, n):
    return (rng.random(n) < _bias(db)).astype(np.int64)


def exact(x, x_prime, lam):
    """D_λ(Bernoulli(p) ‖ Bernoulli(q)) = log(p^λ q^(1−λ) + (1−p)^λ (1−q)^(1−λ)) / (λ − 1)."""
    p, q = _bias(x), _bias(x_prime)
    return np.log(p**lam * q ** (1 - lam) + (1 - p) ** lam * (1 - q) ** (1 - lam)) / (lam - 1)


class Recorder:
    """``soft_vote`` that keeps every call's size and the uniforms it drew."""

    def __init__(self):
        self.calls: list[tuple[int, np.ndarray]] = []

    def __call__(self, rng, db, n):
        u = rng.random(n)
        self.calls.append((n, u))
        return (u < _bias(db)).astype(np.int64)


RECORDER = Recorder()
KEY = jax.random.key(3)


@pytest.fixture(scope="module")
def vote_run():
    res = find_pair(
        KEY,
        RECORDER,
        ORDERS,
        pairs=Pairs(m=10, domain=(0.0, 1.0), neighbours="replace-one"),
        budget=Budget(trials=25, restarts=1, top=2, **SIZES),
        certification=CERTIFICATION,
        progress=False,
    )
    return res, list(RECORDER.calls)


def _find(sample, **kwargs):
    """find_pair with ``kwargs`` sorted into Pairs and Budget fields; the rest passed as is."""
    fields = {cls: {f.name for f in dataclasses.fields(cls)} for cls in (Pairs, Budget)}
    pairs = {k: kwargs.pop(k) for k in list(kwargs) if k in fields[Pairs]}
    budget = {k: kwargs.pop(k) for k in list(kwargs) if k in fields[Budget]}
    return find_pair(
        kwargs.pop("key"),
        sample,
        kwargs.pop("lam", ORDERS),
        pairs=Pairs(**pairs),
        budget=Budget(**budget),
        certification=CERTIFICATION,
        **kwargs,
    )


def _tiny(sample=soft_vote, **kwargs):
    settings = dict(
        key=jax.random.key(5), m=4, domain=(0.0, 1.0), trials=6, restarts=1, progress=False
    )
    return _find(sample, **{**settings, **SIZES, **kwargs})


def test_finds_a_pair_worse_than_21(vote_run):
    """The exact D_λ at the pair found is ≥ 3× that at (21) (closed form); its certified bound
    is positive, ≥ 3× (21)'s on the same certification keys, and below the exact value."""
    res, _ = vote_run
    x21, x21_prime = (np.asarray(v, np.float64) for v in paper_pair(10))
    for lam in ORDERS:
        assert exact(res.x, res.x_prime, lam) >= 3 * exact(x21, x21_prime, lam)
    ref = certify(search_keys(KEY).certify, soft_vote, x21, x21_prime, ORDERS, n=res.n)
    assert np.all(res.lower > 0) and np.all(res.lower >= 3 * np.maximum(ref.lower, 0))
    assert np.all(res.lower <= [exact(res.x, res.x_prime, lam) for lam in ORDERS])
    assert res.method == "tpe" and "optuna" in res.reason
    assert res.trace.shape == (len(ORDERS), 1, 25)
    assert np.all(np.isfinite(res.trace))


def test_certification_uses_fresh_draws(vote_run):
    """The certified bound is blackbox_bound on the certification key (as documented) at the
    Bonferroni level; its n differs from the search's and its draws appear in no search or
    selection call."""
    res, calls = vote_run
    assert res.n not in (res.search_n, res.select_n)
    again = streamed_bound(
        search_keys(KEY).certify,
        BlackBox(soft_vote, res.x, res.x_prime),
        ORDERS,
        n=res.n,
        pilot=res.n,
        alpha=float(res.alpha),  # split over the orders by blackbox_bound itself
    )
    np.testing.assert_allclose(again.estimate, res.estimate, rtol=1e-12)
    np.testing.assert_allclose(again.lower, res.lower, rtol=1e-12)
    assert float(res.level) == float(again.level) == pytest.approx(0.05 / len(ORDERS))
    certifying = [out for m, out in calls if m == res.n]
    searching = [out for m, out in calls if m != res.n]
    # 4 calls per bound (pilot and draws, each side): 25 trials, then ≥ 1 selection candidate
    assert len(certifying) == 4 and len(searching) >= 4 * 25 + 4
    seen = np.concatenate(searching)
    assert all(np.intersect1d(out, seen).size == 0 for out in certifying)


def test_neighbours_recorded(vote_run):
    res, _ = vote_run
    assert res.neighbours == "replace-one" and res.to_dict()["neighbours"] == "replace-one"
    assert "neighbours: replace-one" in str(res)
    differs = np.flatnonzero(res.x != res.x_prime)
    assert differs.tolist() == [int(res.index)]


def _count(rng, db, n):
    return (rng.random(n) < 0.2 + 0.15 * np.sum(db)).astype(np.int64)


def test_add_remove_pairs_and_levels():
    """Add-remove: one database is the other without entry ``index``; entries on the levels;
    the relation is in the result, its JSON and its text; the same key gives the same pair."""
    res = _tiny(_count, neighbours="add-remove", levels=2)
    again = _tiny(_count, neighbours="add-remove", levels=2)
    larger, smaller = sorted((res.x, res.x_prime), key=np.size, reverse=True)
    assert (larger.size, smaller.size) == (4, 3)
    np.testing.assert_array_equal(np.delete(larger, int(res.index)), smaller)
    assert set(np.unique(np.concatenate([res.x, res.x_prime]))) <= {0.0, 1.0}
    assert res.neighbours == "add-remove" and "neighbours: add-remove" in str(res)
    assert json.loads(json.dumps(res.to_dict()))["neighbours"] == "add-remove"
    np.testing.assert_array_equal(res.x, again.x)
    np.testing.assert_array_equal(res.lower, again.lower)


def test_pairs_from_parameters():
    space = SearchSpace(m=3, low=-1.0, high=2.0)
    x, x_prime, j = pair(
        {"base": np.array([0.5, 3.0, -4.0]), "j": 1, "b": 0.0}, space, "replace-one"
    )
    np.testing.assert_array_equal(x, [0.5, 2.0, -1.0])  # projected onto the box
    np.testing.assert_array_equal(x_prime, [0.5, 0.0, -1.0])
    assert j == 1
    base = np.array([0.1, 0.2, 0.3])
    x, x_prime, _ = pair({"base": base, "j": 0, "add": False}, space, "add-remove")
    np.testing.assert_array_equal(x_prime, [0.2, 0.3])
    x, x_prime, _ = pair({"base": base, "j": 0, "add": True}, space, "add-remove")
    np.testing.assert_array_equal(x, [0.2, 0.3])
    unit = SearchSpace(m=10)
    x, x_prime, _ = pair(reference_params(unit, "replace-one"), unit, "replace-one")
    np.testing.assert_array_equal(x, np.asarray(paper_pair(10)[0]))
    np.testing.assert_array_equal(x_prime, np.zeros(10))
    unit = SearchSpace(m=3)
    params = {"base": np.array([0.4, 0.9, 0.2]), "j": 1, "b": 0.3}
    found = [pair(v, unit, "replace-one")[:2] for v in variants(params, unit, "replace-one")]
    np.testing.assert_array_equal(found[1][0], [0, 1, 0])  # nearest vertex, b too
    np.testing.assert_array_equal(found[1][1], [0, 0, 0])
    np.testing.assert_array_equal(found[2][0], [0, 0.9, 0])  # others at low
    np.testing.assert_array_equal(found[3][1], [1, 0.3, 1])  # others at high


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"m": None}, "needs its database domain: pass m"),
        ({"domain": None}, "pass domain"),
        ({"neighbours": None}, "neighbours must be one of"),
        ({"neighbours": "swap"}, "neighbours must be one of"),
        ({"domain": (1.0, 0.0)}, "low < high"),
        ({"domain": (0.0, np.inf)}, "finite"),
        ({"domain": (0.0,)}, "pair"),
        ({"m": 0}, "m must be"),
        ({"m": 2.5}, "m must be"),
        ({"levels": 1}, "levels must be"),
        ({"space": SearchSpace(m=3, row=(2,))}, "scalar entries"),
        ({"method": "gradient"}, "JAX mechanism"),
        ({"trials": 0}, "trials"),
        ({"top": 0}, "top"),
        ({"progress": "yes"}, "progress"),
    ],
)
def test_bad_domain_and_options_are_value_errors(kwargs, match):
    settings = dict(key=jax.random.key(0), m=4, domain=(0.0, 1.0), neighbours="replace-one")
    with pytest.raises(ValueError, match=match):  # when the options are made, or by find_pair
        _find(soft_vote, lam=2.0, **{**settings, **kwargs})


@pytest.mark.parametrize("optimizer", ["adam", 3])
def test_an_optimizer_that_is_not_an_optax_transformation_is_refused_when_made(optimizer):
    """``Budget(optimizer="adam")`` was taken, then an AttributeError deep in the search."""
    from rdpjax.search import Budget

    with pytest.raises(ValueError, match="optimizer must be an optax.GradientTransformation"):
        Budget(optimizer=optimizer)
    import optax

    assert Budget(optimizer=optax.adam(0.05)).optimizer is not None


def test_other_misuse():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="Mechanism or a numpy black box"):
        find_pair(key, 42, 2.0, pairs=Pairs(m=3, domain=(0, 1), neighbours="replace-one"))
    with pytest.raises(ValueError, match="replace-one relation"):
        find_pair(key, mechanisms.Gaussian(5.0), 2.0, pairs=Pairs(neighbours="add-remove"))
    with pytest.raises(ValueError, match="numpy black boxes only"):
        find_pair(key, mechanisms.Gaussian(5.0), 2.0, options=rdpjax.BoundOptions())
    box = Pairs(m=3, domain=(0, 1), neighbours="replace-one")
    with pytest.raises(ValueError, match="must be a rdpjax.BoundOptions"):
        find_pair(key, lambda rng, db, m: rng.normal(size=m), 2.0, pairs=box,
                  options={"discrete": True})  # fmt: skip


def test_missing_optuna_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "optuna", None)  # `import optuna` now fails
    with pytest.raises(ModuleNotFoundError, match=r"rdpjax\[search\]"):
        _tiny(neighbours="replace-one")


# ---------------------------------------------------------------------------------------------
# The command line.

MECH = """import numpy as np
def sample(rng, db, n):
    return (rng.random(n) < 0.2 + 0.6 / (1 + np.exp(-(np.mean(db) - 0.5) / 0.1))).astype(int)
def broken(rng, db, n):
    raise RuntimeError("boom")
"""


def _main(argv):
    from rdpjax.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_command_line(tmp_path, monkeypatch):
    from rdpjax.cli import build_parser
    from rdpjax.search.neighbours import NEIGHBOURS

    parser = build_parser()
    for relation in NEIGHBOURS:  # the command line takes every relation the library searches
        assert parser.parse_args(["search", "x.py:f", "--neighbours", relation]).neighbours
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        parser.parse_args(["search", "x.py:f", "--neighbours", "swap"])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mech.py").write_text(MECH)
    base = ["search", "mech.py:sample", "--numpy", "--size", "4", "--bounds", "0", "1"]
    small = ["--trials", "6", "--restarts", "1", "--lam", "2", "5", "--search-n", "1024"]
    small += ["--select-n", "2048", "--n", "3000"]
    code, out, _ = _main([*base, "--neighbours", "replace-one", *small, "--reference"])
    assert code == 0
    assert "neighbours: replace-one" in out and "reference pair" in out
    code, out, _ = _main([*base, "--neighbors", "add-remove", *small, "--json"])
    assert code == 0 and json.loads(out)["neighbours"] == "add-remove"
    for argv, message in (
        (base, "--neighbours required with --numpy"),
        ([*base[:5], "--neighbours", "replace-one"], "--bounds required"),
        ([*base[:6], "1", "0", "--neighbours", "add-remove"], "low < high"),
        (["search", "gaussian", "--trials", "5"], "--trials applies to a numpy black box"),
        (["search", "gaussian", "--numpy"], "--numpy describes your own function"),
        ([*base, "--neighbours", "replace-one", "--steps", "3"], "--steps applies to a JAX"),
        (["search", "mech.py:nope", *base[2:], "--neighbours", "add-remove"], "no attribute"),
    ):
        code, out, err = _main(argv)
        assert code == 2 and message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1 and not out
    broken = ["search", "mech.py:broken", *base[2:], "--neighbours", "replace-one", *small]
    code, _, err = _main(broken)
    assert code == 2 and "error in mech.py:broken: RuntimeError: boom" in err
