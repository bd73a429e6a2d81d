"""The two streamed doors on the three kinds of draws (rdpjax.stream.draws).

``streamed_bound`` and ``streamed_set_test`` take the key first and a value that says what to
draw from; the set test takes ``n`` a whole number or a ``Looks`` (the betting test).
"""

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.claims import gdp
from rdpjax.mechanisms import Gaussian
from rdpjax.rejection import streamed_set_test
from rdpjax.rejection.betting import betting_test
from rdpjax.stream import BlackBox, JaxSamplers, Looks, MechanismPair, StreamOptions, streamed_bound

KEY = jax.random.key(5)
MECH = Gaussian(1.0)
X, X_PRIME = np.array([1.0]), np.array([0.0])


def _noisy_sum(rng, db, m):
    return np.sum(db) + rng.normal(size=m)


@pytest.mark.parametrize("bad", [lambda k, m: k, (lambda k, m: k, lambda k, m: k), "gaussian"])
def test_a_door_names_the_three_kinds_for_anything_else(bad):
    with pytest.raises(ValueError, match="JaxSamplers.*MechanismPair.*BlackBox"):
        streamed_bound(KEY, bad, 2.0, n=1000)
    with pytest.raises(ValueError, match="JaxSamplers.*MechanismPair.*BlackBox"):
        streamed_set_test(KEY, bad, gdp(1.0), n=1000)


def test_values_refuse_a_sampler_that_is_not_callable():
    with pytest.raises(ValueError, match="callable"):
        JaxSamplers(lambda k, m: k, 3.0)
    with pytest.raises(ValueError, match="callable"):
        BlackBox("noisy_sum", X, X_PRIME)


def test_a_mechanism_pair_draws_what_its_public_sampler_draws():
    """The set test on MechanismPair(Gaussian) and on JaxSamplers of ``mechanism.sample`` read
    the same draws (the same keys, the same kernel): every number agrees."""
    on = [lambda k, m, d=d: MECH.sample(k, d, m) for d in (X, X_PRIME)]
    pair = streamed_set_test(KEY, MechanismPair(MECH, X, X_PRIME), gdp(0.5), n=20_000)
    own = streamed_set_test(KEY, JaxSamplers(*on), gdp(0.5), n=20_000)
    assert pair.to_dict() == own.to_dict()
    assert pair.refuted  # Gaussian(1) on a unit shift is 1-GDP: gdp(0.5) is false


def test_looks_run_the_betting_test_with_the_stream_s_batches_and_projection():
    stream = StreamOptions(batch_size=512, project=lambda out: 2.0 * out)
    door = streamed_set_test(
        KEY, BlackBox(_noisy_sum, X, X_PRIME), gdp(0.5), n=Looks(max_n=5000), stream=stream
    )
    direct = betting_test(
        KEY, _noisy_sum, X, X_PRIME, gdp(0.5), max_n=5000, batch=512, project=stream.project
    )
    assert door.to_dict() == direct.to_dict()
    default = streamed_set_test(KEY, BlackBox(_noisy_sum, X, X_PRIME), gdp(0.5), n=Looks())
    assert default.refuted and default.n < 10**5  # max_n defaults to 10⁵, as in rdpjax.audit


@pytest.mark.parametrize("kind", ["jax", "mechanism"])
def test_looks_bet_on_jax_draws_through_their_numpy_form(kind):
    """A JAX sampler or a zoo mechanism is bet on batch by batch, a key drawn from each side's
    Generator per batch: a false claim is refuted; on a mechanism, the very test of
    ``rdpjax.audit(..., n=Looks(...))``."""
    if kind == "jax":
        draws = JaxSamplers(*(lambda k, m, d=d: MECH.sample(k, d, m) for d in (X, X_PRIME)))
    else:
        draws = MechanismPair(MECH, X, X_PRIME)
    r = streamed_set_test(KEY, draws, gdp(0.5), n=Looks(max_n=20_000))
    assert r.refuted and r.n < 20_000
    if kind == "mechanism":
        report = rdpjax.audit(KEY, MECH, X, X_PRIME, claim=gdp(0.5), n=Looks(max_n=20_000),
                              progress=False)  # fmt: skip
        assert r.to_dict() == report.sets.to_dict()


@pytest.mark.parametrize(
    "extra",
    [
        {"delta": 1e-5},
        {"options": object()},
        {"n": Looks(schedule=[100, 1000])},
        {"n": Looks(checkpoint="somewhere")},
    ],
)
def test_looks_refuse_what_the_betting_test_does_not_take(extra):
    kwargs = {"n": Looks(max_n=1000), **extra}
    with pytest.raises(ValueError, match="bets on sets|checkpoint"):
        streamed_set_test(KEY, BlackBox(_noisy_sum, X, X_PRIME), gdp(0.5), **kwargs)
