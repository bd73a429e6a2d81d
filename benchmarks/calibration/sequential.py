"""Sequential audits (issue 25): false refutations of true claims, and samples to refute false ones.

    python benchmarks/calibration/sequential.py [--reps 200] [--part validity power all] [--quick]

**Validity.** Four mechanisms whose exact curves are known, each audited against a claim equal
to its exact curve (``rdpjax.claims.rdp(exact)``: the tightest true claim), with
``rdpjax.audit(…, n=rdpjax.Looks(schedule=…))`` on looks 100, 200, …, 32,000 per side, for every
α-spending rule of :data:`rdpjax.auditing.sequential.SPENDING`, R replications each (fresh
keys). A refutation is a bound above the truth at some order of some look: it must happen in
at most α = 0.05 of them.

**Power.** Three false claims: the incorrect sparse-vector variant ``chen`` (claim ε = 1), a
Laplace mechanism with half the noise it claims (b = 0.5 for ε = 1 at sensitivity 1: truly 2-DP),
and the double-spending Gaussian of ``benchmarks/catalog/bugs.py`` (two releases at σ = 2 charged
as one:
ρ = 0.125 claimed, 0.25 true). For each: the sequential audit's outputs drawn per database when it
stopped (pilot included; R replications, ``max_n`` = 1e6, for each schedule of
:data:`SCHEDULES`), and a fixed-n ``rdpjax.audit`` at n = 50·2^(j/2) with R replications each,
up to the first n that refutes in ≥ 95% of them. The double-spending case's two releases are
summed (``project=``) in both audits: its 2-D grid at every look would cost seconds a look.

Writes ``benchmarks/results/calibration/sequential.json`` and prints the markdown tables of
``docs/sequential.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "catalog" / "libraries"))
from case import discrete_laplace_renyi  # noqa: E402  (the catalog's exact lattice sums)

import rdpjax  # noqa: E402
from rdpjax.auditing.sequential import SPENDING, geometric_schedule  # noqa: E402
from rdpjax.claims import pure_dp, rdp, zcdp  # noqa: E402
from rdpjax.mechanisms import (  # noqa: E402
    Gaussian,
    Laplace,
    RandomizedResponse,
    SparseVector,
    from_sampler,
)

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
ALPHA = 0.05
OFFSET = 1000  # discrete Laplace outputs are shifted to non-negative codes (a fixed map)
DL_SCALE = 1.0  # discrete Laplace: P(k) ∝ exp(−|k − Σx| / t)


def discrete_laplace(rng, database, m):
    """Discrete Laplace noise on the sum (a difference of two geometrics), as codes ≥ 0."""
    p = 1.0 - np.exp(-1.0 / DL_SCALE)
    noise = rng.geometric(p, m) - rng.geometric(p, m)
    return (OFFSET + int(np.sum(database)) + noise).astype(np.int64)


def half_noise_laplace(rng, database, m):
    """Laplace noise of scale 0.5 on a sum of sensitivity 1, claimed 1-DP (truly 2-DP)."""
    return float(np.sum(database)) + rng.laplace(0.0, 0.5, m)


def double_spending(key, database, n):
    return jnp.sum(database) + 2.0 * jax.random.normal(key, (n, 2))


def _zoo_exact(mech, x, xp):
    def curve(lam):
        return max(mech.divergence(float(lam), x, xp), mech.divergence(float(lam), xp, x))

    return curve


def validity_cases():
    cases = []
    for mech in (Gaussian(1.0), Laplace(1.0), RandomizedResponse(1.5)):
        x, xp = mech.reference_pair()
        curve = _zoo_exact(mech, x, xp)
        cases.append((mech.name, mech, x, xp, rdp(curve, name=f"exact curve of {mech.name}")))
    x, xp = np.array([1.0]), np.array([0.0])
    exact = discrete_laplace_renyi(1, 1.0 / DL_SCALE)  # shift 1, symmetric in the direction
    claim = rdp(exact, name="exact curve of the discrete Laplace")
    cases.append(("DiscreteLaplace(t=1), numpy", discrete_laplace, x, xp, claim))
    return cases


def sum_of_releases(outputs):
    """The double-spending case's two releases, summed (their sufficient statistic)."""
    return outputs.sum(axis=-1)


def power_cases():
    """``(name, mechanism, x, x', claim, project)`` of the false claims."""
    svt = SparseVector(eps=1.0, variant="chen")
    x_s, xp_s = svt.reference_pair()
    one, zero = np.array([1.0]), np.array([0.0])
    pair = (jnp.array([1.0, 0.5, 0.5]), jnp.array([0.0, 0.5, 0.5]))
    return [
        ("SparseVector[chen], ε = 1 claimed", svt, x_s, xp_s, pure_dp(1.0), None),
        (
            "Laplace b = 0.5, ε = 1 claimed (numpy)",
            half_noise_laplace,
            one,
            zero,
            pure_dp(1.0),
            None,
        ),
        (
            "double-spending Gaussian (summed), ρ = 0.125 claimed",
            from_sampler(double_spending, name="double_spending"),
            *pair,
            zcdp(0.125),
            sum_of_releases,
        ),
    ]


SCHEDULES = [(rule, 2.0) for rule in SPENDING] + [("uniform", 2**0.5)]
"""(spending, ratio) pairs of the power study."""


def _wilson(k: int, r: int) -> list[float]:
    ci = stats.binomtest(k, r).proportion_ci(method="wilson")
    return [float(ci.low), float(ci.high)]


