"""Sequential audits (rdpjax.auditing.sequential): schedules, looks against fixed-n references,
validity,
checkpoints and resumption, errors."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest
from references import interrupted_at

import rdpjax
from rdpjax.auditing import Looks
from rdpjax.auditing.sequential import (
    CHECKPOINT,
    SPENDING,
    Schedule,
    geometric_schedule,
    spend,
)
from rdpjax.claims import pure_dp, rdp, zcdp
from rdpjax.mechanisms import Gaussian, RandomizedResponse
from rdpjax.stream.batches import generators


def _assert_looks_are_fixed_n_bounds(report, draws):
    """Each look's bounds (λ = 2, 5) equal rdpjax.lower_bound's of the first n_k draws a side,
    as codes, at the look's level."""
    for look in report.looks:
        ref = rdpjax.lower_bound(
            draws[0][: look.n], draws[1][: look.n], [2.0, 5.0], discrete=True,
            alpha=look.alpha, both_directions=True,
        )  # fmt: skip
        np.testing.assert_allclose(look.lower, ref.lower, rtol=1e-9, atol=1e-12)


def laplace_sum(rng, database, m):
    return float(np.sum(database)) + rng.laplace(0.0, 1.0, m)


def coin(rng, database, m):
    """Randomized response on one bit, ε0 = log 3: codes 0, 1."""
    keep = rng.random(m) < 0.75
    return np.where(keep, int(database[0]), 1 - int(database[0])).astype(np.int64)


ONE, ZERO = np.array([1.0]), np.array([0.0])


def test_geometric_schedule_sizes_and_levels():
    s = geometric_schedule(10_000, alpha=0.05)
    assert s.sizes == (100, 200, 400, 800, 1600, 3200, 6400, 10_000)
    assert s.alpha == pytest.approx(0.05)
    assert s.max_n == 10_000
    assert geometric_schedule(50, first=100).sizes == (50,)  # one look: a fixed-n audit
    # a last step much shorter than the others is merged into the look before it
    assert geometric_schedule(1_100, first=250).sizes == (250, 500, 1_100)
    assert geometric_schedule(1e4, first=1e3, ratio=10).sizes == (1_000, 10_000)


@pytest.mark.parametrize("rule", SPENDING)
def test_spending_rules_sum_to_alpha(rule):
    sizes = (100, 200, 400, 1000)
    levels = spend(0.05, sizes, rule)
    assert sum(levels) == pytest.approx(0.05)
    assert all(v > 0 for v in levels)
    if rule == "uniform":
        assert levels == pytest.approx([0.0125] * 4)
    if rule == "inverse_square":
        assert levels[0] / levels[1] == pytest.approx(4.0)
    if rule == "linear":  # ∝ the increments 100, 100, 200, 600
        assert levels[3] / levels[0] == pytest.approx(6.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(sizes=(10, 10), alphas=(0.01, 0.01)), "strictly increasing"),
        (dict(sizes=(10, 20), alphas=(0.01,)), "as many levels"),
        (dict(sizes=(10, 20), alphas=(0.6, 0.6)), "sum below 1"),
    ],
)
def test_schedule_rejects_bad_looks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Schedule(**kwargs)


def test_schedule_rejects_bad_arguments():
    with pytest.raises(ValueError, match="max_n must be a whole number"):
        geometric_schedule(2.5)
    with pytest.raises(ValueError, match="ratio must be"):
        geometric_schedule(1000, ratio=1.0)
    with pytest.raises(ValueError, match="spending must be one of"):
        geometric_schedule(1000, spending="pocock")


