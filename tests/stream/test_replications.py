"""The one replication driver, ``rdpjax.stream.replicate.run_replications``: the route of
``replicated_bounds`` (a plan fixed beforehand, one program draws and bounds) and that of
``rdpjax.studies.coverage`` (the plan read from replication 0, a program of draws, then one of
bounds) on the same keys. References: the mechanism's public ``sample`` and the plan itself."""

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax import mechanisms
from rdpjax.estimator.sharding import draw_mesh
from rdpjax.stream.replicate import run_replications
from rdpjax.stream.samplers import mechanism_samplers

FIELDS = ("estimate", "lower", "std_error", "bias")
N, LAM = 1500, [2.0, 5.0]


def _draw(mech, key, x):
    """One side's documented draws: the public sampler, encoded to codes when discrete."""
    out = mech.output(x)
    with rdpjax.float64():
        p = mech.sample(key, x, N)
        return np.asarray(out.encode(p) if out.is_discrete else p)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gaussian", "randomized_response"])
@pytest.mark.parametrize("pairs", [None, 2])
def test_one_program_and_two_give_the_same_bounds(name, pairs):
    """Four replications (in chunks of two on the second route), one pair (keys ``(R,)``) or
    two (keys ``(R, 2)``, the second pair reversed): the same bounds either way. The pilot
    handed to the plan is replication 0's first pair's draws, and the last replication's
    last pair is the plan applied to its documented draws (as ``lower_bound`` applies it)."""
    if name == "gaussian":
        mech, options = mechanisms.Gaussian(5.0), {}
    else:
        mech, options = mechanisms.RandomizedResponse(eps0=1.0), {"second_order": False}
    x, xp = map(np.asarray, mech.reference_pair())
    sampler = mechanism_samplers(mech, x, xp)[0]
    keys = jax.random.split(jax.random.key(3), 4 * (pairs or 1))
    if pairs:
        keys = keys.reshape(4, pairs)
        args = (mech, np.stack([x, xp]), np.stack([xp, x]))
    else:
        args = (mech, x, xp)
    ends = [jax.random.split(k) for k in (keys.ravel()[0], keys.ravel()[-1])]
    (p0, q0), (p1, q1) = [(_draw(mech, a, x), _draw(mech, b, xp)) for a, b in ends]
    if pairs:  # the last pair is reversed
        p1, q1 = _draw(mech, ends[1][0], xp), _draw(mech, ends[1][1], x)
    discrete = mech.output(x).is_discrete
    plan = rdpjax.plan_bound(p0, q0, LAM, discrete=discrete, **options)[0]
    pilots = []

    def plan_of(p, q):
        pilots.append((p, q))
        return plan

    route = dict(n=N, samplers=(sampler, sampler), batch_size=2, mesh=draw_mesh())
    with rdpjax.float64():
        one = run_replications(keys, plan, args, **route)
        two = run_replications(keys, plan_of, args, chunk=2, **route)
    assert len(pilots) == 1
    np.testing.assert_array_equal(pilots[0][0], p0)
    np.testing.assert_array_equal(pilots[0][1], q0)
    shape = (4, pairs, 2) if pairs else (4, 2)
    with rdpjax.float64():
        ref = plan(p1, q1)
    for field in FIELDS:
        a, b = getattr(one, field), getattr(two, field)
        assert a.shape == b.shape == shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(a.reshape(-1, 2)[-1], getattr(ref, field), rtol=1e-10)