def _sequential(mech, x, xp, claim, schedule, key, project=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # outputs clamped onto the pilot's grid: counted, valid
        report = rdpjax.audit(
            key,
            mech,
            x,
            xp,
            claim=claim,
            n=rdpjax.Looks(schedule=schedule),
            project=project,
            progress=False,
        )
    last = report.looks[-1]
    return report.is_refuted, last.drawn, last.k


def validity(reps: int, max_n: int, seed: int) -> list[dict]:
    rows = []
    for name, mech, x, xp, claim in validity_cases():
        for rule in SPENDING:
            schedule = geometric_schedule(max_n, alpha=ALPHA, spending=rule)
            t0 = time.perf_counter()
            refuted = 0
            for r in range(reps):
                key = jax.random.fold_in(jax.random.key(seed), r)
                refuted += _sequential(mech, x, xp, claim, schedule, key)[0]
            row = {
                "mechanism": name,
                "spending": rule,
                "looks": list(schedule.sizes),
                "reps": reps,
                "refuted": refuted,
                "rate": refuted / reps,
                "rate_ci": _wilson(refuted, reps),
                "seconds": time.perf_counter() - t0,
            }
            rows.append(row)
            print(
                f"{name:40s} {rule:15s} refuted {refuted}/{reps} = {row['rate']:.3f} "
                f"({row['seconds']:.0f} s)",
                flush=True,
            )
    return rows


def power(reps: int, max_n: int, seed: int, fixed_max: int) -> list[dict]:
    rows = []
    for name, mech, x, xp, claim, project in power_cases():
        row = {"case": name, "reps": reps, "sequential": {}, "fixed": []}
        for rule, ratio in SCHEDULES:
            schedule = geometric_schedule(max_n, alpha=ALPHA, spending=rule, ratio=ratio)
            label = f"{rule}, ratio {ratio:.3g}"
            t0 = time.perf_counter()
            drawn, hits = [], 0
            for r in range(reps):
                key = jax.random.fold_in(jax.random.key(seed + 1), r)
                hit, n_drawn, _ = _sequential(mech, x, xp, claim, schedule, key, project)
                hits += hit
                drawn.append(n_drawn if hit else np.inf)
            row["sequential"][label] = {
                "spending": rule,
                "ratio": ratio,
                "refuted": hits,
                "median_drawn": float(np.median(drawn)),
                "quartiles_drawn": [float(v) for v in np.percentile(drawn, [25, 75])],
                "seconds": time.perf_counter() - t0,
            }
            print(f"{name:45s} {label:22s} {row['sequential'][label]}", flush=True)
        j = 0
        while True:
            n = int(round(50 * 2 ** (j / 2)))
            if n > fixed_max:
                break
            t0 = time.perf_counter()
            hits = 0
            for r in range(reps):
                key = jax.random.fold_in(jax.random.key(seed + 2), r)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    report = rdpjax.audit(
                        key, mech, x, xp, n=n, claim=claim, project=project, progress=False
                    )
                hits += report.is_refuted
            row["fixed"].append(
                {"n": n, "refuted": hits, "power": hits / reps, "seconds": time.perf_counter() - t0}
            )
            print(f"{name:45s} fixed n = {n:8d}: power {hits / reps:.3f}", flush=True)
            if hits >= 0.95 * reps:
                break
            j += 1
        powered = [f["n"] for f in row["fixed"] if f["power"] >= 0.95]
        row["fixed_n95"] = powered[0] if powered else None
        rows.append(row)
    return rows


def tables(validity_rows, power_rows) -> str:
    out = []
    if validity_rows:
        out += [
            "| mechanism (claim = its exact curve) | spending | refuted / R | rate (Wilson 95%) |",
            "|---|---|---|---|",
        ]
        for v in validity_rows:
            lo, hi = v["rate_ci"]
            out.append(
                f"| {v['mechanism']} | {v['spending']} | {v['refuted']} / {v['reps']} | "
                f"{v['rate']:.3f} ({lo:.3f}–{hi:.3f}) |"
            )
        out.append("")
    if power_rows:
        out += [
            "| false claim | fixed n with 95% power | schedule | refuted / R | median drawn "
            "(pilot incl.) | fixed / sequential |",
            "|---|---|---|---|---|---|",
        ]
        for p in power_rows:
            for rule, s in p["sequential"].items():
                n95 = p["fixed_n95"]
                ratio = "—" if n95 is None else f"{n95 / s['median_drawn']:.2f}"
                out.append(
                    f"| {p['case']} | {n95 if n95 is not None else '> max'} | {rule} | "
                    f"{s['refuted']} / {p['reps']} | {s['median_drawn']:,.0f} | {ratio} |"
                )
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--part", nargs="+", default=["all"], choices=["validity", "power", "all"])
    parser.add_argument("--validity-max-n", type=float, default=32000)
    parser.add_argument("--power-max-n", type=float, default=1e6)
    parser.add_argument("--fixed-max-n", type=float, default=1e6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="R = 20, smaller sizes (a smoke run)")
    parser.add_argument("--out", type=Path, default=RESULTS / "sequential.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.validity_max_n, args.power_max_n = 20, 4000, 1e5
    parts = {"validity", "power"} if "all" in args.part else set(args.part)
    v_rows = validity(args.reps, int(args.validity_max_n), args.seed) if "validity" in parts else []
    p_rows = (
        power(args.reps, int(args.power_max_n), args.seed, int(args.fixed_max_n))
        if "power" in parts
        else []
    )
    print(tables(v_rows, p_rows))
    write_json(
        args.out,
        {
            "command": "python benchmarks/calibration/sequential.py " + " ".join(argv or []),
            "alpha": ALPHA,
            "spending": list(SPENDING),
        },
        validity=v_rows,
        power=p_rows,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
