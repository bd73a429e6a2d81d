""":func:`sequential_audit`: the look loop, its checkpoints, and the report.

The loop draws batches of at most ``batch_size`` outputs per side, alternating the sides, until both
hold the next look's ``n_k``; then it bounds (:func:`rdpjax.auditing.sequential.engine.look_bound`),
records the look, and stops when the bound exceeds the claim at some order or after the last look.
With a ``checkpoint`` folder the state is saved after batches and at every look
(:mod:`rdpjax.auditing.sequential.state`); an interruption (Ctrl-C, an exception in the user's
sampler, a killed process) loses at most the batch under way (and a few seconds of cheap batches).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import jax
import numpy as np

from rdpjax._internal.progress import progress_bar
from rdpjax._json import json_floats
from rdpjax._keys import as_key
from rdpjax.auditing.draws import exact_divergences, mechanism_source_sha256, user_function
from rdpjax.auditing.options import AuditOptions, Looks, audit_options
from rdpjax.auditing.report import AuditReport, Look, json_ready
from rdpjax.auditing.sequential.engine import add_batch, empty_counts, look_bound
from rdpjax.auditing.sequential.options import OPTIONS, look_options
from rdpjax.auditing.sequential.schedule import Schedule, geometric_schedule
from rdpjax.auditing.sequential.setup import setup_looks
from rdpjax.auditing.sequential.sources import make_source
from rdpjax.auditing.sequential.state import CHECKPOINT, SLOW_BATCH, State, load_state, save_state
from rdpjax.claims.orders import default_orders
from rdpjax.estimator.support import split_counts, support_gap
from rdpjax.mechanisms.base import Mechanism

__all__ = ["OPTIONS", "from_audit", "sequential_audit"]


def _fingerprint(name, kind, x, x_prime, lam, claim, schedule, key, project, options, extra):
    return json_ready(
        {
            "mechanism": name,
            "source": kind,
            "x": np.asarray(x).tolist(),
            "x_prime": np.asarray(x_prime).tolist(),
            "lam": None if lam is None else np.atleast_1d(np.asarray(lam, np.float64)).tolist(),
            "claim": None if claim is None else claim.to_dict(),
            "schedule": schedule.to_dict(),
            "key": np.asarray(jax.random.key_data(as_key(key))).ravel().tolist(),
            "project": None if project is None else getattr(project, "__name__", str(project)),
            "options": options,
            **extra,
        }
    )


def sequential_audit(
    mechanism,
    x,
    x_prime,
    lam=None,
    *,
    key,
    claim=None,
    alpha: float = 0.05,
    both_directions: bool = True,
    looks: Looks | None = None,
    options: AuditOptions | None = None,
    **fields,
) -> AuditReport:
    """Audit ``mechanism`` in looks of growing size; stop at the first refutation of ``claim``.

    Use it through :func:`rdpjax.audit` (``n=rdpjax.Looks(max_n=…)``), which resolves the claim;
    the arguments are those of :func:`rdpjax.audit` (described there in full).

    Args:
      mechanism: a :class:`rdpjax.mechanisms.Mechanism`, or a numpy black box
        ``sample(rng, database, n)``.
      x: the first of the two adjacent databases.
      x_prime: the second, adjacent to ``x``.
      lam: one order λ > 1 or several; ``None``: :func:`rdpjax.claims.orders.default_orders`
        at each look's n.
      key: a JAX PRNG key (the only source of randomness).
      claim: the :class:`rdpjax.claims.Claim` to refute, or ``None``.
      alpha: family-wise error level shared by every look's bounds (default schedule only).
      both_directions: also bound ``D_λ(Q‖P)``.
      looks: the :class:`~rdpjax.auditing.Looks` (required in practice: its ``max_n`` or
        ``schedule``): ``max_n`` (outputs per side at the last
        look, with the default schedule), ``schedule``
        (:func:`rdpjax.auditing.sequential.geometric_schedule`; default
        ``geometric_schedule(max_n, alpha=alpha)``; its levels replace ``alpha``),
        ``checkpoint`` (a folder for :data:`rdpjax.auditing.sequential.state.CHECKPOINT`),
        ``resume`` (continue from it; without it an existing checkpoint is an error).
      options: the :class:`~rdpjax.auditing.options.AuditOptions`; of its fields a sequential
        audit reads ``project``, ``progress``, the stream's ``batch_size``, and
        :data:`OPTIONS`.
      **fields: those fields by name, as in :func:`rdpjax.audit`.

    Returns:
      An :class:`rdpjax.AuditReport` of the last look taken, with
      :attr:`~rdpjax.AuditReport.looks`.
    """
    options = audit_options(options, fields)
    looks = Looks() if looks is None else looks
    if not isinstance(looks, Looks):
        raise ValueError(f"looks must be a rdpjax.auditing.Looks; got {looks!r}.")
    max_n, schedule, checkpoint = looks.max_n, looks.schedule, looks.checkpoint
    resume, project, progress = looks.resume, options.project, options.progress
    batch_size = options.stream.batch_size
    exact = None
    if isinstance(mechanism, Mechanism):

        def exact(orders):
            return exact_divergences(mechanism, x, x_prime, orders, both_directions)

    name = getattr(mechanism, "name", None) or getattr(mechanism, "__name__", "mechanism")
    options = look_options(options, both_directions)
    if schedule is None:
        if max_n is None:
            raise ValueError("a sequential audit needs max_n (or a schedule).")
        schedule = geometric_schedule(max_n, alpha=alpha)
    elif not isinstance(schedule, Schedule):
        raise ValueError(
            f"schedule must be a rdpjax.auditing.sequential.Schedule; got {schedule!r}."
        )
    elif max_n is not None and int(max_n) != schedule.max_n:
        raise ValueError(f"max_n={max_n} differs from the schedule's last look {schedule.max_n}.")
    source = make_source(mechanism, x, x_prime, key, project, options.discrete)
    recorded = json_ready({**options.chosen(), "discrete": options.discrete})
    fingerprint = _fingerprint(
        name,
        source.kind,
        x,
        x_prime,
        lam,
        claim,
        schedule,
        key,
        project,
        recorded,
        {"both_directions": bool(both_directions), "batch_size": batch_size},
    )
    state = _start(source, schedule, options, fingerprint, checkpoint, resume)

    def bound_at(k: int):
        """Look k's bound from the totals (its orders: ``lam``, or the defaults at n_k)."""
        n_k = schedule.sizes[k]
        if lam is not None:
            orders = [float(v) for v in np.atleast_1d(np.asarray(lam, np.float64))]
        else:
            orders = [float(v) for v in default_orders(claim, n_k)]
        alpha_k = schedule.alphas[k]
        return look_bound(
            state.setup, state.counts, state.outside, k, n_k, orders, alpha_k, options
        )

    bound = None
    finished = bool(state.looks) and (
        state.looks[-1]["refuted"] or len(state.looks) == len(schedule.sizes)
    )
    with progress_bar(2 * schedule.sizes[0], progress, "sequential audit") as bar:
        bar.update(sum(state.drawn))
        try:
            for k, n_k in enumerate(schedule.sizes):
                if finished or k < len(state.looks):
                    continue
                bar.total = 2 * n_k  # the bar runs to the next look
                bar.set_description(f"look {k + 1}/{len(schedule.sizes)}")
                _draw_until(source, state, n_k, batch_size, checkpoint, bar)
                bound = bound_at(k)
                state.looks.append(_look(k, n_k, state.pilot, bound, claim, schedule))
                if checkpoint is not None:
                    save_state(state, checkpoint, force=True)
                if state.looks[-1]["refuted"]:
                    break
        except BaseException:
            if checkpoint is not None:
                save_state(state, checkpoint, force=True)  # every complete batch is kept
            raise
    if bound is None:  # resumed after the last look: the totals are those of that look
        bound = bound_at(len(state.looks) - 1)
    function = user_function(mechanism)  # the user's code, hashed (a zoo mechanism: nothing)
    extra = (
        {} if function is None else {"mechanism_source_sha256": mechanism_source_sha256(function)}
    )
    return _report(state, bound, schedule, claim, exact, name, project, options, checkpoint, extra)


