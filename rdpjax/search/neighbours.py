"""The database domain of a black box and its neighbouring relation: pairs from free parameters.

ε(λ) = sup over *neighbouring* pairs (eq. (6) of Kutta, Askin, Dunsche, arXiv:2212.04739v3), so
a search over pairs needs the relation explicitly. Two are supported, on databases of ``m``
scalar entries in ``[low, high]`` (:class:`~rdpjax.search.SearchSpace`, optionally on
``levels`` equally spaced values):

* ``"replace-one"`` — x and x' have the same size and differ in one entry. Free parameters:
  the database ``base`` (m entries), the entry ``j`` and its other value ``b``; ``x = base``,
  ``x' = base`` with entry j set to b. Both orders of a pair are reachable (``base[j]`` and
  ``b`` are both free), so one direction of ``D_λ`` covers the relation.
* ``"add-remove"`` — one database is the other with one entry removed. Free parameters:
  ``base`` (m entries), the entry ``j`` and ``add`` (a flag): ``add = False`` gives ``x =
  base``, ``x' = base`` without entry j (an individual removed); ``add = True`` gives the
  reverse, ``x = base`` without entry j, ``x' = base`` (an individual added), since ``D_λ`` is
  not symmetric and the relation holds both ways.

A pair is a dict of these parameters (:func:`pair`); :func:`variants` derives the candidates
of :data:`~rdpjax.search.CANDIDATES` from it, :func:`reference_params` is the relation's analogue
of the paper's pair (21) on the domain.
"""

from __future__ import annotations

import numpy as np

from rdpjax._validation import check_int
from rdpjax.search.space import SearchSpace

__all__ = [
    "NEIGHBOURS",
    "Pair",
    "black_box_space",
    "check_neighbours",
    "describe",
    "pair",
    "reference_params",
    "variants",
]

NEIGHBOURS = ("replace-one", "add-remove")
"""The neighbouring relations :func:`~rdpjax.search.find_pair` searches for a black box."""

Pair = tuple[np.ndarray, np.ndarray, int]
"""``(x, x_prime, index)``: the two databases and the entry that differs (or is removed)."""


def check_neighbours(neighbours) -> str:
    """``neighbours`` if it is one of :data:`NEIGHBOURS`, else a ``ValueError``."""
    if neighbours not in NEIGHBOURS:
        raise ValueError(
            f"neighbours must be one of {NEIGHBOURS} (x, x' of one size differing in one entry, "
            f"or x' = x with one entry removed); got {neighbours!r}"
        )
    return neighbours


def black_box_space(m, domain, levels=None, space: SearchSpace | None = None) -> SearchSpace:
    """The explicit domain of a black box: ``m`` scalar entries in ``domain = (low, high)``.

    A black box's domain cannot be read off it, so ``m`` and ``domain`` are required unless a
    whole ``space`` is given (which they then override, as for a zoo mechanism).

    Raises:
      ValueError: for a missing or invalid size or domain, rows (``space.row != ()``), or
        invalid levels.
    """
    if space is None:
        missing = [name for name, v in (("m", m), ("domain", domain)) if v is None]
        if missing:
            raise ValueError(
                f"a numpy black box needs its database domain: pass {' and '.join(missing)} "
                "(m entries, each in domain = (low, high)), or space="
            )
        space = SearchSpace(m=check_int(m, "m", 1))
    if domain is not None:
        try:
            low, high = (float(v) for v in domain)
        except (TypeError, ValueError) as err:
            raise ValueError(f"domain must be a pair (low, high); got {domain!r}") from err
        space = SearchSpace(m=space.m, low=low, high=high, levels=space.levels, row=space.row)
    m = space.m if m is None else check_int(m, "m", 1)
    levels = space.levels if levels is None else levels
    space = SearchSpace(m=m, low=space.low, high=space.high, levels=levels, row=space.row)
    if space.row != ():
        raise ValueError(
            f"the black-box search takes databases of m scalar entries; got rows {space.row}"
        )
    return space


def _values(u: np.ndarray, space: SearchSpace) -> np.ndarray:
    """Entries on the domain, snapped to its levels (numpy twin of :meth:`SearchSpace.snap`)."""
    u = np.clip(np.asarray(u, np.float64), space.low, space.high)
    if space.levels is None:
        return u
    step = space.width / (space.levels - 1)
    return space.low + np.round((u - space.low) / step) * step


def pair(params: dict, space: SearchSpace, neighbours: str) -> Pair:
    """``(x, x', index)`` from the free parameters (module docstring), as float64 arrays."""
    base = _values(params["base"], space)
    j = int(params["j"])
    if neighbours == "replace-one":
        x_prime = base.copy()
        x_prime[j] = _values(params["b"], space)
        return base, x_prime, j
    smaller = np.delete(base, j)
    return (smaller, base, j) if params["add"] else (base, smaller, j)


def reference_params(space: SearchSpace, neighbours: str) -> dict:
    """The analogue of the pair (21) on the domain: entry 0 at ``high``, the others at ``low``.

    Replace-one: x' all ``low`` ((21) itself on ``[0, 1]``); add-remove: x' is x without entry 0.
    """
    base = np.full(space.m, space.low)
    base[0] = space.high
    if neighbours == "replace-one":
        return {"base": base, "j": 0, "b": space.low}
    return {"base": base, "j": 0, "add": False}


def variants(params: dict, space: SearchSpace, neighbours: str) -> list[dict]:
    """The candidates made from one pair, in the order of :data:`~rdpjax.search.CANDIDATES`.

    They are the pair itself; its nearest vertex of the box (every free value, ``b`` included,
    at the nearer end of ``[low, high]``); the same ``j`` (and ``b``) with every other entry at
    ``low``; the same with every other entry at ``high``.
    """
    base = _values(params["base"], space)
    j = int(params["j"])
    mid = (space.low + space.high) / 2
    vertex = np.where(base >= mid, space.high, space.low)
    at_low, at_high = np.full(space.m, space.low), np.full(space.m, space.high)
    at_low[j] = at_high[j] = base[j]
    out = []
    for new_base in (base, vertex, at_low, at_high):
        new = dict(params, base=new_base)
        if neighbours == "replace-one" and new_base is vertex:
            new["b"] = space.high if float(params["b"]) >= mid else space.low
        out.append(new)
    return out


def describe(x, x_prime, index: int, neighbours: str) -> str:
    """One line naming the relation and how the pair realizes it (for reports)."""
    j = int(index)
    if neighbours == "replace-one":
        return f"neighbours: replace-one (x and x' have {np.size(x)} entries; entry {j} differs)"
    if np.size(x) > np.size(x_prime):
        return f"neighbours: add-remove (x' is x with entry {j} removed)"
    return f"neighbours: add-remove (x is x' with entry {j} removed)"
