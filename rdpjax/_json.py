"""JSON-ready values shared by the reports (claims checks, audit reports)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["json_floats"]


def json_floats(values) -> list[float | None]:
    """Floats for JSON; non-finite entries (±inf, NaN) become ``None``."""
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, np.float64).ravel()]
