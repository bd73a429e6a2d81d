"""The zoo's base: output descriptions, encodings, from_sampler, validation, the printed table."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from zoo_testing import assert_ks, key

from rdpjax.mechanisms import (
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    LaplaceHistogram,
    NoisyGradientDescent,
    OrthogonalSeries,
    PoissonSubsampled,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
    TruncatedGaussian,
    TruncatedLaplace,
    binary_code,
    continuous,
    count_ones,
    discrete,
    from_sampler,
)
from rdpjax.mechanisms.__main__ import main
from rdpjax.mechanisms.databases import paper_pair
from rdpjax.mechanisms.zoo import matches_paper, reference_zoo


def test_paper_pair():
    x, xp = paper_pair()
    np.testing.assert_array_equal(x, [1.0] + [0.0] * 9)
    np.testing.assert_array_equal(xp, np.zeros(10))
    x2, xp2 = paper_pair(m=4, dim=2)
    assert x2.shape == (4, 2) and float(x2.sum()) == 2.0 and float(xp2.sum()) == 0.0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="m must"):
            paper_pair(m=bad)
    with pytest.raises(ValueError, match="dim"):
        paper_pair(dim=0)


def test_encodings():
    bits = jnp.array([[1, 0, 1], [0, 0, 0], [1, 1, 1]])
    np.testing.assert_array_equal(binary_code(bits), [5, 0, 7])
    np.testing.assert_array_equal(count_ones(bits), [2, 0, 3])
    spec = discrete(3)
    np.testing.assert_array_equal(spec.encode(jnp.array([2, 0])), [2, 0])
    assert continuous(2).dim == 2 and not continuous(2).is_discrete
    with pytest.raises(ValueError, match="dim"):
        continuous(0)
    with pytest.raises(ValueError, match="alphabet_size"):
        discrete(0)
    with pytest.raises(ValueError, match="int32"):
        RandomizedResponse(1.0).output(jnp.zeros(31))


def test_from_sampler_continuous():
    def noisy_mean(k, x, n):
        return jnp.mean(x) + 0.5 * jax.random.normal(k, (n,))

    mech = from_sampler(noisy_mean, name="noisy mean")
    x, xp = mech.reference_pair()
    assert mech.name == "noisy mean" and mech.divergence(2, x, xp) is None
    assert mech.output(x) == continuous(1) and mech.epsilon is None
    assert_ks(mech.sample(key(0), x, 20_000), stats.norm(0.1, 0.5).cdf)
    jitted = jax.jit(lambda k: mech.sample(k, x, 16))(key(1))
    np.testing.assert_allclose(jitted, mech.sample(key(1), x, 16), rtol=1e-6)
    with pytest.raises(ValueError, match="lam"):
        mech.divergence(1.0, x, xp)


def test_from_sampler_discrete():
    def coin(k, x, n):
        return jax.random.bernoulli(k, 0.25 + 0.5 * x[0], (n,)).astype(jnp.int32)

    mech = from_sampler(coin, discrete=True, alphabet_size=2, epsilon=math.log(3.0))
    x, _ = mech.reference_pair()
    spec = mech.output(x)
    assert spec.is_discrete and spec.alphabet_size == 2 and mech.epsilon == math.log(3.0)
    codes = spec.encode(mech.sample(key(3), x, 1000))
    assert set(np.unique(codes)) <= {0, 1}

    def bits(k, x, n):
        return jax.random.bernoulli(k, 0.5, (n, 3)).astype(jnp.int32)

    vec = from_sampler(bits, discrete=True)
    assert vec.output(x).alphabet_size == 8
    with pytest.raises(ValueError, match="integers"):
        from_sampler(lambda k, x, n: jnp.zeros(n), discrete=True).sample(key(0), x, 4)
    with pytest.raises(ValueError, match="shape"):
        from_sampler(lambda k, x, n: jnp.zeros(n + 1)).sample(key(0), x, 4)
    with pytest.raises(ValueError, match="discrete"):
        from_sampler(lambda k, x, n: jnp.zeros(n), alphabet_size=3)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: Laplace(0.0), "scale"),
        (lambda: Gaussian(-1.0), "scale"),
        (lambda: Gaussian(float("nan")), "scale"),
        (lambda: Laplace(jnp.array([1.0, -2.0])), "scale"),
        (lambda: PoissonSubsampled(Laplace(1.0), 0.0), "rate"),
        (lambda: PoissonSubsampled(Laplace(1.0), 1.5), "rate"),
        (lambda: PoissonSubsampled(RandomizedResponse(1.0), 0.5), "base"),
        (lambda: RandomizedResponse(-0.1), "eps0"),
        (lambda: NoisyGradientDescent(2.5, 1.0, 10), "step_size"),
        (lambda: NoisyGradientDescent(0.2, 0.0, 10), "noise"),
        (lambda: NoisyGradientDescent(0.2, 1.0, 0), "steps"),
        (lambda: TruncatedLaplace(1.0, low=1.0, high=0.0), "low < high"),
        (lambda: TruncatedGaussian(0.0), "scale"),
        (lambda: KaryRandomizedResponse(1.0, 1), "k"),
        (lambda: LaplaceHistogram(0.0, 4), "alpha"),
        (lambda: OrthogonalSeries(1.0, 3, ties="round"), "ties"),
        (lambda: ReportNoisyMax(1.0, noise="gumbel"), "noise"),
        (lambda: ReportNoisyMax(1.0, noise="exponential", output_kind="value"), "laplace"),
        (lambda: SparseVector(1.0, variant="roth"), "variant"),
        (lambda: SparseVector(1.0, cutoff=0), "cutoff"),
    ],
)
def test_invalid_parameters_raise(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_invalid_databases_raise():
    x, xp = paper_pair()
    with pytest.raises(ValueError, match="rank"):
        Laplace(1.0).sample(key(0), jnp.zeros((2, 2, 2)), 4)
    with pytest.raises(ValueError, match="rank"):
        Laplace(1.0).divergence(2, np.float64(1.0), xp)
    with pytest.raises(ValueError, match="same shape"):
        PoissonSubsampled(Laplace(1.0), 0.5).divergence(2, x, xp[:5])
    with pytest.raises(ValueError, match="0, 1"):
        RandomizedResponse(1.0).sample(key(0), x * 0.5, 4)
    with pytest.raises(ValueError, match="low, high"):
        TruncatedLaplace(1.0).sample(key(0), 1.5, 4)
    with pytest.raises(ValueError, match="category"):
        KaryRandomizedResponse(1.0, 3).sample(key(0), 3, 4)
    with pytest.raises(ValueError, match="n must"):
        Laplace(1.0).sample(key(0), x, 0)
    with pytest.raises(ValueError, match="scalar scale"):
        Laplace(jnp.array([1.0, 2.0])).divergence(2, x, xp)


def test_main_prints_every_mechanism_and_matches_paper_000(capsys):
    """``python -m rdpjax.mechanisms``: one row per zoo entry; the seven values of 000 match
    docs/methods.md §3 to the printed digits."""
    main()
    table = capsys.readouterr().out
    rows = {line.split("  ")[0].rstrip(" ✗") for line in table.splitlines()}
    for entry in reference_zoo():
        assert entry.label in rows
    assert table.count("matches") == 7 and "MISMATCH" not in table


def test_matches_paper_uses_printed_precision():
    assert matches_paper(0.0072547, "0.0072547") and not matches_paper(0.0072553, "0.0072547")
    assert matches_paper(0.1000004, "0.10") and not matches_paper(0.106, "0.10")