def test_discrete_look_equals_the_fixed_n_bound_on_the_same_draws():
    """Each look of a black box's discrete audit is lower_bound on the first n_k draws of each
    side at the look's level: the draws are reproduced from the documented generators."""
    key = jax.random.key(4)
    schedule = geometric_schedule(1_600, first=200, spending="inverse_square")
    report = rdpjax.audit(
        key, coin, ONE, ZERO, lam=[2.0, 5.0], n=Looks(schedule=schedule),
        batch_size=150, progress=False,
    )  # fmt: skip
    assert [look.n for look in report.looks] == list(schedule.sizes)
    _, g_p, g_q = generators(key)
    draws = []
    for g, db in ((g_p, ONE), (g_q, ZERO)):
        parts, drawn = [], 0
        for n_k in schedule.sizes:  # batches of ≤ 150 up to each look, as the audit drew them
            while drawn < n_k:
                m = min(150, n_k - drawn)
                parts.append(coin(g, db, m))
                drawn += m
        draws.append(np.concatenate(parts))
    _assert_looks_are_fixed_n_bounds(report, draws)
    assert report.n == 1_600 and report.alpha == pytest.approx(0.05)
    assert float(report.bound.alpha) == pytest.approx(schedule.alphas[-1])


@pytest.mark.slow
def test_a_false_claim_stops_early_and_a_true_one_runs_to_max_n():
    kw = dict(n=Looks(max_n=25_600), progress=False)
    false = rdpjax.audit(jax.random.key(0), laplace_sum, ONE, ZERO, claim=pure_dp(0.3), **kw)
    assert false.is_refuted and false.looks[-1].refuted
    assert len(false.looks) < 6 and false.n == false.looks[-1].n < 25_600
    assert not any(look.refuted for look in false.looks[:-1])
    true = rdpjax.audit(jax.random.key(0), laplace_sum, ONE, ZERO, claim=pure_dp(1.0), **kw)
    assert not true.is_refuted and true.n == 25_600
    assert len(true.looks) == len(geometric_schedule(25_600).sizes)
    assert true.looks[-1].drawn == 25_600 + 64  # the pilot of continuous outputs
    record = true.to_dict()
    assert record["looks"][0]["n"] == 100 and record["settings"]["sequential"]["pilot"] == 64
    json.dumps(record, allow_nan=False)


@pytest.mark.slow
def test_true_exact_claims_are_not_refuted_small_study():
    """A fixed-key miniature of benchmarks/calibration/sequential.py's validity table (R = 200
    there): 12
    replications each of a continuous and a discrete zoo mechanism audited against their exact
    curves; at α = 0.05 none is expected to be refuted (P(≥ 2 of 24) < 0.35 at the bound)."""
    refuted = 0
    for mech in (Gaussian(1.0), RandomizedResponse(1.5)):
        x, xp = mech.reference_pair()

        def curve(lam, mech=mech, x=x, xp=xp):
            return max(mech.divergence(float(lam), x, xp), mech.divergence(float(lam), xp, x))

        for r in range(12):
            report = rdpjax.audit(
                jax.random.key(100 + r), mech, x, xp, claim=rdp(curve),
                n=Looks(max_n=6_400), progress=False,
            )  # fmt: skip
            refuted += report.is_refuted
            assert report.exact is not None
    assert refuted <= 1


