"""The sequential betting test's time against drawing alone, and against its former plan rule.

``rdpjax.rejection.betting.betting_test`` on a true claim (it runs to ``max_n``): the
Gaussian sum N(1, 1) vs N(0, 1) against gdp(1), drawn by a numpy sampler and by the zoo's JAX
Gaussian (as ``rdpjax.audit`` draws it, :func:`rdpjax.auditing.sets.numpy_sampler`). The
baseline is the same sampler called on the same batches (``batch_ends``) with nothing else
done, in the same process. Two batch caps: 1,024 (``betting_test``'s default) and 10⁶
(what ``rdpjax.audit`` passes, its ``StreamOptions.batch_size``). "old rule" patches issue 52's
plan schedule back (bets planned at every batch); it is run only where it takes under a minute.

    PYTHONPATH=. python benchmarks/performance/betting_speed.py [--sizes 10000 100000 1000000]
        [--batches 1024 1000000]

Writes ``benchmarks/results/performance/betting_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

from rdpjax import mechanisms
from rdpjax.auditing.sets import numpy_sampler
from rdpjax.claims import gdp
from rdpjax.rejection import betting

RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"


def numpy_gauss(rng, db, m):
    return db + rng.normal(size=m)


SAMPLERS = {"numpy": numpy_gauss, "jax (zoo Gaussian)": numpy_sampler(mechanisms.Gaussian(1.0))}
DATABASES = {"numpy": (1.0, 0.0), "jax (zoo Gaussian)": ([1.0], [0.0])}


def draw_alone(sample, x, xp, max_n: int, batch: int) -> float:
    rng_p, rng_q = np.random.default_rng(1), np.random.default_rng(2)
    start, begin = 0, time.perf_counter()
    for end in betting.batch_ends(max_n, batch):
        sample(rng_p, x, end - start), sample(rng_q, xp, end - start)
        start = end
    return time.perf_counter() - begin


def test_time(sample, x, xp, max_n: int, rule: str, batch: int) -> float:
    saved = betting.plans_at
    if rule == "old":
        betting.plans_at = lambda ends: {s for s in [0, *ends[:-1]] if s >= betting.FIRST}
    try:
        begin = time.perf_counter()
        result = betting.betting_test(jax.random.key(0), sample, x, xp, gdp(1.0),
                                             max_n=max_n, batch=batch)  # fmt: skip
        seconds = time.perf_counter() - begin
    finally:
        betting.plans_at = saved
    assert result.n == max_n or result.refuted
    return seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--batches", type=int, nargs="+", default=[1024, 10**6])
    parser.add_argument("--old-max", type=int, default=100_000, help="largest n for the old rule")
    parser.add_argument("--out", type=Path, default=RESULTS / "betting_speed.json")
    args = parser.parse_args(argv)
    rows = []
    for name, sample in SAMPLERS.items():
        x, xp = DATABASES[name]
        test_time(sample, x, xp, 1_000, "new", 1024)  # warm-up: compilation, imports
        for batch in args.batches:
            for n in args.sizes:
                draw_alone(sample, x, xp, n, batch)  # warm-up: a JAX sampler compiles each size
                row = {"sampler": name, "batch": batch, "max_n": n}
                row["drawing_alone_seconds"] = draw_alone(sample, x, xp, n, batch)
                row["test_seconds"] = test_time(sample, x, xp, n, "new", batch)
                row["test_over_drawing"] = row["test_seconds"] / row["drawing_alone_seconds"]
                if n <= args.old_max and batch < n:
                    row["old_rule_seconds"] = test_time(sample, x, xp, n, "old", batch)
                    row["old_over_new"] = row["old_rule_seconds"] / row["test_seconds"]
                rows.append(row)
                old = ""
                if "old_rule_seconds" in row:
                    old = f"; old rule {row['old_rule_seconds']:.2f} s ({row['old_over_new']:.1f}×)"
                print(f"{name:20s} batch {batch:>9,} max_n {n:>9,}: test {row['test_seconds']:.2f}"
                      f" s, drawing alone {row['drawing_alone_seconds']:.3f} s "
                      f"({row['test_over_drawing']:.1f}×){old}", flush=True)  # fmt: skip
    out = {
        "command": "PYTHONPATH=. python benchmarks/performance/betting_speed.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "rows": rows,
    }  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
