"""Where a replication's time goes: R bounds at n per side, cut after each stage, in one process.

    python benchmarks/performance/replication_parts.py [--n 1e5] [--reps 1000] [--repeats 5]
        [--out benchmarks/results/performance/replication_parts.json]

Each variant is the same compiled study (the replications split over the CPU devices and vmapped in
batches, ``rdpjax.estimator.sharding.map_over_devices``, as ``throughput.py``'s ``vmap_section`` and
``rdpjax.coverage`` run them) stopped after one more stage: the draws alone (summed, so nothing is
elided), then the pooled span, the settings (robust scale, bandwidth, floor), the binning, the whole
bound. Differences of best-of-``repeats`` times (the variants' runs interleaved, so that a change of
machine load hits all alike) are the stages' costs. One more variant is the whole study compiled
without the fusion boundary in front of the binning (``rdpjax._internal.fusion``;
``bound_of_draws(..., materialize_rows=0)``), the samples fused into their readers as XLA does by
default. Then the bound
alone on binned replications, at several batch sizes, with and without the second-order terms. Issue
26 asks for the whole study within 2× its draws.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/

from _summary import write_json  # noqa: E402
from throughput import ORDERS, best_times, block, sample_p, sample_q  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"


def _best_interleaved(programs: dict, arg, repeats: int) -> dict:
    """Each compiled first, then the best of ``repeats`` runs, interleaved (throughput.py's)."""
    for fn in programs.values():
        block(fn(arg))
    return best_times({k: (lambda fn=fn: block(fn(arg))) for k, fn in programs.items()}, repeats)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e5)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-devices", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default=str(RESULTS / "replication_parts.json"))
    args = parser.parse_args(argv)
    jax.config.update("jax_num_cpu_devices", args.cpu_devices)  # before the first computation

    import rdpjax
    from rdpjax._internal.fusion import materialized
    from rdpjax.estimator.bound_plan import _pooled_span
    from rdpjax.estimator.settings import continuous_settings
    from rdpjax.estimator.sharding import draw_mesh, map_over_devices, replication_batch_size
    from rdpjax.stream import bound_of_draws

    n, reps = int(args.n), args.reps
    with rdpjax.float64():
        k0p, k0q = jax.random.split(jax.random.key(7))
        plan, _, _ = rdpjax.plan_bound(sample_p(k0p, n), sample_q(k0q, n), ORDERS)

        def draw(k):
            kp, kq = jax.random.split(k)
            return sample_p(kp, n), sample_q(kq, n)

        def span(p, q):
            lo, hi = _pooled_span(p.reshape(n, 1), q.reshape(n, 1), n, n, False)
            return (lo + hi).sum()

        def settings(p, q):
            h, _, _ = continuous_settings(
                p.reshape(n, 1), q.reshape(n, 1), plan.bandwidth, plan.floor, plan.beta,
                plan.defaults,
            )  # fmt: skip
            return h.sum() + span(p, q)

        def binned(p, q):  # as bound_of_draws bins them: behind the fusion boundary
            b = plan.bin(materialized(p), materialized(q))
            return b.counts_p.sum() + b.counts_q.sum() + b.bandwidth.sum()

        stages = {
            "draws": lambda k: sum(jnp.sum(x) for x in draw(k)),
            "+ span": lambda k: span(*draw(k)),
            "+ settings": lambda k: settings(*draw(k)),
            "+ binning": lambda k: binned(*draw(k)),
            "+ bound (whole study)": lambda k: bound_of_draws(plan, *draw(k)).lower,
        }
        mesh = draw_mesh()
        batch = replication_batch_size(n, reps, mesh)
        keys = jax.random.split(jax.random.key(1), reps)
        meta = {
            "command": "python benchmarks/performance/replication_parts.py "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            "n": n, "reps": reps, "devices": mesh.size, "batch_per_device": batch,
            "grid_shape": list(plan.shape),
        }  # fmt: skip
        studies = {
            name: jax.jit(lambda ks, f=f: map_over_devices(f, mesh, ks, batch_size=batch))
            for name, f in stages.items()
        }

        def unfused(k):
            return bound_of_draws(plan, *draw(k), materialize_rows=0).lower

        studies["whole study, no fusion boundary"] = (
            jax.jit(lambda ks: map_over_devices(unfused, mesh, ks, batch_size=batch))
            .lower(keys)
            .compile()
        )
        times = _best_interleaved(studies, keys, args.repeats)
        for name, seconds in times.items():
            print(f"  {name:<24} {seconds:.3f} s", flush=True)
        whole_over_draws = times["+ bound (whole study)"] / times["draws"]
        print(f"  whole study / draws: {whole_over_draws:.2f}× (issue 26: ≤ 2×)")
        unfused_over_draws = times["whole study, no fusion boundary"] / times["draws"]
        print(f"  without the fusion boundary: {unfused_over_draws:.2f}×")

        def binned_draws(k):
            return plan.bin(*map(materialized, draw(k)))

        counts = jax.jit(lambda ks: map_over_devices(binned_draws, mesh, ks, batch_size=batch))(
            keys
        )
        first_order = dataclasses.replace(plan, second_order=False)
        bounds = {
            f"{label}, batch {b}": jax.jit(
                lambda c, pl=pl, b=b: map_over_devices(
                    lambda x: pl.bound(x).lower, mesh, c, batch_size=b
                )
            )  # fmt: skip
            for label, pl in (("second order", plan), ("first order", first_order))
            for b in (1, 2, 8, 32)
        }
        alone = _best_interleaved(bounds, counts, args.repeats)
        for name, seconds in alone.items():
            print(f"  bound alone, {name:<20} {seconds:.3f} s", flush=True)
    meta["load_average_at_end"] = list(os.getloadavg())
    write_json(
        Path(args.out), meta, stages_seconds=times, whole_over_draws=whole_over_draws,
        no_fusion_boundary_over_draws=unfused_over_draws, bound_alone_seconds=alone,
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
