"""Paper 001 reproduced: guaranteed vs practical sample sizes of the histogram estimators.

Gorla et al., arXiv:2208.14414, experiments on the truncated Laplace mechanism (locations 0 vs 1
on [0, 1]): the theoretical (buckets, n) of Algorithm 1 (ε-LDP, β = 0.8) and of its Rényi
variant (λ = 2, β = 0.9), and the "practical n" — the smallest n, by doubling from 100 then
bisection (to a gap of buckets/γ for ε-LDP, 10 for Rényi, as in the authors' scripts), at which
a fraction ≥ β of the runs (100 for ε-LDP, 1000 for Rényi, vmapped) succeeds and lands within
γ of the truth. Written beside the published numbers (the authors' ``res.txt``/``resRDP.txt``,
docs/methods.md §4), and extended to the truncated Gaussian and to λ = 5, 7.

Two ways to get the bucket counts of a run, both with the law of the histogram of n i.i.d.
outputs:

* ``sampled``: ``mechanism.sample`` in chunks, vmapped over runs (the black-box setting);
* ``multinomial``: ``Multinomial(n, exact bucket masses)`` from the mechanisms' closed-form CDFs
  (numpy), the same law at a cost independent of n — what makes the large rows affordable.

Both feed the library's estimator (:func:`rdpjax.histogram.from_counts`, vmapped over runs).
``--quick`` computes every row with multinomial counts and cross-checks the paper's cheap rows
(runs × n ≤ 2e6) with sampled outputs; the full run samples every row whose runs × n ≤ 2e8.

    python benchmarks/papers/paper_001.py --quick      # a few minutes on 2 cores
    python benchmarks/papers/paper_001.py              # sampled outputs on all affordable rows

Writes ``paper_001.json``, ``paper_001.md`` and ``paper_001.png`` under ``--out``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import ndtr

import rdpjax
from rdpjax import histogram as H
from rdpjax.mechanisms import TruncatedGaussian, TruncatedLaplace

BUCKET_CAP = 2048  # practical n only with at most this many buckets
PAD = BUCKET_CAP + 1  # bucket slots of the sampled counts (one compilation for every k)
START_N = 100  # the authors' scripts start doubling at n = 100
N_MAX = 2**34

# Published (Gorla et al.; authors' res.txt, resRDP.txt): (buckets, theoretical n, practical n).
PUBLISHED_LDP = {  # ε → γ → ...; β = 0.8, 100 runs; ε = 2 violates the precondition
    0.5: {1: (6, 9588, 56), 0.5: (12, 75618, 262), 0.1: (56, 8738124, 25600),
          0.05: (112, 69829528, 208000)},
    0.7: {1: (12, 25488, 112), 0.5: (23, 192646, 575), 0.1: (114, 23644352, 68000),
          0.05: (228, 188950656, 502400)},
    1.0: {1: (46, 239944, 625), 0.5: (91, 1871942, 4000), 0.1: (455, 231768704, 464000),
          0.05: (909, 1850113066, 3302400)},
    2.0: {1: (100, None, 2600), 0.5: (200, None, 15600), 0.1: (1000, None, 1497600),
          0.05: (2000, None, 11801600)},
}  # fmt: skip
PUBLISHED_LRDP = {  # B → γ → ...; λ = 2, β = 0.9, 1000 runs
    5.0: {1: (3, 17794, 56), 0.5: (6, 161860, 56), 0.1: (29, 25059158, 831)},
    3.0: {1: (10, 234188, 56), 0.5: (20, 2082318, 150), 0.1: (97, 311255974, 2556)},
    2.0: {1: (41, 6666500, 293), 0.5: (81, 57434252, 650), 0.1: (403, 8551394634, 9812)},
    1.5: {1: (195, 344551102, 1800), 0.5: (389, 2959509230, 3962),
          0.1: (1945, 431430524240, 45875)},
}  # fmt: skip


# ----------------------------------------------------------------------------- mechanisms


def laplace_lipschitz(b: float) -> float:
    """L of the truncated Laplace density on [0, 1] at μ ∈ {0, 1}: K_0/B (docs/methods.md §4)."""
    return 1.0 / (b * b * (1.0 - math.exp(-1.0 / b)))


def gaussian_lipschitz(s: float) -> float:
    """L of the N(μ, s²) density truncated to [0, 1] at μ ∈ {0, 1}.

    ``|p'(y)| = y φ(y/s) / (s³ Z)`` with ``Z = Φ(1/s) − 1/2``; ``y φ(y/s)`` peaks at y = s.
    """
    m = min(s, 1.0)
    z = ndtr(1.0 / s) - 0.5
    return m * math.exp(-0.5 * (m / s) ** 2) / math.sqrt(2 * math.pi) / (s**3 * z)


def bucket_masses(kind: str, scale: float, mu: float, buckets: int) -> np.ndarray:
    """Exact probabilities of the k equal buckets of [0, 1] (closed-form CDFs)."""
    edges = np.linspace(0.0, 1.0, buckets + 1)
    if kind == "laplace":  # ∫ K e^{−|y−μ|/B}: signed-distance antiderivative
        d = (edges - mu) / scale
        cdf = np.where(d < 0, np.exp(np.minimum(d, 0)), 2.0 - np.exp(-np.maximum(d, 0)))
    else:
        cdf = ndtr((edges - mu) / scale)
    masses = np.diff(cdf)
    return masses / masses.sum()


@dataclasses.dataclass
class Row:
    experiment: str
    mechanism: str  # "laplace" | "gaussian"
    scale: float  # B or s
    lam: float | None  # None for ε-LDP
    gamma: float
    beta: float
    runs: int
    published: tuple | None = None  # (buckets, theoretical n, practical n)
    results: dict = dataclasses.field(default_factory=dict)

    @property
    def mech(self):
        cls = TruncatedLaplace if self.mechanism == "laplace" else TruncatedGaussian
        return cls(scale=self.scale)

    @property
    def lipschitz(self) -> float:
        fn = laplace_lipschitz if self.mechanism == "laplace" else gaussian_lipschitz
        return fn(self.scale)

    @property
    def truth(self) -> float:
        if self.lam is None:
            return float(self.mech.epsilon)  # sup |log ratio|, attained at an end point
        return float(self.mech.divergence(self.lam, 0.0, 1.0))

    @property
    def label(self) -> str:
        par = f"B={self.scale:.4g}" if self.mechanism == "laplace" else f"s={self.scale:.4g}"
        order = "ε-LDP" if self.lam is None else f"λ={self.lam:g}"
        return f"{self.mechanism} {par} {order} γ={self.gamma:g}"


def build_rows(quick: bool) -> list[Row]:
    """The paper's rows (its protocol: 100 / 1000 runs), then the extensions (200 Rényi runs
    with ``--quick``, 1000 without)."""
    new_runs = 200 if quick else 1000
    rows = []
    for eps, by_gamma in PUBLISHED_LDP.items():
        for gamma, pub in by_gamma.items():
            rows.append(Row("paper: ε-LDP", "laplace", 1.0 / eps, None, gamma, 0.8, 100, pub))
    for b, by_gamma in PUBLISHED_LRDP.items():
        for gamma, pub in by_gamma.items():
            rows.append(Row("paper: Rényi λ=2", "laplace", b, 2.0, gamma, 0.9, 1000, pub))
    for s in (1.0, 1.0 / math.sqrt(2.0)):  # ε = 1/(2s²) = 0.5, 1
        for gamma in (1.0, 0.5, 0.1, 0.05):
            rows.append(Row("new: ε-LDP Gaussian", "gaussian", s, None, gamma, 0.8, 100))
    for lam in (5.0, 7.0):
        for b in (5.0, 3.0, 2.0, 1.5):
            for gamma in (1.0, 0.5, 0.1):
                rows.append(Row("new: Rényi λ=5, 7", "laplace", b, lam, gamma, 0.9, new_runs))
    for lam in (2.0, 5.0, 7.0):
        for s in (1.0, 1.0 / math.sqrt(2.0)):
            for gamma in (1.0, 0.5, 0.1):
                rows.append(Row("new: Rényi Gaussian", "gaussian", s, lam, gamma, 0.9, new_runs))
    return rows


# ---------------------------------------------------------------------- the practical search


@functools.partial(jax.jit, static_argnames=("renyi",))
def _score(counts, n, truth, gamma, lam, *, renyi):
    """Library estimator vmapped over runs; fraction within γ, mean and sd of the successes."""
    est = jax.vmap(lambda c: H.from_counts(c, n, lam=lam if renyi else None))(counts)
    ok = est.status == H.STATUS_OK
    good = ok & (jnp.abs(est.estimate - truth) <= gamma)
    m = jnp.maximum(ok.sum(), 1)
    value = jnp.where(ok, est.estimate, 0.0)
    mean = value.sum() / m
    sd = jnp.sqrt(jnp.where(ok, (value - mean) ** 2, 0.0).sum() / m)
    return good.mean(), ok.mean(), mean, sd, est.floored.mean()


@functools.partial(jax.jit, static_argnames=("runs", "chunk"))
def _sampled_counts(key, mech, n, buckets, *, runs, chunk):
    """(runs, 2, PAD) counts of n outputs at locations 0 and 1, drawn in masked chunks.

    One compilation serves every n and every bucket count k ≤ BUCKET_CAP: the library's
    ``bucket_counts`` runs on PAD buckets of [0, PAD/k], so y ∈ [0, 1] lands in bucket ⌊ky⌋ and
    only y = 1 (which belongs to bucket k − 1) in bucket k; the caller folds it back.
    """
    high = PAD / buckets

    def one_input(k, x):
        def body(i, c):
            y = mech.sample(jax.random.fold_in(k, i), x, chunk)
            y = jnp.where(i * chunk + jnp.arange(chunk) < n, y, jnp.nan)  # NaN: not counted
            return c + H.bucket_counts(y, PAD, 0.0, high)[0]

        return jax.lax.fori_loop(0, (n + chunk - 1) // chunk, body, jnp.zeros(PAD, jnp.int64))

    def one_run(k):
        k0, k1 = jax.random.split(k)
        return jnp.stack([one_input(k0, 0.0), one_input(k1, 1.0)])

    return jax.vmap(one_run)(jax.random.split(key, runs))


def make_counts(row: Row, buckets: int, mode: str):
    """``counts(key, n) -> (runs, 2, k)`` for the row, by ``mode``."""
    if mode == "multinomial":
        probs = [bucket_masses(row.mechanism, row.scale, mu, buckets) for mu in (0.0, 1.0)]

        def counts(key, n):
            seed = np.asarray(jax.random.key_data(key)).ravel().tolist()
            rng = np.random.default_rng(seed)
            c = [rng.multinomial(n, p, size=row.runs) for p in probs]
            return jnp.asarray(np.stack(c, axis=1))

        return counts

    mech = row.mech

    def counts(key, n):
        k = jnp.float64(buckets)
        c = np.array(_sampled_counts(key, mech, jnp.int64(n), k, runs=row.runs, chunk=512))
        c[..., buckets - 1] += c[..., buckets]  # y = 1 belongs to the last bucket
        assert not c[..., buckets + 1 :].any()
        return jnp.asarray(c[..., :buckets])

    return counts


def practical_n(row: Row, buckets: int, mode: str, key) -> dict:
    """The authors' search: double from 100 until ≥ β succeed, then bisect to the tolerance."""
    counts_fn = make_counts(row, buckets, mode)
    tol = buckets / row.gamma if row.lam is None else 10
    history = []

    def frac(n: int) -> float:
        counts = counts_fn(jax.random.fold_in(key, n), n)
        lam = 2.0 if row.lam is None else row.lam
        out = _score(counts, n, row.truth, row.gamma, lam, renyi=row.lam is not None)
        good, ok, mean, sd, floored = (float(v) for v in out)
        history.append(dict(n=n, frac=good, success=ok, mean=mean, sd=sd, floored=floored))
        return good

    n = START_N
    while frac(n) < row.beta:
        n *= 2
        if n > N_MAX:
            return dict(n=None, history=history, evaluations=len(history))
    lo, hi = n // 2, n
    while hi - lo > tol:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if frac(mid) >= row.beta else (mid, hi)
    return dict(n=hi, history=sorted(history, key=lambda h: h["n"]), evaluations=len(history))


