"""Score families: maps from vector outputs to one number, fitted on training draws.

A score ``s: R^d → R`` turns two samples of vector outputs into two samples of numbers that the
1-D estimator bounds. Any map fixed before the certifying draws keeps the bound valid
(``D_λ(P∘s⁻¹ ‖ Q∘s⁻¹) ≤ D_λ(P ‖ Q)``, data processing; van Erven & Harremoës,
arXiv:1206.2459v2, Theorem 9); a good one loses little of the divergence. Families:

* ``"mean_difference"``: ``s(x) = (μ̂_p − μ̂_q)·x`` — the optimal direction for an isotropic
  Gaussian shift (then ``D_λ`` of the projection equals ``D_λ`` of the vectors);
* ``"fisher"``: ``s(x) = ((Σ̂ + γI)⁻¹ (μ̂_p − μ̂_q))·x``, the shrunk Fisher discriminant
  (``γ = 0.1 · tr Σ̂ / d``): optimal for a Gaussian shift with any common covariance;
* ``"logistic"``: linear logistic regression of the side (p or q) on x, trained with optax;
* ``"quadratic"``: logistic regression on ``(x, x²)`` (coordinatewise squares): leaks in the
  scale or norm of the outputs, or in one rare coordinate, which no linear score sees;
* ``"quadratic_form"``: the log-likelihood ratio of two Gaussians fitted to the training draws,
  ``s(x) = z·w + zᵀAz`` with ``A = (Σ̂_q⁻¹ − Σ̂_p⁻¹)/2`` and ``w = Σ̂_p⁻¹μ̂_p − Σ̂_q⁻¹μ̂_q``
  (both covariances shrunk as Fisher's): the cross terms ``z_i z_j`` see a leak in the
  *dependence* between coordinates (equal means and marginals, a different correlation), which
  no score of single coordinates sees. ``A`` is kept whole up to :data:`FULL_RANK_DIM`
  coordinates and as its :data:`QUADRATIC_RANK` eigenpairs of largest magnitude beyond, so a
  score costs O(d·k) a row.

Each is a pytree (:class:`Score`) whose ``__call__`` computes in numpy float64 on concrete arrays
and in JAX on traced ones, so a fitted score runs on host draws and inside the streamed pipeline.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rdpjax._pytree import pytree_dataclass

__all__ = ["FAMILIES", "Score", "fit_score", "standardize"]

FAMILIES = ("mean_difference", "fisher", "logistic", "quadratic", "quadratic_form")
"""The score families :func:`fit_score` knows, in the order
:func:`rdpjax.auditing.learn.learn_projection`
tries them."""

FULL_RANK_DIM = 64
"""``"quadratic_form"`` keeps every eigenpair of ``A`` up to this many coordinates."""

QUADRATIC_RANK = 16
"""...and this many (largest ``|eigenvalue|``) beyond."""

_STEPS = 300
_LEARNING_RATE = 0.05
_L2 = 1e-4
LOGISTIC_ROWS = 4096
"""The logistic families train on at most this many rows a side (evenly strided), so that a
fit costs seconds at d = 1000; the closed-form families use every row."""


@pytree_dataclass(static=("family",))
class Score:
    """A fitted score ``s(x) = z·w + z²·w2 + ((z V)²)·c`` of ``z = (x − center)/scale``.

    Attributes:
      center, scale: ``(d,)`` standardization fitted on the training draws.
      w: ``(d,)`` linear weights; w2: ``(d,)`` weights of the squares (zeros unless quadratic).
      basis: ``(d, k)`` directions V of the quadratic form ``zᵀAz = Σ_k c_k (z·v_k)²`` and
        ``coef`` their ``(k,)`` weights c (an eigendecomposition of A; zeros unless
        ``"quadratic_form"``).
      family: the family's name (:data:`FAMILIES`).
    """

    center: np.ndarray
    scale: np.ndarray
    w: np.ndarray
    w2: np.ndarray
    family: str
    basis: np.ndarray | None = None
    coef: np.ndarray | None = None

    def __call__(self, x):
        """Scores ``(n,)`` of outputs ``(n, d)`` (or ``(n,)`` for d = 1).

        They are numpy float64 for concrete input, JAX for traced input (inside the streamed
        pipeline).
        """
        xp = jnp if isinstance(x, jax.core.Tracer) else np
        params = [xp.asarray(a) for a in (self.center, self.scale, self.w, self.w2)]
        center, scale, w, w2 = params
        z = (xp.asarray(x).reshape(x.shape[0], -1) - center[None]) / scale[None]
        # Logistic weights may be float32 (fitted under 32-bit jax) beside a float64 z: the
        # products are in the wider of the two, as promotion made them (w2 has w's dtype).
        dtype = np.promote_types(z.dtype, w.dtype)
        out = z.astype(dtype) @ w.astype(dtype)
        if self.family == "quadratic":
            out = out + (z * z).astype(dtype) @ w2.astype(dtype)
        if self.basis is not None and self.coef is not None:
            projected = z.astype(dtype) @ xp.asarray(self.basis).astype(dtype)
            out = out + (projected * projected) @ xp.asarray(self.coef).astype(dtype)
        return out


def standardize(p: np.ndarray, q: np.ndarray):
    """``(p − c)/s``, ``(q − c)/s``, c, s: pooled mean and standard deviation per coordinate.

    A constant coordinate gets s = 1.
    """
    pooled = np.concatenate([p, q])
    center = pooled.mean(axis=0)
    scale = pooled.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    return (p - center) / scale, (q - center) / scale, center, scale


def _logistic(features: np.ndarray, labels: np.ndarray, init: np.ndarray) -> np.ndarray:
    """Weights (bias last) of an L2-regularized logistic regression, full-batch Adam (optax)."""
    x = jnp.asarray(np.c_[features, np.ones(len(features))])
    y = jnp.asarray(labels)
    opt = optax.adam(_LEARNING_RATE)

    def loss(w):
        logits = x @ w
        return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, y)) + _L2 * jnp.sum(w[:-1] ** 2)

    @jax.jit
    def run(w):
        def step(carry, _):
            w, state = carry
            grads = jax.grad(loss)(w)
            # optax's Adam raises a Python float to its int32 step count (bias correction):
            # standard dtype promotion there, where a caller runs jax's strict mode.
            with jax.numpy_dtype_promotion("standard"):
                updates, state = opt.update(grads, state, w)
            return (optax.apply_updates(w, updates), state), None

        (w, _), _ = jax.lax.scan(step, (w, opt.init(w)), None, length=_STEPS)
        return w

    return np.asarray(run(jnp.asarray(np.r_[init, 0.0])))


def fit_score(family: str, p: np.ndarray, q: np.ndarray) -> Score:
    """Fit a score of ``family`` separating training outputs ``p`` (on x) from ``q`` (on x').

    Args:
      family: one of :data:`FAMILIES`.
      p: ``(m, d)`` training outputs on x (a float64 array).
      q: ``(m, d)`` training outputs on x' (a float64 array).

    Raises:
      ValueError: for an unknown family.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}; got {family!r}.")
    zp, zq, center, scale = standardize(p, q)
    d = zp.shape[1]
    diff = zp.mean(axis=0) - zq.mean(axis=0)
    w2 = np.zeros(d)
    if family == "quadratic_form":
        return _quadratic_form(zp, zq, center, scale)
    if family == "mean_difference":
        w = diff
    else:
        pooled = np.concatenate([zp - zp.mean(axis=0), zq - zq.mean(axis=0)])
        cov = pooled.T @ pooled / max(1, len(pooled) - 2)
        w = np.linalg.solve(_ridged(cov), diff) if np.all(np.isfinite(cov)) else diff
    if family in ("logistic", "quadratic"):
        sub_p = zp[:: -(-len(zp) // LOGISTIC_ROWS)]
        sub_q = zq[:: -(-len(zq) // LOGISTIC_ROWS)]
        labels = np.r_[np.ones(len(sub_p)), np.zeros(len(sub_q))]
        z = np.concatenate([sub_p, sub_q])
        if family == "logistic":
            w = _logistic(z, labels, w)[:-1]
        else:
            coef = _logistic(np.c_[z, z * z - 1.0], labels, np.r_[w, np.zeros(d)])[:-1]
            w, w2 = coef[:d], coef[d:]
    norm = float(np.sqrt(np.sum(w**2) + np.sum(w2**2)))
    if not np.isfinite(norm) or norm == 0.0:
        w = np.r_[1.0, np.zeros(d - 1)]  # no signal at all: a fixed coordinate, still valid
        w2, norm = np.zeros(d), 1.0
    return Score(center=center, scale=scale, w=w / norm, w2=w2 / norm, family=family)


def _shrunk_precision(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Σ̂ + γI)⁻¹`` of one side's rows (:func:`_ridged`) and their mean."""
    mean = z.mean(axis=0)
    centred = z - mean
    cov = centred.T @ centred / max(1, len(z) - 1)
    if not np.all(np.isfinite(cov)):  # outputs near float64's limit: no curvature learned
        return np.eye(len(cov)), mean
    return np.linalg.inv(_ridged(cov)), mean


def _ridged(cov: np.ndarray) -> np.ndarray:
    """``Σ̂ + γI`` with γ = 0.1 · tr Σ̂ / d (as Fisher's), or 1 where every coordinate is constant.

    γ = 1 is the standardized unit; γ = 0 left a zero matrix, and "Singular matrix" for a
    mechanism whose outputs never change.
    """
    d = len(cov)
    shrink = 0.1 * np.trace(cov) / d
    return cov + (shrink if shrink > 0 else 1.0) * np.eye(d)


def _quadratic_form(zp: np.ndarray, zq: np.ndarray, center, scale) -> Score:
    """The ``"quadratic_form"`` score of standardized training rows (module docstring).

    ``log N(z; μ_p, Σ_p) − log N(z; μ_q, Σ_q) = zᵀ(Σ_q⁻¹ − Σ_p⁻¹)z/2 + (Σ_p⁻¹μ_p − Σ_q⁻¹μ_q)·z``
    up to a constant; ``A``'s eigendecomposition ``V diag(c) Vᵀ`` turns ``zᵀAz`` into
    ``Σ_k c_k (z·v_k)²``, truncated to the :data:`QUADRATIC_RANK` largest ``|c_k|`` above
    :data:`FULL_RANK_DIM` coordinates. O(m·d² + d³) for m rows.
    """
    prec_p, mean_p = _shrunk_precision(zp)
    prec_q, mean_q = _shrunk_precision(zq)
    d = zp.shape[1]
    coef, basis = np.linalg.eigh((prec_q - prec_p) / 2)
    if d > FULL_RANK_DIM:
        keep = np.argsort(-np.abs(coef))[:QUADRATIC_RANK]
        coef, basis = coef[keep], basis[:, keep]
    w = prec_p @ mean_p - prec_q @ mean_q
    norm = float(np.sqrt(np.sum(w**2) + np.sum(coef**2)))
    if not np.isfinite(norm) or norm == 0.0:
        w, coef, norm = np.r_[1.0, np.zeros(d - 1)], np.zeros_like(coef), 1.0
    return Score(
        center=center,
        scale=scale,
        w=w / norm,
        w2=np.zeros(d),
        family="quadratic_form",
        basis=basis,
        coef=coef / norm,
    )
