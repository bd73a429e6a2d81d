"""What the calibration studies of issue 22 report per cell and estimator (shared)."""

from __future__ import annotations

import json
import platform
from pathlib import Path

import jax
import numpy as np
from scipy import stats


def summarize(lower: np.ndarray, exact: np.ndarray, oracle: np.ndarray | None = None) -> dict:
    """Simultaneous coverage of ``lower`` ``(R, orders)`` against ``exact`` ``(orders,)`` with its
    Wilson 95% interval (scipy), mean lower/exact, and, given the oracle deficit per order, the
    mean deficit over it."""
    held = lower <= exact
    k_all = int(held.all(axis=1).sum())
    ci = stats.binomtest(k_all, len(lower)).proportion_ci(method="wilson")
    out = {
        "simultaneous": k_all / len(lower),
        "simultaneous_ci": [float(ci.low), float(ci.high)],
        "tightness": (lower.mean(axis=0) / exact).tolist(),
    }
    if oracle is not None:
        out["deficit_over_oracle"] = ((exact - lower).mean(axis=0) / oracle).tolist()
    return out


def table_cells(summary: dict) -> str:
    """``simultaneous | lower/exact per order | deficit/oracle per order`` for a markdown row."""
    return (
        f"{summary['simultaneous']:.3f} | "
        + " / ".join(f"{v:.2f}" for v in summary["tightness"])
        + " | "
        + " / ".join(f"{v:.2f}" for v in summary["deficit_over_oracle"])
    )


def write_json(out: Path, meta: dict, **sections) -> None:
    """Write ``{"meta": meta + jax version and machine, **sections}`` to ``out``; say so."""
    meta = {**meta, "jax": jax.__version__, "machine": platform.platform()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, **sections}, indent=1) + "\n")
    print(f"wrote {out}")


def write_table(out: Path, heading: str, table: str) -> None:
    """Write ``heading``, a blank line and the markdown ``table`` to ``out``; print the table."""
    out.write_text(f"{heading}\n\n{table}\n")
    print(table)
    print(f"wrote {out}")


def write_study(out: Path, command: str, orders, alpha: float, cells: list, table: str) -> None:
    """Print the markdown table and write ``{"meta", "cells"}`` JSON to ``out``."""
    print(table)
    write_json(out, {"command": command, "orders": list(orders), "alpha": alpha}, cells=cells)
