"""Audit a mechanism end to end: draw outputs on two adjacent databases, bound ε(λ), check a claim.

A lower bound on ``D_λ(law A(x) ‖ law A(x'))`` for one pair is a lower bound on
``ε(λ) = sup_{x~x'} D_λ`` (Kutta, Askin, Dunsche, arXiv:2212.04739v3, §II), and so is a bound
computed on any fixed function ``g`` of the outputs (data-processing inequality): ``project`` and
the zoo's canonical encodings never make the bound invalid, only possibly looser.

The mechanism is either a :class:`rdpjax.mechanisms.Mechanism` (the zoo, or a JAX sampler wrapped
by :func:`rdpjax.mechanisms.from_sampler`) or any Python callable ``sample(rng, database, n) ->
array-like`` — numpy code or another library's DP mechanism — called in batches with a
``numpy.random.Generator`` seeded from ``key``.

**Any n through one door.** When the draws of both sides fit ``memory_budget`` they are drawn in
memory and bounded by :func:`rdpjax.lower_bound`. Beyond it they are binned as they are drawn, on a
grid fixed beforehand from an independent pilot draw: JAX samplers inside one compiled scan
(:func:`rdpjax.stream.mechanism_streamed_bound`), numpy black boxes batch by batch
(:func:`rdpjax.stream.blackbox.blackbox_bound`). Mass off the pilot's grid is clamped onto its edge
and counted (``Bound.outside``), never dropped. Both routes give valid bounds; they differ in the
grid.

**Claims.** ``claim`` is an :class:`rdpjax.claims.Claim` (ε-DP, zCDP, GDP, an RDP curve, a
dp_accounting event); without one a zoo mechanism's own claim is used. ``lam=None`` chooses the
orders (:func:`rdpjax.estimator.orders.default_orders`): λ = 2, 5, 7 without a claim, a wide grid
with one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence

import jax
import numpy as np

from rdpjax._validation import check_int
from rdpjax.auditing.draws import draw_outputs, exact_divergences, progress_bar
from rdpjax.auditing.report import AuditReport, json_ready
from rdpjax.estimator.api import lower_bound
from rdpjax.estimator.orders import default_orders
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.user import from_sampler

__all__ = ["audit", "DEFAULT_MEMORY_BUDGET"]

DEFAULT_MEMORY_BUDGET = 2**29
"""Bytes the in-memory draws may take (512 MiB) before :func:`audit` streams them instead. The
draws are costed at 24 bytes per output coordinate and side: the float64 sample and about two
working copies (``lower_bound`` at n = 4·10⁶ per side added 2.5 × 8 bytes per output to the peak
resident memory; at 1.6·10⁷, 1.7 ×)."""

_BYTES_PER_OUTPUT = 24


def _resolve_claim(claim, claimed_epsilon, mechanism):
    from rdpjax.claims import as_claim, pure_dp

    if claim is not None and claimed_epsilon is not None:
        raise ValueError(
            "pass either claim= or claimed_epsilon= (the same as pure_dp(ε)), not both."
        )
    if claimed_epsilon is not None:
        return pure_dp(claimed_epsilon)
    if claim is not None:
        return as_claim(claim)
    return getattr(mechanism, "claim", None) if isinstance(mechanism, Mechanism) else None


def _orders(lam, claim, n: int) -> list[float]:
    orders = default_orders(claim, n) if lam is None else np.atleast_1d(np.asarray(lam, np.float64))
    return [float(v) for v in orders]


def _output_dim(mechanism: Mechanism, x) -> int:
    shape = jax.eval_shape(lambda db: mechanism.sample(jax.random.key(0), db, 2), x).shape
    return 1 if len(shape) == 1 else int(np.prod(shape[1:]))


def _with_projection(mechanism: Mechanism, project: Callable) -> Mechanism:
    """A JAX sampler drawing ``project(mechanism.sample(…))``; ``project`` must be traceable."""

    def projected(key, database, m):
        return project(mechanism.sample(key, database, m))

    return from_sampler(projected, name=mechanism.name)


def _under_bar(n: int, progress, run):
    """``run(advance)`` under a progress bar over the 2n draws of a streamed estimator.

    The estimator's ``progress=`` callback ``advance(done, total)`` moves the bar.
    """
    with progress_bar(2 * n, progress, "drawing and binning") as bar:
        return run(lambda done, total: bar.update(int(done) - bar.n))


def audit(
    mechanism: Mechanism | Callable,
    x,
    x_prime,
    lam: float | Sequence[float] | None = None,
    *,
    n: int | None = None,
    key,
    alpha: float = 0.05,
    both_directions: bool = True,
    project: Callable | None = None,
    claim=None,
    claimed_epsilon: float | None = None,
    batch_size: int = 10**6,
    progress: bool | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    densities: bool = False,
    sequential: bool = False,
    max_n: int | None = None,
    schedule=None,
    checkpoint=None,
    resume: bool = False,
    **estimator_options,
) -> AuditReport:
    """Audit ``mechanism`` on the adjacent databases ``x``, ``x'`` against a privacy claim.

    Draws ``n`` outputs on each, applies the canonical encoding of a discrete zoo mechanism (or
    the user's ``project``), computes lower bounds on ε(λ) that hold simultaneously at 1 − α
    (eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, Bonferroni over orders and
    directions), and compares them with the exact value and the claim. Since all bounds hold
    together, a true claim is refuted at some order with probability at most ``alpha``.

    Args:
      mechanism: a :class:`rdpjax.mechanisms.Mechanism` (zoo, or
        :func:`rdpjax.mechanisms.from_sampler`), or any callable ``sample(rng, database, n) ->
        array-like`` with ``rng`` a ``numpy.random.Generator`` (first called once for 2 outputs
        on ``x``, with a generator of its own, to learn the output's shape).
      x: the first of the two adjacent databases.
      x_prime: the second, adjacent to ``x``.
      lam: one order λ > 1 or several; ``None`` chooses them
        (:func:`rdpjax.estimator.orders.default_orders`: 2, 5, 7 without a claim, a wide grid with
        one).
      n: outputs per database (an integer ≥ 2; ``1e6`` is accepted; default 10⁶). Not with
        ``sequential``.
      key: a JAX PRNG key (the only source of randomness).
      alpha: family-wise error level of the reported bounds.
      both_directions: also bound ``D_λ(Q‖P)`` (ε(λ) is a supremum over *ordered* pairs).
      project: a fixed function applied to the outputs (arrays in, array out) before bounding;
        it must be a JAX function when a JAX sampler is streamed. ``"learn"``: learn one
        (:mod:`rdpjax.auditing.learn`) on a training part of the n outputs a side
        (:data:`rdpjax.auditing.learn.TRAIN_FRACTION`, grown by
        :func:`rdpjax.auditing.learn.training_size`,
        drawn in memory from keys of its own), freeze it and certify on the rest, with
        ``transform="quantile"`` unless given; the report's ``n`` is the certifying part and its
        settings name the family chosen.
      claim: an :class:`rdpjax.claims.Claim`; default the zoo mechanism's own (``None`` for a
        black box: then nothing is checked).
      claimed_epsilon: shorthand for ``claim=rdpjax.claims.pure_dp(claimed_epsilon)``.
      batch_size: outputs per call of a black-box sampler.
      progress: ``None``: a progress bar on stderr once drawing has run 2 s (a JAX sampler in
        memory, one compiled draw, shows none); ``True``: always; ``False``: never.
      memory_budget: bytes the draws may take in memory (24 bytes per output coordinate and
        side); beyond it they are binned as they are drawn (module docstring).
      densities: also keep the densities behind the bound (``AuditReport.densities``, for
        :func:`rdpjax.write_report`'s figure): one more pass over the draws; only for draws in
        memory with 1-D or discrete outputs (else ``None``).
      sequential: draw in looks of growing size up to ``max_n`` per database and stop at the
        first look whose bound refutes the claim (:mod:`rdpjax.auditing.sequential`): every look's
        bounds hold together at 1 − α, so a true claim is refuted with probability ≤ α however
        early the audit stops. The report's ``n`` is the last look's and ``looks`` lists them.
      max_n: outputs per database at the last look (``sequential`` only).
      schedule: ``sequential`` only: the looks and their levels
        (:func:`rdpjax.auditing.sequential.geometric_schedule`; default from ``max_n`` and
        ``alpha``).
      checkpoint: ``sequential`` only: a folder where the draws so far (binned) and the looks
        are saved after every batch, so that an interrupted audit can be resumed.
      resume: ``sequential`` only: continue the audit saved in ``checkpoint`` (same arguments,
        same key); the result equals the uninterrupted audit's.
      **estimator_options: passed to :func:`rdpjax.lower_bound` (``bandwidth``, ``floor``,
        ``transform``, …), or to the streamed estimators (``transform`` needs the draws in
        memory); a sequential audit takes those of :data:`rdpjax.auditing.sequential.OPTIONS`.

    Returns:
      An :class:`rdpjax.AuditReport`.

    Raises:
      ValueError: on a bad ``n``, claim or order, or any input :func:`rdpjax.lower_bound`
        rejects.
    """
    is_mechanism = isinstance(mechanism, Mechanism)
    if not is_mechanism and not callable(mechanism):
        raise ValueError(
            "mechanism must be a rdpjax.mechanisms mechanism or a callable "
            f"sample(rng, database, n); got {type(mechanism).__name__}."
        )
    if progress not in (None, True, False):
        raise ValueError(f"progress must be None, True or False; got {progress!r}.")
    if sequential:
        from rdpjax.auditing.sequential.audit import from_audit

        return from_audit(
            mechanism,
            x,
            x_prime,
            lam,
            n=n,
            key=key,
            alpha=alpha,
            both_directions=both_directions,
            project=project,
            claim=_resolve_claim(claim, claimed_epsilon, mechanism),
            batch_size=batch_size,
            progress=progress,
            max_n=max_n,
            schedule=schedule,
            checkpoint=checkpoint,
            resume=resume,
            densities=densities,
            options=estimator_options,
        )
    for name_, value in (("max_n", max_n), ("schedule", schedule), ("checkpoint", checkpoint)):
        if value is not None:
            raise ValueError(f"{name_}= is for a sequential audit (sequential=True).")
    if resume:
        raise ValueError("resume=True is for a sequential audit (sequential=True).")
    n = 10**6 if n is None else n
    if isinstance(n, bool) or not isinstance(n, int | float | np.integer | np.floating):
        raise ValueError(f"n must be a whole number ≥ 2; got {n!r}.")
    if not math.isfinite(float(n)) or not float(n).is_integer() or n < 2:
        raise ValueError(f"n must be a whole number ≥ 2; got {n!r}.")
    n = int(n)
    batch_size = check_int(batch_size, "batch_size", 1)
    memory_budget = check_int(memory_budget, "memory_budget", 0)
    claim = _resolve_claim(claim, claimed_epsilon, mechanism)
    learned = None
    if isinstance(project, str):
        from rdpjax.auditing.learn import train_projection

        learned, n = train_projection(project, mechanism, key, x, x_prime, n, batch_size)
        project = learned
    orders = _orders(lam, claim, n)
    claimed = None if claim is None else np.asarray(claim(orders), np.float64)
    kp, kq = jax.random.split(key)
    exact = None
    if is_mechanism:
        name = mechanism.name
        exact = exact_divergences(mechanism, x, x_prime, orders, both_directions)
        dim = _output_dim(mechanism, x)
    else:
        name = getattr(mechanism, "__name__", type(mechanism).__name__)
        probe = np.asarray(mechanism(np.random.default_rng(0), x, 2))  # 2 outputs, for d
        if project is not None:
            probe = np.asarray(project(probe))
        dim = int(np.prod(probe.shape[1:])) if probe.ndim > 1 else 1
    streamed = 2 * n * dim * _BYTES_PER_OUTPUT > memory_budget
    if not streamed:  # defaults of the in-memory bound, recorded in the report's settings
        if learned is not None:  # scores are skewed (a norm's, a likelihood ratio's): the map
            estimator_options.setdefault("transform", "quantile")
        if is_mechanism and project is None and mechanism.output(x).is_discrete:
            estimator_options.setdefault("discrete", True)  # codes of unordered outputs
    transform = estimator_options.pop("transform", None) if streamed else None  # "auto": no map
    if transform not in (None, "auto"):
        raise ValueError(
            f"transform={transform!r} needs the draws in memory: "
            f"{2 * n * dim * _BYTES_PER_OUTPUT:,} bytes exceed memory_budget={memory_budget:,} "
            "(raise it, or lower n)."
        )
    options = dict(alpha=alpha, both_directions=both_directions, **estimator_options)
    if streamed and is_mechanism:
        from rdpjax.stream import mechanism_streamed_bound

        mech = mechanism if project is None else _with_projection(mechanism, project)
        bound = _under_bar(
            n,
            progress,
            lambda advance: mechanism_streamed_bound(
                key, mech, x, x_prime, orders, n=n, progress=advance, **options
            ),
        )
    elif streamed:
        from rdpjax.stream.blackbox import blackbox_bound

        bound = _under_bar(
            n,
            progress,
            lambda advance: blackbox_bound(
                mechanism,
                key,
                x,
                x_prime,
                orders,
                n=n,
                batch_size=batch_size,
                project=project,
                progress=advance,
                **options,
            ),
        )
    else:
        # A JAX draw is one compiled call per side (seconds): its bar only with progress=True.
        mode = bool(progress) if is_mechanism else progress
        with progress_bar(2 * n, mode, "drawing") as bar:
            if is_mechanism:
                p = jax.block_until_ready(mechanism.sample(kp, x, n))
                bar.update(n)
                q = jax.block_until_ready(mechanism.sample(kq, x_prime, n))
                bar.update(n)
                if project is None and mechanism.output(x).is_discrete:
                    p, q = mechanism.output(x).encode(p), mechanism.output(x_prime).encode(q)
                if project is not None:
                    p, q = project(p), project(q)
            else:
                draw = dict(batch_size=batch_size, bar=bar, transform=project)
                p = draw_outputs(mechanism, kp, x, n, **draw)
                q = draw_outputs(mechanism, kq, x_prime, n, **draw)
            bar.set_description("bounding")
            p, q = np.asarray(p), np.asarray(q)
            bound = lower_bound(p, q, orders, **options)
            notes = _support_notes(p, q) if bound.discrete else ()
            curves = _density_curves(p, q, orders, options, bound) if densities else None
    if streamed:
        curves, notes = None, ()
    lower = np.asarray(bound.lower)
    refuted = np.zeros(lower.shape, bool) if claimed is None else lower > claimed
    settings = {
        "lam": orders,
        "lam_chosen_by": "user" if lam is not None else "rdpjax.estimator.orders.default_orders",
        "alpha": float(alpha),
        "both_directions": bool(both_directions),
        "batch_size": batch_size,
        "memory_budget": memory_budget,
        "estimator_options": json_ready(estimator_options),
    }
    if learned is not None:
        settings["projection"] = learned.to_dict()
    return AuditReport(
        lam=np.asarray(bound.lam),
        estimate=np.asarray(bound.estimate),
        lower=lower,
        std_error=np.asarray(bound.std_error),
        exact=exact,
        claimed=claimed,
        refuted=refuted,
        bound=bound,
        claim=claim,
        mechanism=name,
        n=n,
        projected=project is not None,
        streamed=streamed,
        settings=json.dumps(settings),
        densities=curves,
        notes=notes,
    )


def _support_notes(p, q) -> tuple[str, ...]:
    """The report's note when discrete samples suggest disjoint supports (or ``()``)."""
    from rdpjax.estimator.support import encode_pair, support_gap

    codes_p, codes_q, support = encode_pair(p, q)
    size = len(support)
    note = support_gap(np.bincount(codes_p, minlength=size), np.bincount(codes_q, minlength=size))
    return () if note is None else (note,)


def _density_curves(p, q, orders, options, bound):
    """The densities behind ``bound`` (``rdpjax.auditing.plots.density_curves``), or ``None``.

    ``None`` is for continuous outputs of d > 1, which have no 1-D picture.
    """
    from rdpjax.auditing.plots import density_curves

    try:
        return density_curves(p, q, lam=orders, bound=bound, **options)
    except ValueError:  # d = 2, 3 continuous: the bound exists, the 1-D figure does not
        return None
