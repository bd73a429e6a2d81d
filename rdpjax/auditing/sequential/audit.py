""":func:`sequential_audit`: the Rényi looks on the looks driver, their checkpoint, and the report.

The looks driver (:func:`rdpjax.stream.looks.run_looks`) draws batches of at most ``batch_size``
outputs per side, x then x', until both hold the next look's ``n_k``
(:func:`rdpjax.auditing.sequential.engine.look_ends`); the accumulator
(:func:`rdpjax.auditing.sequential.engine.looks_accumulator`) then bounds, records the look, and
stops when the bound exceeds the claim at some order or after the last look. With a
``checkpoint`` folder the state is saved after batches and at every look
(:mod:`rdpjax.auditing.sequential.state`); an interruption (Ctrl-C, an exception in the user's
sampler, a killed process) loses at most the batch under way (and a few seconds of cheap batches).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import jax
import numpy as np

from rdpjax._internal.progress import progress_bar
from rdpjax._keys import as_key
from rdpjax.auditing.draws import exact_divergences, mechanism_source_sha256, user_function
from rdpjax.auditing.options import AuditOptions, Looks, audit_options
from rdpjax.auditing.report import AuditReport, Look, json_ready
from rdpjax.auditing.sequential.engine import Totals, look_ends, looks_accumulator
from rdpjax.auditing.sequential.options import OPTIONS, look_options
from rdpjax.auditing.sequential.schedule import Schedule, geometric_schedule
from rdpjax.auditing.sequential.sources import make_source
from rdpjax.auditing.sequential.state import CHECKPOINT, LooksFile
from rdpjax.estimator.support import split_counts, support_gap
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.looks import run_looks

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
    file = None if checkpoint is None else LooksFile(checkpoint, fingerprint, resume)
    ends, looks_at = look_ends(schedule.sizes, batch_size)
    accumulator = looks_accumulator(source, schedule, lam, claim, options)
    with progress_bar(2 * schedule.sizes[0], progress, "sequential audit") as bar:
        totals = run_looks(source, ends, looks_at, accumulator, checkpoint=file, bar=bar)
    function = user_function(mechanism)  # the user's code, hashed (a zoo mechanism: nothing)
    extra = (
        {} if function is None else {"mechanism_source_sha256": mechanism_source_sha256(function)}
    )
    return _report(totals, fingerprint, schedule, claim, exact, name, project, options, checkpoint,
                   extra)  # fmt: skip


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


def _report(
    totals: Totals, fingerprint, schedule, claim, exact, name, project, options, checkpoint, extra
):
    """The report of the last look; ``extra``: more settings (the hash of the user's source)."""
    bound = totals.bound
    lam = [float(v) for v in np.asarray(bound.lam, np.float64)]
    # Draws off the pilot's grid are clamped onto its edge: a fixed map, so the bounds stay
    # valid (possibly looser). Nothing a user can act on: recorded, and shown with --verbose.
    off = [int(v) for v in totals.outside]
    last = totals.looks[-1]
    settings = {
        "lam": lam,
        "lam_chosen_by": "rdpjax.claims.orders.default_orders at each look"
        if fingerprint["lam"] is None
        else "user",
        "n_asked": int(schedule.max_n),
        "alpha": schedule.alpha,
        "both_directions": options.both_directions,
        "sequential": {
            "schedule": schedule.to_dict(),
            "looks_taken": len(totals.looks),
            "stopped": "refuted" if last["refuted"] else "max_n",
            "pilot": totals.pilot,
            "drawn_per_database": last["drawn"],
            "clamped_to_grid_edge": off,
            "checkpoint": None if checkpoint is None else str(Path(checkpoint) / CHECKPOINT),
        },
        "batch_size": fingerprint["batch_size"],
        "estimator_options": fingerprint["options"],
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
        looks=tuple(Look.from_dict(d) for d in totals.looks),
        notes=_notes(totals, fingerprint, schedule.alpha),
    )


def _notes(totals: Totals, fingerprint, alpha: float) -> tuple[str, ...]:
    if not totals.setup.discrete:
        return ()
    size = max(c.size for c in totals.counts)
    # Counts only: each side's draws split into two random halves, from the audit's own key.
    rng = np.random.default_rng(fingerprint["key"])
    p, q = (split_counts(np.pad(c, (0, size - c.size)), rng) for c in totals.counts)
    note = support_gap(p, q, alpha)
    return () if note is None else (note,)