def from_audit(mechanism, x, x_prime, lam, *, looks, key, alpha, both_directions, claim, options):
    """``rdpjax.audit(…, n=Looks(…))``: checks, then :func:`sequential_audit`.

    The checks are those of the audit's arguments that a sequential audit does not take.
    """
    if options.densities:
        raise ValueError("densities=True needs the draws in memory; not with n=Looks(…).")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = sequential_audit(
            mechanism,
            x,
            x_prime,
            lam,
            key=key,
            claim=claim,
            alpha=alpha,
            both_directions=both_directions,
            looks=looks,
            options=options,
        )
    for w in caught:  # re-issued at the caller of rdpjax.audit
        warnings.warn(w.message, w.category, stacklevel=3)
    return report


def _start(source, schedule, options, fingerprint, checkpoint, resume) -> State:
    if checkpoint is not None:
        state = load_state(checkpoint, fingerprint)
        if state is not None and not resume:
            raise ValueError(
                f"{Path(checkpoint) / CHECKPOINT} holds an audit's draws; continue it with "
                "Looks(…, resume=True) (--resume), or use another folder."
            )
        if state is None and resume:
            raise ValueError(f"no checkpoint to resume in {checkpoint} ({CHECKPOINT} is missing).")
        if state is not None:
            source.restore(state.rng)
            return state
    setup, pilot = setup_looks(source, schedule, options)
    empty = empty_counts(setup)
    return State(
        fingerprint=fingerprint,
        setup=setup,
        counts=[empty, empty.copy()],
        outside=[0.0, 0.0],
        drawn=[0, 0],
        pieces=[0, 0],
        rng=source.rng_state(),
        pilot=pilot,
    )


