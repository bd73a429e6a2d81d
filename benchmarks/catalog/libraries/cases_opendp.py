"""OpenDP measurements as rdpjax black boxes, each against its own privacy map.

The claim is what the measurement's privacy map returns for a sensitivity of 1 (``meas.map(1)``):
ε for a ``MaxDivergence`` measurement (``pure_dp(ε)``), ρ for ``ZeroConcentratedDivergence``
(``zcdp(ρ)``). n draws come from one call of the same measurement built over a vector domain
(``vector_domain`` with the ℓ1/ℓ2 metric), which adds independent noise of the same scale to each
of the n copies of the value, so coordinate i is one release of the scalar measurement; the
scalar measurement gives the claim. OpenDP's noise comes from its own secure RNG, which cannot
be seeded: audits of these cases are not reproducible from the key (their validity does not
depend on it).

* ``opendp_laplace``: ``make_laplace`` on floats, scale 1; exact: the continuous Laplace closed
  form (OpenDP samples a discretized Laplace on a fine grid; its map accounts for it).
* ``opendp_gaussian``: ``make_gaussian`` on floats, scale 2; exact λ/(2·2²) (continuous
  idealization).
* ``opendp_discrete_gaussian``: ``make_gaussian`` on integers (the discrete Gaussian of Canonne,
  Kamath, Steinke), scale 2; exact: summed over the integers.
* ``opendp_discrete_laplace``: ``make_laplace`` on integers, scale 1; exact: summed over the
  integers.
* ``opendp_randomized_response``: ``make_randomized_response_bool(0.75)`` on True vs False;
  exact: Bernoulli(0.75) vs Bernoulli(0.25).
"""

from __future__ import annotations

import numpy as np
from case import (
    Case,
    binary_renyi,
    discrete_gaussian_renyi,
    discrete_laplace_renyi,
    gaussian_renyi,
    laplace_renyi,
    optional,
)

from rdpjax.claims import pure_dp, zcdp

opendp, VERSION, MISSING = optional("opendp.prelude", "opendp")
LAPLACE_SCALE, GAUSSIAN_SCALE, RR_PROB = 1.0, 2.0, 0.75


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def measurement(kind: str, T: type, vector: bool):
    """An OpenDP Laplace or Gaussian measurement on ``T`` (one value, or a vector of values)."""
    dp = _dp()
    atom = dp.atom_domain(T=T, nan=False) if T is float else dp.atom_domain(T=T)
    if kind == "laplace":
        metric = dp.l1_distance(T=T) if vector else dp.absolute_distance(T=T)
        scale, make = LAPLACE_SCALE, dp.m.make_laplace
    else:
        metric = dp.l2_distance(T=T) if vector else dp.absolute_distance(T=T)
        scale, make = GAUSSIAN_SCALE, dp.m.make_gaussian
    return make(dp.vector_domain(atom) if vector else atom, metric, scale=scale)


def _vector_sampler(kind: str, T: type):
    meas = {}

    def sample(rng, database, n):
        del rng  # OpenDP's own secure RNG
        if "m" not in meas:
            meas["m"] = measurement(kind, T, vector=True)
        value = T(np.sum(database))
        return np.asarray(meas["m"]([value] * n))

    sample.__name__ = f"opendp_{kind}_{T.__name__}"
    return sample


def randomized_response(rng, database, n):
    """n releases of ``make_randomized_response_bool(0.75)`` on ``bool(database[0])``."""
    del rng
    rr = _dp().m.make_randomized_response_bool(prob=RR_PROB)
    value = bool(np.asarray(database).ravel()[0])
    return np.array([rr(value) for _ in range(n)], np.int64)


def claim_of(meas, d_in):
    """The measurement's own guarantee at sensitivity ``d_in``, as an ``rdpjax.claims`` claim."""
    value = meas.map(d_in)
    measure = str(meas.output_measure)
    if measure.startswith("MaxDivergence"):
        return pure_dp(float(value))
    if measure.startswith("ZeroConcentratedDivergence"):
        return zcdp(float(value))
    raise ValueError(f"no rdpjax claim for the output measure {measure}")


def cases() -> list[Case]:
    """The OpenDP cases (raises ``RuntimeError`` if OpenDP is not installed)."""
    if MISSING:
        raise RuntimeError(MISSING)
    dp = _dp()
    common = dict(library="opendp", version=VERSION, kind="correct", claim_source="")
    one_f, zero_f, one_i, zero_i = np.array([1.0]), np.array([0.0]), np.array([1]), np.array([0])
    out = []
    for name, kind, T, n, exact, note in (
        ("opendp_laplace", "laplace", float, 20_000, laplace_renyi(1.0, LAPLACE_SCALE),
         "closed form (continuous idealization)"),
        ("opendp_gaussian", "gaussian", float, 10_000, gaussian_renyi(1.0, GAUSSIAN_SCALE),
         "closed form (continuous idealization)"),
        ("opendp_discrete_gaussian", "gaussian", int, 30_000,
         discrete_gaussian_renyi(1, GAUSSIAN_SCALE), "sum over the integers"),
        ("opendp_discrete_laplace", "laplace", int, 30_000,
         discrete_laplace_renyi(1, 1.0 / LAPLACE_SCALE), "sum over the integers"),
    ):  # fmt: skip
        scalar = measurement(kind, T, vector=False)
        scale = LAPLACE_SCALE if kind == "laplace" else GAUSSIAN_SCALE
        out.append(
            Case(
                name=name,
                mechanism=_vector_sampler(kind, T),
                x=one_f if T is float else one_i,
                x_prime=zero_f if T is float else zero_i,
                claim=claim_of(scalar, T(1)),
                n=n,
                description=f"make_{kind}({T.__name__}, scale {scale:g})",
                exact=exact,
                exact_note=note,
                options={} if T is float else {"discrete": True},
                **{**common, "claim_source": f"its privacy map: map(1) = {scalar.map(T(1)):.6g}"},
            )
        )
    rr = dp.m.make_randomized_response_bool(prob=RR_PROB)
    out.append(
        Case(
            name="opendp_randomized_response",
            mechanism=randomized_response,
            x=np.array([1]),
            x_prime=np.array([0]),
            claim=claim_of(rr, 1),
            n=5_000,
            description=f"make_randomized_response_bool(prob = {RR_PROB:g})",
            exact=binary_renyi(RR_PROB, 1 - RR_PROB),
            exact_note="closed form",
            options={"discrete": True},
            **{**common, "claim_source": f"its privacy map: map(1) = {rr.map(1):.6g}"},
        )
    )
    return out
