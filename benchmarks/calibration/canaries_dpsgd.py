"""One DP-SGD training run audited with m canaries, beside the accountant's ε.

    PYTHONPATH=. python benchmarks/calibration/canaries_dpsgd.py [--canaries gradient]
        [--m 1000] [--steps 100] [--epsilon 4] [--width 1536] [--seed 0] [--runs 1000]
    PYTHONPATH=. python benchmarks/calibration/canaries_dpsgd.py --canaries mislabelled [--m 797]

The model: sklearn's bundled digits (offline; 1,000 training and 797 test images), fixed random
ReLU features φ(x) ∈ R^width (public, not trained) and a trained softmax layer (d = 10·width + 10
parameters), optax SGD. DP-SGD: every step uses every example (no sampling), clips each
per-example gradient to C = 1 in ℓ2, adds N(0, (σC)² I) to the sum and divides by the fixed
B = 1,000. Each step is a Gaussian mechanism of sensitivity C with respect to adding or removing
one example, so T steps are √T/σ-GDP (Dong, Roth, Su, arXiv:1905.02383v3, Cor. 3.3), and the
accountant's ε is dp_accounting's for ``SelfComposedDpEvent(GaussianDpEvent(σ), T)`` (PLD).
σ is set so that this ε is ``--epsilon`` at δ = 10⁻⁵.

The canaries, ``--canaries gradient`` (white box, final model observed): m unit directions u_i
in parameter space, drawn in the part of it no data gradient reaches (the feature components
orthogonal to the span of the training features; width > 1,000 makes that non-empty). Each
canary is included with probability ½ (its bit) and then contributes the gradient C·u_i at every
step, as an extra example whose gradient has norm C. Its score is ``−⟨θ_T − θ_0, u_i⟩``.

``--canaries mislabelled`` (black box, last model only, the input-space canaries of Steinke,
Nasr, Jagielski's black-box audits, arXiv:2305.08846v1): the first m of the 797 held-out
images, each with a uniformly drawn wrong label; each is added to the training set with
probability ½ (its bit) and goes through DP-SGD as any example (clipped per-example gradient;
the divisor stays B = 1,000). Its score is the negative cross-entropy loss of the final model on
(image, wrong label): a low loss says "in", a high loss "out", and the guesses are two-sided.
The test accuracy is on held-out images the run never saw, with their true labels (the excluded
canaries and the held-out images not used as canaries).

The training run is done **once**; the scores and bits go to
:func:`rdpjax.canaries.one_run_bits` with the accountant's claim (``from_dp_accounting(event)``,
whose curve comes from the event's PLD) and to jax_privacy's one-run auditor.

The many-run baseline (``--runs R``; 0 skips it): the first canary alone, audited the classic
way: R training runs with it and R without it (no other canary; fresh noise keys), its score in
each, and the two-sample rejection-set test :func:`rdpjax.rejection.set_test` on the R + R
scores with the μ-GDP claim of the accountant. The runs use :func:`train_runs`, the same DP-SGD
with the softmax layer's per-example gradients in closed form (φ_i ⊗ (p_i − t_i)), vmapped over
runs. Writes ``benchmarks/results/calibration/canaries_dpsgd.json``
(``canaries_dpsgd_mislabelled.json`` for the black box).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import dp_accounting
import jax
import jax.numpy as jnp
import numpy as np
import optax

import rdpjax
from rdpjax.canaries import one_run_bits
from rdpjax.claims import approx_dp, from_dp_accounting, gdp
from rdpjax.rejection import set_test

DELTA = 1e-5
CLIP = 1.0
OUT = Path(__file__).resolve().parents[1] / "results" / "calibration" / "canaries_dpsgd.json"


def _data(width: int, rng: np.random.Generator):
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    order = rng.permutation(len(y))
    x, y = x[order] / 16.0, y[order]
    w0 = rng.normal(0.0, 1.0, (x.shape[1], width)) / np.sqrt(x.shape[1])
    phi = np.maximum(x @ w0, 0.0)
    phi = np.concatenate([phi, np.ones((len(y), 1))], axis=1)  # the bias as a constant feature
    return phi[:1000], y[:1000], phi[1000:], y[1000:]


def _canaries(phi_train: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """(m, features, 10) unit directions whose feature parts avoid the training features' span."""
    q, _ = np.linalg.qr(phi_train.T)  # an orthonormal basis of span{φ(x_i)}
    g = rng.normal(size=(m, phi_train.shape[1], 10))
    flat = g.transpose(1, 0, 2).reshape(phi_train.shape[1], -1)  # (features, m·10): BLAS products
    flat -= q @ (q.T @ flat)  # project the span out
    g = flat.reshape(phi_train.shape[1], m, 10).transpose(1, 0, 2)
    return g / np.linalg.norm(g.reshape(m, -1), axis=1)[:, None, None]


