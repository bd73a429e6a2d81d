"""A code book for discrete vector outputs: integer rows ``(m, d)`` to one code each, at any n.

A streamed audit counts codes on a support fixed before the counted draws exist. For integer
rows the support is the set of distinct rows of the pilot draw: row ``r`` gets the code
``1 + (its rank among the pilot's distinct rows)``, and every row the pilot did not see gets the
code 0. The map is fixed by the pilot alone (independent of the counted draws), so the bound on
the codes is a valid bound on the rows (data processing): rows the pilot missed are merged,
never dropped. Lookup is vectorized: each row is viewed as one fixed-width byte string and
found by binary search among the sorted pilot rows, O(m log K) for K distinct pilot rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RowBook"]


def _keys(rows: np.ndarray) -> np.ndarray:
    """Each row of a 2-D integer array as one fixed-width byte string (int64, C order)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    return rows.view(np.dtype((np.void, rows.shape[1] * 8))).ravel()


class RowBook:
    """The codes of integer rows: 1 … K for the pilot's K distinct rows, 0 for any other row.

    Args:
        pilot: integer rows ``(m, d)`` of the pilot draw (both sides together).
    """

    def __init__(self, pilot: np.ndarray):
        pilot = np.asarray(pilot)
        if pilot.ndim != 2 or pilot.dtype.kind not in "biu":
            raise ValueError(
                f"a row book needs integer rows (m, d); got {pilot.shape} {pilot.dtype}"
            )
        self.d = pilot.shape[1]
        self.keys = np.unique(_keys(pilot))
        self.rows = self.keys.view(np.int64).reshape(-1, self.d)

    @property
    def size(self) -> int:
        """Codes used: the pilot's distinct rows plus the code 0 for the others."""
        return self.keys.size + 1

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The code of each row of ``rows`` ``(m, d)`` (int64 ``(m,)``)."""
        rows = np.asarray(rows)
        if rows.ndim != 2 or rows.shape[1] != self.d:
            raise ValueError(f"rows must have shape (m, {self.d}); got {rows.shape}")
        keys = _keys(rows)
        at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        return np.where(self.keys[at] == keys, at + 1, 0).astype(np.int64)
