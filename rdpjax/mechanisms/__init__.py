"""The mechanism zoo: JAX samplers with their exact Rényi divergences.

Every mechanism is an immutable pytree (numeric parameters are leaves) with ``sample(key,
database, n)``, ``output(database)``, ``divergence(lam, x, x_prime)``, ``epsilon``,
``claim_holds`` and ``reference_pair()``; see :mod:`rdpjax.mechanisms.base`. ``python -m
rdpjax.mechanisms`` prints the zoo with its exact divergences.
"""

from rdpjax.mechanisms.additive import AdditiveNoise, Gaussian, Laplace
from rdpjax.mechanisms.base import (
    Mechanism,
    OutputSpec,
    binary_code,
    continuous,
    count_ones,
    discrete,
    identity_code,
)
from rdpjax.mechanisms.local import (
    KaryRandomizedResponse,
    LaplaceHistogram,
    OneHotRandomizedResponse,
)
from rdpjax.mechanisms.noisy_gd import NoisyGradientDescent
from rdpjax.mechanisms.noisy_max import ReportNoisyMax
from rdpjax.mechanisms.randomized_response import RandomizedResponse
from rdpjax.mechanisms.series import OrthogonalSeries
from rdpjax.mechanisms.shuffle import ShuffledRandomizedResponse
from rdpjax.mechanisms.sparse_vector import SparseVector
from rdpjax.mechanisms.subsampled import PoissonSubsampled
from rdpjax.mechanisms.truncated import TruncatedGaussian, TruncatedLaplace
from rdpjax.mechanisms.user import from_sampler
from rdpjax.mechanisms.zoo import ZooEntry, format_table, reference_zoo

__all__ = [
    "AdditiveNoise",
    "Gaussian",
    "KaryRandomizedResponse",
    "Laplace",
    "LaplaceHistogram",
    "Mechanism",
    "NoisyGradientDescent",
    "OneHotRandomizedResponse",
    "OrthogonalSeries",
    "OutputSpec",
    "PoissonSubsampled",
    "RandomizedResponse",
    "ReportNoisyMax",
    "ShuffledRandomizedResponse",
    "SparseVector",
    "TruncatedGaussian",
    "TruncatedLaplace",
    "ZooEntry",
    "binary_code",
    "continuous",
    "count_ones",
    "discrete",
    "format_table",
    "from_sampler",
    "identity_code",
    "reference_zoo",
]