def train(phi, y, canary_sum, sigma, steps, lr, key):
    """DP-SGD, full batch: clip, sum, add the canaries' C·Σu_i, add N(0, (σC)²), divide by B."""
    phi, onehot = jnp.asarray(phi, jnp.float32), jax.nn.one_hot(y, 10)
    canary_sum = jnp.asarray(canary_sum, jnp.float32)
    opt = optax.sgd(lr)
    theta = jnp.zeros((phi.shape[1], 10), jnp.float32)
    state = opt.init(theta)
    batch = phi.shape[0]

    def per_example(theta, f, t):
        return jax.grad(lambda w: optax.softmax_cross_entropy(f @ w, t))(theta)

    @jax.jit
    def step(carry, key):
        theta, state = carry
        grads = jax.vmap(per_example, (None, 0, 0))(theta, phi, onehot)
        norms = jnp.sqrt(jnp.sum(grads**2, axis=(1, 2)))
        clipped = grads * jnp.minimum(1.0, CLIP / jnp.maximum(norms, 1e-12))[:, None, None]
        noise = sigma * CLIP * jax.random.normal(key, theta.shape)
        update = (clipped.sum(0) + CLIP * canary_sum + noise) / batch
        delta, state = opt.update(update, state, theta)
        return (optax.apply_updates(theta, delta), state), None

    (theta, _), _ = jax.lax.scan(step, (theta, state), jax.random.split(key, steps))
    return np.asarray(theta, np.float64)


def train_runs(phi, y, canary, sigma, steps, lr, keys, chunk: int = 25, batch: int | None = None):
    """:func:`train` for each key (one run each), with the per-example gradients in closed form.

    For the softmax layer, ∇_θ CE(φᵀθ, t) = φ ⊗ (softmax(φᵀθ) − t), of norm ‖φ‖·‖p − t‖, so the
    clipped sum is φᵀ(c ⊙ (P − T)) with c_i = min(1, C/(‖φ_i‖‖p_i − t_i‖)): two matrix products
    a step instead of n gradients. Runs go ``chunk`` at a time through ``vmap``. ``batch``: the
    fixed divisor B (default: the number of examples, as :func:`train`); a dataset with
    mislabelled canaries added keeps B = 1,000, so the divisor reveals nothing. Returns the
    (runs, features, 10) final parameters.
    """
    phi, onehot = jnp.asarray(phi, jnp.float32), jax.nn.one_hot(y, 10)
    canary = jnp.asarray(canary, jnp.float32)
    phi_norm = jnp.linalg.norm(phi, axis=1)
    batch = phi.shape[0] if batch is None else batch

    def one(key):
        def step(theta, key):
            resid = jax.nn.softmax(phi @ theta) - onehot
            norms = phi_norm * jnp.linalg.norm(resid, axis=1)
            scale = jnp.minimum(1.0, CLIP / jnp.maximum(norms, 1e-12))
            noise = sigma * CLIP * jax.random.normal(key, theta.shape)
            update = (phi.T @ (scale[:, None] * resid) + CLIP * canary + noise) / batch
            return theta - lr * update, None  # optax.sgd(lr) without momentum

        theta = jnp.zeros((phi.shape[1], 10), jnp.float32)
        return jax.lax.scan(step, theta, jax.random.split(key, steps))[0]

    run = jax.jit(jax.vmap(one))
    out = [np.asarray(run(keys[i : i + chunk])) for i in range(0, len(keys), chunk)]
    return np.concatenate(out).astype(np.float64)


