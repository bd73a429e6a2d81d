"""rdpjax.testing, and small versions of the catalog's adapters (benchmarks/catalog/libraries/).

Each adapter runs where its library is installed (``pytest.importorskip``): correct mechanisms
through ``assert_claim_holds`` at a small n with one fixed key (α = 1e-3: each such test fails
spuriously with probability ≤ 1e-3 if the library's claim is true), bugs through
``assert_claim_refuted`` at the n the catalog found sufficient (docs/catalog.md). OpenDP and
PyDP cannot be seeded, so their tests draw fresh noise on every run (same bound). The exact
divergences the catalog quotes are checked against independent references: the zoo's closed
forms, dp_accounting, mpmath sums, the data-processing inequality.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from scipy import optimize, stats

import rdpjax
from rdpjax.claims import pure_dp
from rdpjax.testing import assert_claim_holds, assert_claim_refuted

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "catalog" / "libraries"))

import case as case_module  # noqa: E402

ALPHA = 1e-3
SMALL_N = 2_000


def laplace_sum(rng, database, n):
    return np.sum(database) + rng.laplace(0.0, 1.0, n)  # ε = 1 for values in [0, 1]


def laplace_sum_half_noise(rng, database, n):
    return np.sum(database) + rng.laplace(0.0, 0.5, n)  # ε = 2, claimed 1


PAIR = ([1.0, 0.5], [0.0, 0.5])
CLAIM = pure_dp(1.0)


# -----------------------------------------------------------------------------------------------
# rdpjax.testing


@pytest.mark.slow
def test_a_correct_laplace_passes_and_returns_the_report():
    report = assert_claim_holds(jax.random.key(0), laplace_sum, *PAIR, CLAIM, n=SMALL_N)
    assert not report.is_refuted and report.n == SMALL_N and report.claim == CLAIM


@pytest.mark.slow
def test_a_broken_laplace_is_refuted_and_fails_assert_claim_holds():
    bad = laplace_sum_half_noise
    report = assert_claim_refuted(jax.random.key(0), bad, *PAIR, CLAIM, n=SMALL_N)
    assert report.is_refuted
    with pytest.raises(AssertionError, match=r"(?s)refuted by an audit.*REFUTED"):
        assert_claim_holds(jax.random.key(0), bad, *PAIR, CLAIM, n=SMALL_N)


def test_assert_claim_refuted_fails_on_a_correct_mechanism():
    with pytest.raises(AssertionError, match="did not refute"):
        assert_claim_refuted(jax.random.key(0), laplace_sum, *PAIR, CLAIM, n=SMALL_N)


def test_assertions_take_jax_samplers_and_audit_options():
    mech = rdpjax.mechanisms.from_sampler(
        lambda k, db, n: jax.numpy.sum(db) + jax.random.laplace(k, (n,))
    )
    x, x_prime = jax.numpy.array(PAIR[0]), jax.numpy.array(PAIR[1])
    orders = [1.5, 2.0, 3.0, 5.0]  # the default grid at this n: the compiled bound is reused
    report = assert_claim_holds(jax.random.key(1), mech, x, x_prime, CLAIM, n=SMALL_N,
                                lam=orders)  # fmt: skip
    assert list(report.lam) == orders


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"claim": None}, "claim is required"),
        ({"claim": 1.0}, "a number is not taken as ε"),
        ({"alpha": 0.0}, "alpha must be a number in"),
        ({"alpha": 1.5}, "alpha must be a number in"),
        ({"alpha": True}, "alpha must be a number in"),
        ({"key": None}, "key is required"),
        ({"n": 1}, "n must be a whole number"),
        ({"mechanism": "gaussian"}, "mechanism must be"),
        ({"claimed_epsilon": 1.0}, "pass the claim after x_prime"),
    ],
)
@pytest.mark.parametrize("assertion", [assert_claim_holds, assert_claim_refuted])
def test_bad_input_is_a_clear_value_error(assertion, kwargs, match):
    args = {"mechanism": laplace_sum, "claim": CLAIM, "n": 100, "key": jax.random.key(0)}
    extra = {k: v for k, v in kwargs.items() if k not in args}
    args.update({k: v for k, v in kwargs.items() if k in args})
    with pytest.raises(ValueError, match=match):
        assertion(args["key"], args["mechanism"], *PAIR, args["claim"], n=args["n"], **extra)


def test_rdpjax_testing_is_a_lazy_submodule():
    assert rdpjax.testing.assert_claim_holds is assert_claim_holds
    assert "testing" in dir(rdpjax)


def test_the_pytest_example_in_docs_testing_md_runs():
    text = (ROOT / "docs" / "testing.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace: dict = {}
    exec(compile(block, "docs/testing.md", "exec"), namespace)  # noqa: S102
    tests = [name for name in namespace if name.startswith("test_")]
    assert len(tests) == 3
    for name in tests:
        namespace[name]()


# -----------------------------------------------------------------------------------------------
# The exact divergences the catalog quotes, against independent references.

ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 10.0])


def test_closed_forms_match_the_zoo():
    from rdpjax.mechanisms import Gaussian, Laplace

    x, x_prime = jax.numpy.array([1.0]), jax.numpy.array([0.0])
    for b in (0.5, 1.0, 3.0):
        zoo = [Laplace(b).divergence(lam, x, x_prime) for lam in ORDERS]
        np.testing.assert_allclose(case_module.laplace_renyi(1.0, b)(ORDERS), zoo, rtol=1e-10)
        zoo = [Gaussian(b).divergence(lam, x, x_prime) for lam in ORDERS]
        np.testing.assert_allclose(case_module.gaussian_renyi(1.0, b)(ORDERS), zoo, rtol=1e-12)


def test_sampled_gaussian_quadrature_matches_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant

    orders = [2.0, 3.0, 5.0, 10.0]  # integer orders: dp_accounting's closed binomial sum
    for rate, sigma in ((0.1, 1.0), (0.5, 2.0)):
        acc = RdpAccountant(orders=orders)
        acc.compose(dpa.PoissonSampledDpEvent(rate, dpa.GaussianDpEvent(sigma)))
        ours = case_module.sampled_gaussian_renyi(rate, sigma)(orders)
        np.testing.assert_allclose(ours, acc._rdp, rtol=1e-6)


def test_discrete_sums_match_mpmath_and_their_continuous_bounds():
    mpmath = pytest.importorskip("mpmath")
    sigma, eps = 2.0, 1.0
    for lam in (2.0, 5.0):

        def renyi(log_p, log_q, lam=lam):
            total = mpmath.nsum(lambda k: mpmath.exp(lam * log_p(k) + (1 - lam) * log_q(k)),
                                [-mpmath.inf, mpmath.inf])  # fmt: skip
            z = mpmath.nsum(lambda k: mpmath.exp(log_q(k)), [-mpmath.inf, mpmath.inf])
            return float(mpmath.log(total / z) / (lam - 1))

        gauss = renyi(
            lambda k: -((k - 1) ** 2) / (2 * sigma**2), lambda k: -(k**2) / (2 * sigma**2)
        )
        lap = renyi(lambda k: -eps * abs(k - 1), lambda k: -eps * abs(k))
        assert case_module.discrete_gaussian_renyi(1, sigma)([lam])[0] == pytest.approx(gauss, 1e-9)
        assert case_module.discrete_laplace_renyi(1, eps)([lam])[0] == pytest.approx(lap, 1e-9)
        # Canonne, Kamath, Steinke: the discrete Gaussian is at most the continuous one's ρλ.
        assert gauss <= lam / (2 * sigma**2) + 1e-12
        assert lap <= float(pure_dp(eps)([lam])[0]) + 1e-12


def test_folded_laplace_obeys_data_processing_and_its_far_limit():
    unfolded = case_module.laplace_renyi(1.0, 3.0)(ORDERS)
    near = case_module.folded_laplace_renyi(1.25, 0.25, 3.0)(ORDERS)
    far = case_module.folded_laplace_renyi(301.0, 300.0, 3.0)(ORDERS)
    assert np.all(near <= unfolded + 1e-9) and np.all(np.diff(near) >= -1e-12)
    np.testing.assert_allclose(far, unfolded, rtol=1e-6)


def test_binary_renyi_is_the_pure_dp_curve_of_randomized_response():
    eps = math.log(3.0)
    np.testing.assert_allclose(case_module.binary_renyi(0.75, 0.25)(ORDERS), pure_dp(eps)(ORDERS),
                               rtol=1e-10)  # fmt: skip


def test_case_validation():
    with pytest.raises(ValueError, match="kind must be one of"):
        case_module.Case("c", "lib", "fine", laplace_sum, *PAIR, CLAIM, 10, "", "")
    with pytest.raises(ValueError, match="n must be a whole number"):
        case_module.Case("c", "lib", "bug", laplace_sum, *PAIR, CLAIM, 1.5, "", "")


# -----------------------------------------------------------------------------------------------
# The adapters: each case at a small n (correct) or its catalog n (bugs), one key.


def _audit_case(case, key=0):
    """One audit of ``case`` at SMALL_N (the bugs below are refuted in 20 of 20 catalog seeds at
    n ≤ 300): one n for every audit, so that few bound programs are compiled."""
    assert case.kind == "correct" or case.n <= SMALL_N, case.name
    assertion = assert_claim_refuted if case.kind == "bug" else assert_claim_holds
    return assertion(jax.random.key(key), case.mechanism, case.x, case.x_prime, case.claim,
                     n=SMALL_N, alpha=ALPHA, **case.options)  # fmt: skip


# A few of each module's cases: the first audit of a law of a new shape compiles its bound
# program (about 3 s on 2 cores; laws that are rescalings of each other share one), so the tests
# run the cases that share programs (Laplace with shift/scale 1 or 2, Gaussian with shift/σ 1/2,
# two-point outputs) and the catalog (benchmarks/catalog/libraries/catalog.py) runs them all.
FAST_BUGS = ("zero_sensitivity", "noise_on_sum_scaled_for_mean")


@pytest.mark.slow
def test_bug_shapes_refuted_and_twins_cleared():
    import cases_bugs

    cases = {c.name: c for c in cases_bugs.cases()}
    assert {c.kind for c in cases.values()} == {"bug", "correct"}
    for name in FAST_BUGS:
        _audit_case(cases[name])
        twin = cases[name].twin.split(",")[0]
        assert cases[twin].kind == "correct" and cases[twin].twin.startswith(name[:3])
        _audit_case(cases[twin])
    for c in cases.values():  # every bug names a twin that exists, and every entry cites
        assert c.cites and (c.twin is None or c.twin.split(",")[0].strip() in cases), c.name


@pytest.mark.slow
def test_dpsgd_fixed_batches_accounted_as_poisson_are_refuted():
    pytest.importorskip("dp_accounting")
    import cases_dpsgd

    cases = {c.name: c for c in cases_dpsgd.cases()}
    _audit_case(cases["dpsgd_fixed_batch_as_poisson"])
    _audit_case(cases["dpsgd_poisson"])
    _audit_case(cases["dpsgd_full_batch"])


def _gdp_delta(eps: float, mu: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth, Su, arXiv:1905.02383, Cor. 2.13)."""
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def _assert_sigma_is_analytic(sigma: float, eps: float, delta: float, rtol: float) -> None:
    """The library's σ makes μ = 1/σ-GDP imply its (ε, δ), and is the smallest such σ."""
    assert _gdp_delta(eps, 1.0 / sigma) <= delta * (1 + 1e-6)
    mu_star = optimize.brentq(lambda mu: _gdp_delta(eps, mu) - delta, 1e-3, 10.0, xtol=1e-14)
    assert sigma == pytest.approx(1.0 / mu_star, rel=rtol)


