"""rdpjax.audit with (ε, δ) and GDP claims: rejection sets beside the Rényi bounds, streamed
sets, the sequential betting route, the report files, and the option errors."""

import json

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax import mechanisms
from rdpjax.auditing import Looks
from rdpjax.claims import approx_dp, gdp, zcdp


def noisy_sum(rng, database, m):
    """σ = 1 on a sum of sensitivity 1: exactly 1-GDP, ε(δ = 1e-5) = 4.38."""
    return np.sum(database) + rng.normal(0.0, 1.0, size=m)


def _audit(claim, **fields):
    fields.setdefault("n", 50_000)
    return rdpjax.audit(
        jax.random.key(0), noisy_sum, [1.0], [0.0], claim=claim, progress=False, **fields
    )


def test_an_epsilon_delta_claim_is_checked_by_sets_at_half_alpha(tmp_path):
    report = _audit(approx_dp(1.0, 1e-5))
    settings = json.loads(report.settings)
    assert settings["test"] == "both" and settings["renyi_alpha"] == pytest.approx(0.025)
    assert float(report.bound.alpha) == pytest.approx(0.025) and report.sets.alpha == 0.025
    assert report.alpha == 0.05
    # The claim's Rényi curve is +inf: only the sets can refute it, and they do.
    assert not np.any(report.refuted_at) and report.sets.refuted and report.refuted
    assert 1.0 < report.sets.epsilon < 4.38
    assert report.verdict().startswith("REFUTED") and "ε(δ = 1e-05) ≥" in report.verdict()
    paths = rdpjax.write_report(report, tmp_path)
    record = json.loads((tmp_path / "report.json").read_text())
    assert record["sets"]["refuted"] and record["is_refuted"]
    assert "Certified rejection sets" in (tmp_path / "report.md").read_text()
    assert len(paths) >= 2


def test_a_true_gdp_claim_stands_and_a_false_one_falls():
    assert not _audit(gdp(1.0)).is_refuted
    # The certified μ at n = 5·10⁴ is 0.85 ± 0.1 (docs/rejection.md: 0.876 on average at 10⁴,
    # 0.889 at 10⁵): a claim of 0.5 is refuted with near certainty, 0.7 only usually.
    report = _audit(gdp(0.5))
    assert report.sets.refuted and 0.5 < report.sets.mu <= 1.0


def test_streamed_sets_for_a_black_box_and_a_zoo_mechanism():
    report = _audit(approx_dp(1.0, 1e-5), n=20_000, memory_budget=0)
    assert report.streamed and report.sets.streamed and report.sets.refuted
    zoo = mechanisms.Gaussian(1.0)  # N(x, 1): on x = 1 vs 0, 1-GDP
    r = rdpjax.audit(
        jax.random.key(1), zoo, [1.0], [0.0], n=20_000, claim=gdp(0.6), memory_budget=0,
        progress=False,
    )  # fmt: skip
    assert r.sets.streamed and r.sets.refuted


def test_integer_rows_are_coded_jointly_for_the_sets():
    def two_bits(rng, database, m):
        keep = np.e / (1 + np.e)  # two ε = 1 randomized-response bits: 2-DP together
        flips = rng.random((m, 2)) >= keep
        bits = np.asarray(database)[:2]
        return np.where(flips, 1 - bits, bits).astype(np.int64)

    report = rdpjax.audit(
        jax.random.key(3), two_bits, [1, 1], [0, 0], n=20_000, claim=approx_dp(1.2, 0.0),
        test="both", progress=False, lam=[2.0],
    )  # fmt: skip
    assert report.sets.cells == 5 and report.sets.refuted and report.sets.epsilon <= 2.0


def test_sequential_audits_bet_on_sets():
    report = rdpjax.audit(
        jax.random.key(2), noisy_sum, [1.0], [0.0], claim=gdp(0.5),
        n=Looks(max_n=20_000), progress=False,
    )  # fmt: skip
    assert report.bound is None and report.is_refuted and report.n < 5_000
    assert report.verdict().startswith("REFUTED") and "e-value" in report.verdict()
    assert report.to_dict()["sets"]["refuted"]
    assert "betting" in str(report) and "betting" in report.to_markdown()


@pytest.mark.parametrize(
    "fields, error, match",
    [
        (dict(claim=approx_dp(1.0, 1e-5), test="renyi"), ValueError, "cannot check"),
        (dict(claim=zcdp(0.5), test="both"), ValueError, "test='both' needs"),
        (dict(claim=gdp(0.5), test="sets"), ValueError, "test must be one of"),
    ],
)
def test_option_errors(fields, error, match):
    with pytest.raises(error, match=match):
        _audit(**fields)