# ------------------------------------------------------------------------------- the run


def theory(row: Row):
    try:
        if row.lam is None:
            return H.ldp_sample_size(row.gamma, row.beta, row.lipschitz)
        return H.lrdp_sample_size(row.gamma, row.beta, row.lipschitz, row.lam)
    except ValueError:
        return None  # precondition L < 2/(b−a)² fails


def run(args) -> list[Row]:
    rows = build_rows(args.quick)
    base = jax.random.key(args.seed)
    sampled_budget = 2e6 if args.quick else 2e8  # runs × n of the sampled cross-check
    with rdpjax.float64():
        for i, row in enumerate(rows):
            t0 = time.perf_counter()
            sizes = theory(row)
            res = row.results
            res["truth"], res["lipschitz"] = row.truth, row.lipschitz
            res["theory_buckets"], res["theory_n"] = sizes if sizes else (None, None)
            # Buckets used in practice: the theory's; 100/γ (the authors' fallback) where the
            # theory has none or more than BUCKET_CAP.
            fallback = not sizes or sizes[0] > BUCKET_CAP
            buckets = int(100 / row.gamma) if fallback else sizes[0]
            res["buckets_used"], res["buckets_fallback"] = buckets, fallback
            key = jax.random.fold_in(base, i)
            found = practical_n(row, buckets, "multinomial", key)
            res["practical_multinomial"], res["history"] = found["n"], found["history"]
            n_m = found["n"]
            cheap = n_m is not None and row.runs * n_m <= sampled_budget
            if cheap and (row.published is not None or not args.quick):
                sampled = practical_n(row, buckets, "sampled", jax.random.fold_in(key, 1))
                res["practical_sampled"] = sampled["n"]
            res["seconds"] = time.perf_counter() - t0
            print(f"{row.label:42s} {fmt_row_short(row)}  ({res['seconds']:.1f} s)", flush=True)
    return rows


