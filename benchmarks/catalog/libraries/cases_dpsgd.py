"""One DP-SGD step with optax's DP aggregation; fixed-size batches accounted as Poisson sampling.

The step is ``optax.contrib.differentially_private_aggregate(C, σ)`` (per-example gradients
clipped to ℓ2 norm C, summed, N(0, (σC)² I) added, divided by the number of rows) on a linear
regression at w = 0 with N = 20 examples in d = 2. The databases differ in one example: in x it
is a canary whose gradient is clipped to norm C, in x' it is replaced by an example whose gradient
is zero (zero-out neighbours: a zero gradient is the same as no example, so the add/remove
accounting applies). The other examples have zero gradients too, the worst case for the canary.
The auditor sees the update and projects it onto the canary's clipped gradient, a fixed function
(data processing), scaled to units of C: ``N·⟨update, g_c⟩/C²``.

* ``dpsgd_full_batch`` (correct): every example in the batch; claim dp_accounting's
  ``GaussianDpEvent(σ)``; exact ``λ/(2σ²)`` (the claim is tight).
* ``dpsgd_fixed_batch_as_poisson`` (bug): batches of B = 2 taken in a fixed order (a data loader
  without sampling), so the step that processes the canary always contains it, but the step is
  accounted as Poisson sampling at q = B/N: claim ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``.
  Its actual ε(λ) is the unsampled Gaussian's ``λ/(2σ²)``, far above the claim. This is the worst
  case of shuffled batches too (the shuffle puts the canary in the audited step). Reported as the
  "shortcut" of Poisson accounting for fixed-size batches (meta-pytorch/opacus#80,
  tensorflow/privacy#483, lxuechen/private-transformers#7) and shown to matter by Chua et al.
  (arXiv:2403.17673, arXiv:2411.04205) and by an audit of shuffled DP-SGD (arXiv:2411.10614).
* ``dpsgd_poisson`` (its twin): each example in the batch independently with probability q, the
  same claim; exact: the sampled Gaussian's D_λ, both directions, by quadrature (Mironov, Talwar,
  Zhang, arXiv:1908.10530).

σ = 1, C = 1, N = 20, B = 2 (q = 0.1).
"""

from __future__ import annotations

import importlib.metadata

import jax
import jax.numpy as jnp
import optax
from case import Case, gaussian_renyi, optional, sampled_gaussian_renyi

import rdpjax

_, _, MISSING = optional("dp_accounting", "dp-accounting")  # the claims' accountant
N, D, BATCH, CLIP, SIGMA = 20, 2, 2, 1.0, 1.0
RATE = BATCH / N
CITES_BATCHES = (
    "https://github.com/meta-pytorch/opacus/issues/80",
    "https://github.com/tensorflow/privacy/issues/483",
    "https://github.com/lxuechen/private-transformers/issues/7",
    "https://arxiv.org/abs/2403.17673",
    "https://arxiv.org/abs/2411.04205",
    "https://arxiv.org/abs/2411.10614",
)


def databases():
    """(N, d + 1) rows [features | target]: x with the canary in row 0, x' with row 0 zeroed."""
    x = jnp.zeros((N, D + 1)).at[0].set(jnp.array([1.0, 0.0, 50.0]))  # gradient (−50, 0)
    return x, jnp.zeros((N, D + 1))


def per_example_grads(database):
    """Gradients of ½(a·w − b)² at w = 0, one row per example."""

    def loss(w, row):
        return 0.5 * (row[:D] @ w - row[D]) ** 2

    return jax.vmap(jax.grad(loss), (None, 0))(jnp.zeros(D), database)


CANARY_DIRECTION = jnp.array([-1.0, 0.0])  # the canary's clipped gradient / C


