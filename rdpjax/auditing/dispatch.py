"""Audit a mechanism end to end: draw outputs on two adjacent databases, bound ε(λ), check a claim.

A lower bound on ``D_λ(law A(x) ‖ law A(x'))`` for one pair is a lower bound on
``ε(λ) = sup_{x~x'} D_λ`` (Kutta, Askin, Dunsche, arXiv:2212.04739v3, §II), and so is a bound
computed on any fixed function ``g`` of the outputs (data-processing inequality): ``project`` and
the zoo's canonical encodings never make the bound invalid, only possibly looser.

The mechanism is either a :class:`rdpjax.mechanisms.Mechanism` (the zoo, or a JAX sampler wrapped
by :func:`rdpjax.mechanisms.from_sampler`) or any Python callable ``sample(rng, database, n) ->
array-like`` — numpy code or another library's DP mechanism — called in batches with a
``numpy.random.Generator`` seeded from ``key``.

**Any n through one door.** When the draws of both sides fit the memory budget they are drawn in
memory and bounded by :func:`rdpjax.lower_bound`. Beyond it they are binned as they are drawn, on a
grid fixed beforehand from an independent pilot draw: JAX samplers inside one compiled scan
(:func:`rdpjax.stream.streamed_bound` on a :class:`~rdpjax.stream.MechanismPair`), numpy black
boxes batch by batch (on a :class:`~rdpjax.stream.BlackBox`). Mass off the pilot's grid is clamped
onto its edge and counted (``Bound.outside``), never dropped. Both routes give valid bounds; they
differ in the grid.

**Claims.** ``claim`` is an :class:`rdpjax.claims.Claim` (ε-DP, zCDP, GDP, an RDP curve, a
dp_accounting event); without one a zoo mechanism's own claim is used. ``lam=None`` chooses the
orders (:func:`rdpjax.claims.orders.default_orders`): λ = 2, 5, 7 without a claim, a wide grid
with one.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from rdpjax._keys import as_key
from rdpjax._validation import check_flag, check_level, check_orders
from rdpjax.auditing.densities import curves_or_none
from rdpjax.auditing.draws import (
    OutputDimensionError,
    check_finite_outputs,
    draw_outputs,
    exact_divergences,
    in_key_order,
    mechanism_name,
    mechanism_source_sha256,
    probe_outputs,
    progress_bar,
    user_function,
    with_projection,
)
from rdpjax.auditing.options import DEFAULT_MEMORY_BUDGET, AuditOptions, Looks, audit_options
from rdpjax.auditing.report import AuditReport, json_ready
from rdpjax.auditing.sets import (
    betting_audit,
    check_operating_points,
    set_test_of_audit,
    uses_sets,
)
from rdpjax.claims.orders import default_orders
from rdpjax.estimator.api import lower_bound
from rdpjax.estimator.options import BoundOptions, changed_fields
from rdpjax.estimator.support import looks_discrete
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.user import SamplerMechanism

__all__ = ["DEFAULT_MEMORY_BUDGET", "audit"]

_BYTES_PER_OUTPUT = 24


def audit(
    key: jax.Array,
    mechanism: Mechanism | Callable[..., Any],
    x: Any,
    x_prime: Any,
    lam: float | Sequence[float] | None = None,
    *,
    n: int | float | Looks | None = None,
    claim: Any = None,
    alpha: float = 0.05,
    both_directions: bool = True,
    options: AuditOptions | None = None,
    **fields: Any,
) -> AuditReport:
    """Audit ``mechanism`` on the adjacent databases ``x``, ``x'`` against a privacy claim.

    Draws ``n`` outputs on each, applies the canonical encoding of a discrete zoo mechanism (or
    the user's ``project``), computes lower bounds on ε(λ) that hold simultaneously at 1 − α
    (eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, Bonferroni over orders and
    directions), and compares them with the exact value and the claim. Since all bounds hold
    together, a true claim is refuted at some order with probability at most ``alpha``.

    Args:
      key: a JAX PRNG key (the only source of randomness), first as in every rdpjax function
        that draws.
      mechanism: a :class:`rdpjax.mechanisms.Mechanism` (zoo, or
        :func:`rdpjax.mechanisms.from_sampler`), or any callable ``sample(rng, database, n) ->
        array-like`` with ``rng`` a ``numpy.random.Generator`` (first called once for 2 outputs
        on ``x``, with a generator of its own, to learn the output's shape).
      x: the first of the two adjacent databases.
      x_prime: the second, adjacent to ``x``.
      lam: one order λ > 1 or several; ``None`` chooses them
        (:func:`rdpjax.claims.orders.default_orders`: 2, 5, 7 without a claim, a wide grid
        with one).
      n: outputs per database (an integer ≥ 2; ``1e6`` is accepted; default 10⁶), or a
        :class:`~rdpjax.auditing.Looks`: a sequential audit, in looks of growing size up to
        ``Looks.max_n``, that stops at the first look refuting the claim
        (:mod:`rdpjax.auditing.sequential`): every look's statements hold together at 1 − α, so
        a true claim is refuted with probability ≤ α however early it stops; its report's
        ``n`` is the last look's and ``looks`` lists them.
      claim: an :class:`rdpjax.claims.Claim` (or what :func:`rdpjax.claims.as_claim` takes);
        default the zoo mechanism's own (``None`` for a black box: then nothing is checked).
      alpha: family-wise error level of the reported bounds.
      both_directions: also bound ``D_λ(Q‖P)`` (ε(λ) is a supremum over *ordered* pairs).
      options: an :class:`~rdpjax.auditing.options.AuditOptions`: the projection, the memory
        budget, progress, densities, the tests, the estimator's :class:`rdpjax.BoundOptions`,
        the stream's :class:`rdpjax.stream.StreamOptions` and the sets'
        :class:`rdpjax.rejection.SetOptions`.
      **fields: any field of those by name (``project=…``, ``progress=False``,
        ``bandwidth=…``, ``batch_size=…``, ``tpr_at_fpr=…``), replacing that of ``options``;
        any other name is a ``TypeError``.

    Returns:
      An :class:`rdpjax.AuditReport`.

    Raises:
      ValueError: on a bad ``n``, claim, order or option, or any input
        :func:`rdpjax.lower_bound` rejects.
      TypeError: on a keyword that names no option.
    """
    if isinstance(key, Mechanism) or callable(key):
        raise ValueError(
            "the key comes first: rdpjax.audit(key, mechanism, x, x_prime, …); got "
            f"{type(key).__name__} as the key"
        )
    as_key(key)  # one key, checked before anything is drawn (it is split as given)
    check_flag(both_directions, "both_directions")
    options = audit_options(options, fields)
    alpha = check_level(alpha)
    given = None if lam is None else check_orders(lam)  # lam itself goes on to the looks
    is_mechanism = isinstance(mechanism, Mechanism)
    if not is_mechanism and not callable(mechanism):
        raise ValueError(
            "mechanism must be a rdpjax.mechanisms mechanism or a callable "
            f"sample(rng, database, n); got {type(mechanism).__name__}."
        )
    claim = _resolve_claim(claim, mechanism)
    looks = n if isinstance(n, Looks) else None
    use_sets = uses_sets(options.test, claim, looks is not None)
    check_operating_points(options, claim, use_sets, looks is not None)
    if looks is not None and isinstance(options.project, str):
        return _learned_looks(mechanism, x, x_prime, lam, looks, key, claim, alpha,
                              both_directions, options)  # fmt: skip
    if use_sets and looks is not None:
        dim, codes = _outputs(mechanism, x, options.project)
        if dim > 1 and not codes:
            raise OutputDimensionError(dim, most=1)
        return betting_audit(mechanism, key, x, x_prime, claim, alpha, looks, options)
    if looks is not None:
        from rdpjax.auditing.sequential.audit import from_audit

        return from_audit(
            mechanism, x, x_prime, lam, looks=looks, key=key, alpha=alpha,
            both_directions=both_directions, claim=claim, options=options,
        )  # fmt: skip
    n = n_asked = _whole_number(n)
    project, learned = options.project, None
    if isinstance(project, str):
        from rdpjax.auditing.learn import train_projection

        batch = options.stream.batch_size
        learned, n = train_projection(
            project, mechanism, key, x, x_prime, n, batch, options.training
        )
        project = learned
    orders = [float(v) for v in (default_orders(claim, n) if given is None else given)]
    dim, codes = _outputs(mechanism, x, project)
    # Checked before the draws, not after. (A zoo mechanism's dim is before its projection.)
    unprojected = project is None or not is_mechanism
    if dim > 3 and unprojected and not codes:
        raise OutputDimensionError(dim)
    streamed = 2 * n * dim * _BYTES_PER_OUTPUT > options.memory_budget
    if use_sets and dim > 1 and options.test == "auto" and claim.kind == "pure_dp":
        # The sets need one number an output: integer rows in memory are coded jointly, real
        # vectors (or a stream of rows) keep the Rényi bounds alone (they take d ≤ 3).
        use_sets = not streamed and codes
    check_operating_points(options, claim, use_sets, False)
    bound_options = _bound_options(options.bound, mechanism, x, project, learned, streamed)
    if streamed and bound_options.transform not in (None, "auto"):
        raise ValueError(
            f"transform={bound_options.transform!r} needs the draws in memory: "
            f"{2 * n * dim * _BYTES_PER_OUTPUT:,} bytes exceed "
            f"memory_budget={options.memory_budget:,} (raise it, or lower n)."
        )
    run = _streamed if streamed else _in_memory
    # With rejection sets, each statistic gets α/2: all that is reported holds together.
    renyi_alpha = alpha / 2 if use_sets else alpha
    sets, shared, curves, notes = None, None, None, ()
    if streamed and use_sets:  # one pass of draws counted by both statistics
        from rdpjax.auditing.one_pass import shared_draws

        bound, sets, shared = shared_draws(
            mechanism, key, (x, x_prime), orders, n, claim, (renyi_alpha, alpha / 2),
            both_directions, project, dataclasses.replace(options, bound=bound_options),
        )  # fmt: skip
    else:
        bound, curves, notes, draws = run(
            mechanism, key, x, x_prime, orders, n, renyi_alpha, both_directions, project,
            bound_options, options,
        )  # fmt: skip
        if use_sets:
            sets = set_test_of_audit(key, draws, claim, alpha / 2, options)
    settings = {
        "lam": orders,
        "lam_chosen_by": "user" if lam is not None else "rdpjax.claims.orders.default_orders",
        "n_asked": n_asked,
        "alpha": float(alpha),
        "test": "both" if use_sets else "renyi",
        "renyi_alpha": float(renyi_alpha),
        "both_directions": bool(both_directions),
        "batch_size": options.stream.batch_size,
        "memory_budget": options.memory_budget,
        "estimator_options": json_ready(
            {**changed_fields(bound_options), **changed_fields(options.stream)}
        ),
        # The map the bound applied (the "auto" choice resolved), beside the options asked for.
        "transform_applied": bound.transform,
    }
    if shared is not None:
        settings["one_pass"] = shared
    function = user_function(mechanism)
    if function is not None:
        settings["mechanism_source_sha256"] = mechanism_source_sha256(function)
    if learned is not None:
        settings["projection"] = learned.to_dict()
    return AuditReport.from_bound(
        bound,
        claim=claim,
        mechanism=mechanism_name(mechanism),
        n=n,
        settings=settings,
        exact=(
            exact_divergences(mechanism, x, x_prime, orders, both_directions)
            if is_mechanism
            else None
        ),
        projected=project is not None,
        streamed=streamed,
        densities=curves,
        notes=notes,
        sets=sets,
    )


def _learned_looks(mechanism, x, x_prime, lam, looks, key, claim, alpha, both_directions, options):
    """A sequential audit with ``project="learn"``: learn the score on a training batch first.

    The training batch is drawn from keys folded off ``key``
    (:func:`rdpjax.auditing.learn.train_projection`), so it shares no draw with the looks; the
    score is then frozen, and the looks (or the betting test) run on it as on any fixed
    projection. Its size follows the sequential audit, which should stop early: about
    ``max(500, 50·d)`` outputs a side for d-dimensional outputs, at most
    ``training.fraction`` of ``max_n``; the looks' ``max_n`` is what is left, so the audit
    draws at most ``max_n`` a side in all. A resumed audit learns the same score again (the
    same keys, the same training draws).
    """
    from rdpjax.auditing.learn import train_projection

    if looks.schedule is not None:
        raise ValueError(
            "project='learn' with a sequential audit takes max_n= (the looks get what the "
            "training leaves), not a schedule."
        )
    max_n = _whole_number(looks.max_n if looks.max_n is not None else 10**5)
    dim, _ = _outputs(mechanism, x, None)
    n_train = int(min(options.training.fraction * max_n, max(500, 50 * dim)))
    if max_n - n_train < 200:
        raise ValueError(
            f"project='learn' with max_n={max_n:,} leaves {max_n - n_train:,} outputs a side to "
            f"the looks after {n_train:,} to train; the looks need 200: raise max_n."
        )
    share = n_train / max_n
    training = dataclasses.replace(
        options.training, fraction=share, fraction_max=share, max_outputs=n_train
    )
    learned, rest = train_projection(
        "learn", mechanism, key, x, x_prime, max_n, options.stream.batch_size, training
    )
    report = audit(
        key, mechanism, x, x_prime, lam, n=dataclasses.replace(looks, max_n=rest),
        claim=claim, alpha=alpha, both_directions=both_directions,
        options=dataclasses.replace(options, project=learned),
    )  # fmt: skip
    settings = json.loads(report.settings) | {"n_asked": max_n, "projection": learned.to_dict()}
    return dataclasses.replace(report, settings=json.dumps(settings))


def _resolve_claim(claim: Any, mechanism: Any) -> Any:
    """The claim to check: ``claim`` as a Claim, else a zoo mechanism's own, else ``None``."""
    from rdpjax.claims import as_claim

    if claim is not None:
        return as_claim(claim)
    return getattr(mechanism, "claim", None) if isinstance(mechanism, Mechanism) else None


def _whole_number(n: Any) -> int:
    """``n`` (default 10⁶) as an int ≥ 2; ``1e6`` is accepted, ``2.5`` and ``True`` are not."""
    n = 10**6 if n is None else n
    if isinstance(n, bool) or not isinstance(n, int | float | np.integer | np.floating):
        raise ValueError(f"n must be a whole number ≥ 2; got {n!r}.")
    if not math.isfinite(float(n)) or not float(n).is_integer() or n < 2:
        raise ValueError(f"n must be a whole number ≥ 2; got {n!r}.")
    return int(n)


def _output_dim(mechanism: Mechanism, x: Any) -> int:
    shape = jax.eval_shape(lambda db: mechanism.sample(jax.random.key(0), db, 2), x).shape
    return 1 if len(shape) == 1 else int(np.prod(shape[1:]))


def _outputs(mechanism: Any, x: Any, project: Callable[..., Any] | None) -> tuple[int, bool]:
    """The outputs' dimension, and whether they are integer codes (after ``project``).

    A zoo mechanism's from its shape (before ``project``) and its discrete output; a black
    box's from one :func:`~rdpjax.auditing.draws.probe_outputs`, which tells both.
    """
    if isinstance(mechanism, Mechanism):
        codes = project is None and bool(mechanism.output(x).is_discrete)
        return _output_dim(mechanism, x), codes
    probe = probe_outputs(mechanism, x, project)
    dim = int(np.prod(probe.shape[1:])) if probe.ndim > 1 else 1
    return dim, probe.dtype.kind in "biu"


def _bound_options(
    options: BoundOptions, mechanism: Any, x: Any, project: Any, learned: Any, streamed: bool
) -> BoundOptions:
    """The audit's defaults on top of the user's options (in memory; the stream picks its own).

    Learned scores are skewed (a norm's, a likelihood ratio's): the quantile map. A discrete zoo
    mechanism's codes are unordered: relative frequencies.
    """
    if streamed:
        return options
    if learned is not None and options.transform == "auto":
        options = options.replace(transform="quantile")
    if isinstance(mechanism, Mechanism) and project is None and options.discrete is None:
        if mechanism.output(x).is_discrete:
            options = options.replace(discrete=True)
    return options


def _streamed(
    mechanism, key, x, x_prime, orders, n, alpha, both_directions, project, bound_options, options
):
    """Draws binned as they come (:mod:`rdpjax.stream`), under a progress bar over the 2n draws.

    Returns ``(bound, None, (), None)``: a stream keeps no densities, no discrete counts to
    note and no draws.
    """
    from rdpjax.stream import BlackBox, MechanismPair, streamed_bound

    common = dict(alpha=alpha, both_directions=both_directions, options=bound_options)
    with (
        progress_bar(2 * n, options.progress, "drawing and binning") as bar,
        warnings.catch_warnings(),
    ):
        # Draws off the pilot's grid are clamped onto its edge (a fixed map: the bound stays
        # valid). Nothing a user can act on: Bound.outside keeps the count, --verbose says it.
        warnings.filterwarnings("ignore", message=r".*clamped onto its edge")
        advance = lambda done, total: bar.update(int(done) - bar.n)  # noqa: E731
        if isinstance(mechanism, Mechanism):
            mech = mechanism if project is None else with_projection(mechanism, project)
            stream = options.stream.replace(progress=advance)
            draws = MechanismPair(mech, x, x_prime)
        else:
            stream = options.stream.replace(progress=advance, project=project)
            draws = BlackBox(mechanism, x, x_prime)
        bound = streamed_bound(key, draws, orders, n=n, stream=stream, **common)
    return bound, None, (), None


def _in_memory(
    mechanism, key, x, x_prime, orders, n, alpha, both_directions, project, bound_options, options
):
    """Draws held in memory and bounded by :func:`rdpjax.lower_bound`.

    Returns ``(bound, densities or None, notes, (p, q))``.
    """
    is_mechanism = isinstance(mechanism, Mechanism)
    kp, kq = jax.random.split(key)
    # A JAX draw is one compiled call per side (seconds): its bar only with progress=True.
    mode = bool(options.progress) if is_mechanism else options.progress
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
            if isinstance(mechanism, SamplerMechanism):  # the user's may return a batch sorted
                p, q = in_key_order(kp, p), in_key_order(kq, q)
        else:
            draw = dict(batch_size=options.stream.batch_size, bar=bar, transform=project)
            p = draw_outputs(mechanism, kp, x, n, **draw)
            q = draw_outputs(mechanism, kq, x_prime, n, **draw)
        bar.set_description("bounding")
        p, q = np.asarray(p), np.asarray(q)
        forced = bound_options.transform != options.bound.transform  # the map of a learned score
        if forced and bound_options.discrete is None and looks_discrete(p, q):
            bound_options = bound_options.replace(transform=None)  # few values: frequencies
        common = dict(alpha=alpha, both_directions=both_directions, options=bound_options)
        try:
            bound = lower_bound(p, q, orders, **common)
        except ValueError:
            # lower_bound names the samples p_samples and q_samples; non-finite outputs are named
            # by side instead. Only on failure: lower_bound checks finiteness in its own pass.
            check_finite_outputs(p, "x", projected=project is not None)
            check_finite_outputs(q, "x'", projected=project is not None)
            raise
        notes = _support_notes(p, q, alpha) if bound.discrete else ()
        curves = curves_or_none(p, q, orders, common, bound) if options.densities else None
    return bound, curves, notes, (p, q)


def _support_notes(p, q, alpha: float) -> tuple[str, ...]:
    """The report's note when discrete samples show disjoint supports (or ``()``)."""
    from rdpjax.estimator.support import encode_pair, split_rows, support_gap

    codes_p, codes_q, support = encode_pair(p, q)
    size = len(support)
    note = support_gap(split_rows(codes_p, size), split_rows(codes_q, size), alpha)
    return () if note is None else (note,)
