"""one_run / one_run_bits: validity on fixed keys, claims of every kind, bad input.

The coverage checks here are small (20 keys); benchmarks/calibration/canaries.py measures the
rates with R ≥ 200. With each bound valid at 1 − α = 0.95, the count of keys where a bound is
wrong is at most Binomial(20, 0.05), so "≤ 4 of 20" fails by chance with probability ≤ 1.6%
per check (the keys are fixed, so a pass is reproducible).
"""

import dataclasses
import json

import dp_accounting
import numpy as np
import pytest

from rdpjax.canaries import OneRunResult, one_run, one_run_bits
from rdpjax.claims import approx_dp, from_dp_accounting, gdp, pure_dp, rdp, zcdp

KEYS = range(20)
ALLOWED_MISSES = 4  # P(Binomial(20, 0.05) ≥ 5) = 0.016


def _gaussian_canaries(key, m, mu):
    rng = np.random.default_rng([key, m])
    bits = rng.integers(0, 2, m)
    return rng.normal(mu * bits, 1.0), bits


def test_null_canaries_give_no_bound():
    """In and out scores from one law: every bound is 0 and no claim is refuted, mostly."""
    misses = 0
    for key in KEYS:
        scores, bits = _gaussian_canaries(key, 1000, 0.0)
        r = one_run_bits(scores, bits, pure_dp(0.0))
        misses += r.epsilon > 0 or r.mu > 0 or r.refuted
    assert misses <= ALLOWED_MISSES


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_bounds_stay_below_the_truth_on_the_gaussian_mechanism(eps):
    """Score N(μ b, 1): the Gaussian mechanism, (ε, 1e-5)-DP and μ-GDP exactly."""
    sigma = dp_accounting.get_sigma_gaussian(eps, 1e-5)
    mu = 1.0 / sigma
    over = {"epsilon": 0, "mu": 0, "epsilon_gaussian": 0, "refuted": 0}
    for key in KEYS:
        scores, bits = _gaussian_canaries(key, 2000, mu)
        r = one_run_bits(scores, bits, approx_dp(eps, 1e-5))
        over["epsilon"] += r.epsilon > eps
        over["mu"] += r.mu > mu
        over["epsilon_gaussian"] += r.epsilon_gaussian > eps
        over["refuted"] += r.refuted
        assert r.delta == 1e-5 and r.m == 2000 and r.n_in + r.n_out == 2000
    assert max(over.values()) <= ALLOWED_MISSES, over


def test_a_leaky_mechanism_is_refuted_for_every_claim_kind():
    """Scores that reveal every bit: the bounds are large and small claims are refuted."""
    bits = np.arange(1000) % 2
    scores = bits + np.linspace(0.0, 0.1, 1000)
    r = one_run_bits(scores, bits)
    assert r.epsilon > 4.0 and r.mu > 1.5 and r.epsilon_gaussian > r.epsilon
    for claim in (pure_dp(2.0), approx_dp(2.0, 1e-5), gdp(1.0), zcdp(0.5)):
        checked = one_run_bits(scores, bits, claim)
        assert checked.refuted, claim
        assert checked.verdict().startswith("REFUTED")
    assert not one_run_bits(scores, bits, pure_dp(20.0)).refuted


def test_refuted_agrees_with_the_bounds():
    """At the claim's δ: ε above the claimed ε refutes it; μ above the claimed μ refutes it."""
    scores, bits = _gaussian_canaries(0, 4000, 2.0)
    r = one_run_bits(scores, bits, delta=1e-5)
    below, above = r.epsilon * 0.9, r.epsilon * 1.5
    assert one_run_bits(scores, bits, approx_dp(below, 1e-5)).refuted
    assert not one_run_bits(scores, bits, approx_dp(above, 1e-5)).refuted
    assert one_run_bits(scores, bits, gdp(0.9 * r.mu)).refuted
    assert not one_run_bits(scores, bits, gdp(1.5 * r.mu)).refuted


