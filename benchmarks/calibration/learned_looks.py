"""A learned score in a sequential audit (issue 54): a 10-D DP-SGD-like step with a bug.

    python benchmarks/calibration/learned_looks.py [--reps 50] [--validity-reps 200] [--out F]

The step releases a clipped gradient sum plus Gaussian noise, d = 10. Claimed: noise σ·C
(noise multiplier σ = 2, clipping norm C = 1.5), i.e. ρ-zCDP with ρ = 1/(2σ²) = 0.125 for one
record's clipped gradient. The bug: noise σ instead of σ·C, so ρ = C²/(2σ²) = 0.281. x holds one
record whose gradient is clipped to norm C, x' holds none.

* **Sequential**: ``audit(…, project="learn", n=Looks(max_n=MAX_N))`` (``rdpjax audit
  … --project learn --until-refuted``) on the buggy step, ``--reps`` keys: how often it refutes
  and how many outputs a side it drew (training included), median and quartiles.
* **Fixed n**: ``audit(…, project="learn", n=N)`` for each N of ``SIZES``, ``--reps`` keys: its
  power at each N; the smallest N whose power reaches the sequential audit's is the fixed-n
  audit's cost "at equal power".
* **Validity**: the sequential learned audit on the correct step, ``--validity-reps`` keys:
  false refutations, with a Clopper–Pearson 95% interval (α = 0.05).

Each audit runs with its own key (``jax.random.key(seed)``); one process, so compilation is
shared. Writes JSON (default benchmarks/results/calibration/learned_looks.json).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

import rdpjax
from rdpjax.claims import zcdp

ROOT = Path(__file__).resolve().parents[2]
D, SIGMA, C = 10, 2.0, 1.5
CLAIM = zcdp(1.0 / (2 * SIGMA**2))
MAX_N = 20_000
SIZES = (500, 1_000, 1_500, 2_000, 3_000, 4_000)
X = np.full((1, D), 3.0)  # one record, gradient norm 3√10 > C: clipped to C
X_PRIME = np.zeros((0, D))


def step(noise_scale: float):
    def sample(rng, database, n):
        g = np.asarray(database, np.float64).reshape(-1, D)
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        clipped = g * np.minimum(1.0, C / np.maximum(norms, 1e-12))
        return clipped.sum(0) + rng.normal(0.0, noise_scale, size=(n, D))

    return sample


BUGGY, CORRECT = step(SIGMA), step(SIGMA * C)


def _audit(sample, seed: int, **fields):
    return rdpjax.audit(
        jax.random.key(seed), sample, X, X_PRIME, claim=CLAIM, progress=False, **fields
    )


def _cp(k: int, n: int) -> list[float]:
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return [float(lo), float(hi)]


def run(reps: int, validity_reps: int, seed: int = 5400) -> dict:
    seq_refuted, seq_drawn = [], []
    for r in range(reps):
        rep = _audit(BUGGY, seed + r, project="learn", n=rdpjax.Looks(max_n=MAX_N))
        seq_refuted.append(rep.refuted)
        seq_drawn.append(rep.sizes()["drawn"])
    power_seq = float(np.mean(seq_refuted))
    fixed = {}
    for n in SIZES:
        hits = [_audit(BUGGY, seed + r, project="learn", n=n).refuted for r in range(reps)]
        fixed[n] = float(np.mean(hits))
        print(f"fixed n = {n:>5,}: power {fixed[n]:.2f}", flush=True)
    equal = next((n for n in SIZES if fixed[n] >= power_seq), None)
    false = sum(
        _audit(CORRECT, seed + 10_000 + r, project="learn", n=rdpjax.Looks(max_n=MAX_N)).refuted
        for r in range(validity_reps)
    )
    q1, med, q3 = (float(v) for v in np.percentile(seq_drawn, [25, 50, 75]))
    return {
        "sequential": {
            "power": power_seq,
            "drawn_median": med,
            "drawn_quartiles": [q1, q3],
            "max_n": MAX_N,
        },
        "fixed_power": {str(n): p for n, p in fixed.items()},
        "fixed_n_at_equal_power": equal,
        "validity": {
            "false_refutations": int(false),
            "reps": validity_reps,
            "rate": false / validity_reps,
            "cp95": _cp(int(false), validity_reps),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--validity-reps", type=int, default=200)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/calibration/learned_looks.json"
    )
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = run(args.reps, args.validity_reps)
    s, v = result["sequential"], result["validity"]
    print(
        f"sequential (--project learn --until-refuted, max_n {MAX_N:,}): power {s['power']:.2f}, "
        f"median {s['drawn_median']:,.0f} outputs a side drawn (quartiles "
        f"{s['drawn_quartiles'][0]:,.0f}-{s['drawn_quartiles'][1]:,.0f})"
    )
    print(f"fixed-n learned audit at equal power: n = {result['fixed_n_at_equal_power']}")
    print(
        f"validity (correct step): {v['false_refutations']}/{v['reps']} false refutations, "
        f"CP 95% [{v['cp95'][0]:.3f}, {v['cp95'][1]:.3f}]"
    )
    result |= {
        "command": "python benchmarks/calibration/learned_looks.py "
        f"--reps {args.reps} --validity-reps {args.validity_reps}",
        "machine": platform.platform(),
        "seconds": time.perf_counter() - t0,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
