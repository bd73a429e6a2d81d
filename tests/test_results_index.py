"""benchmarks/results/README.md indexes every result file, and every file sits in a group folder.

The index has one table per group (``## calibration`` …); the first column of a row names its
files in backticks, relative to ``benchmarks/results/`` (a name ending in ``/`` covers a folder).
"""

import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
INDEX = RESULTS / "README.md"
GROUPS = ("calibration", "performance", "papers", "catalog")  # the folders of benchmarks/


def index_entries(text: str) -> list[tuple[str, str]]:
    """(group heading, name) for every backticked name in the first column of a table row."""
    entries, group = [], None
    for line in text.splitlines():
        if heading := re.match(r"## (\w+)", line):
            group = heading.group(1)
        elif line.startswith("| `"):
            first = line[1:].split(" | ", 1)[0]
            entries += [(group, name) for name in re.findall(r"`([^`]+)`", first)]
    return entries


def covered(path: str, names: set[str]) -> bool:
    return path in names or any(n.endswith("/") and path.startswith(n) for n in names)


def test_results_sit_in_group_folders():
    stray = [
        p.name for p in RESULTS.iterdir() if p != INDEX and not (p.is_dir() and p.name in GROUPS)
    ]
    assert not stray, f"put these under benchmarks/results/<group>/ (one of {GROUPS}): {stray}"


def test_index_names_every_result_file_and_only_existing_ones():
    entries = index_entries(INDEX.read_text())
    assert len(entries) > 50  # the tables were parsed
    names = [name for _, name in entries]
    assert len(names) == len(set(names)), "a file is indexed twice"
    misplaced = [(g, n) for g, n in entries if g not in GROUPS or n.split("/")[0] != g]
    assert not misplaced, f"entries under another group's heading: {misplaced}"
    missing = [
        n for n in names if not (RESULTS / n).exists() or n.endswith("/") != (RESULTS / n).is_dir()
    ]
    assert not missing, f"the index names files that do not exist: {missing}"
    files = sorted(
        p.relative_to(RESULTS).as_posix()
        for group in GROUPS
        for p in (RESULTS / group).rglob("*")
        if p.is_file()
    )
    unindexed = [f for f in files if not covered(f, set(names))]
    assert not unindexed, f"add these to benchmarks/results/README.md: {unindexed}"


@pytest.mark.parametrize(
    ("row", "names"),
    [
        ("| `calibration/a.json`, `calibration/a.md` | `cmd --x` | holds |", ["a.json", "a.md"]),
        ("| `papers/x/` | `rdpjax reproduce` | `results.json` |", ["x/"]),
    ],
)
def test_only_the_first_column_names_files(row, names):
    group = "papers" if "papers" in row else "calibration"
    entries = index_entries(f"## {group}\n\n| file | command | holds |\n|---|---|---|\n{row}\n")
    assert [n.split("/", 1)[1] for _, n in entries] == names