@pytest.mark.slow
def test_interrupted_audit_resumes_to_the_uninterrupted_result(tmp_path):
    kw = dict(n=Looks(max_n=6_400), batch_size=250)
    full = rdpjax.audit(
        jax.random.key(7), laplace_sum, ONE, ZERO, claim=pure_dp(2.0), progress=False, **kw
    )
    calls = {"n": 0}

    def crashing(rng, database, m):
        calls["n"] += 1
        if calls["n"] == 20:
            raise RuntimeError("the sampler crashed")
        return laplace_sum(rng, database, m)

    crashing.__name__ = "laplace_sum"  # the same audit's fingerprint
    with pytest.raises(RuntimeError, match="crashed"):
        rdpjax.audit(
            jax.random.key(7),
            crashing,
            ONE,
            ZERO,
            claim=pure_dp(2.0),
            progress=False,
            **_at(kw, checkpoint=tmp_path),
        )
    assert (tmp_path / CHECKPOINT).exists()
    with pytest.raises(ValueError, match="resume=True"):
        rdpjax.audit(
            jax.random.key(7),
            laplace_sum,
            ONE,
            ZERO,
            claim=pure_dp(2.0),
            progress=False,
            **_at(kw, checkpoint=tmp_path),
        )
    with pytest.raises(ValueError, match="claim"):  # another audit's checkpoint
        rdpjax.audit(
            jax.random.key(7), laplace_sum, ONE, ZERO, claim=pure_dp(3.0), progress=False,
            **_at(kw, checkpoint=tmp_path, resume=True),
        )  # fmt: skip
    resumed = rdpjax.audit(
        jax.random.key(7), laplace_sum, ONE, ZERO, claim=pure_dp(2.0), progress=False,
        **_at(kw, checkpoint=tmp_path, resume=True),
    )  # fmt: skip
    assert resumed.looks == full.looks
    np.testing.assert_array_equal(resumed.lower, full.lower)
    again = rdpjax.audit(  # a finished checkpoint resumes to the same report, drawing nothing
        jax.random.key(7), laplace_sum, ONE, ZERO, claim=pure_dp(2.0), progress=False,
        **_at(kw, checkpoint=tmp_path, resume=True),
    )  # fmt: skip
    assert again.looks == full.looks


@pytest.mark.slow
def test_jax_mechanism_interrupted_and_resumed(tmp_path, monkeypatch):
    """A JAX sampler's batch j is drawn from fold_in(key, j): a run stopped by Ctrl-C resumes to
    the uninterrupted looks."""
    from rdpjax.auditing.sequential import sources

    mech = Gaussian(2.0)
    x, xp = mech.reference_pair()
    kw = dict(n=Looks(max_n=3_200), claim=zcdp(0.125))
    full = rdpjax.audit(jax.random.key(3), mech, x, xp, batch_size=300, progress=False, **kw)
    draw = sources._sample
    monkeypatch.setattr(sources, "_sample", interrupted_at(draw, 9))
    with pytest.raises(KeyboardInterrupt):
        rdpjax.audit(
            jax.random.key(3),
            mech,
            x,
            xp,
            batch_size=300,
            progress=False,
            **_at(kw, checkpoint=tmp_path),
        )
    monkeypatch.setattr(sources, "_sample", draw)
    saved = np.load(tmp_path / CHECKPOINT)
    assert 0 < json.loads(str(saved["state"]))["drawn"][0] < 3_200
    resumed = rdpjax.audit(
        jax.random.key(3),
        mech,
        x,
        xp,
        batch_size=300,
        progress=False,
        **_at(kw, checkpoint=tmp_path, resume=True),
    )
    assert resumed.looks == full.looks
    np.testing.assert_array_equal(resumed.lower, full.lower)


def test_sequential_errors():
    kw = dict(progress=False)
    with pytest.raises(ValueError, match="max_n"):
        rdpjax.audit(jax.random.key(0), laplace_sum, ONE, ZERO, n=Looks(), **kw)
    with pytest.raises(ValueError, match="transform: not an option of a sequential audit"):
        rdpjax.audit(
            jax.random.key(0),
            laplace_sum,
            ONE,
            ZERO,
            n=Looks(max_n=1000),
            transform="quantile",
            **kw,
        )
    with pytest.raises(ValueError, match="resume=True needs the checkpoint"):
        Looks(max_n=1000, resume=True)
    for bad in (1.5, 1, True, "1000"):
        with pytest.raises(ValueError, match="max_n must be a whole number"):
            Looks(max_n=bad)
    for flag in ("sequential", "max_n", "schedule", "checkpoint", "resume"):  # the old flags
        with pytest.raises(TypeError, match=r"n=rdpjax.Looks\(max_n="):
            rdpjax.audit(jax.random.key(0), laplace_sum, ONE, ZERO, n=1000, **{flag: True}, **kw)


