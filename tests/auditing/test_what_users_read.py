"""What a user reads around the verdict (issue 54): one verdict, the n asked, drawn and used, the
figure of an (ε, δ) or GDP claim, and progress lines that a log does not glue together."""

import io
import json

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.auditing import Looks
from rdpjax.claims import approx_dp, from_dp_accounting, gdp, pure_dp, rdp, zcdp

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _audit(claim, **fields):
    """σ = 1 on a sum of sensitivity 1: exactly 1-GDP (ε(δ = 1e-5) = 4.38, ε(2) = 1)."""
    fields.setdefault("n", 20_000)
    return rdpjax.audit(
        jax.random.key(1), lambda rng, db, m: np.sum(db) + rng.normal(0.0, 1.0, size=m),
        [1.0], [0.0], claim=claim, progress=False, **fields,
    )  # fmt: skip


def _gaussian_event(sigma):
    import dp_accounting

    return from_dp_accounting(dp_accounting.GaussianDpEvent(sigma))


@pytest.fixture(scope="module")
def reports():
    return {
        "false (ε, δ)": _audit(approx_dp(1.0, 1e-5)),
        "true (ε, δ)": _audit(approx_dp(6.0, 1e-5)),
        "false zCDP": _audit(zcdp(0.2)),
        "true GDP": _audit(gdp(1.5)),
        "learned": rdpjax.audit(
            jax.random.key(2),
            lambda rng, db, m: np.sum(db) + rng.normal(0.0, 1.0, size=(m, 3)),
            [1.0],
            [0.0],
            [2.0],
            n=10_000,
            project="learn",
            claim=zcdp(0.1),
            progress=False,
        ),  # fmt: skip
    }


# Issue 52: a test per claim kind and route (the Gaussian is ε(λ) = λ/2, so ε-DP fails at any ε;
# the dp_accounting event of σ = 2 claims λ/8).
KINDS = {
    "false ε-DP": (pure_dp(0.5), {}, True),
    "false RDP table": (rdp({2.0: 0.2, 4.0: 0.4}), {}, True),
    "false dp_accounting": (_gaussian_event(2.0), {}, True),
    "false (ε, δ) streamed": (approx_dp(1.0, 1e-5), {"memory_budget": 0, "n": 10_000}, True),
    "false GDP by betting": (gdp(0.5), {"n": Looks(max_n=10_000)}, True),
    "false zCDP by looks": (zcdp(0.2), {"n": Looks(max_n=10_000)}, True),
}


@pytest.mark.parametrize(
    ("name", "refuted"),
    [("false (ε, δ)", True), ("true (ε, δ)", False), ("false zCDP", True), ("true GDP", False)]
    + [(name, refuted) for name, (_, _, refuted) in KINDS.items()],
)
def test_one_verdict_that_every_attribute_agrees_with(reports, name, refuted):
    if name in KINDS:
        claim, fields, _ = KINDS[name]
        r = _audit(claim, **fields)
    else:
        r = reports[name]
    text = str(r)
    verdicts = [ln for ln in text.splitlines() if ln.startswith(("REFUTED", "not refuted"))]
    assert verdicts == [text.splitlines()[-1]]  # once, last
    assert r.refuted is refuted and r.is_refuted is refuted
    assert verdicts[0].startswith("REFUTED") is refuted
    record = r.to_dict()
    assert record["refuted"] is refuted and record["verdict"] == verdicts[0]
    assert len(record["refuted_at"]) == len(record["lam"])
    if r.sets is not None and r.bound is not None:  # the family that decided it, its level
        assert "rejection sets" in verdicts[0] and "α/2 = 0.025" in verdicts[0]
    elif r.sets is not None:  # a betting audit: the whole α
        assert "betting e-value" in verdicts[0] and "1/α = 20" in verdicts[0]


def test_the_certified_number_of_the_claims_kind_is_in_the_verdict(reports):
    assert "ε(δ = 1e-05) ≥" in reports["false (ε, δ)"].verdict()
    assert "μ ≥" in reports["true GDP"].verdict() and "ε(δ" not in reports["true GDP"].verdict()
    assert "ε(" in reports["false zCDP"].verdict()


def test_n_asked_drawn_and_how_they_were_used(reports):
    s = reports["false (ε, δ)"].sizes()
    assert s["asked"] == s["drawn"] == 20_000 and s["pilot"] + s["renyi"] == 20_000
    assert s["selection"] + s["certification"] == 20_000 and s["sets_own"] is False
    line = reports["false (ε, δ)"].size_line()
    assert line.startswith("n per database: 20,000 asked, 20,000 drawn: ")
    learned = reports["learned"].sizes()
    assert learned["asked"] == learned["drawn"] == 10_000
    assert learned["training"] + learned.get("pilot", 0) + learned["renyi"] == 10_000
    assert f"{learned['training']:,} to learn the projection" in str(reports["learned"])