def test_one_run_equals_one_run_bits_and_result_serializes():
    scores, bits = _gaussian_canaries(1, 500, 3.0)
    a = one_run(scores[bits == 1], scores[bits == 0], gdp(1.0))
    b = one_run_bits(scores, bits, gdp(1.0))
    assert a == b and isinstance(a, OneRunResult)
    d = json.loads(json.dumps(a.to_dict()))
    assert d["claim"]["kind"] == "gdp" and d["guesses"]["k_in"] + d["guesses"]["k_out"] >= 1
    assert "\n" not in a.verdict() and ("REFUTED" in a.verdict()) == a.refuted
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.epsilon = 0.0


def test_delta_defaults_to_the_claims():
    scores, bits = _gaussian_canaries(2, 300, 1.0)
    assert one_run_bits(scores, bits, approx_dp(1.0, 1e-3)).delta == 1e-3
    assert one_run_bits(scores, bits, pure_dp(1.0)).delta == 0.0
    r = one_run_bits(scores, bits, pure_dp(1.0))
    assert r.epsilon_gaussian is None and r.to_dict()["epsilon_gaussian"] is None
    assert one_run_bits(scores, bits).delta == 1e-5


@pytest.mark.parametrize(
    "scores, bits, match",
    [
        ([0.0, np.nan, 1.0], [1, 0, 1], "scores must be finite"),
        ([0.0, np.inf, 1.0], [1, 0, 1], "scores must be finite"),
        ([0.0, 1.0, 2.0], [1, 2, 0], "bits must be 0 or 1"),
        ([0.0, 1.0, 2.0], [1, 0.5, 0], "bits must be 0 or 1"),
        ([0.0, 1.0, 2.0], [1, 0], "lengths disagree"),
        ([0.0, 1.0, 2.0], [1, 1, 1], "bits: no out canary"),
        ([0.0, 1.0, 2.0], [0, 0, 0], "bits: no in canary"),
        ([[0.0, 1.0]], [1, 0], "scores must be a 1-D array"),
    ],
)
def test_bad_scores_and_bits_name_the_argument(scores, bits, match):
    with pytest.raises(ValueError, match=match):
        one_run_bits(scores, bits)


def test_bad_in_out_and_options_name_the_argument():
    with pytest.raises(ValueError, match="in_scores is empty"):
        one_run([], [0.0, 1.0])
    with pytest.raises(ValueError, match="out_scores must be finite"):
        one_run([1.0], [0.0, np.nan])
    for alpha in (1.5, 0.0, "0.05", None):
        with pytest.raises(ValueError, match="alpha"):
            one_run([1.0], [0.0], alpha=alpha)
    with pytest.raises(ValueError, match="delta"):
        one_run([1.0], [0.0], delta=1.0)
    with pytest.raises(ValueError, match="claim"):
        one_run([1.0], [0.0], 2.0)


def test_a_too_small_dp_accounting_claim_is_refuted_more_often_through_its_pld():
    """Scores N(2b, 1) (2-GDP) against dp_accounting's Gaussian event of μ = 0.8: a false claim.
    Its PLD curve lies between the RDP route's curve and the exact G_0.8, and the f-DP test
    rejects more the larger the curve, so on every key: refuted through RDP ⟹ through the PLD
    ⟹ through gdp(0.8) (the exact curve). The PLD route must also refute on more keys than the
    RDP route (on these keys: 12 of 12 against 10 of 12 when written)."""
    event = dp_accounting.GaussianDpEvent(1.0 / 0.8)
    claim = from_dp_accounting(event)
    via_rdp = rdp(lambda lam: claim(lam))  # the same RDP curve, read through CKS Prop. 12
    counts = np.zeros(3, int)
    for key in range(12):
        scores, bits = _gaussian_canaries(key, 1000, 2.0)
        refuted = [one_run_bits(scores, bits, c).refuted for c in (via_rdp, claim, gdp(0.8))]
        assert refuted == sorted(refuted), (key, refuted)  # False before True: nested
        counts += refuted
    assert counts[1] > counts[0], counts