def test_diffprivlib_adapters():
    pytest.importorskip("diffprivlib")
    import cases_diffprivlib as m

    assert m.MISSING is None
    _assert_sigma_is_analytic(m.analytic_sigma(), m.EPS, m.DELTA, rtol=1e-6)
    cases = {c.name: c for c in m.cases()}
    for name in ("diffprivlib_laplace", "diffprivlib_linreg_diagonal"):
        _audit_case(cases[name])
    linreg = cases["diffprivlib_linreg_diagonal"].mechanism(np.random.default_rng(0),
                                                            m.LINREG_PAIR[0], 3)  # fmt: skip
    np.testing.assert_array_equal(linreg, [1.25] * 3)  # the shipped bug: no noise on Σx²


def test_opendp_adapters():
    pytest.importorskip("opendp")
    import cases_opendp as m

    assert m.MISSING is None
    cases = {c.name: c for c in m.cases()}
    for name in ("opendp_laplace", "opendp_gaussian", "opendp_randomized_response"):
        _audit_case(cases[name])
    # n draws from one vector call have the scalar measurement's law (KS, p > 1e-3; OpenDP is
    # not seedable, so this fails spuriously with probability 1e-3).
    vector = m.measurement("laplace", float, vector=True)([0.0] * 2_000)
    scalar = m.measurement("laplace", float, vector=False)
    assert stats.ks_2samp(vector, [scalar(0.0) for _ in range(2_000)]).pvalue > 1e-3


