"""python-dp (PyDP, OpenMined's bindings of Google's DP library) mechanisms as black boxes.

``pydp.algorithms.numerical_mechanisms`` adds noise to one value per ``add_noise`` call; the
sampler calls it n times. Google's library draws from its own secure RNG, which cannot be
seeded: these audits are not reproducible from the key (their validity does not depend on it).

* ``pydp_laplace``: ``LaplaceMechanism(ε = 1, sensitivity = 1)`` on 1 vs 0; claim ``pure_dp(1)``;
  exact: the continuous Laplace closed form (the library snaps its outputs to a power-of-two
  grid; an idealization).
* ``pydp_gaussian``: ``GaussianMechanism(ε = 1, δ = 1e-5, sensitivity = 1)``. As for diffprivlib,
  (ε, δ)-DP implies no RDP curve; the library calibrates σ (its ``std``) by the analytic Gaussian
  (Balle & Wang 2018), whose analysis is the μ-GDP profile with μ = Δ/σ: claim ``gdp(1/std)``;
  exact λ/(2·std²).
"""

from __future__ import annotations

import numpy as np
from case import Case, gaussian_renyi, laplace_renyi, optional

from rdpjax.claims import gdp, pure_dp

pydp, VERSION, MISSING = optional("pydp.algorithms.numerical_mechanisms", "python-dp")
EPS, DELTA = 1.0, 1e-5


def laplace(rng, database, n):
    """``LaplaceMechanism(ε, sensitivity 1).add_noise`` on the sum, n times."""
    del rng  # the library's own RNG
    from pydp.algorithms.numerical_mechanisms import LaplaceMechanism

    mech, value = LaplaceMechanism(epsilon=EPS, sensitivity=1.0), float(np.sum(database))
    return np.array([mech.add_noise(value) for _ in range(n)])


def gaussian_mechanism():
    """The library's Gaussian mechanism at (ε, δ), sensitivity 1."""
    from pydp.algorithms.numerical_mechanisms import GaussianMechanism

    return GaussianMechanism(epsilon=EPS, delta=DELTA, sensitivity=1.0)


def gaussian(rng, database, n):
    """``GaussianMechanism(ε, δ, sensitivity 1).add_noise`` on the sum, n times."""
    del rng
    mech, value = gaussian_mechanism(), float(np.sum(database))
    return np.array([mech.add_noise(value) for _ in range(n)])


def cases() -> list[Case]:
    """The PyDP cases (raises ``RuntimeError`` if python-dp is not installed)."""
    if MISSING:
        raise RuntimeError(MISSING)
    std = float(gaussian_mechanism().std)
    common = dict(library="python-dp", version=VERSION, kind="correct")
    one, zero = np.array([1.0]), np.array([0.0])
    return [
        Case(
            name="pydp_laplace", mechanism=laplace, x=one, x_prime=zero, claim=pure_dp(EPS),
            n=100_000, description="LaplaceMechanism(ε = 1, sensitivity 1)",
            claim_source="the library's documented ε-DP",
            exact=laplace_renyi(1.0, 1.0 / EPS), exact_note="closed form (continuous idealization)",
            **common,
        ),
        Case(
            name="pydp_gaussian", mechanism=gaussian, x=one, x_prime=zero, claim=gdp(1.0 / std),
            n=100_000, description=f"GaussianMechanism(ε = 1, δ = 1e-5): std = {std:.4f}",
            claim_source="the analytic Gaussian's analysis: μ-GDP, μ = Δ/std with the library's "
            "std (its (ε, δ) is a point of that profile)",
            exact=gaussian_renyi(1.0, std), exact_note="closed form (continuous)", **common,
        ),
    ]  # fmt: skip
