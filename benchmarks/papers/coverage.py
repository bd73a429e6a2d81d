"""Coverage of the lower bound on the seven experiments of paper 000 §V (pair (21), λ = 2, 5, 7).

For each experiment and each n (outputs per database), R replications vmapped in one compiled
call (``rdpjax.studies.coverage``): the fraction of replications whose bound held, with its
Wilson 95% interval, per order and simultaneously, and the mean tightness lower/exact. Nominal:
each of the K = 3 orders' bounds holds with probability ≥ 1 − α/3, all three together ≥ 1 − α.

The full study (7 experiments × n = 1e4, 1e5, 1e6, R = 200) is estimated at half an hour to an
hour on 2 CPU cores: about 10–15 s a cell at n = 1e4 (mostly compilation), 30–45 s at 1e5 and
2–5 min at 1e6 (0.5–1.4 s of CPU per replication), extrapolated from R = 5…60. It is
incremental: ``coverage.json`` is rewritten after every (experiment, n) cell, and a rerun
skips the cells already there. A file is only resumed when it was made with the same settings
and the same estimator source (a fingerprint of the ``rdpjax`` modules); otherwise the script
stops and asks for ``--fresh``. Cells run n by n (every experiment at 1e4, then 1e5, …) so
that a partial run is already a complete table at the smaller sizes.

    .venv/bin/python benchmarks/papers/coverage.py                      # the full study
    .venv/bin/python benchmarks/papers/coverage.py --n 1e4 --reps 20 --experiments laplace \\
        shuffled-rr --out /tmp/coverage.json                     # a minute: a smoke test

A cell equals ``rdpjax coverage --experiment NAME --n N --reps R --seed S --json`` (the same
keys: ``rdpjax.studies.reproduction.cell_key``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import jax

from rdpjax.mechanisms.databases import paper_pair
from rdpjax.studies import format_coverage
from rdpjax.studies.reproduction import (
    EXPERIMENTS,
    ORDERS,
    coverage_cells,
    experiment_slug,
    resolve_experiment,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "papers" / "coverage.json"
# Modules that do not change the numbers (presentation only) stay out of the fingerprint.
NOT_NUMERICAL = {"plots.py", "demo.py", "report.py"}
NOT_NUMERICAL_PACKAGES = {"cli"}


def source_fingerprint() -> str:
    """SHA-256 (first 16 hex digits) of the rdpjax modules that compute the numbers."""
    package = ROOT / "rdpjax"
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        if path.name in NOT_NUMERICAL and path.parent == package:
            continue
        if path.relative_to(package).parts[0] in NOT_NUMERICAL_PACKAGES:
            continue
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _sizes(values: list[str]) -> list[int]:
    sizes = []
    for text in values:
        value = float(text)
        if value != int(value) or value < 2:
            raise SystemExit(f"coverage.py: error: --n takes whole numbers ≥ 2; got {text!r}")
        sizes.append(int(value))
    return sorted(set(sizes))


def _n_text(n: int) -> str:
    """``10000`` → ``"1e4"``; other sizes as they are."""
    digits = str(n)
    if digits.startswith("1") and set(digits[1:]) <= {"0"} and n >= 1000:
        return f"1e{len(digits) - 1}"
    return digits


def _command(args, sizes: list[int], names: list[str]) -> str:
    words = ["python", "benchmarks/papers/coverage.py", "--n", *(_n_text(n) for n in sizes)]
    words += ["--reps", str(args.reps), "--alpha", str(args.alpha), "--seed", str(args.seed)]
    if names != list(EXPERIMENTS):
        words += ["--experiments", *(experiment_slug(name) for name in names)]
    if Path(args.out).resolve() != DEFAULT_OUT:
        words += ["--out", str(args.out)]
    return shlex.join(words)


def _load(path: Path, settings: dict, fresh: bool) -> list[dict]:
    """The cells of an earlier run with the same settings ([] when there is none)."""
    if fresh or not path.exists():
        return []
    old = json.loads(path.read_text())
    old_settings = {key: old["meta"].get(key) for key in settings}
    if old_settings != settings:
        differ = ", ".join(
            f"{key} {old_settings[key]!r} → {settings[key]!r}"
            for key in settings
            if old_settings[key] != settings[key]
        )
        raise SystemExit(
            f"coverage.py: error: {path} was made with other settings ({differ}); "
            "pass --fresh to replace it, or --out for another file"
        )
    return old["cells"]


def _write(path: Path, meta: dict, cells: list[dict]) -> None:
    """coverage.json (atomically: a killed run leaves the previous file) and coverage.md."""
    order = {name: i for i, name in enumerate(EXPERIMENTS)}
    cells = sorted(cells, key=lambda c: (order.get(c["mechanism"], len(order)), c["n"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "cells": cells}, indent=1))
    os.replace(tmp, path)
    seconds = sum(c["seconds"] for c in cells)
    text = (
        "# Coverage of the lower bound, paper 000 §V\n\n"
        f"R = {meta['reps']} replications per cell, pair (21), λ = "
        f"{', '.join(f'{v:g}' for v in meta['lam'])}, α = {meta['alpha']} (nominal: each "
        f"order ≥ {1 - meta['alpha'] / len(meta['lam']):.4g}, simultaneous ≥ "
        f"{1 - meta['alpha']:.4g}); one direction, D_λ(P‖Q). Coverage intervals are Wilson "
        f"95%. {len(cells)} cells, {seconds / 60:.1f} min of compute "
        f"({meta['machine']}, jax {meta['jax']}).\n\n"
        f"Command: `{meta['command']}`\n\n" + format_coverage(cells) + "\n"
    )
    path.with_suffix(".md").write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Coverage of rdpjax's lower bound on paper 000's seven experiments.",
        epilog="example: python benchmarks/papers/coverage.py --n 1e4 --reps 20 "
        "--experiments laplace shuffled-rr --out /tmp/coverage.json",
    )
    parser.add_argument(
        "--n", nargs="+", default=["1e4", "1e5", "1e6"], help="outputs per database (each a cell)"
    )
    parser.add_argument("--reps", type=int, default=200, help="replications R per cell")
    parser.add_argument("--alpha", type=float, default=0.05, help="family-wise error level")
    parser.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    parser.add_argument(
        "--experiments",
        nargs="+",
        default=None,
        metavar="NAME",
        help="subset: " + ", ".join(experiment_slug(name) for name in EXPERIMENTS),
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="JSON file (Markdown beside)")
    parser.add_argument("--fresh", action="store_true", help="ignore an existing --out file")
    args = parser.parse_args(argv)
    if args.reps < 1 or not 0 < args.alpha < 0.5:
        parser.error("--reps must be ≥ 1 and --alpha in (0, 0.5)")
    sizes = _sizes(args.n)
    try:
        names = [resolve_experiment(v) for v in (args.experiments or EXPERIMENTS)]
    except ValueError as err:
        parser.error(str(err))
    names = list(dict.fromkeys(names))
    out = Path(args.out)
    settings = {
        "lam": list(ORDERS),
        "reps": args.reps,
        "alpha": args.alpha,
        "seed": args.seed,
        "source": source_fingerprint(),
    }
    cells = _load(out, settings, args.fresh)
    # The command that remakes the whole file: earlier runs' cells and this run's.
    all_sizes = sorted(set(sizes) | {c["n"] for c in cells})
    in_file = {c["mechanism"] for c in cells} | set(names)
    command = _command(args, all_sizes, [name for name in EXPERIMENTS if name in in_file])
    meta = {
        "command": command,
        **settings,
        "jax": jax.__version__,
        "machine": platform.platform(),
    }
    done = {(c["mechanism"], c["n"]) for c in cells}
    x, x_prime = paper_pair()
    jobs = [
        (name, EXPERIMENTS[name](), x, x_prime, n)
        for n in sizes
        for name in names
        if (name, n) not in done
    ]
    print(f"reproduce with: {command}", file=sys.stderr)
    print(f"{len(done)} cells in {out} already, {len(jobs)} to run", file=sys.stderr)
    start = time.perf_counter()
    for cell in coverage_cells(jobs, lam=ORDERS, reps=args.reps, seed=args.seed, alpha=args.alpha):
        cells.append(cell)
        _write(out, meta, cells)
    _write(out, meta, cells)
    print(format_coverage([c for c in cells if c["mechanism"] in names and c["n"] in sizes]))
    print(
        f"\n{len(jobs)} cells in {time.perf_counter() - start:.0f} s; wrote {out} and "
        f"{out.with_suffix('.md')}\nreproduce with: {command}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
