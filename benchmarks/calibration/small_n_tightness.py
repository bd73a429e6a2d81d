"""Small-n tightness of the Rényi bound: the default's deficit against an oracle's (issue 45).

    PYTHONPATH=. python benchmarks/calibration/small_n_tightness.py [--reps 200]
        [--n 100 200 500 1000 2000 5000] [--cells gaussian-1 ...] [--out FILE]

Cells: the zoo's Gaussian and Laplace mechanisms on a sum (x = (1), x' = (0), so the shift is 1)
with the scale set so that D_2 is 1 or 0.1, and binary randomized response (one bit) with ε0 set
likewise; n = 100 … 5,000 outputs a side, λ = 2, both directions (as the audit bounds them), α =
0.05. Each cell draws ``reps`` replications of both samples in one vmapped call (replication r
from ``fold_in(key(seed), r)``) and reports, for the default settings and for each setting the
oracle searches, the coverage (share of replications whose reported bound is ≤ the exact D_2),
the median bound and the deficit = exact − median bound.

* **default**: what ``rdpjax.lower_bound(p, q, 2.0, both_directions=True)`` computes. Where its
  ``transform="auto"`` maps the outputs (continuous, n ≥ 1,000 a side) it is called as is, one
  replication at a time; below 1,000 a side and for discrete outputs ``auto`` never maps, and the
  same bound is computed by a plan (``rdpjax.plan_bound`` on the first replication, then the plan
  vmapped over all, as ``rdpjax.studies.coverage`` does; the settings come from each
  replication's own data, the grid's shape from the first). On 8 replications of the Gaussian
  and Laplace cells with D_2 = 1 at n = 200 the two agreed to within 6e-5.
* **oracle**: the setting of least deficit among those with coverage ≥ 0.95, chosen knowing the
  truth. Searched: the KDE of the outputs (``transform=None``) with the bandwidth rule times
  ``H_MULTS`` and the floor rule times ``TAU_MULTS`` (β = 1/τ); for continuous cells at n ≥ 1,000
  also the quantile map (``transform="quantile"``) with its bandwidth rule times ``MAP_H_MULTS``
  and the floor rule times ``MAP_TAU_MULTS``; for discrete cells the floor rule times
  ``TAU_MULTS``.

Prints, per cell, the default's coverage, median bound and deficit, the oracle's, its setting and
the ratio default deficit / oracle deficit (the issue's target: ≤ 1.5). Writes
``benchmarks/results/calibration/small_n_tightness.json`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy import optimize

import rdpjax
from rdpjax.estimator.api import plan_bound
from rdpjax.estimator.transform import AUTO_MIN_N
from rdpjax.mechanisms import Gaussian, Laplace, RandomizedResponse

LAM = 2.0
ALPHA = 0.05
SIZES = (100, 200, 500, 1_000, 2_000, 5_000)
H_MULTS = (0.5, 0.7, 1.0, 1.4, 2.0)
TAU_MULTS = (0.1, 0.3, 1.0, 3.0, 10.0)
MAP_H_MULTS = (0.7, 1.0, 1.4)
MAP_TAU_MULTS = (1.0, 3.0)
TARGET_COVERAGE = 0.95
RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
X, X_PRIME = np.array([1.0]), np.array([0.0])


def _solve(make, target: float, low: float, high: float):
    """The mechanism ``make(v)`` whose D_2 on (x, x') is ``target`` (v in [low, high])."""
    v = optimize.brentq(lambda v: make(v).divergence(LAM, X, X_PRIME) - target, low, high)
    return make(float(v))


def mechanisms() -> dict:
    """Name → (mechanism, discrete): D_2 = 1 and 0.1 for each family."""
    out = {}
    for d2 in (1.0, 0.1):
        tag = f"{d2:g}"
        out[f"gaussian-{tag}"] = (_solve(lambda b: Gaussian(scale=b), d2, 0.1, 100.0), False)
        out[f"laplace-{tag}"] = (_solve(lambda b: Laplace(scale=b), d2, 0.1, 100.0), False)
        out[f"rr-{tag}"] = (_solve(lambda e: RandomizedResponse(eps0=e), d2, 1e-3, 10.0), True)
    return out


def draws(mech, discrete: bool, n: int, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` replications of n outputs on x and on x' (``(reps, n)``), one vmapped call."""

    @jax.jit
    def one(r):
        kp, kq = jax.random.split(jax.random.fold_in(jax.random.key(seed), r))
        x, xp = (jnp.asarray(v, jnp.int32 if discrete else jnp.float64) for v in (X, X_PRIME))
        p, q = mech.sample(kp, x, n), mech.sample(kq, xp, n)
        if discrete:  # one bit: the code is the bit
            return p[:, 0], q[:, 0]
        return p.astype(jnp.float64), q.astype(jnp.float64)

    p, q = jax.vmap(one)(jnp.arange(reps))
    return np.asarray(p), np.asarray(q)


def _plan_lower(p, q, discrete: bool, defaults, floors=None) -> np.ndarray:
    """Bounds of every replication by one plan (``(reps,)``, or ``(len(floors), reps)``)."""
    plan, _, _ = plan_bound(
        p[0],
        q[0],
        LAM,
        alpha=ALPHA,
        both_directions=True,
        discrete=discrete,
        defaults=defaults,
        support_size=2 if discrete else None,
    )

    def one(pq, floor):
        chosen = plan if floor is None else dataclasses.replace(plan, floor=floor)
        return chosen(*pq).lower[0]

    if floors is None:
        run = jax.jit(jax.vmap(lambda pq: one(pq, None)))
        return np.asarray(run((jnp.asarray(p), jnp.asarray(q))))
    run = jax.jit(lambda fs, pq: jax.vmap(lambda f: jax.vmap(lambda s: one(s, f))(pq))(fs))
    return np.asarray(run(jnp.asarray(floors), (jnp.asarray(p), jnp.asarray(q))))


def _default_floor(p: np.ndarray, q: np.ndarray, n: int, discrete: bool, defaults) -> float:
    """The default τ at n, with the pooled scale of the first replication (continuous)."""
    if discrete:
        return float(rdpjax.estimator.settings.discrete_settings(n, None, None, defaults)[0])
    _, floor, _ = rdpjax.estimator.settings.continuous_settings(
        jnp.asarray(p[0])[:, None], jnp.asarray(q[0])[:, None], None, None, None, defaults
    )
    return float(floor)


def _loop_lower(p, q, **fields) -> np.ndarray:
    """``lower_bound`` of every replication, one call each (the map is fitted per replication)."""
    out = np.empty(len(p))
    for r in range(len(p)):
        b = rdpjax.lower_bound(p[r], q[r], LAM, alpha=ALPHA, both_directions=True, **fields)
        out[r] = float(b.lower[0])
    return out


def summary(lower: np.ndarray, exact: float) -> dict:
    median = float(np.median(lower))
    return {
        "coverage": float(np.mean(lower <= exact)),
        "median_lower": median,
        "mean_lower": float(np.mean(lower)),
        "deficit": exact - median,
    }


def run_cell(name: str, mech, discrete: bool, n: int, reps: int, seed: int, defaults) -> dict:
    exact = float(mech.divergence(LAM, X, X_PRIME))
    p, q = draws(mech, discrete, n, reps, seed)
    t0 = time.perf_counter()
    mapped = not discrete and n >= AUTO_MIN_N
    if mapped:
        default = _loop_lower(p, q, discrete=False, defaults=defaults)
    else:
        default = _plan_lower(p, q, discrete, defaults)
    tried = []
    base_tau = _default_floor(p, q, n, discrete, defaults)
    for h_mult in (1.0,) if discrete else H_MULTS:
        rule = dataclasses.replace(defaults, bandwidth_factor=defaults.bandwidth_factor * h_mult)
        floors = base_tau * np.asarray(TAU_MULTS)
        lowers = _plan_lower(p, q, discrete, rule, floors)
        for tau_mult, lower in zip(TAU_MULTS, lowers, strict=True):
            setting = {"transform": None, "h_mult": None if discrete else h_mult}
            tried.append(setting | {"tau_mult": tau_mult} | summary(lower, exact))
    if mapped:
        for h_mult in MAP_H_MULTS:
            for tau_mult in MAP_TAU_MULTS:
                rule = dataclasses.replace(
                    defaults,
                    map_bandwidth_factor=defaults.map_bandwidth_factor * h_mult,
                    floor_factor=defaults.floor_factor * tau_mult,
                )
                lower = _loop_lower(p, q, discrete=False, transform="quantile", defaults=rule)
                setting = {"transform": "quantile", "h_mult": h_mult, "tau_mult": tau_mult}
                tried.append(setting | summary(lower, exact))
    valid = [t for t in tried if t["coverage"] >= TARGET_COVERAGE]
    oracle = min(valid, key=lambda t: t["deficit"]) if valid else None
    out = {
        "cell": name,
        "n": n,
        "reps": reps,
        "exact": exact,
        "default": summary(default, exact) | {"mapped": mapped},
        "oracle": oracle,
        "tried": tried,
        "seconds": time.perf_counter() - t0,
    }
    out["ratio"] = out["default"]["deficit"] / oracle["deficit"] if oracle else None
    return out


def format_row(c: dict) -> str:
    d, o = c["default"], c["oracle"]
    if o is None:
        oracle = "none ≥ 0.95 |  |  | "
    else:
        how = "map" if o["transform"] else "freq" if o["h_mult"] is None else "kde"
        h = "" if o["h_mult"] is None else f" h×{o['h_mult']:g}"
        oracle = (
            f"{o['coverage']:.3f} | {o['median_lower']:.3f} | {o['deficit']:.3f} | "
            f"{how}{h} τ×{o['tau_mult']:g}"
        )
    ratio = "" if c["ratio"] is None else f"{c['ratio']:.2f}"
    return (
        f"| {c['cell']} | {c['n']:,} | {c['exact']:.3f} | {d['coverage']:.3f} | "
        f"{d['median_lower']:.3f} | {d['deficit']:.3f} | {oracle} | {ratio} |"
    )


HEADER = (
    "| cell | n | exact D_2 | default coverage | default median | default deficit | "
    "oracle coverage | oracle median | oracle deficit | oracle setting | ratio |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--default-only",
        action="store_true",
        help="recompute only the default's bound of the mapped cells of --out (after a change of "
        "the default: the oracle's settings are explicit, so its search still stands)",
    )
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--cells", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "small_n_tightness.json")
    parser.add_argument("--table", type=Path, help="only print the markdown table of this JSON")
    parser.add_argument(
        "--merge", type=Path, nargs="+", help="merge the cells of these JSON files into --out"
    )
    args = parser.parse_args(argv)
    if args.table:
        print(HEADER)
        for c in json.loads(args.table.read_text())["cells"]:
            print(format_row(c))
        return 0
    if args.merge:
        parts = [json.loads(path.read_text()) for path in args.merge]
        meta = parts[0]["meta"] | {"commands": [part["meta"]["command"] for part in parts]}
        cells = [c for part in parts for c in part["cells"]]
        args.out.write_text(json.dumps({"meta": meta, "cells": cells}, indent=1) + "\n")
        print(f"merged {len(cells)} cells into {args.out}")
        return 0
    command = "PYTHONPATH=. python benchmarks/calibration/small_n_tightness.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    print(f"# {command}")
    zoo = mechanisms()
    if args.default_only:
        return _rerun_defaults(args.out, zoo, command)
    names = args.cells or list(zoo)
    defaults = rdpjax.DEFAULTS
    cells = []
    print(HEADER, flush=True)
    with rdpjax.float64():
        for name in names:
            mech, discrete = zoo[name]
            for n in args.n:
                cell = run_cell(name, mech, discrete, n, args.reps, args.seed, defaults)
                cells.append(cell)
                print(format_row(cell) + f" {cell['seconds']:.0f} s", flush=True)
    meta = {
        "command": command,
        "lam": LAM,
        "alpha": ALPHA,
        "both_directions": True,
        "target_coverage": TARGET_COVERAGE,
        "defaults": dataclasses.asdict(defaults),
        "jax": jax.__version__,
        "machine": platform.platform(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "cells": cells}, indent=1) + "\n")
    ratios = [c["ratio"] for c in cells if c["ratio"] is not None]
    print(f"largest ratio default/oracle deficit: {max(ratios):.2f}; wrote {args.out}")
    return 0


def _rerun_defaults(path: Path, zoo: dict, command: str) -> int:
    """The default's bound again on the same draws of every mapped cell of ``path``."""
    record = json.loads(path.read_text())
    with rdpjax.float64():
        for cell in record["cells"]:
            if not cell["default"]["mapped"]:
                continue
            mech, discrete = zoo[cell["cell"]]
            meta_seed = int(record["meta"].get("seed", 0))
            p, q = draws(mech, discrete, cell["n"], cell["reps"], meta_seed)
            before = cell["default"]
            lower = _loop_lower(p, q, discrete=False, defaults=rdpjax.DEFAULTS)
            cell["default"] = summary(lower, cell["exact"]) | {"mapped": True}
            cell["default_before"] = before
            oracle = cell["oracle"]
            cell["ratio"] = cell["default"]["deficit"] / oracle["deficit"] if oracle else None
            print(format_row(cell), flush=True)
    record["meta"]["default_rerun"] = command
    record["meta"]["defaults_rerun"] = dataclasses.asdict(rdpjax.DEFAULTS)
    path.write_text(json.dumps(record, indent=1) + "\n")
    ratios = [c["ratio"] for c in record["cells"] if c["ratio"] is not None]
    print(f"largest ratio default/oracle deficit: {max(ratios):.2f}; wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