def many_run(phi, y, u, sigma, steps, lr, runs: int, seed: int, claim):
    """The two-sample audit of one canary u over ``runs`` runs with it and ``runs`` without."""
    keys = jax.random.split(jax.random.key(seed + 1), 2 * runs)
    with_it = train_runs(phi, y, u, sigma, steps, lr, keys[:runs])
    without = train_runs(phi, y, np.zeros_like(u), sigma, steps, lr, keys[runs:])
    p, q = -np.einsum("rfc,fc->r", with_it, u), -np.einsum("rfc,fc->r", without, u)
    return set_test(jax.random.key(seed + 2), p, q, claim, delta=DELTA), p, q


def _mislabelled(phi_pool, y_pool, m: int, rng: np.random.Generator):
    """m black-box canaries: the first m held-out images, each with a uniform wrong label."""
    if not 0 < m <= len(y_pool):
        raise SystemExit(f"--m: mislabelled canaries come from the {len(y_pool)} held-out images")
    wrong = (y_pool[:m] + rng.integers(1, 10, m)) % 10  # any label but the true one
    return phi_pool[:m], wrong


def _losses(theta: np.ndarray, phi: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Cross-entropy of the softmax layer θ on (φ, label) pairs, row by row (batched over runs)."""
    logits = phi @ theta  # (..., n, 10)
    top = logits.max(axis=-1, keepdims=True)
    norm = top[..., 0] + np.log(np.exp(logits - top).sum(axis=-1))
    return norm - logits[..., np.arange(labels.size), labels]


def mislabelled_run(phi, y, phi_pool, y_pool, args, sigma, rng):
    """One DP-SGD run on the training set plus the included mislabelled canaries (black box).

    Returns the canaries' scores (−loss of the final model on each canary's image and wrong
    label), their bits, the test accuracy (held-out images the run never saw, true labels: the
    excluded canaries and the held-out images not used as canaries) and a callable running the
    many-run baseline of canary 0.
    """
    phi_c, wrong = _mislabelled(phi_pool, y_pool, args.m, rng)
    bits = rng.integers(0, 2, args.m)
    inc = bits == 1
    key = jax.random.key(args.seed)[None]
    theta = train_runs(np.concatenate([phi, phi_c[inc]]), np.concatenate([y, wrong[inc]]),
                       np.zeros((phi.shape[1], 10)), sigma, args.steps, args.lr, key,
                       batch=len(y))[0]  # fmt: skip
    scores = -_losses(theta, phi_c, wrong)
    unseen = np.concatenate([np.flatnonzero(~inc), np.arange(args.m, len(y_pool))])
    accuracy = float(np.mean(np.argmax(phi_pool[unseen] @ theta, axis=1) == y_pool[unseen]))

    def many(runs: int, claim):
        keys = jax.random.split(jax.random.key(args.seed + 1), 2 * runs)
        zero = np.zeros((phi.shape[1], 10))
        phi_1, y_1 = np.concatenate([phi, phi_c[:1]]), np.concatenate([y, wrong[:1]])
        with_it = train_runs(
            phi_1, y_1, zero, sigma, args.steps, args.lr, keys[:runs], batch=len(y)
        )
        without = train_runs(phi, y, zero, sigma, args.steps, args.lr, keys[runs:], batch=len(y))
        p = -_losses(with_it, phi_c[:1], wrong[:1])[:, 0]
        q = -_losses(without, phi_c[:1], wrong[:1])[:, 0]
        return set_test(jax.random.key(args.seed + 2), p, q, claim, delta=DELTA)

    return scores, bits, accuracy, many


def gradient_run(phi, y, phi_test, y_test, args, sigma, rng):
    """One DP-SGD run with m white-box gradient canaries; as :func:`mislabelled_run` returns."""
    u = _canaries(phi, args.m, rng)
    bits = rng.integers(0, 2, args.m)
    theta = train(phi, y, np.einsum("m,mfc->fc", bits, u), sigma, args.steps, args.lr,
                  jax.random.key(args.seed))  # fmt: skip
    accuracy = float(np.mean(np.argmax(phi_test @ theta, axis=1) == y_test))
    scores = -np.einsum("fc,mfc->m", theta, u)  # θ_0 = 0

    def many(runs: int, claim):
        return many_run(phi, y, u[0], sigma, args.steps, args.lr, runs, args.seed, claim)[0]

    return scores, bits, accuracy, many


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--canaries",
        choices=["gradient", "mislabelled"],
        default="gradient",
        help="white-box gradient canaries, or black-box mislabelled examples scored by their loss",
    )
    parser.add_argument(
        "--m", type=int, default=None, help="canaries (default 1000; 797 black box)"
    )
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--width", type=int, default=1536)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1000, help="many-run baseline; 0 skips it")
    parser.add_argument(
        "--out", type=Path, default=None, help="default: results/calibration/<json> by mode"
    )
    args = parser.parse_args(argv)
    black_box = args.canaries == "mislabelled"
    if args.m is None:
        args.m = 797 if black_box else 1000
    if args.out is None:
        args.out = OUT.with_name("canaries_dpsgd_mislabelled.json") if black_box else OUT
    command = "PYTHONPATH=. python benchmarks/calibration/canaries_dpsgd.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    print(command, flush=True)
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    phi, y, phi_test, y_test = _data(args.width, rng)
    sigma = np.sqrt(args.steps) * dp_accounting.get_sigma_gaussian(args.epsilon, DELTA)
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma), args.steps)
    accountant = dp_accounting.pld.PLDAccountant()
    accountant.compose(event)
    eps_accountant = accountant.get_epsilon(DELTA)
    run = mislabelled_run if black_box else gradient_run
    scores, bits, accuracy, many = run(phi, y, phi_test, y_test, args, sigma, rng)
    one = one_run_bits(scores, bits, from_dp_accounting(event), delta=DELTA)
    claim_check = one_run_bits(scores, bits, approx_dp(eps_accountant, DELTA))
    result = {
        "command": command,
        "rdpjax": str(Path(rdpjax.__file__).parent),
        "canaries": args.canaries,
        "m": args.m,
        "steps": args.steps,
        "sigma": sigma,
        "mu_true": np.sqrt(args.steps) / sigma,
        "epsilon_accountant": eps_accountant,
        "test_accuracy": accuracy,
        "one_run": one.to_dict(),
        "approx_dp_refuted": claim_check.refuted,
    }
    if args.runs > 0:
        test = many(args.runs, gdp(float(result["mu_true"])))
        result["many_run"] = {"runs_per_side": args.runs, "epsilon": test.epsilon, "mu": test.mu,
                              "refuted": test.refuted, "verdict": test.verdict()}  # fmt: skip
        print(f"many runs ({args.runs} + {args.runs}), one canary: {test.verdict()}", flush=True)
    result["seconds"] = time.perf_counter() - start
    try:
        from jax_privacy.auditing import CanaryScoreAuditor

        auditor = CanaryScoreAuditor(scores[bits == 1], scores[bits == 0])
        result["jax_epsilon_one_run"] = auditor.epsilon_one_run(0.05, DELTA)
        result["jax_epsilon_one_run_fdp"] = auditor.epsilon_one_run_fdp(0.05, DELTA)
    except ImportError:
        pass
    print(
        f"accountant ε = {eps_accountant:.3f} at δ = {DELTA:g} (μ = {result['mu_true']:.3f}); "
        f"test accuracy {accuracy:.3f}\none run: {one.verdict()}\n"
        f"ε(δ) of the certified μ: {one.epsilon_gaussian:.3f}; jax_privacy: "
        f"{result.get('jax_epsilon_one_run', float('nan')):.3f} (Steinke), "
        f"{result.get('jax_epsilon_one_run_fdp', float('nan')):.3f} (f-DP, Gaussian)",
        flush=True,
    )
    args.out.write_text(json.dumps(result, indent=1, default=float) + "\n")
    print(f"wrote {args.out} ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
