"""The README's examples run as written (the numpy black box finds the violation it claims), and
so do the guide's (docs/guide/: the canary scores, every command line)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest
from references import laplace_exact

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))
AUDITING = ROOT / "docs" / "guide" / "auditing.md"


def _block_defining(name: str, page: Path = README) -> str:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    matches = [b for b in blocks if f"def {name}(" in b]
    assert len(matches) == 1, f"expected one block defining {name} in {page.name}"
    return matches[0]


_NUMBER = re.compile(r"-?\d[\d,]*\.?\d*(?:e[-+]?\d+)?")


def _same_as_shown(printed: str) -> None:
    """The README's output block, line for line, is what the example prints (issue 54: no stale
    numbers). Its "…" lines stand for rows left out; numbers agree to 5 significant digits (a
    CPU's last-digit differences), the words exactly."""
    shown = re.findall(r"```\n(audit of noisy_sum.*?)```", README.read_text(), flags=re.S)[0]
    lines = printed.splitlines()
    at = 0
    for want in shown.splitlines():
        if want.strip() == "…":
            continue
        match = next((i for i in range(at, len(lines)) if _agree(want, lines[i])), None)
        assert match is not None, f"README line not printed (in order): {want!r}\n{printed}"
        at = match + 1
    assert at == len(lines), "the README leaves out the end of what is printed"


def _agree(want: str, got: str) -> bool:
    if _NUMBER.sub("#", want) != _NUMBER.sub("#", got):
        return False
    pairs = zip(_NUMBER.findall(want), _NUMBER.findall(got), strict=True)
    num = lambda t: float(t.replace(",", ""))  # noqa: E731
    return all(abs(num(a) - num(b)) <= 1e-5 * max(1.0, abs(num(a))) for a, b in pairs)


@pytest.mark.slow
def test_numpy_black_box_example_runs_and_refutes_the_claim():
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(_block_defining("noisy_sum"), "README.md", "exec"), namespace)  # noqa: S102
    report = namespace["report"]
    assert "REFUTED" in out.getvalue() and report.is_refuted
    _same_as_shown(out.getvalue())
    # Laplace shift 2, scale 1 = (shift 1, scale 1/2): the closed form typed from the paper.
    exact = np.array([laplace_exact(lam, b=0.5) for lam in report.lam])
    assert np.all(report.lower <= exact) and np.all(report.lower > report.claimed)


@pytest.mark.slow
def test_command_line_example_refutes_the_file(tmp_path, monkeypatch, capsys):
    """The README's ``rdpjax audit bug.py:noisy_sum …`` line, on the README's noisy_sum saved
    as bug.py: exit status 1 (refuted); with the sensitivity fixed (scale 2), exit status 0."""
    import shlex

    from rdpjax.cli import main

    text = README.read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("rdpjax audit bug.py:noisy_sum")]
    source = _block_defining("noisy_sum").split("report = ")[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bug.py").write_text(source)
    argv = shlex.split(line)[1:] + ["--quiet"]
    assert main(argv) == 1
    fixed = source.replace("rng.laplace(0.0, 1.0,", "rng.laplace(0.0, 2.0,")
    (tmp_path / "bug.py").write_text(fixed)
    assert main(argv) == 0
    capsys.readouterr()


@pytest.mark.slow
def test_streamed_example_runs_at_small_n():
    """The README's streaming block, with N = 1e9 replaced by 2e5: bounds below the truth."""
    source = _block_defining("on_x_prime").replace("N = 10**9", "N = 2 * 10**5")
    assert "N = 2 * 10**5" in source
    namespace: dict = {}
    exec(compile(source, "README.md", "exec"), namespace)  # noqa: S102
    bound = namespace["bound"]  # the zoo Gaussian (b = 5) on (21): exact λ/50
    assert np.all(np.asarray(bound.lower) <= np.array([2.0, 5.0, 7.0]) / 50)
    assert np.all(np.asarray(bound.lower) > 0)


def test_every_command_line_in_the_readme_parses():
    """Each ``rdpjax …`` command of the README and of the guide (lines of their shell blocks, and
    inline commands without placeholders such as NAME or …) is accepted by the parser as written:
    an option renamed or removed would make it exit with status 2."""
    import shlex

    from rdpjax.cli import build_parser

    text = "\n".join(page.read_text() for page in [README, *GUIDE])
    fence = "`" * 3
    blocks = re.findall(fence + r"sh\n(.*?)" + fence, text, flags=re.S)
    lines = [ln.split("  #")[0] for b in blocks for ln in b.splitlines()]
    inline = re.findall(r"`(rdpjax [^`\n]*)`", text)
    commands = [c for c in lines + inline if c.startswith("rdpjax ")]
    commands = [c for c in commands if "…" not in c and "--help" not in c and "--version" not in c]
    commands = [c for c in commands if not re.search(r"\b[A-Z]{3,}\b", c)]  # NAME, MECHANISM
    assert len(commands) >= 15
    parser = build_parser()
    for command in commands:
        argv = shlex.split(command)[1:]
        args = parser.parse_args(argv)  # SystemExit (status 2) on an unknown or bad option
        assert args.command == argv[0], command


@pytest.mark.slow
def test_canary_scores_example_bounds_the_training_below_its_claim():
    """The guide's canary-score example runs as written: positive bounds, below the claim
    (20 Gaussian steps of noise multiplier 4 on a clipped canary: ρ = 20/(2·4²) zCDP)."""
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        block = _block_defining("canary_scores", AUDITING)
        exec(compile(block, "docs/guide/auditing.md", "exec"), namespace)  # noqa: S102
    check, bound = namespace["check"], namespace["bound"]
    assert not check.refuted and np.all(bound.lower > 0)
    assert np.all(bound.lower <= np.array([2.0, 5.0]) * 20 / (2 * 4.0**2))