def _draw_until(source, state: State, n_k: int, batch_size: int, checkpoint, bar) -> None:
    """Draw and bin batches, sides alternating, until both sides hold ``n_k`` outputs."""
    while min(state.drawn) < n_k:
        for side in (0, 1):
            m = min(batch_size, n_k - state.drawn[side])
            if m <= 0:
                continue
            started = time.monotonic()
            out = source.draw(side, state.pieces[side], m)
            slow = time.monotonic() - started >= SLOW_BATCH
            counts, off = add_batch(state.setup, state.counts[side], state.outside[side], out)
            # The state changes only once the batch is complete (a checkpoint is consistent).
            state.counts[side], state.outside[side] = counts, off
            state.drawn[side] += m
            state.pieces[side] += 1
            state.rng = source.rng_state()
            bar.update(m)
            if checkpoint is not None:
                save_state(state, checkpoint, force=slow)


def _look(k: int, n_k: int, pilot: int, bound, claim, schedule) -> dict:
    lower = np.asarray(bound.lower, np.float64)
    claimed = None if claim is None else np.asarray(claim(bound.lam), np.float64)
    refuted = bool(claimed is not None and np.any(lower > claimed))
    return {
        "k": k + 1,
        "n": n_k,
        "drawn": n_k + pilot,
        "alpha": schedule.alphas[k],
        "lam": json_floats(bound.lam),
        "lower": json_floats(lower),
        "estimate": json_floats(bound.estimate),
        "claimed": None if claimed is None else json_floats(claimed),
        "refuted": refuted,
    }


def _report(state, bound, schedule, claim, exact, name, project, options, checkpoint, extra):
    """The report of the last look; ``extra``: more settings (the hash of the user's source)."""
    lam = [float(v) for v in np.asarray(bound.lam, np.float64)]
    # Draws off the pilot's grid are clamped onto its edge: a fixed map, so the bounds stay
    # valid (possibly looser). Nothing a user can act on: recorded, and shown with --verbose.
    off = [int(v) for v in state.outside]
    last = state.looks[-1]
    settings = {
        "lam": lam,
        "lam_chosen_by": "rdpjax.claims.orders.default_orders at each look"
        if state.fingerprint["lam"] is None
        else "user",
        "n_asked": int(schedule.max_n),
        "alpha": schedule.alpha,
        "both_directions": options.both_directions,
        "sequential": {
            "schedule": schedule.to_dict(),
            "looks_taken": len(state.looks),
            "stopped": "refuted" if last["refuted"] else "max_n",
            "pilot": state.pilot,
            "drawn_per_database": last["drawn"],
            "clamped_to_grid_edge": off,
            "checkpoint": None if checkpoint is None else str(Path(checkpoint) / CHECKPOINT),
        },
        "batch_size": state.fingerprint["batch_size"],
        "estimator_options": state.fingerprint["options"],
        "transform_applied": bound.transform,  # None: the looks bin the outputs as drawn
    }
    settings.update(extra)
    return AuditReport.from_bound(
        bound,
        claim=claim,
        mechanism=name,
        n=int(last["n"]),
        settings=settings,
        exact=None if exact is None else exact(lam),
        projected=project is not None,
        streamed=True,
        looks=tuple(Look.from_dict(d) for d in state.looks),
        notes=_notes(state, schedule.alpha),
    )


def _notes(state, alpha: float) -> tuple[str, ...]:
    if not state.setup.discrete:
        return ()
    size = max(c.size for c in state.counts)
    # Counts only: each side's draws split into two random halves, from the audit's own key.
    rng = np.random.default_rng(state.fingerprint["key"])
    p, q = (split_counts(np.pad(c, (0, size - c.size)), rng) for c in state.counts)
    note = support_gap(p, q, alpha)
    return () if note is None else (note,)
