"""rdpjax.audit: zoo mechanisms and numpy black boxes, exact values, claims, projections."""

import json

import jax
import numpy as np
import pytest
from scipy.special import logsumexp

from rdpjax import claims
from rdpjax.auditing import AuditReport, audit, draw_outputs, write_report
from rdpjax.claims.orders import CLAIM_ORDERS, SMALL_N_CLAIM_ORDERS
from rdpjax.estimator.orders import DEFAULT_ORDERS
from rdpjax.mechanisms import (
    Gaussian,
    Laplace,
    OrthogonalSeries,
    RandomizedResponse,
    SparseVector,
)


def rr_curve(eps, lam):
    """D_λ of Bern(e^ε/(1+e^ε)) vs Bern(1/(1+e^ε)), typed from its definition."""
    lp, lq = eps - np.logaddexp(0, eps), -np.logaddexp(0, eps)
    lam = np.asarray(lam, float)
    terms = np.stack([lam * lp + (1 - lam) * lq, lam * lq + (1 - lam) * lp])
    return logsumexp(terms, axis=0) / (lam - 1)


def test_audit_zoo_mechanism_reports_exact_and_no_violation():
    mech = Laplace(5.0)
    x, xp = mech.reference_pair()
    r = audit(jax.random.key(0), mech, x, xp, [2, 5, 7], n=50_000)
    assert isinstance(r, AuditReport)
    exact = [mech.divergence(lam, x, xp) for lam in (2, 5, 7)]
    np.testing.assert_allclose(r.exact, exact)
    assert np.all(r.lower <= r.exact)
    assert r.claim.params["epsilon"] == pytest.approx(0.2) and not r.refuted_at.any()
    np.testing.assert_allclose(r.claimed, rr_curve(0.2, [2, 5, 7]), rtol=1e-12)
    assert np.all(r.exact <= r.claimed)  # Laplace b = 5 is 0.2-DP: its curve lies below RR's
    # 3 orders × 2 directions × 2 families: Laplace outputs are mapped by default, and their own
    # KDE is bounded beside the map (rdpjax.estimator.api.either_bound).
    assert r.bound.n_bounds == 12
    assert r.verdict().startswith("not refuted")
    assert set(r.to_dict()) >= {"lam", "estimate", "lower", "exact", "claim", "refuted", "verdict"}


def test_known_bad_mechanism_is_caught_and_its_correct_twin_is_not():
    bad, good = OrthogonalSeries(1.0, 2, ties="literal"), OrthogonalSeries(1.0, 2)
    x, xp = bad.reference_pair()
    r_bad = audit(jax.random.key(1), bad, x, xp, [2, 5, 7], n=100_000)
    r_good = audit(jax.random.key(2), good, x, xp, [2, 5, 7], n=100_000)
    assert r_bad.refuted_at.all() and r_bad.refuted and r_bad.verdict().startswith("REFUTED")
    assert not r_good.refuted_at.any() and not r_good.refuted
    assert np.all(r_bad.lower <= r_bad.exact) and np.all(r_good.lower <= r_good.exact)


def numpy_laplace(rng, database, n):
    """A mechanism written in numpy only: the Laplace mechanism with scale 5 on the sum."""
    return np.sum(database) + rng.laplace(0.0, 5.0, size=n)


def test_numpy_black_box_is_audited():
    x, xp = np.r_[1.0, np.zeros(9)], np.zeros(10)
    r = audit(jax.random.key(3), numpy_laplace, x, xp, [2, 5], n=50_000,
              claim=claims.pure_dp(0.2))  # fmt: skip
    assert r.exact is None and r.mechanism == "numpy_laplace"
    assert np.all(r.lower <= np.array([0.037015, 0.084103]))
    assert np.all(r.lower > 0.0)  # the two laws do differ, and 5e4 draws show it
    assert not r.refuted_at.any() and r.claim == claims.pure_dp(0.2)


def test_black_box_batches_give_the_same_draws():
    key = jax.random.key(4)
    one = draw_outputs(numpy_laplace, key, np.zeros(3), 10_000, batch_size=10_000)
    many = draw_outputs(numpy_laplace, key, np.zeros(3), 10_000, batch_size=999)
    np.testing.assert_array_equal(one, many)