def test_a_gdp_claim_refuted_by_renyi_bounds_alone_says_refuted_first():
    # The Rényi route refutes, the sets do not: the verdict must still begin with REFUTED.
    from rdpjax.auditing.report import AuditReport

    report = _audit(gdp(0.5))
    fake_sets = type(report.sets)(**{**report.sets.__dict__, "refuted": False})
    renyi_refutes = AuditReport(**{**report.__dict__, "sets": fake_sets})
    # RDP of 1-GDP is λ/2 against the claimed λ/8: the Rényi bounds refute it at n = 5·10⁴.
    assert renyi_refutes.check().is_refuted and renyi_refutes.is_refuted
    assert renyi_refutes.verdict().startswith("REFUTED by the Rényi bounds (at α/2 = 0.025): ε(")
    assert "; the rejection sets certify μ ≥ " in renyi_refutes.verdict()
    assert renyi_refutes.verdict().count("REFUTED") == 1  # one verdict, not one per family


def _two_sided_geometric(rng, database, m):
    """np.sum(database) + the difference of two geometric variables: ε-DP with ε = 0.5."""
    p = 1.0 - np.exp(-0.5)
    return int(np.sum(database)) + rng.geometric(p, m) - rng.geometric(p, m)


@pytest.mark.parametrize("sequential", [False, True])
def test_approx_dp_with_delta_zero_is_audited_as_pure_dp(sequential):
    # ε = 0.35 is false (the truth is 0.5). Issue 51: approx_dp(0.35, 0) went to the sets
    # alone ("claimed: none") while pure_dp(0.35) got the ε-DP Rényi curve.
    from rdpjax.claims import pure_dp

    size = dict(n=Looks(max_n=4_000) if sequential else 4_000)
    common = dict(progress=False, **size)
    claims = (approx_dp(0.35, 0.0), pure_dp(0.35))
    reports = [
        rdpjax.audit(jax.random.key(11), _two_sided_geometric, [1], [0], claim=c, **common)
        for c in claims
    ]
    a, b = (r.to_dict() for r in reports)
    assert a == b and a["claim"]["kind"] == "pure_dp"
    # fixed n: both families (the sets refute it too); sequential: the Rényi looks alone
    assert (a["sets"] is None) == sequential
    if not sequential:
        assert a["sets"]["refuted"] and a["sets"]["pooled"]["epsilon_lower"] > 0.35
    assert reports[0].verdict() == reports[1].verdict()
    assert np.all(np.isfinite(reports[0].claimed))


def test_a_sequential_betting_audit_is_the_same_for_sorted_batches():
    # Issue 51: the betting route (audit(…, n=Looks(…)) with a GDP claim) on a sampler
    # returning each batch sorted: the same test as on the same draws unsorted.
    def sorted_sum(rng, database, m):
        return np.sort(noisy_sum(rng, database, m))

    kw = dict(claim=gdp(0.8), n=Looks(max_n=5_000))
    a = rdpjax.audit(jax.random.key(4), noisy_sum, [1.0], [0.0], progress=False, **kw)
    b = rdpjax.audit(jax.random.key(4), sorted_sum, [1.0], [0.0], progress=False, **kw)
    assert a.sets == b.sets and a.verdict() == b.verdict() and a.n == b.n
    assert len(a.sets.path) > 5


def test_a_streamed_audit_draws_about_n_a_side_for_both_statistics():
    """Issue 52: the Rényi bounds and the sets of a streamed audit count one pass of draws, so
    a counting sampler is called for at most 1.15 n outputs a side (pilot and selection
    included); in memory n. The audit's probe of the output's shape adds 2 on x."""
    calls = {1: 0, 0: 0}

    def counting(rng, database, m):
        calls[int(database)] += m
        return database + rng.normal(0.0, 1.0, size=m)

    n = 20_000
    for budget, most in ((0, 1.15 * n), (None, n + 2)):
        calls.update({1: 0, 0: 0})
        extra = {} if budget is None else {"memory_budget": budget}
        r = rdpjax.audit(
            jax.random.key(4), counting, 1, 0, n=n, claim=approx_dp(1.0, 1e-5),
            progress=False, **extra,
        )  # fmt: skip
        assert r.streamed == (budget == 0) and r.sets.refuted
        assert max(calls.values()) <= most and r.sizes()["drawn"] == max(calls[0], calls[1] - 2)
        assert not r.sizes()["sets_own"]
    assert "(the same draws)" in r.size_line()


def test_a_streamed_audit_gives_the_same_answer_whatever_order_the_sampler_returns():
    """Non-negotiable 2 on the one-pass route: a sampler returning each batch sorted gives the
    same sets (its selection is put in an order drawn from the key, its certification counted
    per cell) and the same Rényi bounds up to the order of float sums."""

    def drawn(rng, database, m):
        return database + rng.laplace(0.0, 1.0, size=m)

    def ordered(rng, database, m):
        return np.sort(drawn(rng, database, m))

    reports = [
        rdpjax.audit(
            jax.random.key(8),
            s,
            1,
            0,
            n=30_000,
            claim=approx_dp(0.8, 1e-5),
            memory_budget=0,
            progress=False,
        )  # fmt: skip
        for s in (drawn, ordered)
    ]
    assert reports[0].sets == reports[1].sets
    np.testing.assert_allclose(reports[0].lower, reports[1].lower, rtol=1e-9)
