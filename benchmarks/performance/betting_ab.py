"""The betting test at 10⁶ pairs a side, this tree against another, in one shell loop.

A true claim (N(1, 1) vs N(0, 1) against gdp(1), numpy sampler), so the test runs to max_n;
batch caps 1,024 (``betting_test``'s default) and 10⁶ (``rdpjax.audit``'s). Prints the
seconds and the e-value, which must be the same in both trees when the bets are unchanged:

    for r in 1 2; do for t in /path/to/base .; do
      (cd $t && PYTHONPATH=$t python benchmarks/performance/betting_ab.py); done; done
"""

import time

import jax

import rdpjax
from rdpjax.claims import gdp
from rdpjax.rejection import betting


def sample(rng, db, m):
    return db + rng.normal(size=m)


def main() -> None:
    print(rdpjax.__file__)
    betting.betting_test(jax.random.key(0), sample, 1.0, 0.0, gdp(1.0), max_n=20_000)
    for batch in (1024, 10**6):
        t0 = time.perf_counter()
        result = betting.betting_test(
            jax.random.key(0), sample, 1.0, 0.0, gdp(1.0), max_n=10**6, batch=batch
        )
        print(f"batch {batch}: {time.perf_counter() - t0:.2f} s, e-value {result.e_value!r}")


if __name__ == "__main__":
    main()
