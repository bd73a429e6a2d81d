"""The zoo at the edges of its parameters (found by a hunt of the zoo, 2026-12-07): parameters
that are not numbers, probabilities that overflow float32, log-probabilities that cancel, and
databases of different lengths."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rdpjax import mechanisms as M


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda v: M.Laplace(v), "scale"),
        (lambda v: M.Gaussian(v), "scale"),
        (lambda v: M.PoissonSubsampled(M.Laplace(5.0), v), "rate"),
        (lambda v: M.RandomizedResponse(v), "eps0"),
        (lambda v: M.ShuffledRandomizedResponse(v), "eps0"),
        (lambda v: M.SparseVector(v), "eps"),
    ],
)
@pytest.mark.parametrize("value", [[-5.0], [7.0, -1.0], None, "5", True])
def test_a_parameter_that_is_not_a_valid_number_is_refused(make, named, value):
    """A list, None, a string or a bool skipped every check: ``Laplace([-5.0])`` sampled."""
    if value == [7.0, -1.0] and named == "rate":
        value = [0.5, 5.0]
    with pytest.raises(ValueError, match=f"^{named} must be"):
        make(value)


def test_a_valid_list_parameter_is_still_a_batch():
    mech = M.Laplace([1.0, 2.0])
    assert np.asarray(mech.scale).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("alpha", [80.0, 89.0, 100.0])
def test_kary_randomized_response_keeps_its_category_at_a_large_alpha(alpha):
    """e^α overflowed float32 from α ≈ 89: keep_prob was NaN and no draw kept its category."""
    mech = M.KaryRandomizedResponse(alpha, 3)
    draws = np.asarray(mech.sample(jax.random.key(0), jnp.asarray(0), 10_000))
    keep = 1.0 / (1.0 + 2.0 * math.exp(-alpha))  # the exact P(output = input), ≈ 1 here
    assert np.mean(draws == 0) == pytest.approx(keep, abs=1e-3)


@pytest.mark.parametrize("eps0", [20.0, 36.0, 40.0])
def test_shuffled_randomized_response_is_exact_at_a_large_eps0(eps0):
    """``1 − a`` of ``a = 1/(1 + e^{−ε0})`` cancelled: D_∞ above ε0 at 36, infinite at 40.

    Reference: the counts' pmfs enumerated in 50-digit arithmetic (mpmath), pair (21) of 000
    (m = 10: one record differs).
    """
    import mpmath as mp

    mech = M.ShuffledRandomizedResponse(eps0)
    x, x_prime = mech.reference_pair()
    with mp.workdps(50):
        a = 1 / (1 + mp.e ** (-eps0))
        b = 1 - a

        def binom(k, j, p):
            return mp.binomial(k, j) * p**j * (1 - p) ** (k - j)

        m = len(np.asarray(x))
        q = [binom(m, j, b) for j in range(m + 1)]
        p = [
            (a * binom(m - 1, j - 1, b) if j else 0) + (b * binom(m - 1, j, b) if j < m else 0)
            for j in range(m + 1)
        ]
        d2 = float(mp.log(sum(pj**2 / qj for pj, qj in zip(p, q, strict=True))))
        d_inf = float(max(mp.log(pj / qj) for pj, qj in zip(p, q, strict=True)))
    assert mech.divergence(2.0, x, x_prime) == pytest.approx(d2, rel=1e-12)
    assert mech.divergence(math.inf, x, x_prime) == pytest.approx(d_inf, rel=1e-12)
    assert d_inf == pytest.approx(eps0, rel=1e-12)  # attained, as docs/zoo.md says


def test_sparse_vector_needs_answer_vectors_of_one_length():
    """A raw IndexError from the enumeration before."""
    with pytest.raises(ValueError, match=r"same shape; got \(3,\), \(4,\)"):
        M.SparseVector(1.0).divergence(2.0, np.zeros(3), np.zeros(4))
