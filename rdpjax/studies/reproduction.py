"""Reproduce the experiments of paper 000 §V: seven mechanisms on pair (21) at λ = 2, 5, 7.

For each mechanism: bounds at one or several sample sizes ``n`` (outputs per database; the
estimate and the lower bound, simultaneous over the three orders), and a coverage study of
``reps`` vmapped replications at ``coverage_n`` outputs per database (the fraction of
replications whose bound held). The exact values are the closed forms of docs/methods.md §3 (the
zoo's ``divergence``). With ``figures`` it also draws, per mechanism, the densities behind the
bound, the bound against λ and (several n) the bound against n.

Every random stream is a function of ``(seed, experiment name, n)`` alone (:func:`cell_key`), so
a row does not depend on which other experiments or sizes were asked for, and the coverage of
``rdpjax reproduce`` equals that of ``rdpjax coverage --experiment NAME`` with the same seed.

Used by ``rdpjax reproduce``, ``rdpjax coverage``, ``benchmarks/papers/paper_000.py`` and
``benchmarks/papers/coverage.py``.
"""

from __future__ import annotations

import functools
import json
import sys
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import jax
import numpy as np

from rdpjax._table import markdown_table
from rdpjax.auditing.draws import exact_divergences
from rdpjax.estimator.api import lower_bound
from rdpjax.mechanisms import registry
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.databases import paper_pair
from rdpjax.studies.coverage_study import coverage

__all__ = [
    "EXPERIMENTS",
    "ORDERS",
    "cell_key",
    "coverage_cell",
    "coverage_cells",
    "experiment_slug",
    "format_table",
    "reproduce",
    "resolve_experiment",
    "write_results",
]

ORDERS = (2.0, 5.0, 7.0)

EXPERIMENTS = {entry.title: entry.make for entry in registry.experiments()}
"""The seven experiments of paper 000 §V with the paper's parameters: name → factory.

Names, order and parameters are those of :mod:`rdpjax.mechanisms.registry` (its paper-000
entries, each ``entry.make`` at its defaults); a name also keys the experiment's random streams
(:func:`cell_key`)."""


def experiment_slug(name: str) -> str:
    """The command-line spelling of an experiment: ``"Shuffled RR"`` → ``"shuffled-rr"``."""
    return name.lower().replace(" ", "-")


def resolve_experiment(text: str) -> str:
    """The :data:`EXPERIMENTS` key for a name, slug or registry name (case-insensitive).

    ``"Shuffled RR"``, ``"shuffled-rr"`` and ``"shuffled-randomized-response"`` all name one.

    Raises:
      ValueError: naming the accepted spellings, if ``text`` is none of them.
    """
    spellings = {entry.name: entry.title for entry in registry.experiments()}
    for name in EXPERIMENTS:
        spellings.update({name.lower(): name, experiment_slug(name): name})
    if text.lower() in spellings:
        return spellings[text.lower()]
    choices = ", ".join(experiment_slug(name) for name in EXPERIMENTS)
    raise ValueError(f"unknown experiment {text!r}; choose one of: {choices}")


def cell_key(seed: int, label: str, n: int, *, purpose: int) -> jax.Array:
    """The PRNG key of one (experiment, n) cell.

    It is ``seed`` folded with a CRC-32 of ``label``, then ``purpose`` (0: the bounds at n, 1:
    the coverage study at n), then ``n``.
    """
    data = (zlib.crc32(label.encode()) & 0x7FFFFFFF, purpose, n)
    return _folded_key(np.asarray(data, dtype=np.uint32), seed=seed)


@functools.partial(jax.jit, static_argnames="seed")
def _folded_key(data, *, seed):
    """``key(seed)`` folded with each of ``data`` in turn: one compiled call, not four."""
    key = jax.random.key(seed)
    for value in data:  # three uint32 values
        key = jax.random.fold_in(key, value)
    return key


def _draw(mechanism: Mechanism, x, x_prime, n: int, key) -> tuple[np.ndarray, np.ndarray]:
    """``n`` outputs on x and on x' exactly as :func:`rdpjax.audit` draws them, as host arrays.

    They use the same key split and the same canonical encoding of discrete outputs.
    """
    kp, kq = jax.random.split(key)
    p, q = mechanism.sample(kp, x, n), mechanism.sample(kq, x_prime, n)
    if mechanism.output(x).is_discrete:
        p, q = mechanism.output(x).encode(p), mechanism.output(x_prime).encode(q)
    return np.asarray(p), np.asarray(q)


