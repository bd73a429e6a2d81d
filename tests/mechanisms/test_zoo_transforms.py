"""Invariants shared by every mechanism of the zoo (one test per zoo entry)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from zoo_testing import key

from rdpjax import mechanisms
from rdpjax.mechanisms import reference_zoo

ZOO = reference_zoo()
IDS = [entry.label for entry in ZOO]
# One entry per sampling code path (the others differ only in parameters or in exact laws).
SAMPLING_PATHS = [
    entry
    for entry in ZOO
    if entry.label
    not in (
        "Subsampled Gaussian b=5, γ=0.5",
        "Orthogonal series α=1, k=2",
        "Orthogonal series α=1, k=2, literal",
        "Report noisy max ε=1 (exponential)",
        "Sparse vector ε=1, c=1 (Lee-Clifton)",
        "Sparse vector ε=1 (Chen)",
    )
]
FACTORS = (1.0, 1.1)
N = 50_000  # the n of the goodness-of-fit tests, so both share compiled kernels


def _scaled(mech, factor):
    return jax.tree.map(lambda v: jnp.asarray(v) * factor, mech)


@pytest.mark.slow
@pytest.mark.parametrize("entry", SAMPLING_PATHS, ids=[e.label for e in SAMPLING_PATHS])
def test_jit_vmap_over_keys_and_parameters_equal_eager(entry):
    """jit(vmap_params(vmap_keys(sample))) equals eager sampling one mechanism and key at a time."""
    mech, x = entry.mechanism, entry.x
    batch = jax.tree.map(lambda v: jnp.stack([jnp.asarray(v) * f for f in FACTORS]), mech)
    keys = jax.random.split(key(11), 2)
    over_keys = jax.vmap(lambda m, k: m.sample(k, x, N), in_axes=(None, 0))
    batched = np.asarray(jax.jit(jax.vmap(over_keys, in_axes=(0, None)))(batch, keys))
    for j, factor in enumerate(FACTORS):
        scaled = _scaled(mech, factor)
        for i in range(len(keys)):
            eager = np.asarray(scaled.sample(keys[i], x, N))
            np.testing.assert_allclose(batched[j, i], eager, rtol=1e-5, atol=1e-5)
    same = _scaled(mech, 1.0)  # array leaves, like the loop above: no new compilation
    np.testing.assert_array_equal(
        np.asarray(same.sample(keys[0], x, N)), np.asarray(same.sample(keys[0], x, N))
    )


@pytest.mark.slow
@pytest.mark.parametrize("entry", ZOO, ids=IDS)
def test_output_spec_describes_samples(entry):
    mech, x = _scaled(entry.mechanism, 1.0), entry.x
    spec = mech.output(x)
    samples = mech.sample(key(12), x, N)
    assert samples.shape[0] == N
    if spec.is_discrete:
        assert jnp.issubdtype(samples.dtype, jnp.integer)
        codes = np.asarray(spec.encode(samples))
        assert codes.shape == (N,) and codes.dtype == np.int32
        assert codes.min() >= 0 and codes.max() < spec.alphabet_size
        assert (samples.shape[1] if samples.ndim == 2 else 1) == spec.dim
    else:
        assert jnp.issubdtype(samples.dtype, jnp.floating)
        assert (samples.shape[1] if samples.ndim == 2 else 1) == spec.dim
        assert np.all(np.isfinite(np.asarray(samples)))
        with pytest.raises(ValueError, match="continuous"):
            spec.encode(samples)


@pytest.mark.parametrize("entry", ZOO, ids=IDS)
def test_divergence_is_a_divergence(entry):
    """D_λ ≥ 0, non-decreasing in λ, never NaN, zero on identical inputs; ε bounds D_∞ when
    the claim holds."""
    mech, x, xp = entry.mechanism, entry.x, entry.x_prime
    values = [mech.divergence(lam, x, xp) for lam in (1.5, 2, 3, 5, 7, math.inf)]
    assert all(v is not None and not math.isnan(v) and v >= 0 for v in values)
    assert all(a <= b * (1 + 1e-9) + 1e-12 for a, b in zip(values, values[1:], strict=False))
    assert mech.divergence(2, x, x) == pytest.approx(0.0, abs=1e-10)
    if mech.epsilon is not None:
        if mech.claim_holds:
            assert values[-1] <= mech.epsilon * (1 + 1e-9)
        else:
            assert values[-1] > mech.epsilon


@pytest.mark.parametrize("entry", ZOO, ids=IDS)
def test_invalid_order_rejected(entry):
    mech, x, xp = entry.mechanism, entry.x, entry.x_prime
    for lam in (1.0, 0.5, -2.0, float("nan"), "two"):
        with pytest.raises(ValueError, match="lam"):
            mech.divergence(lam, x, xp)


def test_zoo_covers_every_mechanism_class():
    classes = {
        getattr(mechanisms, name)
        for name in mechanisms.__all__
        if isinstance(getattr(mechanisms, name), type)
        and issubclass(getattr(mechanisms, name), mechanisms.Mechanism)
        and name not in ("Mechanism", "AdditiveNoise")
    }
    assert classes == {type(entry.mechanism) for entry in ZOO}


def test_leaves_are_the_numeric_parameters():
    mech = mechanisms.PoissonSubsampled(mechanisms.Gaussian(2.0), 0.3)
    assert jax.tree.leaves(mech) == [2.0, 0.3]
    assert jax.tree.leaves(mechanisms.NoisyGradientDescent(0.2, 1.0, 10)) == [0.2, 1.0]
    assert jax.tree.leaves(mechanisms.OrthogonalSeries(1.0, 4, ties="literal")) == [1.0]
    # Static fields travel in the treedef: jit re-traces when they change, not when leaves do.
    svt = mechanisms.SparseVector(1.0, variant="chen")
    rebuilt = jax.tree.unflatten(jax.tree.structure(svt), [2.0, 0.1])
    assert rebuilt.variant == "chen" and rebuilt.eps == 2.0


@pytest.mark.default_prng
def test_default_partitionable_prng_path():
    """The library default PRNG mode (slow to compile on CPU, see conftest) works the same way."""
    from zoo_testing import check_jit_and_vmap

    from rdpjax.mechanisms.databases import paper_pair

    check_jit_and_vmap(mechanisms.Laplace(2.0), paper_pair()[0])


@pytest.mark.parametrize(
    "build, theta",
    [
        (lambda a: mechanisms.LaplaceHistogram(a, 5), 1.0),
        (lambda s: mechanisms.PoissonSubsampled(mechanisms.Gaussian(s), 0.5), 5.0),
    ],
    ids=["LaplaceHistogram alpha", "PoissonSubsampled base scale"],
)
def test_grad_through_reparameterized_samplers(build, theta):
    """jvp through ``sample`` equals a central difference with the same key."""
    x = build(theta).reference_pair()[0]

    def mean(t):
        return jnp.mean(build(t).sample(key(13), x, 512))

    value_and_slope = jax.jit(lambda t: jax.jvp(mean, (t,), (jnp.ones_like(t),)))
    h = 1e-2 * theta
    _, slope = value_and_slope(jnp.float32(theta))
    up, _ = value_and_slope(jnp.float32(theta + h))
    down, _ = value_and_slope(jnp.float32(theta - h))
    assert float(slope) == pytest.approx(float((up - down) / (2 * h)), rel=2e-2, abs=1e-3)