@pytest.mark.slow
def test_projection_is_applied():
    mech = RandomizedResponse(1.5)
    x, xp = mech.reference_pair()
    first = audit(jax.random.key(5), mech, x, xp, 2.0, n=20_000, project=lambda v: v[:, 0])
    assert first.projected and int(first.bound.support) == 2
    assert first.lower[0] <= first.exact[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(n=1), "n must"), (dict(n=10.5), "n must"), (dict(batch_size=0), "batch_size")],
)
def test_bad_arguments(kwargs, match):
    args = dict(n=100)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        audit(jax.random.key(0), numpy_laplace, np.zeros(3), np.ones(3), 2.0, **args)


def test_bad_black_boxes():
    with pytest.raises(ValueError, match="callable"):
        audit(jax.random.key(0), 42, np.zeros(3), np.ones(3), 2.0, n=100)
    with pytest.raises(ValueError, match="returned shape"):
        audit(jax.random.key(0), lambda rng, d, n: rng.normal(size=n - 1), 0, 1, 2.0, n=100)


def test_unknown_options_are_a_type_error_naming_the_options():
    with pytest.raises(TypeError, match="claim=rdpjax.claims.pure_dp"):
        audit(
            jax.random.key(0), numpy_laplace, np.zeros(3), np.ones(3), 2.0, n=100,
            claimed_epsilon=1.0,
        )  # fmt: skip
    with pytest.raises(TypeError, match="'bandwith'.*BoundOptions.*bandwidth"):
        audit(jax.random.key(0), numpy_laplace, np.zeros(3), np.ones(3), 2.0, n=100,
              bandwith=0.1)  # fmt: skip


