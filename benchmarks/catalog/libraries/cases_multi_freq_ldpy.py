"""multi-freq-ldpy's subset selection: the order of its report reveals the user's value.

``multi_freq_ldpy.pure_frequency_oracles.SS.SS_Client(value, k, ε)`` (Subset Selection, Ye & Barg
2018, Wang et al. 2016) reports ``s = rint(k/(e^ε + 1))`` distinct values of the domain
``[0, k)``: with probability ``p = s e^ε/(s e^ε + k − s)`` the true value and ``s − 1`` others,
else ``s`` values other than the true one. As a *set* that is ε-LDP. But the client returns an
array with the true value always **first** (``sub_set[0] = input_data``): a report whose first
entry is ``v`` and that contains ``v'`` further on is impossible from ``v'`` and possible from
``v``, so the ordered report has disjoint supports on any two inputs and ε(λ) = ∞.

* ``multi_freq_ldpy_ss_order`` (bug): the client as shipped, k = 10, ε = 1 (s = 3), on the values
  2 vs 3; its report, a vector of 3 codes, counted as a joint outcome; claim ``pure_dp(1)``, the
  ε it is called with; exact ∞.
* ``multi_freq_ldpy_ss_order.sorted`` (correct): the same report sorted (a set); exact: the
  closed form below (four kinds of sets: with both values, with one of the two, with neither).

The client is compiled by numba and draws from numba's own generator; each call seeds it from
rdpjax's ``rng`` (``np.random.seed`` inside a numba function), so the audits are reproducible.
"""

from __future__ import annotations

import math

import numpy as np
from case import Case, infinite, optional
from scipy import special

from rdpjax.claims import pure_dp

ss, VERSION, MISSING = optional("multi_freq_ldpy.pure_frequency_oracles.SS", "multi-freq-ldpy")
K, EPS = 10, 1.0
PAIR = (np.array([2]), np.array([3]))
ISSUE = "https://github.com/hharcolezi/multi-freq-ldpy/blob/main/multi_freq_ldpy/pure_frequency_oracles/SS.py"

_seed_numba = None


def _seed(rng) -> None:
    """Seed numba's generator (the one ``SS_Client`` draws from) from ``rng``."""
    global _seed_numba
    if _seed_numba is None:
        import numba

        @numba.njit
        def seed(value):
            np.random.seed(value)  # noqa: NPY002 - numba's own generator, as SS_Client's

        _seed_numba = seed
    _seed_numba(int(rng.integers(2**32 - 1)))


def ss_client(rng, database, n):
    """``SS_Client(value, k, ε)`` n times: the ordered reports, shape ``(n, s)``."""
    _seed(rng)
    value = int(database[0])
    return np.stack([ss.SS_Client(value, K, EPS) for _ in range(n)])


def ss_client_sorted(rng, database, n):
    """The fix: the same reports as sets (sorted), shape ``(n, s)``."""
    return np.sort(ss_client(rng, database, n), axis=1)


def subset_renyi(k: int, epsilon: float):
    """D_λ between subset selection's set laws on two different values (symmetric).

    With ``s = rint(k/(e^ε + 1))``, a set holding the value has probability ``a = p/C(k−1, s−1)``,
    one without it ``b = (1 − p)/C(k−1, s)``; of the sets, C(k−2, s−2) hold both values (a, a),
    C(k−2, s−1) one but not the other (a, b) and as many the reverse (b, a), C(k−2, s) neither.
    """
    s = int(max(1, np.rint(k / (math.exp(epsilon) + 1))))
    p = s * math.exp(epsilon) / (s * math.exp(epsilon) + k - s)
    log_a = math.log(p) - math.log(math.comb(k - 1, s - 1))
    log_b = math.log1p(-p) - math.log(math.comb(k - 1, s))
    counts = [math.comb(k - 2, s - 2), math.comb(k - 2, s - 1), math.comb(k - 2, s - 1)]
    counts.append(math.comb(k - 2, s))
    pairs = [(log_a, log_a), (log_a, log_b), (log_b, log_a), (log_b, log_b)]

    def curve(orders):
        out = []
        for lam in np.atleast_1d(np.asarray(orders, np.float64)):
            terms = [lam * lp + (1 - lam) * lq for lp, lq in pairs]
            out.append(special.logsumexp(terms, b=counts) / (lam - 1))
        return np.array(out)

    return curve


def cases() -> list[Case]:
    """The subset-selection bug and its sorted twin (``RuntimeError`` without the library)."""
    if MISSING:
        raise RuntimeError(MISSING)
    source = "the ε the client is called with (subset selection is ε-LDP)"
    common = dict(library="multi-freq-ldpy", version=VERSION, x=PAIR[0], x_prime=PAIR[1],
                  claim=pure_dp(EPS), options={"discrete": True}, cites=(ISSUE,),
                  claim_source=source)  # fmt: skip
    return [
        Case(
            name="multi_freq_ldpy_ss_order", kind="bug", mechanism=ss_client, n=3_000,
            description="SS_Client(k = 10, ε = 1): the true value always first in the report",
            exact=infinite, exact_note="disjoint supports (the order reveals the value)",
            twin="multi_freq_ldpy_ss_order.sorted", **common,
        ),
        Case(
            name="multi_freq_ldpy_ss_order.sorted", kind="correct", mechanism=ss_client_sorted,
            n=3_000, description="the same reports sorted (a set)", exact=subset_renyi(K, EPS),
            exact_note="closed form (sums over the four kinds of sets)",
            twin="multi_freq_ldpy_ss_order", **common,
        ),
    ]  # fmt: skip