def test_the_claimed_column_only_when_the_claim_implies_renyi_values(reports):
    eps_delta = str(reports["false (ε, δ)"])
    assert "claimed" not in eps_delta.split("\n", 3)[3].split("\n")[0]  # the table's header
    assert "the claim implies no ε(λ)" in eps_delta
    assert "claimed" in str(reports["false zCDP"])


def test_the_figure_of_an_epsilon_delta_claim_shows_its_points_and_the_verdict(reports):
    from rdpjax.auditing.plots import plot_report

    r = reports["false (ε, δ)"]
    fig = plot_report(r)
    tradeoff = fig.axes[1]
    labels = [line.get_label() for line in tradeoff.lines]
    assert any(lab.startswith("claim: (ε, δ)-DP") for lab in labels)
    points = next(
        line for line in tradeoff.lines if line.get_label().startswith("certified points")
    )
    expected = np.array(r.sets.points())
    np.testing.assert_allclose(np.c_[points.get_xdata(), points.get_ydata()], expected)
    title = fig._suptitle.get_text()
    assert "REFUTED at α = 0.05" in title and "n = 20,000" in title
    # The Rényi panel: no "claim" entry for a claim that implies no ε(λ).
    assert "claim" not in [line.get_label() for line in fig.axes[0].lines]
    matplotlib.pyplot.close(fig)


def test_a_gdp_report_folder_has_the_tradeoff_figure(reports, tmp_path):
    paths = rdpjax.write_report(reports["true GDP"], tmp_path)
    assert tmp_path / "bounds.png" in paths
    md = (tmp_path / "report.md").read_text()
    assert md.count("not refuted") == 1 and "certified trade-off points" in md
    assert json.loads((tmp_path / "report.json").read_text())["schema"] == 5


def test_progress_in_a_log_is_whole_lines():
    from rdpjax._internal.progress import _Lines

    log = io.StringIO()
    lines = _Lines(log)
    lines.write("\rdrawing:  10%|#  | 1/10")
    lines.write("\rdrawing:  50%|## | 5/10")
    lines.write("\r" + " " * 40 + "\r")  # tqdm clearing its bar at the end
    lines.write("\n")
    assert log.getvalue() == "drawing:  10%|#  | 1/10\ndrawing:  50%|## | 5/10\n"


def test_vector_outputs_are_refused_before_the_draws():
    from rdpjax.auditing.draws import OutputDimensionError

    calls = []

    def five(rng, database, m):
        calls.append(m)
        return np.sum(database) + rng.normal(0.0, 1.0, size=(m, 5))

    for fields in ({"n": 10**5}, {"n": Looks(max_n=10**5)}):
        calls.clear()
        with pytest.raises(OutputDimensionError, match="project='learn'") as err:
            rdpjax.audit(jax.random.key(0), five, [1.0], [0.0], claim=zcdp(0.1), **fields)
        assert err.value.dim == 5 and sum(calls) <= 2_000, calls  # a probe or the pilot only
    calls.clear()
    with pytest.raises(OutputDimensionError) as err:  # betting on sets takes one number
        rdpjax.audit(jax.random.key(0), five, [1.0], [0.0], claim=approx_dp(1.0, 1e-5),
                     n=Looks(max_n=10**5))  # fmt: skip
    assert err.value.most == 1 and sum(calls) <= 2


@pytest.mark.parametrize("dtype", [object, complex, str])
def test_outputs_that_are_not_numbers_are_refused_in_the_black_boxs_terms(dtype):
    calls = []

    def odd(rng, database, m):
        calls.append(m)
        return (np.sum(database) + rng.normal(size=m)).astype(dtype)

    for n in (10**4, Looks(max_n=10**4)):
        calls.clear()
        with pytest.raises(ValueError, match=r"^sample returned \S+ outputs on x \(probe\); real"):
            rdpjax.audit(jax.random.key(0), odd, [1.0], [0.0], claim=zcdp(0.1), n=n)
        assert sum(calls) <= 2, calls  # refused on the probe, before the draws


@pytest.mark.parametrize("claim", [zcdp(0.05), approx_dp(0.5, 1e-5)])
def test_a_learned_score_in_a_sequential_audit(claim):
    """`project="learn"` with `n=Looks(…)`: a score learned on a training batch, frozen,
    then the looks (or the betting test); the report counts the training in what was drawn."""

    def step(rng, database, m):  # 10-D, mean shift 1 along the first axis: ρ = 0.5 ≫ 0.05
        out = rng.normal(0.0, 1.0, size=(m, 10))
        out[:, 0] += np.sum(database)
        return out

    r = rdpjax.audit(jax.random.key(3), step, [1.0], [0.0], claim=claim, project="learn",
                     n=Looks(max_n=20_000), progress=False)  # fmt: skip
    s = r.sizes()
    assert r.refuted and s["asked"] == 20_000 and s["training"] == 500
    assert s["training"] < s["drawn"] <= 20_000
    assert json.loads(r.settings)["projection"]["n_train"] == 500