@pytest.mark.slow
def test_default_orders_follow_the_claim():
    mech = Laplace(5.0)
    x, xp = mech.reference_pair()
    key = jax.random.key(6)
    plain = audit(key, mech, x, xp, n=10_000, claim=None)  # Laplace's own claim: ε = 0.2
    np.testing.assert_array_equal(plain.lam, CLAIM_ORDERS)
    small = audit(key, mech, x, xp, n=9_999)  # below SMALL_N: λ ≤ 5
    np.testing.assert_array_equal(small.lam, SMALL_N_CLAIM_ORDERS)
    table = claims.rdp({2.0: 0.05, 4.0: 0.08})  # small-n grid cut at 4, and 4 itself
    tabulated = audit(key, mech, x, xp, n=5_000, claim=table)
    np.testing.assert_array_equal(tabulated.lam, [1.5, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(tabulated.claimed, [0.05, 0.05, 0.08, 0.08])  # what was compared
    own = audit(key, mech, x, xp, [2.0, 4.0], n=5_000, claim=table)  # lam= still wins
    np.testing.assert_array_equal(own.lam, [2.0, 4.0])
    black_box = audit(key, numpy_laplace, x, xp, n=5_000)  # no claim
    np.testing.assert_array_equal(black_box.lam, DEFAULT_ORDERS)
    assert black_box.claim is None and black_box.claimed is None
    assert black_box.verdict().startswith("no claim")


@pytest.mark.slow
def test_gaussian_against_its_exact_curve_and_half_of_it():
    """Issue 19's acceptance: σ = 5 on pair (21), n = 1e6, orders chosen by audit."""
    mech = Gaussian(5.0)
    x, xp = mech.reference_pair()
    key = jax.random.key(7)
    exact = audit(key, mech, x, xp, n=10**6, claim=claims.zcdp(1 / 50))
    half = audit(key, mech, x, xp, n=10**6, claim=claims.zcdp(1 / 100))
    np.testing.assert_allclose(exact.exact, np.asarray(CLAIM_ORDERS) / 50)
    assert not exact.is_refuted and np.all(exact.lower <= exact.exact)
    assert half.is_refuted and half.verdict().startswith("REFUTED")
    assert mech.claim == claims.zcdp(1 / 50)  # the mechanism's own claim is its exact curve


@pytest.mark.slow
def test_sparse_vector_variants_with_their_own_claim():
    """Lee-Clifton's variant claims ε = 1 and is refuted by a default audit; Lyu's is not."""
    bad, good = SparseVector(1.0, variant="lee_clifton"), SparseVector(1.0, variant="lyu")
    x, xp = bad.reference_pair()
    r_bad = audit(jax.random.key(8), bad, x, xp, n=10**5)
    r_good = audit(jax.random.key(8), good, x, xp, n=10**5)
    assert r_bad.is_refuted and not r_good.is_refuted
    assert np.all(r_bad.lower <= r_bad.exact) and np.all(r_good.lower <= r_good.exact)
    # At paper 000's orders the Rényi bounds alone let the claim survive: the wide grid is what
    # finds it there. The default also runs the pooled guesses, which refute it at any orders.
    at_257 = audit(jax.random.key(8), bad, x, xp, [2, 5, 7], n=10**5, test="renyi")
    assert not at_257.is_refuted
    both = audit(jax.random.key(8), bad, x, xp, [2, 5, 7], n=10**5)
    assert both.is_refuted and both.sets is not None and both.sets.refuted


def test_a_black_box_returning_sorted_batches_gets_the_same_audit():
    # Issue 51: a legal sampler may return its i.i.d. batch sorted; the audit (the Rényi bounds'
    # pilot split and the sets' split) must not notice.
    def sorted_laplace(rng, database, n):
        return np.sort(numpy_laplace(rng, database, n))[::-1]

    kw = dict(n=20_000, claim=claims.pure_dp(0.2), progress=False)
    x, xp = np.r_[1.0, np.zeros(9)], np.zeros(10)
    a, b = (
        audit(jax.random.key(5), numpy_laplace, x, xp, [2, 5], **kw),
        audit(jax.random.key(5), sorted_laplace, x, xp, [2, 5], **kw),
    )
    np.testing.assert_array_equal(a.lower, b.lower)
    assert a.sets is not None and b.sets is not None
    assert (a.sets.epsilon, a.sets.mu, a.verdict()) == (b.sets.epsilon, b.sets.mu, b.verdict())


@pytest.mark.slow
def test_report_files(tmp_path):
    mech = Laplace(5.0)
    x, xp = mech.reference_pair()
    r = audit(jax.random.key(9), mech, x, xp, [2, 5], n=5_000, densities=True)
    # The densities behind the bound: p̂ a density on the grid, q̂_τ floored at the bound's τ.
    curves = r.densities
    assert abs(curves.cell_volume * curves.p_hat.sum() - 1) < 1e-6
    assert np.all(curves.q_floored >= np.maximum(curves.q_hat, float(r.bound.floor)) * (1 - 1e-12))
    paths = write_report(r, tmp_path / "new" / "dir", meta={"seed": 9})
    names = {p.name for p in paths}
    assert {"report.json", "report.md", "bounds.png", "densities.png"} == names
    record = json.loads((tmp_path / "new" / "dir" / "report.json").read_text())
    assert (
        record["schema"] == 5
        and record["looks"] == []
        and record["meta"]["seed"] == 9
        and "rdpjax" in record["meta"]
    )
    assert (
        record["claim"]["kind"] == "pure_dp"
        and record["refuted_at"] == [False, False]
        and record["refuted"] is False
    )
    assert set(record["direction"]) <= {"D(P||Q)", "D(Q||P)"}
    assert record["bound"]["direction_label"] == record["direction"]
    assert record["settings"]["lam"] == [2.0, 5.0]
    assert r.verdict() in (tmp_path / "new" / "dir" / "report.md").read_text()
    with pytest.raises(ValueError, match="cannot write"):
        write_report(r, tmp_path / "new" / "dir" / "report.json")


@pytest.mark.slow
def test_black_box_progress_bar(capsys):
    audit(jax.random.key(0), numpy_laplace, np.zeros(3), np.ones(3), 2.0, n=2_000,
          batch_size=500, progress=True)  # fmt: skip
    assert "drawing" in capsys.readouterr().err
    audit(jax.random.key(0), numpy_laplace, np.zeros(3), np.ones(3), 2.0, n=2_000,
          batch_size=500, progress=False)  # fmt: skip
    assert capsys.readouterr().err == ""


def test_projection_is_applied_per_batch():
    x, xp = np.zeros(3), np.r_[1.0, 0.0, 0.0]

    def vector(rng, database, n):
        return database + rng.laplace(0.0, 5.0, size=(n, 3))

    shapes = []

    def first(v):
        shapes.append(v.shape)
        return v[:, 0]

    r = audit(jax.random.key(1), vector, x, xp, 2.0, n=3_000, batch_size=1_000, project=first)
    assert r.projected and r.lower[0] <= 0.037015
    assert shapes[0] == (2, 3) and set(shapes[1:]) == {(1_000, 3)}  # a probe, then batches


@pytest.mark.slow
def test_audit_streams_beyond_the_memory_budget():
    """memory_budget=0 routes a zoo mechanism through the stream and a numpy black box through
    blackbox_bound: the report is theirs, for the same key, and below the truth."""
    from rdpjax.stream import BlackBox, MechanismPair, streamed_bound

    mech = Gaussian(5.0)
    x, xp = mech.reference_pair()
    key = jax.random.key(10)
    r = audit(key, mech, x, xp, [2, 5], n=200_000, memory_budget=0, progress=False)
    direct = streamed_bound(
        key, MechanismPair(mech, x, xp), [2, 5], n=200_000, both_directions=True
    )
    assert r.streamed and np.all(r.lower <= r.exact)
    np.testing.assert_array_equal(r.lower, direct.lower)

    xs, xps = np.r_[1.0, np.zeros(9)], np.zeros(10)
    r = audit(key, numpy_laplace, xs, xps, [2, 5], n=100_000, memory_budget=0,
              batch_size=30_000, progress=False)  # fmt: skip
    direct = streamed_bound(
        key,
        BlackBox(numpy_laplace, xs, xps),
        [2, 5],
        n=100_000,
        batch_size=30_000,
        both_directions=True,
    )
    assert r.streamed and r.to_dict()["streamed"]
    np.testing.assert_array_equal(r.lower, direct.lower)
    assert np.all(r.lower <= np.array([0.037015, 0.084103]))


def test_non_finite_outputs_are_named_by_side_and_counted_by_output():
    """Rows 0 and 1 hold a NaN, row 2 an inf: 2 NaN outputs and 1 infinite one (of 5)."""
    from rdpjax.auditing.draws import check_finite_outputs

    out = np.zeros((5, 2))
    out[0, 0] = out[1, 0] = out[1, 1] = np.nan
    out[2, 1] = -np.inf
    with pytest.raises(ValueError, match=r"^the mechanism returned 2 NaN and 1 infinite outputs "):
        check_finite_outputs(out, "x")
    with pytest.raises(ValueError, match=r"then the projection, returned 1 infinite outputs on x'"):
        check_finite_outputs(np.array([0.0, np.inf]), "x'", projected=True)
    check_finite_outputs(np.array([1e308, 1e308]), "x")  # the sum overflows; no value is bad
    check_finite_outputs(np.array([1, 2]), "x")  # integers are finite

    def nan_on_x_prime(rng, database, n):
        out = rng.normal(size=n)
        return np.where(np.arange(n) < 4 * np.all(np.asarray(database) == 0), np.nan, out)

    with pytest.raises(ValueError, match=r"returned 4 NaN outputs on x' \(of 300\)"):
        audit(jax.random.key(0), nan_on_x_prime, [1.0], [0.0], 2.0, n=300, progress=False)


def test_the_key_comes_first():
    """A mechanism (or a black box) where the key goes is named, not a traceback deep inside."""
    x, xp = np.array([1.0]), np.array([0.0])
    with pytest.raises(ValueError, match=r"the key comes first: rdpjax.audit\(key, mechanism"):
        audit(Laplace(1.0), x, xp, [2.0])
    with pytest.raises(ValueError, match="the key comes first"):
        audit(lambda rng, db, m: rng.normal(size=m), x, xp, [2.0])
