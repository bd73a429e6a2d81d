"""One-run canaries: the joint Steinke test against the pair-by-pair tests, on a panel of laws.

    PYTHONPATH=. python benchmarks/calibration/canary_joint.py [--m 1000] [--delta 1e-5] \
        [--laws ...] [--reps 60]

(``PYTHONPATH=.``: the checkout's rdpjax.) On the *same* scores (the laws and seeds
``[7, m, law, r]`` of ``canary_split.py``), the mean ε lower bound (α = 0.05) of:

* ``pairwise``: Steinke's test (arXiv:2305.08846v1 Thm 3.1/5.2) at 0.05·α/G and the f_{ε,δ}
  test (Mahloujifar et al., arXiv:2410.22235) at 0.95·α/G for each of the G pairs, the larger
  bound (the library's rule before the joint test, and still its rule where
  ``rdpjax.canaries.joint.usable`` says no);
* ``joint_<f>``: the joint Steinke test (``rdpjax.canaries.joint``, on its own grid
  ``joint.grid``) at (1 − f)·α and the f-DP tests at f·α/G each, the larger bound, for f-DP
  shares f in ``--shares``;
* ``joint_pair_grid``: the same at f = 0.05 with the joint test on the pair-by-pair grid;
* ``library``: ``rdpjax.canaries.one_run_bits(...).epsilon`` (the joint rule at f = 0.05 where
  usable, else ``pairwise``: the script checks it equals one of the two);
* ``jax``: jax_privacy 2.0's ``CanaryScoreAuditor(in, out).epsilon_one_run`` (δ > 0 only;
  ``null`` at δ = 0).

Merges its cells into ``benchmarks/results/calibration/canary_joint.json`` (by law, m, δ).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from canary_split import LAWS, _jax_steinke, _law  # noqa: E402

from rdpjax.canaries import fdp, joint, one_run_bits, steinke  # noqa: E402
from rdpjax.canaries.guesses import correct_guesses, guess_grid  # noqa: E402

ALPHA = 0.05
OUT = Path(__file__).resolve().parents[1] / "results" / "calibration" / "canary_joint.json"


def bounds(scores, bits, delta: float, shares: list[float]) -> dict[str, float]:
    """Every rule's ε on one replication's scores."""
    m = bits.size
    grid = guess_grid(m, alpha=ALPHA)
    size, n_guess = grid.shape[0], grid.sum(axis=1)
    count = correct_guesses(scores, bits, grid)
    out = {
        "pairwise": float(
            max(
                steinke.epsilon_lower(m, n_guess, count, delta, 0.05 * ALPHA / size).max(),
                fdp.epsilon_lower(m, n_guess, count, delta, 0.95 * ALPHA / size).max(),
            )
        )
    }
    own = joint.grid(m, ALPHA)
    track, own_count = joint.tracks(own, m), correct_guesses(scores, bits, own)
    for f in shares:
        eps_j = joint.epsilon_lower(m, track, own_count, delta, (1.0 - f) * ALPHA)[0]
        eps_f = fdp.epsilon_lower(m, n_guess, count, delta, f * ALPHA / size).max()
        out[f"joint_{f:g}"] = float(max(eps_j, eps_f))
    # The joint test on the pair-by-pair grid (its first version): what the finer grid adds.
    eps_j = joint.epsilon_lower(m, joint.tracks(grid, m), count, delta, 0.95 * ALPHA)[0]
    eps_f = fdp.epsilon_lower(m, n_guess, count, delta, 0.05 * ALPHA / size).max()
    out["joint_pair_grid"] = float(max(eps_j, eps_f))
    out["library"] = one_run_bits(scores, bits, delta=delta, alpha=ALPHA).epsilon
    if out["library"] not in (out["pairwise"], out.get("joint_0.05")):
        raise AssertionError(f"the library's ε {out['library']} is neither rule's: {out}")
    out["jax"] = _jax_steinke(scores, bits) if delta > 0 else None  # its Thm 5.2 needs δ > 0
    return out


def cell(law: str, m: int, delta: float, reps: int, shares: list[float]) -> dict:
    rows = [
        bounds(*_law(law, np.random.default_rng([7, m, LAWS.index(law), r]), m), delta, shares)
        for r in range(reps)
    ]
    mean = {
        k: None if rows[0][k] is None else float(np.mean([row[k] for row in rows])) for k in rows[0]
    }
    base = mean["pairwise"]
    return {
        "law": law,
        "m": m,
        "delta": delta,
        "reps": reps,
        "joint_used": joint.usable(m, delta, 0.95 * ALPHA),
        "mean": mean,
        "ratio_to_pairwise": {
            k: v / base if base and v is not None else None for k, v in mean.items()
        },
        "library_over_jax": mean["library"] / mean["jax"] if mean["jax"] else None,
    }


def _merge(cells: list[dict], command: str, out: Path) -> None:
    old = json.loads(out.read_text()) if out.exists() else {}
    key = lambda c: (c["law"], c["m"], c["delta"])  # noqa: E731
    new = {key(c) for c in cells}
    old["cells"] = [c for c in old.get("cells", []) if key(c) not in new] + cells
    commands = old.setdefault("commands", [])
    old["commands"] = commands + [command] * (command not in commands)
    out.write_text(json.dumps(old, indent=1, default=float) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, nargs="+", default=[1000])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--laws", nargs="+", choices=LAWS, default=list(LAWS))
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.05, 0.1, 0.25, 0.5])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"PYTHONPATH=. python benchmarks/calibration/canary_joint.py {argv_text}"
    print(command, flush=True)
    start = time.perf_counter()
    for m in args.m:
        for law in args.laws:
            c = cell(law, m, args.delta, args.reps, args.shares)
            ratios = {k: round(v, 3) for k, v in c["ratio_to_pairwise"].items() if v}
            print(law, m, f"pairwise {c['mean']['pairwise']:.3f}", ratios, flush=True)
            _merge([c], command, args.out)
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
