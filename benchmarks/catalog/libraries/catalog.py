"""The catalog: real DP libraries' mechanisms and known bugs, audited against their own claims.

    python benchmarks/catalog/libraries/catalog.py [--seeds 20] [--cases NAME ...] [--n N]
        [--out-dir docs]

Every case of the modules below (``case.Case``: mechanism, pair, claim, exact ε(λ), n) is audited
``--seeds`` times with independent keys (``rdpjax.audit``, the claim's default order grid, both
directions, α = 0.05); a library that is not installed is skipped and named. Writes
``docs/catalog.md`` (the table) and ``docs/catalog.json`` (one row per case: ``case``,
``library``, ``version``, ``kind``, ``n``, ``seeds``, ``refuted`` = how many seeds refuted the
claim, the orders, exact, claimed and the lower bounds of every seed, seconds). Targets: a bug is
refuted in ≥ 19 of 20 seeds, a correct mechanism in ≤ 1. Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import zlib
from pathlib import Path

import jax
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]  # the case modules; benchmarks/_summary.py

import rdpjax  # noqa: E402

MODULES = (
    "cases_bugs",
    "cases_dpsgd",
    "cases_diffprivlib",
    "cases_opendp",
    "cases_pydp",
    "cases_jax_privacy",
    "cases_multi_freq_ldpy",
)
ALPHA = 0.05
OUT_DIR = HERE.parents[2] / "docs"
TARGET = {"bug": lambda k, s: k >= s - 1, "correct": lambda k, s: k <= 1}


def collect(names=None):
    """``(cases, skipped)``: every case of the modules whose library imports; ``skipped`` maps
    a module to the reason it was left out."""
    cases, skipped = [], {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        missing = getattr(module, "MISSING", None)
        if missing:
            skipped[module_name] = missing
            continue
        cases += [c for c in module.cases() if names is None or c.name in names]
    if names is not None:
        unknown = set(names) - {c.name for c in cases}
        if unknown:
            raise SystemExit(f"unknown or skipped cases: {', '.join(sorted(unknown))}")
    return cases, skipped


def case_key(name: str, seed: int):
    """The audit key of one case and seed (independent across both)."""
    return jax.random.fold_in(jax.random.key(seed), zlib.crc32(name.encode()) & 0x7FFFFFFF)


def run_case(case, seeds: int, n: int | None = None) -> dict:
    """Audit ``case`` at ``seeds`` keys; the catalog row."""
    n = case.n if n is None else n
    start = time.perf_counter()
    lowers, refuted, noted, lam, claimed, exact = [], 0, 0, None, None, None
    for seed in range(seeds):
        report = rdpjax.audit(
            case_key(case.name, seed),
            case.mechanism,
            case.x,
            case.x_prime,
            n=n,
            alpha=ALPHA,
            claim=case.claim,
            progress=False,
            **case.options,
        )
        lowers.append(np.asarray(report.lower, np.float64))
        refuted += bool(report.is_refuted)
        noted += any(note.startswith("supports differ") for note in report.notes)
        lam, claimed = np.asarray(report.lam), np.asarray(report.claimed)
        exact = report.exact
    if exact is None and case.exact is not None:
        exact = case.exact(lam)
    lowers = np.array(lowers)
    median = np.median(lowers, axis=0)
    star = int(np.argmax(np.where(np.isfinite(claimed), median - claimed, -np.inf)))
    return {
        "case": case.name,
        "library": case.library,
        "version": case.version,
        "kind": case.kind,
        "mechanism": case.description,
        "claim": str(case.claim),
        "claim_source": case.claim_source,
        "n": n,
        "seeds": seeds,
        "refuted": refuted,
        "supports_differ": noted,
        "target_met": bool(TARGET[case.kind](refuted, seeds)),
        "lam": lam.tolist(),
        "claimed": _floats(claimed),
        "exact": None if exact is None else _floats(exact),
        "exact_note": case.exact_note,
        "lower": [_floats(v) for v in lowers],
        "lower_median": _floats(median),
        "lam_star": float(lam[star]),
        "options": {k: str(v) for k, v in case.options.items()},
        "cites": list(case.cites),
        "twin": case.twin,
        "seconds": time.perf_counter() - start,
    }


def _floats(values):
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, np.float64)]


def _fmt(v) -> str:
    if v is None:
        return "∞"
    return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"


def _at(row: dict, key: str, lam: float):
    values = row[key]
    if values is None or lam not in row["lam"]:
        return None, False
    return values[row["lam"].index(lam)], True


def table(rows) -> str:
    """The catalog's main table (markdown)."""
    head = (
        "| case | library | kind | mechanism | claim | n | λ* | exact | lower (median) | claimed "
        "| lower at λ = 2 (exact) | refuted | verdict | s |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        r = {**r, "mechanism": r["mechanism"].replace("|", "\\|")}  # a bare | splits the cell
        i = r["lam"].index(r["lam_star"])
        exact = "—" if r["exact"] is None else _fmt(r["exact"][i])
        low2, has2 = _at(r, "lower_median", 2.0)
        ex2, _ = _at(r, "exact", 2.0)
        at2 = f"{_fmt(low2)} ({'—' if r['exact'] is None else _fmt(ex2)})" if has2 else "—"
        verdict = (
            ("refuted" if r["kind"] == "bug" else "not refuted") if r["target_met"] else "MISSED"
        )
        if r.get("supports_differ"):  # the report's note (rdpjax.estimator.support.support_gap)
            verdict += f"; *supports differ* in {r['supports_differ']}/{r['seeds']}"
        library = r["library"] + (f" {r['version']}" if r["version"] else "")
        lines.append(
            f"| `{r['case']}` | {library} | {r['kind']} | {r['mechanism']} | {r['claim']} | "
            f"{r['n']:,} | {r['lam_star']:g} | {exact} | {_fmt(r['lower_median'][i])} | "
            f"{_fmt(r['claimed'][i])} | {at2} | {r['refuted']}/{r['seeds']} | {verdict} | "
            f"{r['seconds']:.1f} |"
        )
    return head + "\n".join(lines) + "\n"


def sources(rows) -> str:
    """Per case: where its claim comes from, how its exact value was computed, what it cites."""
    lines = []
    for r in rows:
        cites = ", ".join(f"<{u}>" for u in r["cites"]) or "—"
        twin = f"; twin of / twin: `{r['twin']}`" if r["twin"] else ""
        lines.append(
            f"- `{r['case']}`: claim from {r['claim_source']}; exact: {r['exact_note'] or '—'}"
            f"{twin}; sources: {cites}"
        )
    return "\n".join(lines) + "\n"


def write(rows, skipped, meta, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "catalog.json").write_text(
        json.dumps({"meta": {**meta, "skipped": skipped}, "rows": rows}, indent=1) + "\n"
    )
    template = (HERE / "catalog_template.md").read_text()
    skipped_text = (
        "\n".join(f"- `{m}` skipped: {why}" for m, why in skipped.items()) or "none skipped"
    )
    text = template.format(
        command=meta["command"],
        machine=meta["machine"],
        versions=", ".join(f"{k} {v}" for k, v in meta["versions"].items()),
        minutes=meta["seconds"] / 60,
        met=sum(r["target_met"] for r in rows),
        total=len(rows),
        table=table(rows),
        sources=sources(rows),
        skipped=skipped_text,
    )
    (out_dir / "catalog.md").write_text(text)
    print(f"wrote {out_dir / 'catalog.md'} and {out_dir / 'catalog.json'}")


def versions(rows) -> dict:
    import importlib.metadata as md

    out = {"rdpjax": rdpjax.__version__, "jax": jax.__version__}
    for dist in ("optax", "dp-accounting", "diffprivlib", "opendp", "python-dp", "jax-privacy"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--cases", nargs="+", default=None, help="case names (default: all)")
    parser.add_argument("--n", type=float, default=None, help="override every case's n")
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args(argv)
    from absl import logging as absl_logging  # dp_accounting's series warnings, once per order

    absl_logging.set_verbosity(absl_logging.ERROR)
    cache = rdpjax.enable_compilation_cache()
    load = os.getloadavg()[0]  # other work on the machine slows the timings down
    cases, skipped = collect(args.cases)
    for module, why in skipped.items():
        print(f"skipped {module}: {why}", flush=True)
    start = time.perf_counter()
    rows = []
    for case in cases:
        row = run_case(case, args.seeds, None if args.n is None else int(args.n))
        rows.append(row)
        i = row["lam"].index(row["lam_star"])
        print(
            f"{row['case']:36s} {row['kind']:8s} n={row['n']:>9,}  refuted {row['refuted']:2d}/"
            f"{row['seeds']}  λ*={row['lam_star']:g}: lower {_fmt(row['lower_median'][i])} "
            f"claimed {_fmt(row['claimed'][i])} exact "
            f"{'—' if row['exact'] is None else _fmt(row['exact'][i])}  "
            f"{'ok' if row['target_met'] else 'MISSED'}  [{row['seconds']:.1f} s]",
            flush=True,
        )
    command = "python benchmarks/catalog/libraries/catalog.py" + (
        f" --seeds {args.seeds}" if args.seeds != 20 else ""
    )
    if args.cases:
        command += " --cases " + " ".join(args.cases)
    if args.n is not None:
        command += f" --n {args.n:g}"
    meta = {
        "command": command,
        "alpha": ALPHA,
        "seconds": time.perf_counter() - start,
        "machine": f"{platform.platform()}, {jax.device_count()} jax device(s), "
        f"{os.cpu_count()} CPU cores, load average {load:.1f} at the start, compilation cache "
        + ("on" if cache else "off"),
        "versions": versions(rows),
    }
    print(f"{sum(r['target_met'] for r in rows)}/{len(rows)} targets met in "
          f"{meta['seconds'] / 60:.1f} min")  # fmt: skip
    if not args.no_write:
        write(rows, skipped, meta, args.out_dir)
    return 0 if all(r["target_met"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
