"""The audit's routes to rejection sets: which claims use them, in memory, streamed, sequential.

:func:`uses_sets` reads :attr:`rdpjax.auditing.AuditOptions.test`; :func:`set_test_of_audit` runs
the fixed-n test on the audit's draws in memory (a stream's: :mod:`rdpjax.auditing.one_pass`);
:func:`betting_audit` is the sequential audit of an (ε, δ), ε-DP or GDP claim by betting
(:mod:`rdpjax.rejection.betting`).
"""

from __future__ import annotations

import json
from typing import Any

import jax
import numpy as np

from rdpjax.auditing.draws import mechanism_name, mechanism_source_sha256, user_function
from rdpjax.auditing.report import AuditReport
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.draws import numpy_sampler

__all__ = [
    "SETS_TAG",
    "betting_audit",
    "check_operating_points",
    "numpy_sampler",
    "set_test_of_audit",
    "uses_sets",
]

SETS_TAG = 0x5E75
"""Folded into the audit's key for the rejection sets' randomness (split, sizes, ties)."""


def uses_sets(test: str, claim: Any, sequential: bool = False) -> bool:
    """Whether the audit also runs the rejection-set test (:attr:`AuditOptions.test`).

    On ``"auto"`` a fixed-n audit runs both families for every claim with a trade-off function;
    a sequential one bets on sets for (ε, δ) and GDP claims and keeps the Rényi looks for ε-DP
    claims (their ε-DP Rényi curve is finite).
    """
    from rdpjax.claims import SET_KINDS

    kind = None if claim is None else claim.kind
    if test == "renyi":
        if kind == "approx_dp":
            raise ValueError(
                f"{claim} implies no finite ε(λ): Rényi bounds cannot check it (test='renyi'); "
                "use test='auto' or 'both', which certify rejection sets."
            )
        return False
    if test == "both":
        if kind not in SET_KINDS:
            raise ValueError(
                f"test='both' needs a claim of kind {', '.join(SET_KINDS)}; got "
                f"{'no claim' if claim is None else claim}."
            )
        return True
    # "auto": every claim with a trade-off function gets both families (ε-DP too: the pooled
    # guesses refute flat-ratio and categorical leaks the Rényi bounds miss; docs/rejection.md).
    return kind in (("approx_dp", "gdp") if sequential else SET_KINDS)


def check_operating_points(options: Any, claim: Any, use_sets: bool, sequential: bool) -> None:
    """Refuse ``tpr_at_fpr=`` where the audit runs no fixed-n rejection-set test to report it.

    The certified TPR at a target FPR is counted on the sets' cells
    (:mod:`rdpjax.rejection.operating`), so it comes with a fixed-n set test: an ε-DP, (ε, δ)
    or GDP claim on one number (or code) per output. A silent omission would be a surprise.

    Raises:
        ValueError: naming what to change.
    """
    if not options.sets.tpr_at_fpr or (use_sets and not sequential):
        return
    if sequential:
        why = "a sequential audit (betting or Rényi looks) keeps no cell counts"
    else:
        why = f"this audit runs Rényi bounds alone ({'no claim' if claim is None else claim})"
    raise ValueError(
        f"tpr_at_fpr= is reported by the fixed-n rejection-set test, and {why}; audit an ε-DP, "
        "(ε, δ) or GDP claim with test='auto' or 'both' on one number per output, or call "
        "rdpjax.rejection.set_test(key, p, q, tpr_at_fpr=…) on draws."
    )


def set_test_of_audit(key, draws, claim, alpha, options):
    """The rejection-set test on the Rényi bound's draws, held in memory.

    (A streamed audit counts both statistics on one pass instead:
    :mod:`rdpjax.auditing.one_pass`.)
    """
    from rdpjax.rejection import set_test

    k_sets = jax.random.fold_in(key, SETS_TAG)
    p, q = (np.asarray(a) for a in draws)
    if p.ndim == 2 and p.shape[1] > 1 and p.dtype.kind in "biu" and q.dtype.kind in "biu":
        # Integer rows: one code per distinct row of either side (a one-to-one map).
        rows = np.concatenate([p, q])
        codes = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
        p, q = codes[: p.shape[0]], codes[p.shape[0] :]
    elif p.ndim == 2 and p.shape[1] > 1:
        raise ValueError(
            f"{claim} is checked by rejection sets on 1-D outputs or codes; the outputs have "
            f"dimension {p.shape[1]}: pass project=, a fixed function to one number per output."
        )
    return set_test(k_sets, p, q, claim, alpha=alpha, options=options.sets)


def betting_audit(mechanism, key, x, x_prime, claim, alpha, looks, options) -> AuditReport:
    """A sequential audit of an (ε, δ), ε-DP or GDP claim by betting on rejection sets.

    Anytime-valid (:mod:`rdpjax.rejection.betting`): the claim is refuted at the first batch
    whose e-value reaches 1/α, and a true claim is ever refuted with probability ≤ α. The
    whole α goes to the betting test; no Rényi bounds are computed. With
    ``looks.checkpoint`` the test's state is kept there
    (:mod:`rdpjax.auditing.sequential.betting_file`) and ``looks.resume`` continues it;
    ``looks.max_n`` defaults to 10⁵ outputs a side.
    """
    from rdpjax.rejection.betting import betting_test

    if looks.schedule is not None:
        raise ValueError(
            f"{claim} is tested sequentially by betting, which has no schedule of looks; pass "
            "test='renyi' for Rényi looks (GDP claims)."
        )
    max_n = int(looks.max_n) if looks.max_n is not None else 10**5
    sample = mechanism if not isinstance(mechanism, Mechanism) else numpy_sampler(mechanism)
    project = options.project  # a function: rdpjax.audit learns a "learn" score before this
    checkpoint = None
    if looks.checkpoint is not None:
        from rdpjax.auditing.sequential.betting_file import BettingFile

        fingerprint = {
            "mechanism": mechanism_name(mechanism), "x": np.asarray(x).tolist(),
            "x_prime": np.asarray(x_prime).tolist(), "claim": claim.to_dict(),
            "key": np.asarray(jax.random.key_data(key)).ravel().tolist(), "alpha": float(alpha),
            "max_n": int(max_n), "batch": int(options.stream.batch_size),
            "project": None if project is None else getattr(project, "__name__", str(project)),
        }  # fmt: skip
        checkpoint = BettingFile(looks.checkpoint, fingerprint, bool(looks.resume))
    result = betting_test(
        key, sample, x, x_prime, claim, alpha=alpha, max_n=max_n,
        batch=options.stream.batch_size, project=project, checkpoint=checkpoint,
    )  # fmt: skip
    notes = ()
    empty = np.zeros(0)
    settings = {"alpha": float(alpha), "test": "betting", "max_n": max_n}
    function = user_function(mechanism)
    if function is not None:
        settings["mechanism_source_sha256"] = mechanism_source_sha256(function)
    return AuditReport(
        lam=empty, estimate=empty, lower=empty, std_error=empty, exact=None, claimed=None,
        refuted_at=np.zeros(0, bool), bound=None, claim=claim,
        mechanism=mechanism_name(mechanism),
        n=result.n, projected=project is not None, settings=json.dumps(settings), sets=result,
        notes=notes,
    )  # fmt: skip