# ------------------------------------------------------------------------------- output


def fmt_n(n) -> str:
    if n is None:
        return "—"
    return f"{n:,}" if n < 10**10 else f"{float(n):.3g}"


def fmt_row_short(row: Row) -> str:
    r = row.results
    return (
        f"theory=({r['theory_buckets']}, {fmt_n(r['theory_n'])}) "
        f"practical={fmt_n(r.get('practical_multinomial'))} "
        f"sampled={fmt_n(r.get('practical_sampled'))}"
    )


def markdown(rows: list[Row], command: str, elapsed: float) -> str:
    lines = [
        "# Paper 001: guaranteed vs practical sample sizes (truncated mechanisms, pair 0 vs 1)",
        "",
        f"`{command}` — {elapsed / 60:.1f} min on {platform.machine()} "
        f"({jax.device_count()} {jax.default_backend()} device).",
        "",
        "*buckets*, *theory n*: Algorithm 1 / Rényi variant (rdpjax.histogram), ours / published "
        "(✓: buckets equal and n within ±1, the authors' bisection stopping at a gap of 2). "
        "*practical n*: smallest n (doubling from 100, then bisection) with ≥ β of the runs "
        "within γ — multinomial counts (exact law) / sampled outputs (cheap rows) / published; "
        "ratio = ours (multinomial) / published. Practical n = 56 is the floor of the search "
        "(the first n tried is 100). *used … (100/γ)*: the practical search used the authors' "
        "fallback of 100/γ buckets, the theory having none (precondition L < 2 fails) or more "
        f"than {BUCKET_CAP}; practical n depends on the buckets. — : not defined or not run.",
        "",
    ]
    by_exp: dict[str, list[Row]] = {}
    for row in rows:
        by_exp.setdefault(row.experiment, []).append(row)
    for exp, group in by_exp.items():
        first = group[0]
        lines += [
            f"## {exp} (β = {first.beta}, {first.runs} runs)",
            "",
            "| mechanism | truth | L | γ | buckets | theory n | practical n | sampled "
            "| published practical | ratio |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in group:
            r, pub = row.results, row.published
            k, n_th = r["theory_buckets"], r["theory_n"]
            if pub is not None:
                ok = (k is None and pub[1] is None) or (
                    k == pub[0] and n_th is not None and abs(n_th - pub[1]) <= 1
                )
                mark = " ✓" if ok else " ✗"
                kb = f"{fmt_n(k)} / {fmt_n(pub[0])}"
                nb = f"{fmt_n(n_th)} / {fmt_n(pub[1])}{mark}"
                ratio = (
                    f"{r['practical_multinomial'] / pub[2]:.2f}"
                    if r.get("practical_multinomial")
                    else "—"
                )
                pp = fmt_n(pub[2])
            else:
                kb, nb, pp, ratio = fmt_n(k), fmt_n(n_th), "", ""
            if r["buckets_fallback"]:
                kb += f"; used {r['buckets_used']:,} (100/γ)"
            par = f"B={row.scale:.4g}" if row.mechanism == "laplace" else f"s={row.scale:.4g}"
            order = "" if row.lam is None else f", λ={row.lam:g}"
            lines.append(
                f"| {row.mechanism} {par}{order} | {r['truth']:.4g} | {r['lipschitz']:.3g} "
                f"| {row.gamma:g} | {kb} | {nb} | {fmt_n(r.get('practical_multinomial'))} "
                f"| {fmt_n(r.get('practical_sampled'))} | {pp} | {ratio} |"
            )
        lines.append("")
    return "\n".join(lines)


def plot(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("ε-LDP, truncated Laplace, γ = 0.1", lambda r: r.experiment == "paper: ε-LDP"),
        ("Rényi λ = 2, truncated Laplace, γ = 0.1", lambda r: r.experiment == "paper: Rényi λ=2"),
        ("ε-LDP, truncated Gaussian, γ = 0.1", lambda r: r.experiment == "new: ε-LDP Gaussian"),
        ("Rényi λ = 5, 7, truncated Laplace, γ = 0.1", lambda r: r.experiment.startswith("new: R")
         and r.mechanism == "laplace" and r.scale >= 3),
    ]  # fmt: skip
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    for ax, (title, keep) in zip(axes.ravel(), panels, strict=True):
        for i, row in enumerate(r for r in rows if keep(r) and r.gamma == 0.1):
            hist = [h for h in row.results.get("history", []) if h["success"] > 0]
            if not hist:
                continue
            n = np.array([h["n"] for h in hist], float)
            mean = np.array([h["mean"] for h in hist])
            sd = np.array([h["sd"] for h in hist])
            color = f"C{i}"
            par = f"B={row.scale:.3g}" if row.mechanism == "laplace" else f"s={row.scale:.3g}"
            lab = par + ("" if row.lam is None else f", λ={row.lam:g}")
            ax.plot(n, mean, "o-", color=color, ms=3, label=lab)
            ax.fill_between(n, mean - sd, mean + sd, color=color, alpha=0.2)
            ax.axhline(row.results["truth"], color=color, ls="--", lw=0.8)
            if row.results.get("practical_multinomial"):
                ax.axvline(row.results["practical_multinomial"], color=color, ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("n (outputs per input)")
        ax.set_ylabel("estimate: mean ± sd over runs")
        ax.legend(fontsize=8)
    fig.suptitle(
        "Histogram estimates vs n (dashed: truth; dotted: practical n); "
        "runs with an empty bucket excluded",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="multinomial counts everywhere, "
        "sampled cross-check on the paper's rows with runs × n ≤ 2e6 (a few minutes)",
    )
    parser.add_argument("--out", default="benchmarks/results/papers", help="output directory")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)  # fmt: skip
    command = "python benchmarks/papers/paper_001.py" + (" --quick" if args.quick else "")
    if args.out != "benchmarks/results/papers":
        command += f" --out {args.out}"
    if args.seed:
        command += f" --seed {args.seed}"
    print(f"reproduce with: {command}", flush=True)
    t0 = time.perf_counter()
    rows = run(args)
    elapsed = time.perf_counter() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    payload = dict(
        command=command,
        quick=args.quick,
        seed=args.seed,
        seconds=elapsed,
        jax=jax.__version__,
        bucket_cap=BUCKET_CAP,
        start_n=START_N,
        rows=[
            dict(
                experiment=r.experiment, mechanism=r.mechanism, scale=r.scale, lam=r.lam,
                gamma=r.gamma, beta=r.beta, runs=r.runs,
                published=None if r.published is None else dict(
                    buckets=r.published[0], theory_n=r.published[1], practical_n=r.published[2]
                ),
                **r.results,
            )
            for r in rows
        ],
    )  # fmt: skip
    (out / "paper_001.json").write_text(json.dumps(payload, indent=1))
    table = markdown(rows, command, elapsed)
    (out / "paper_001.md").write_text(table + "\n")
    plot(rows, out / "paper_001.png")
    print()
    print(table)
    print(f"wrote {out / 'paper_001.json'}, {out / 'paper_001.md'}, {out / 'paper_001.png'}")
    print(f"reproduce with: {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