def _at(kw, **looks):
    """``kw`` with its ``n=Looks(…)`` given ``looks`` too (a checkpoint, resume)."""
    return kw | {"n": dataclasses.replace(kw["n"], **looks)}


SEQ_PY = '''
import os
import signal

import numpy as np

CALLS = [0]


def noisy_sum(rng, database, m):
    """Laplace noise of scale 1 on a sum of sensitivity 1 (1-DP); with KILL_AT=k set, the
    process kills itself (SIGKILL: no clean-up of any kind) at the k-th call."""
    CALLS[0] += 1
    if CALLS[0] == int(os.environ.get("KILL_AT", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
    return float(np.sum(database)) + rng.laplace(0.0, 1.0, m)
'''


def _cli_args(tmp_path, claim: str, *extra):
    path = tmp_path / "seq.py"
    path.write_text(SEQ_PY)
    return [
        "audit", f"{path}:noisy_sum", "--numpy", "--x", "[1]", "--x-prime", "[0]",
        "--claim-epsilon", claim, "--until-refuted", "--max-n", "1.28e4", "--quiet", *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_cli_until_refuted_exit_status_and_report(tmp_path, capsys):
    from rdpjax.cli import main

    assert main(_cli_args(tmp_path, "0.3", "--report", str(tmp_path / "false"))) == 1
    record = json.loads((tmp_path / "false" / "report.json").read_text())
    assert record["is_refuted"] and record["looks"][-1]["refuted"]
    assert record["n"] == record["looks"][-1]["n"] < 12_800
    assert (tmp_path / "false" / CHECKPOINT).exists()
    md = (tmp_path / "false" / "report.md").read_text()
    assert "## Looks" in md and "sequential: stopped at look" in md
    capsys.readouterr()
    assert main(_cli_args(tmp_path, "1.5")) == 0
    assert capsys.readouterr().out.startswith("not refuted")


@pytest.mark.slow
def test_cli_killed_mid_way_resumes_to_the_uninterrupted_report(tmp_path):
    """SIGKILL at the 9th call of the sampler (1 probe, 2 pilot, then two calls a look: during
    look 3 of 8); --resume continues from the checkpoint and reports the same looks and bounds."""
    import os
    import subprocess
    import sys

    from rdpjax.cli import main

    assert main(_cli_args(tmp_path, "1.5", "--report", str(tmp_path / "whole"))) == 0
    killed = subprocess.run(
        [sys.executable, "-m", "rdpjax.cli", *_cli_args(tmp_path, "1.5", "--report",
                                                         str(tmp_path / "cut"))],
        env={**os.environ, "KILL_AT": "9", "RDPJAX_NO_CACHE": "1"},
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    state = json.loads(str(np.load(tmp_path / "cut" / CHECKPOINT)["state"]))
    assert (
        len(state["looks"]) == 2
        and state["drawn"][0] in (200, 400)
        and not (tmp_path / "cut" / "report.json").exists()
    )
    assert main(_cli_args(tmp_path, "1.5", "--resume", str(tmp_path / "cut"))) == 0
    whole = json.loads((tmp_path / "whole" / "report.json").read_text())
    resumed = json.loads((tmp_path / "cut" / "report.json").read_text())
    assert resumed["looks"] == whole["looks"] and resumed["lower"] == whole["lower"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--n", "1000"], "drop --n"),
        (["--resume", "{tmp}/nowhere-yet"], "no checkpoint to resume"),
        (["--resume", "{tmp}"], "no checkpoint to resume"),
    ],
)
def test_cli_sequential_errors_are_one_line(tmp_path, capsys, extra, message):
    from rdpjax.cli import main

    extra = [a.format(tmp=tmp_path) for a in extra]
    assert main([*_cli_args(tmp_path, "1.0"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "nowhere-yet").exists()  # a bad --resume creates nothing


def test_cli_max_n_and_resume_need_until_refuted(tmp_path, capsys):
    from rdpjax.cli import main

    args = [a for a in _cli_args(tmp_path, "1.0") if a != "--until-refuted"]
    assert main(args) == 2
    assert "--max-n is for a sequential audit" in capsys.readouterr().err


def coin_pair(rng, database, m):
    """Two independent randomized responses of the bit and a fair die: vectors of 3 codes."""
    bit = int(database[0])
    flips = (rng.random((m, 2)) >= 0.75).astype(np.int64)
    return np.column_stack([np.abs(bit - flips), rng.integers(0, 6, m)])


def _joint_code(rows):
    """A fixed scalar code of each row (a, b, c) of coin_pair: 12 a + 6 b + c."""
    rows = np.asarray(rows)
    return 12 * rows[:, 0] + 6 * rows[:, 1] + rows[:, 2]


def test_vectors_of_codes_are_joint_outcomes_as_in_a_fixed_n_audit(tmp_path):
    """(m, 3) integer outputs: counted as joint outcomes, with the bounds of the same audit on
    one scalar code per row (project=), which a relabelling of the outcomes cannot change; a
    checkpointed run stopped mid-way resumes to the same looks (the table of rows is saved)."""
    kw = dict(n=Looks(max_n=3_200), batch_size=400, progress=False)
    vectors = rdpjax.audit(jax.random.key(3), coin_pair, ONE, ZERO, claim=pure_dp(2.0), **kw)
    coded = rdpjax.audit(
        jax.random.key(3), coin_pair, ONE, ZERO, claim=pure_dp(2.0), project=_joint_code, **kw
    )
    assert [look.n for look in vectors.looks] == [look.n for look in coded.looks]
    np.testing.assert_allclose(vectors.lower, coded.lower, rtol=1e-9)
    np.testing.assert_allclose(vectors.estimate, coded.estimate, rtol=1e-9)
    fixed = rdpjax.audit(jax.random.key(3), coin_pair, ONE, ZERO, 2.0, n=400, progress=False)
    assert fixed.bound.discrete and vectors.bound.discrete
    crashing = interrupted_at(coin_pair, 6)  # named coin_pair: the same audit's fingerprint
    with pytest.raises(KeyboardInterrupt):
        rdpjax.audit(
            jax.random.key(3),
            crashing,
            ONE,
            ZERO,
            claim=pure_dp(2.0),
            **_at(kw, checkpoint=tmp_path),
        )
    resumed = rdpjax.audit(
        jax.random.key(3),
        coin_pair,
        ONE,
        ZERO,
        claim=pure_dp(2.0),
        **_at(kw, checkpoint=tmp_path, resume=True),
    )
    assert resumed.looks == vectors.looks


def two_sided_geometric(rng, database, m):
    """int(sum) + the difference of two geometric variables: ε-DP at ε = 0.5, both signs."""
    p = 1.0 - np.exp(-0.5)
    return int(np.sum(database)) + rng.geometric(p, m) - rng.geometric(p, m)


def _drawn_as_the_audit(sample, key, sizes, batch):
    """Each side's outputs, reproduced from the documented generators and batch sizes."""
    _, g_p, g_q = generators(key)
    draws = []
    for g, db in ((g_p, ONE), (g_q, ZERO)):
        parts, drawn = [], 0
        for n_k in sizes:
            while drawn < n_k:
                m = min(batch, n_k - drawn)
                parts.append(sample(g, db, m))
                drawn += m
        draws.append(np.concatenate(parts))
    return draws


LATE_NEGATIVE = 150  # one batch: the first negative output comes after the first batch


@pytest.mark.parametrize(
    "relabel",
    [
        lambda v: v,  # both signs from the first batch
        lambda v: np.where(v < -10, v, np.abs(v)),  # rare negatives: the first one comes late
        lambda v: v + 2**24,  # codes past MAX_CODES
    ],
    ids=["signed", "late negative", "large"],
)
def test_integer_outputs_of_any_sign_are_counted_as_a_fixed_n_audit_counts_them(relabel):
    """Issue 51, item 5: integers of any sign or size give each look the bound of
    rdpjax.lower_bound (which codes them by an offset, encode_pair) on the same draws; with
    negatives appearing only after some batches of plain codes, the counts made before keep
    their meaning."""
    key = jax.random.key(5)

    def sample(rng, database, m):
        return relabel(two_sided_geometric(rng, database, m))

    schedule = geometric_schedule(1_600, first=200, spending="inverse_square")
    kw = dict(n=Looks(schedule=schedule), batch_size=150, progress=False)
    report = rdpjax.audit(key, sample, ONE, ZERO, lam=[2.0, 5.0], **kw)
    draws = _drawn_as_the_audit(sample, key, schedule.sizes, 150)
    first_bad = [np.flatnonzero((d < 0) | (d >= 2**24)) for d in draws]
    assert any(f.size for f in first_bad)  # the case is exercised
    if relabel(np.array([-1]))[0] == 1:  # late negatives: none in either side's first batch
        assert all(f.size == 0 or f[0] >= LATE_NEGATIVE for f in first_bad), first_bad
    _assert_looks_are_fixed_n_bounds(report, draws)


def _sorted(sample, reverse=False):
    def drawn_sorted(rng, database, m):
        out = np.sort(sample(rng, database, m))
        return out[::-1] if reverse else out

    drawn_sorted.__name__ = sample.__name__
    return drawn_sorted


@pytest.mark.parametrize("sample", [laplace_sum, two_sided_geometric, coin])
def test_a_sampler_returning_sorted_batches_gives_the_same_looks(sample):
    """Issue 51, "any order": each look is a function of the multiset of whole batches
    (engine's module docstring), so sorting (or reverse-sorting) every batch, the pilot's too,
    changes no look."""
    kw = dict(n=Looks(max_n=3_200), batch_size=300)
    kw |= dict(lam=[2.0, 8.0], claim=pure_dp(2.0), progress=False)
    as_drawn = rdpjax.audit(jax.random.key(9), sample, ONE, ZERO, **kw)
    for reverse in (False, True):
        ordered = rdpjax.audit(jax.random.key(9), _sorted(sample, reverse), ONE, ZERO, **kw)
        assert [look.n for look in ordered.looks] == [look.n for look in as_drawn.looks]
        for a, b in zip(ordered.looks, as_drawn.looks, strict=True):
            np.testing.assert_allclose(a.lower, b.lower, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-9, atol=1e-12)


def _late_negative(rng, database, m):
    """The two-sided geometric folded but for values below −10: negatives come late and rare."""
    v = two_sided_geometric(rng, database, m)
    return np.where(v < -10, v, np.abs(v))


@pytest.mark.parametrize("crash_at", [15, 35])  # the first negative: call 28
def test_a_resumed_audit_keeps_the_table_of_integer_values(tmp_path, crash_at):
    """The table that starts at the first negative output is saved with the checkpoint: an audit
    stopped before or after that point resumes to the uninterrupted looks."""
    kw = dict(n=Looks(max_n=3_200), batch_size=150, lam=[2.0])
    kw |= dict(claim=pure_dp(0.5), progress=False)
    full = rdpjax.audit(jax.random.key(5), _late_negative, ONE, ZERO, **kw)
    crashing = interrupted_at(_late_negative, crash_at)  # the same audit's fingerprint
    with pytest.raises(KeyboardInterrupt):
        rdpjax.audit(jax.random.key(5), crashing, ONE, ZERO, **_at(kw, checkpoint=tmp_path))
    resumed = rdpjax.audit(
        jax.random.key(5), _late_negative, ONE, ZERO, **_at(kw, checkpoint=tmp_path, resume=True)
    )
    assert resumed.looks == full.looks
