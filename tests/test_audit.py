"""rdpjax.audit: zoo mechanisms and numpy black boxes, exact values, claims, projections."""

import jax
import numpy as np
import pytest

from rdpjax.audit import AuditReport, audit, draw_outputs
from rdpjax.mechanisms import Laplace, OrthogonalSeries, RandomizedResponse


def test_audit_zoo_mechanism_reports_exact_and_no_violation():
    mech = Laplace(5.0)
    x, xp = mech.reference_pair()
    r = audit(mech, x, xp, [2, 5, 7], n=50_000, key=jax.random.key(0))
    assert isinstance(r, AuditReport)
    exact = [mech.divergence(lam, x, xp) for lam in (2, 5, 7)]
    np.testing.assert_allclose(r.exact, exact)
    assert np.all(r.lower <= r.exact)
    assert r.claimed_epsilon == pytest.approx(0.2) and not r.violation.any()
    assert r.bound.n_bounds == 6  # 3 orders × 2 directions
    assert "no violation" in r.verdict()
    assert set(r.to_dict()) >= {"lam", "estimate", "lower", "std_error", "exact", "violation"}


def test_known_bad_mechanism_is_caught_and_its_correct_twin_is_not():
    bad, good = OrthogonalSeries(1.0, 2, ties="literal"), OrthogonalSeries(1.0, 2)
    x, xp = bad.reference_pair()
    r_bad = audit(bad, x, xp, [2, 5, 7], n=100_000, key=jax.random.key(1))
    r_good = audit(good, x, xp, [2, 5, 7], n=100_000, key=jax.random.key(2))
    assert r_bad.violation.all() and "VIOLATION" in r_bad.verdict()
    assert not r_good.violation.any()
    assert np.all(r_bad.lower <= r_bad.exact) and np.all(r_good.lower <= r_good.exact)


def numpy_laplace(rng, database, n):
    """A mechanism written in numpy only: the Laplace mechanism with scale 5 on the sum."""
    return np.sum(database) + rng.laplace(0.0, 5.0, size=n)


def test_numpy_black_box_is_audited():
    x, xp = np.r_[1.0, np.zeros(9)], np.zeros(10)
    r = audit(numpy_laplace, x, xp, [2, 5], n=50_000, key=jax.random.key(3), claimed_epsilon=0.2)
    assert r.exact is None and r.mechanism == "numpy_laplace"
    assert np.all(r.lower <= np.array([0.037015, 0.084103]))
    assert np.all(r.lower > 0.0)  # the two laws do differ, and 5e4 draws show it
    assert not r.violation.any()


def test_black_box_batches_give_the_same_draws():
    key = jax.random.key(4)
    one = draw_outputs(numpy_laplace, key, np.zeros(3), 10_000, batch_size=10_000)
    many = draw_outputs(numpy_laplace, key, np.zeros(3), 10_000, batch_size=999)
    np.testing.assert_array_equal(one, many)


def test_projection_is_applied():
    mech = RandomizedResponse(1.5)
    x, xp = mech.reference_pair()
    first = audit(mech, x, xp, 2.0, n=20_000, key=jax.random.key(5), project=lambda v: v[:, 0])
    assert first.projected and first.bound.grid_shape == (2,)
    assert first.lower[0] <= first.exact[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(n=1), "n must"), (dict(n=10.5), "n must"), (dict(batch_size=0), "batch_size")],
)
def test_bad_arguments(kwargs, match):
    args = dict(n=100, key=jax.random.key(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        audit(numpy_laplace, np.zeros(3), np.ones(3), 2.0, **args)


def test_bad_black_boxes():
    with pytest.raises(ValueError, match="callable"):
        audit(42, np.zeros(3), np.ones(3), 2.0, n=100, key=jax.random.key(0))
    with pytest.raises(ValueError, match="returned shape"):
        audit(lambda rng, d, n: rng.normal(size=n - 1), 0, 1, 2.0, n=100, key=jax.random.key(0))