def _status(text: str, *, end: str = "") -> None:
    print(text, end=end, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- coverage


def coverage_cell(
    label: str,
    mechanism: Mechanism,
    x,
    x_prime,
    *,
    lam: Sequence[float] = ORDERS,
    n: int,
    reps: int,
    seed: int = 0,
    alpha: float = 0.05,
    both_directions: bool = False,
) -> dict:
    """One coverage study (``reps`` replications in one compiled call), as a JSON-ready dict.

    The dict is :meth:`rdpjax.studies.CoverageResult.to_dict` plus ``mechanism`` (= ``label``),
    ``alpha``, ``both_directions``, ``seed`` and ``seconds`` (wall time, compilation included).
    The key is ``cell_key(seed, label, n, purpose=1)``.
    """
    start = time.perf_counter()
    result = coverage(
        cell_key(seed, label, n, purpose=1),
        mechanism,
        x,
        x_prime,
        lam,
        n=n,
        reps=reps,
        alpha=alpha,
        both_directions=both_directions,
    )
    return {
        "mechanism": label,
        **result.to_dict(),
        "alpha": alpha,
        "both_directions": both_directions,
        "seed": seed,
        "seconds": round(time.perf_counter() - start, 2),
    }


def coverage_cells(
    jobs: Sequence[tuple[str, Mechanism, object, object, int]],
    *,
    progress: bool = True,
    **options,
) -> Iterator[dict]:
    """Run :func:`coverage_cell` for each ``(label, mechanism, x, x_prime, n)`` in turn.

    Yields each cell as soon as it is done (so a caller can save it before the next starts).
    With ``progress``, one line per cell on stderr: ``[2/6] Gaussian, n = 10,000, R = 200 … 9 s``.
    ``options`` are the keyword arguments of :func:`coverage_cell`.
    """
    for i, (label, mechanism, x, x_prime, n) in enumerate(jobs):
        if progress:
            _status(f"[{i + 1}/{len(jobs)}] {label}, n = {n:,}, R = {options.get('reps')} …")
        cell = coverage_cell(label, mechanism, x, x_prime, n=n, **options)
        if progress:
            _status(f" {cell['seconds']:.0f} s", end="\n")
        yield cell


# ----------------------------------------------------------------------------- reproduce


def _sizes(n: int | Iterable[int]) -> list[int]:
    sizes = sorted({int(v) for v in np.atleast_1d(np.asarray(n, dtype=np.int64))})
    if not sizes or sizes[0] < 2:
        raise ValueError(f"n must be one or more whole numbers ≥ 2; got {n!r}.")
    return sizes


def _write_figures(folder: Path, name: str, p, q, bounds: dict, exact, alpha: float) -> None:
    """Densities and bound vs λ at the largest n; bound vs n when there are several."""
    import matplotlib.pyplot as plt

    from rdpjax.auditing import plots

    folder.mkdir(parents=True, exist_ok=True)
    slug = experiment_slug(name)
    n_max = max(bounds)
    ax = plots.plot_densities(p, q, lam=list(ORDERS), alpha=alpha)
    ax.set_title(f"{name}, n = {n_max:,}\n{ax.get_title()}", fontsize="small")
    ax.figure.savefig(folder / f"{slug}_densities.png", dpi=100)
    plt.close(ax.figure)
    ax = plots.plot_bound_vs_lambda(bounds[n_max], exact=exact, title=f"{name}, n = {n_max:,}")
    ax.figure.savefig(folder / f"{slug}_bound_vs_lambda.png", dpi=100)
    plt.close(ax.figure)
    if len(bounds) > 1:
        ax = plots.plot_bound_vs_n(bounds, exact=exact)
        ax.set_title(name, fontsize="small")
        ax.figure.savefig(folder / f"{slug}_bound_vs_n.png", dpi=100)
        plt.close(ax.figure)


def reproduce(
    *,
    n: int | Sequence[int] = 10**7,
    reps: int = 200,
    coverage_n: int = 10**5,
    seed: int = 0,
    alpha: float = 0.05,
    names: list[str] | None = None,
    progress: bool = True,
    figures: Path | None = None,
) -> list[dict]:
    """Run the experiments; return one row per (mechanism, n, λ).

    The bounds are the paper's estimator on the outputs themselves (``transform=None``), the
    one the coverage column measures; :func:`rdpjax.lower_bound`'s default maps Laplace-tailed
    outputs first and is tighter on them (``benchmarks/calibration/calibrate_zoo_map.py``).

    Args:
      n: outputs per database for the bounds; several sizes give one row per size.
      reps: replications of each coverage study.
      coverage_n: outputs per database of each coverage study.
      seed: the seed of every key (:func:`cell_key`).
      alpha: family-wise level of each mechanism's three bounds.
      names: a subset of :data:`EXPERIMENTS` (default all seven).
      progress: one status line per mechanism on stderr.
      figures: a folder for ``<slug>_densities.png``, ``<slug>_bound_vs_lambda.png`` and, with
        several n, ``<slug>_bound_vs_n.png`` (needs matplotlib).

    Row keys: mechanism, lam, exact, estimate, lower, std_error, lower_over_exact, n, coverage,
    coverage_low, coverage_high, coverage_n, reps.
    """
    sizes = _sizes(n)
    names = list(EXPERIMENTS) if names is None else [resolve_experiment(v) for v in names]
    x, x_prime = paper_pair()
    rows = []
    for i, name in enumerate(names):
        mech = EXPERIMENTS[name]()
        start = time.perf_counter()
        exact = exact_divergences(mech, x, x_prime, ORDERS, False)
        if progress:
            sizes_text = ", ".join(f"{v:,}" for v in sizes)
            _status(f"[{i + 1}/{len(names)}] {name}: bounds at n = {sizes_text}")
        bounds = {}
        discrete = mech.output(x).is_discrete  # codes of unordered outputs: frequencies
        for size in sizes:
            p, q = _draw(mech, x, x_prime, size, cell_key(seed, name, size, purpose=0))
            # The paper's estimator, the KDE of the outputs themselves (no pilot quantile map):
            # the one the coverage column measures (coverage_cell, through plan_bound).
            bounds[size] = lower_bound(
                p, q, ORDERS, alpha=alpha, discrete=discrete, transform=None
            )  # fmt: skip
        if progress:
            _status(f"; coverage, {reps} × n = {coverage_n:,}")
        cov = coverage_cell(name, mech, x, x_prime, n=coverage_n, reps=reps, seed=seed, alpha=alpha)
        if figures is not None:
            if progress:
                _status("; figures")
            _write_figures(Path(figures), name, p, q, bounds, exact, alpha)
        if progress:
            _status(f" [{time.perf_counter() - start:.0f} s]", end="\n")
        for size, bound in bounds.items():
            for j, lam in enumerate(ORDERS):
                lower = float(bound.lower[j])
                rows.append(
                    {
                        "mechanism": name,
                        "lam": lam,
                        "exact": float(exact[j]),
                        "estimate": float(bound.estimate[j]),
                        "lower": lower,
                        "std_error": float(bound.std_error[j]),
                        "lower_over_exact": lower / float(exact[j]),
                        "n": size,
                        "coverage": cov["coverage"][j],
                        "coverage_low": cov["coverage_low"][j],
                        "coverage_high": cov["coverage_high"][j],
                        "coverage_n": coverage_n,
                        "reps": reps,
                    }
                )
    return rows


def format_table(rows: list[dict]) -> str:
    """Markdown table: mechanism, (n,) λ, exact, estimate, lower, lower/exact, coverage.

    The n column appears when the rows hold more than one sample size.
    """
    with_n = len({r["n"] for r in rows}) > 1
    header = ("mechanism", *(("n",) if with_n else ()), "λ", "exact", "estimate", "lower")
    cells = [
        (
            r["mechanism"],
            *((f"{r['n']:,}",) if with_n else ()),
            f"{r['lam']:g}",
            f"{r['exact']:.6f}",
            f"{r['estimate']:.6f}",
            f"{r['lower']:.6f}",
            f"{r['lower_over_exact']:.3f}",
            f"{r['coverage']:.3f} [{r['coverage_low']:.3f}, {r['coverage_high']:.3f}]",
        )  # fmt: skip
        for r in rows
    ]
    return "\n".join(markdown_table((*header, "lower/exact", "coverage (95% CI)"), cells))


def write_results(rows: list[dict], out: Path, meta: dict) -> None:
    """Write ``results.json`` and ``results.md`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    r0 = rows[0]
    sizes = " and ".join(f"{v:,}" for v in sorted({r["n"] for r in rows}))
    header = (
        f"# Paper 000 §V reproduced\n\nBounds from n = {sizes} outputs per database "
        f"(simultaneous over λ = 2, 5, 7 at {1 - meta['alpha']:.0%}); coverage of the bound over "
        f"{r0['reps']} replications at n = {r0['coverage_n']:,}.\n\n"
        f"Command: `{meta['command']}`\n\n"
    )
    (out / "results.md").write_text(header + format_table(rows) + "\n")
