"""One DP-SGD step assembled from jax-privacy's parts, against jax-privacy's own accounting.

Batch selection ``batch_selection.CyclicPoissonSampling(sampling_prob=q, iterations=n)`` (Poisson
sampling: each example in each batch independently with probability q; one batch per release),
per-example clipping ``clipped_grad(loss, l2_clip_norm=C)`` (its sensitivity under add/remove
one: ``.sensitivity(ADD_OR_REMOVE_ONE)`` = C), and noise
``noise_addition.matrix_factorization_privatizer`` with the identity noising matrix (i.i.d.
Gaussian noise: DP-SGD) and stddev σ·C. The pair and the projection are those of
``cases_dpsgd.py`` (N = 20 examples in d = 2, a canary whose clipped gradient has norm C against
a zero gradient, the update projected onto the canary's gradient in units of C).

The claim is what ``jax_privacy.accounting.DpsgdTrainingAccountant`` composes for one Poisson
step: ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` (jax_privacy/accounting/analysis.py), its
RDP from dp_accounting; exact: the sampled Gaussian's D_λ by quadrature. The sampler is a numpy
black box (the batch selection is numpy); the noise keys are drawn from its ``rng``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from case import Case, optional, sampled_gaussian_renyi, seed_from
from cases_dpsgd import CANARY_DIRECTION, CLIP, RATE, SIGMA, D, N, databases

import rdpjax

jax_privacy, VERSION, MISSING = optional("jax_privacy", "jax-privacy")
_EYE = np.eye(1)  # one step: the identity noising matrix gives i.i.d. Gaussian noise


def _loss(w, row):
    return 0.5 * jnp.sum((row[..., :D] @ w - row[..., D]) ** 2)


def clipped_gradient():
    """``jax_privacy.clipped_grad`` of the squared loss, clipped to C (sum over the batch)."""
    return jax_privacy.clipped_grad(_loss, l2_clip_norm=CLIP)


@jax.jit
def _noisy_sums(keys, sums):
    stddev = SIGMA * CLIP  # σ · sensitivity(ADD_OR_REMOVE_ONE); checked in the tests

    def one(key, total):
        privatizer = jax_privacy.noise_addition.matrix_factorization_privatizer(
            _EYE, stddev=stddev, prng_key=key
        )
        noisy, _ = privatizer.update(total, privatizer.init(total))
        return noisy

    return jax.vmap(one)(keys, sums)


def poisson_step(rng, database, n):
    """n releases of the Poisson-sampled step, projected onto the canary's gradient / C."""
    database = jnp.asarray(database, jnp.float32)
    grad = clipped_gradient()
    per_example = jax.vmap(lambda row: grad(jnp.zeros(D), row[None]))(database)  # (N, d)
    strategy = jax_privacy.batch_selection.CyclicPoissonSampling(sampling_prob=RATE, iterations=n)
    masks = np.zeros((n, N), np.float32)
    for i, batch in enumerate(strategy.batch_iterator(N, rng=rng)):
        masks[i, batch] = 1.0
    sums = jnp.asarray(masks) @ per_example
    keys = jax.random.split(jax.random.key(seed_from(rng)), n)
    return np.asarray(_noisy_sums(keys, sums) @ CANARY_DIRECTION / CLIP, np.float64)


def accountant_event():
    """The DpEvent jax-privacy's DP-SGD accountant composes for one Poisson step."""
    import dp_accounting as dpa

    return dpa.PoissonSampledDpEvent(RATE, dpa.GaussianDpEvent(SIGMA))


def cases() -> list[Case]:
    """The jax-privacy case (raises ``RuntimeError`` if jax-privacy is not usable)."""
    if MISSING:
        raise RuntimeError(MISSING)
    x, x_prime = databases()
    return [
        Case(
            name="jax_privacy_poisson_step",
            library="jax-privacy",
            version=VERSION,
            kind="correct",
            mechanism=poisson_step,
            x=np.asarray(x),
            x_prime=np.asarray(x_prime),
            claim=rdpjax.claims.from_dp_accounting(
                accountant_event(),
                name=f"dp_accounting PoissonSampledDpEvent({RATE:g}, GaussianDpEvent({SIGMA:g}))",
            ),
            n=30_000,
            description=f"Poisson batch (q = {RATE:g}), clipped_grad, Gaussian privatizer",
            claim_source="DpsgdTrainingAccountant's event for one step: "
            "PoissonSampledDpEvent(q, GaussianDpEvent(σ))",
            exact=sampled_gaussian_renyi(RATE, SIGMA),
            exact_note="quadrature (scipy), both directions",
        )
    ]
