"""Assertions for a DP library's own test suite: a claim that must hold, and one that must fail.

A library author calls :func:`assert_claim_holds` in a unit test of each mechanism (its sampler,
a pair of adjacent databases, the claim its documentation makes) and :func:`assert_claim_refuted`
on a deliberately broken twin, to show that the test has the power to catch the bug it guards
against::

    import jax, numpy as np
    from rdpjax.claims import pure_dp
    from rdpjax.testing import assert_claim_holds, assert_claim_refuted

    def laplace(rng, database, n):      # the mechanism under test, as a black box
        return np.sum(database) + rng.laplace(0.0, 1.0, n)

    def laplace_half_noise(rng, database, n):     # a known-bad twin: scale halved
        return np.sum(database) + rng.laplace(0.0, 0.5, n)

    def test_laplace_is_1_dp():
        assert_claim_holds(jax.random.key(0), laplace, [1.0], [0.0], pure_dp(1.0), n=10**5)

    def test_the_audit_catches_half_the_noise():
        assert_claim_refuted(
            jax.random.key(0), laplace_half_noise, [1.0], [0.0], pure_dp(1.0), n=10**5
        )

Both run :func:`rdpjax.audit` (any mechanism it takes: a numpy callable ``sample(rng, database,
n)``, a :func:`rdpjax.mechanisms.from_sampler` JAX sampler, a zoo mechanism) and return its
:class:`rdpjax.AuditReport`; on failure the ``AssertionError`` carries the report's table and
verdict.

**False failures.** :func:`assert_claim_holds` fails only when the audit refutes the claim. The
audit's lower bounds hold simultaneously over all orders and both directions with probability at
least ``1 − alpha`` (Kutta, Askin, Dunsche, arXiv:2212.04739v3, eq. (16), Bonferroni), so if the
claim is true the assertion fails with probability at most ``alpha`` per call, whatever the
mechanism and n. The level is asymptotic (delta-method bounds; the measured false-refutation
rates of true claims: ``docs/testing.md``, "How often a correct mechanism fails"). A suite with k
such tests fails spuriously with probability ≤ k·α: pick ``alpha`` accordingly (e.g. 1e-3). With a
fixed ``key`` and a seedable sampler the outcome is reproducible; a library whose noise cannot be
seeded (a secure RNG) makes the test random, with the same bound.

**No power guarantee.** :func:`assert_claim_refuted` fails when the audit does *not* refute the
claim; nothing bounds how often that happens for a broken mechanism, which depends on how far its
ε(λ) lies above the claim and on n. The lower bound is about the plug-in estimate minus
``z·s.e.``, with ``s.e.`` shrinking like ``1/√n``; for a violation ``v = ε(λ) − claim(λ)`` at some
order, n must be large enough that ``z·s.e. ≲ v`` (s.e. from a first run: ``report.std_error``).
The n at which known bugs were refuted: ``docs/testing.md``, "How large n must be to catch a
bug", and the catalog (``docs/catalog.md``, 20 seeds each).

Cost: one audit (``n`` draws per database, the audit's bound); see :func:`rdpjax.audit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rdpjax.auditing import audit
from rdpjax.auditing.report import AuditReport
from rdpjax.claims import as_claim
from rdpjax.mechanisms.base import Mechanism

__all__ = ["assert_claim_holds", "assert_claim_refuted"]


def _checked_audit(
    mechanism, x, x_prime, claim, n, key, alpha, lam, audit_options, what: str
) -> AuditReport:
    if not (isinstance(mechanism, Mechanism) or callable(mechanism)):
        raise ValueError(
            f"{what}: mechanism must be a rdpjax.mechanisms mechanism or a callable "
            f"sample(rng, database, n); got {type(mechanism).__name__}."
        )
    if claim is None:
        raise ValueError(
            f"{what}: claim is required (an rdpjax.claims.Claim such as pure_dp(1.0) or "
            "zcdp(0.125)); without one there is nothing to assert."
        )
    claim = as_claim(claim)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise ValueError(f"{what}: alpha must be a number in (0, 1); got {alpha!r}.")
    if key is None:
        raise ValueError(f"{what}: key is required (e.g. jax.random.key(0)).")
    for name in ("claimed_epsilon", "claim"):
        if name in audit_options:
            raise ValueError(f"{what}: pass the claim after x_prime, not as {name}=.")
    return audit(
        key,
        mechanism,
        x,
        x_prime,
        lam,
        n=n,
        alpha=alpha,
        claim=claim,
        progress=audit_options.pop("progress", False),
        **audit_options,
    )


def assert_claim_holds(
    key: Any,
    mechanism: Mechanism | Callable,
    x: Any,
    x_prime: Any,
    claim: Any,
    *,
    n: int,
    alpha: float = 0.05,
    lam: float | Sequence[float] | None = None,
    **audit_options: Any,
) -> AuditReport:
    """Assert that an audit of ``mechanism`` on ``x``, ``x'`` does not refute ``claim``.

    Fails with probability at most ``alpha`` when the claim is true (module docstring). Passing
    is not a proof of privacy: it says that n draws on this one pair found no contradiction; the
    report's margins (``report.claimed − report.lower``) say how close they came.

    Args:
      key: a JAX PRNG key (the audit's only randomness for seedable samplers).
      mechanism: what :func:`rdpjax.audit` takes: a numpy callable ``sample(rng, database, n)``,
        a JAX sampler wrapped by :func:`rdpjax.mechanisms.from_sampler`, or a zoo mechanism.
      x: the first of the adjacent databases.
      x_prime: the second, adjacent to ``x``.
      claim: an :class:`rdpjax.claims.Claim` (``pure_dp``, ``zcdp``, ``gdp``, ``rdp``,
        ``from_dp_accounting``); a bare number is refused (ε, ρ or μ?).
      n: outputs per database.
      alpha: the family-wise level of the audit's bounds: the false-failure rate's bound.
      lam: orders to check (default: the audit's claim grid).
      **audit_options: passed to :func:`rdpjax.audit` (``project``, ``discrete``,
        ``batch_size``, …); ``progress`` defaults to ``False``.

    Returns:
      The :class:`rdpjax.AuditReport`.

    Raises:
      AssertionError: the audit refutes the claim (the message holds the report).
      ValueError: no claim, ``alpha`` outside (0, 1), no key, or any input
        :func:`rdpjax.audit` rejects.
    """
    report = _checked_audit(
        mechanism, x, x_prime, claim, n, key, alpha, lam, audit_options, "assert_claim_holds"
    )
    if report.is_refuted:
        raise AssertionError(
            f"the claim {report.claim} is refuted by an audit of {report.mechanism} "
            f"(n = {report.n:,} per database; a true claim is refuted with probability "
            f"≤ {alpha:g}):\n{report}"
        )
    return report


def assert_claim_refuted(
    key: Any,
    mechanism: Mechanism | Callable,
    x: Any,
    x_prime: Any,
    claim: Any,
    *,
    n: int,
    alpha: float = 0.05,
    lam: float | Sequence[float] | None = None,
    **audit_options: Any,
) -> AuditReport:
    """Assert that an audit of a known-bad ``mechanism`` refutes ``claim``.

    For broken twins of a mechanism: it shows that an audit at this n has the power to catch the
    bug. There is no guarantee of power (module docstring: n must make the bound's margin
    ``z·s.e.`` smaller than the violation ε(λ) − claim(λ)); when the refutation is found it is
    valid at level ``alpha``.

    Args:
      key: a JAX PRNG key (the audit's only randomness for seedable samplers).
      mechanism: the known-bad mechanism, of any kind :func:`assert_claim_holds` takes.
      x: the first of the adjacent databases.
      x_prime: the second, adjacent to ``x``.
      claim: the :class:`rdpjax.claims.Claim` it makes (a bare number is refused).
      n: outputs per database.
      alpha: the family-wise level of the audit's bounds, at which a refutation is valid.
      lam: orders to check (default: the audit's claim grid).
      **audit_options: passed to :func:`rdpjax.audit`, as in :func:`assert_claim_holds`;
        ``progress`` defaults to ``False``.

    Returns:
      The :class:`rdpjax.AuditReport`.

    Raises:
      AssertionError: the audit does not refute the claim (the message holds the report and the
        closest order's margin).
      ValueError: as in :func:`assert_claim_holds`.
    """
    report = _checked_audit(
        mechanism, x, x_prime, claim, n, key, alpha, lam, audit_options, "assert_claim_refuted"
    )
    if not report.is_refuted:
        raise AssertionError(
            f"an audit of {report.mechanism} at n = {report.n:,} per database did not refute "
            f"the claim {report.claim} (no power guarantee: a larger n may):\n{report}"
        )
    return report