def dp_step(key, database, mask):
    """One update of optax's DP aggregation on the rows in ``mask`` (others enter as zeros),
    projected onto the canary's clipped gradient in units of C."""
    grads = per_example_grads(database) * mask[:, None]
    tx = optax.contrib.differentially_private_aggregate(CLIP, SIGMA, key=key)
    update, _ = tx.update(grads, tx.init(jnp.zeros(D)))
    return N * update @ CANARY_DIRECTION / CLIP


def full_batch(key, database, n):
    """n updates of the full-batch step."""
    mask = jnp.ones(N)
    return jax.vmap(lambda k: dp_step(k, database, mask))(jax.random.split(key, n))


def fixed_batch(key, database, n):
    """n updates of the step whose fixed batch (rows 0..B−1) holds the canary."""
    mask = (jnp.arange(N) < BATCH).astype(jnp.float32)
    return jax.vmap(lambda k: dp_step(k, database, mask))(jax.random.split(key, n))


def poisson_batch(key, database, n):
    """n updates of the step on a Poisson-sampled batch (each row with probability q)."""

    def one(k):
        k_batch, k_noise = jax.random.split(k)
        mask = jax.random.bernoulli(k_batch, RATE, (N,)).astype(jnp.float32)
        return dp_step(k_noise, database, mask)

    return jax.vmap(one)(jax.random.split(key, n))


def cases() -> list[Case]:
    """The optax DP-SGD cases (raises ``RuntimeError`` without dp_accounting, their claims')."""
    if MISSING:
        raise RuntimeError(MISSING)
    import dp_accounting as dpa

    version = importlib.metadata.version("optax")
    x, x_prime = databases()
    gaussian_claim = rdpjax.claims.from_dp_accounting(
        dpa.GaussianDpEvent(SIGMA), name=f"dp_accounting GaussianDpEvent({SIGMA:g})"
    )
    poisson_claim = rdpjax.claims.from_dp_accounting(
        dpa.PoissonSampledDpEvent(RATE, dpa.GaussianDpEvent(SIGMA)),
        name=f"dp_accounting PoissonSampledDpEvent({RATE:g}, GaussianDpEvent({SIGMA:g}))",
    )
    common = dict(library="optax", x=x, x_prime=x_prime, version=version)
    return [
        Case(
            name="dpsgd_full_batch",
            kind="correct",
            mechanism=rdpjax.mechanisms.from_sampler(full_batch, name="dpsgd_full_batch"),
            claim=gaussian_claim,
            n=100_000,
            description=f"one DP-SGD step, full batch (σ = {SIGMA:g}, C = {CLIP:g})",
            claim_source="dp_accounting RDP of GaussianDpEvent(σ)",
            exact=gaussian_renyi(1.0, SIGMA),
            exact_note="closed form",
            **common,
        ),
        Case(
            name="dpsgd_fixed_batch_as_poisson",
            kind="bug",
            mechanism=rdpjax.mechanisms.from_sampler(fixed_batch, name="fixed batch"),
            claim=poisson_claim,
            n=300,
            description=f"fixed batch of {BATCH} holding the canary, accounted as Poisson at "
            f"q = {RATE:g}",
            claim_source="dp_accounting RDP of PoissonSampledDpEvent(q, GaussianDpEvent(σ))",
            exact=gaussian_renyi(1.0, SIGMA),
            exact_note="closed form (the batch always holds the canary: no amplification)",
            cites=CITES_BATCHES,
            twin="dpsgd_poisson",
            **common,
        ),
        Case(
            name="dpsgd_poisson",
            kind="correct",
            mechanism=rdpjax.mechanisms.from_sampler(poisson_batch, name="Poisson batch"),
            claim=poisson_claim,
            n=300,
            description=f"Poisson-sampled batch, q = {RATE:g}",
            claim_source="dp_accounting RDP of PoissonSampledDpEvent(q, GaussianDpEvent(σ))",
            exact=sampled_gaussian_renyi(RATE, SIGMA),
            exact_note="quadrature (scipy), both directions",
            cites=CITES_BATCHES,
            twin="dpsgd_fixed_batch_as_poisson",
            **common,
        ),
    ]