def test_pydp_adapters():
    pytest.importorskip("pydp")
    import cases_pydp as m

    assert m.MISSING is None
    # PyDP's std is found by its own binary search: within 0.1% of the analytic Gaussian's σ.
    _assert_sigma_is_analytic(float(m.gaussian_mechanism().std), m.EPS, m.DELTA, rtol=1e-3)
    cases = {c.name: c for c in m.cases()}
    _audit_case(cases["pydp_laplace"])


def test_multi_freq_ldpy_subset_selection_order_leak():
    pytest.importorskip("multi_freq_ldpy")
    import cases_multi_freq_ldpy as m

    assert m.MISSING is None
    cases = {c.name: c for c in m.cases()}
    bug, fixed = cases["multi_freq_ldpy_ss_order"], cases["multi_freq_ldpy_ss_order.sorted"]
    reports = bug.mechanism(np.random.default_rng(0), bug.x, 2_000)
    # the shipped leak: the true value 2 appears only first, never further on
    assert (reports[:, 0] == 2).any() and not (reports[:, 1:] == 2).any()
    np.testing.assert_array_equal(reports, bug.mechanism(np.random.default_rng(0), bug.x, 2_000))
    # the set law's closed form against a Monte Carlo of the sorted reports (z < 5 per cell)
    sets = fixed.mechanism(np.random.default_rng(1), fixed.x, 20_000)
    with_both = np.mean((sets == 2).any(axis=1) & (sets == 3).any(axis=1))
    s, e = 3, math.e
    p = s * e / (s * e + m.K - s)
    expected = p * math.comb(m.K - 2, s - 2) / math.comb(m.K - 1, s - 1)
    assert abs(with_both - expected) < 5 * math.sqrt(expected * (1 - expected) / len(sets))
    assert m.subset_renyi(m.K, m.EPS)([1e4])[0] == pytest.approx(m.EPS, abs=1e-3)  # λ → ∞: ε
    key = jax.random.key(0)
    assert_claim_refuted(key, bug.mechanism, bug.x, bug.x_prime, bug.claim, n=bug.n,
                         alpha=ALPHA, **bug.options)  # fmt: skip
    assert_claim_holds(key, fixed.mechanism, fixed.x, fixed.x_prime, fixed.claim, n=fixed.n,
                       alpha=ALPHA, **fixed.options)  # fmt: skip


@pytest.mark.slow
def test_jax_privacy_adapter_and_its_accounting():
    jax_privacy = pytest.importorskip("jax_privacy")
    dpa = pytest.importorskip("dp_accounting")
    import cases_jax_privacy as m
    from jax_privacy.accounting import accountants, analysis

    assert m.MISSING is None
    relation = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
    assert m.clipped_gradient().sensitivity(relation) == m.CLIP  # the privatizer's stddev σ·C
    # The claim is the event jax-privacy's own accountant composes for one Poisson step.
    params = analysis.DpParams(noise_multipliers=m.SIGMA, num_samples=m.N, delta=1e-5,
                               batch_size=int(m.RATE * m.N))  # fmt: skip
    config = accountants.RdpAccountantConfig()
    theirs = analysis.DpsgdTrainingAccountant(config).compute_epsilon(1, params)
    ours = config.create_accountant().compose(m.accountant_event()).get_epsilon(1e-5)
    assert theirs == pytest.approx(ours, rel=1e-12)
    (c,) = m.cases()
    assert c.library == "jax-privacy" and jax_privacy.__version__ == c.version
    _audit_case(c)
