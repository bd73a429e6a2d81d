"""Tumult Core's noise measurements on a count, for ``rdpjax audit … --python``.

Tumult Core (``pip install tmlt.core``) pins numpy < 2, so it cannot be installed beside rdpjax;
this file imports only ``tmlt.core`` and numpy and runs in Tumult's own environment, called by
``rdpjax audit FILE.py:FUNCTION --python /path/to/tumult-venv/bin/python`` (docs/catalog.md,
"Tumult Core, audited in its own environment"). Each function is a ``--numpy`` black box
``f(rng, database, n)``: ``n`` releases of the count ``sum(database)`` (a database of 0/1
records: neighbours differ by one record, so the count moves by d_in = 1 under Tumult's
``AbsoluteDifference``) through the measurement, called once per release as Tumult's
``Measurement.__call__`` is.

Tumult draws from a generator of its own (RDRAND or ``os.urandom``, not seedable:
``tmlt.core.random.rng.prng``). For reproducible audits each call points it at a
``numpy.random.Generator`` seeded from rdpjax's ``rng`` (the measurement's code is unchanged; only
the source of its random bits is).

The claims are Tumult's own: ``python tumult_mechanism.py`` (in Tumult's environment) prints
``privacy_function(1)`` of each measurement.
"""

import os

import numpy as np
import tmlt.core.random.rng as tumult_rng
from tmlt.core.measurements.noise_mechanisms import AddDiscreteGaussianNoise, AddGeometricNoise

GEOMETRIC = AddGeometricNoise(alpha=1)  # pure DP: privacy_function(d_in) = d_in / alpha
DISCRETE_GAUSSIAN = AddDiscreteGaussianNoise(sigma_squared=1)  # ρ-zCDP: d_in² / (2σ²)


def _seed_tumult(rng) -> None:
    """Tumult's generator drawn from ``rng`` (tmlt.core.random.rng keeps it per process)."""
    tumult_rng._core_privacy_prng = np.random.default_rng(int(rng.integers(2**63)))
    tumult_rng._core_privacy_prng_pid = os.getpid()


def _releases(measurement, rng, database, n):
    _seed_tumult(rng)
    count = np.int64(np.sum(database))
    return np.array([measurement(count) for _ in range(n)], dtype=np.int64)


def geometric_count(rng, database, n):
    """``n`` releases of ``AddGeometricNoise(alpha=1)`` on the count: Tumult claims ε = 1."""
    return _releases(GEOMETRIC, rng, database, n)


def discrete_gaussian_count(rng, database, n):
    """``n`` releases of ``AddDiscreteGaussianNoise(sigma_squared=1)``: Tumult claims ρ = 1/2."""
    return _releases(DISCRETE_GAUSSIAN, rng, database, n)


if __name__ == "__main__":
    import importlib.metadata

    print("tmlt.core", importlib.metadata.version("tmlt.core"), "numpy", np.__version__)
    print("AddGeometricNoise(alpha=1).privacy_function(1) =", GEOMETRIC.privacy_function(1),
          GEOMETRIC.output_measure)  # fmt: skip
    print("AddDiscreteGaussianNoise(sigma_squared=1).privacy_function(1) =",
          DISCRETE_GAUSSIAN.privacy_function(1), DISCRETE_GAUSSIAN.output_measure)  # fmt: skip
