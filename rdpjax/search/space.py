"""The databases searched: the box of one entry, the pair's parametrization, the projections.

A pair is parametrized as ``(base, a, b, j)``: x equals ``base`` with entry j set to ``a``, x'
the same with entry j set to ``b`` (:func:`assemble`), so every pair is adjacent — one entry
differs — by construction. After each step of a search the parameters are projected back onto
the domain (:meth:`SearchSpace.snap`).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._validation import check_int
from rdpjax.mechanisms.base import Mechanism

__all__ = [
    "SearchSpace",
    "assemble",
    "from_uniform",
    "nearest_vertex",
    "resolve_space",
    "search_space",
]


@dataclasses.dataclass(frozen=True)
class SearchSpace:
    """The databases searched: ``m`` entries, each in ``[low, high]^row`` (or on ``levels``).

    With ``levels``, the entries take that many equally spaced values of the box; adjacent
    databases differ in exactly one entry.

    Attributes:
      m: number of entries (individuals).
      low, high: the box each entry lives in.
      levels: ``None`` for the whole interval, or k ≥ 2 for the k values
        ``low + i (high − low)/(k − 1)`` (e.g. 2 for bits, k for k categories).
      row: shape of one entry: ``()`` for scalars, ``(d,)`` for rows in ``[low, high]^d``.
    """

    m: int
    low: float = 0.0
    high: float = 1.0
    levels: int | None = None
    row: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "m", check_int(self.m, "m", 1))  # a Python int from here on
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"domain must be finite with low < high; got {(self.low, self.high)}")
        if self.levels is not None:
            object.__setattr__(self, "levels", check_int(self.levels, "levels", 2))

    @property
    def width(self) -> float:
        """The width ``high − low`` of the domain."""
        return self.high - self.low

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of one database."""
        return (self.m, *self.row)

    def snap(self, values: jax.Array) -> jax.Array:
        """Project onto the domain: clip to the box, then round to the nearest level."""
        values = jnp.clip(values, self.low, self.high)
        if self.levels is None:
            return values
        step = self.width / (self.levels - 1)
        return self.low + jnp.round((values - self.low) / step) * step


def search_space(mechanism: Mechanism) -> SearchSpace:
    """The natural search space of a zoo mechanism (its input domain and number of entries).

    * paper 000's mechanisms: ``[0, 1]^m`` with m (and rows) from the reference pair (21);
      randomized response and shuffled RR on ``{0, 1}^m``;
    * one-individual (local) mechanisms of 001 and 003: m = 1, the location or point domain,
      k categories for the k-ary and one-hot randomized response;
    * :func:`rdpjax.mechanisms.from_sampler` mechanisms: ``[0, 1]^10`` like the pair (21).

    Raises:
      ValueError: for Report Noisy Max and the Sparse Vector Technique, whose neighbouring
        inputs (query answers that all move by at most 1) are not "one entry differs".
    """
    from rdpjax import mechanisms as zoo

    if isinstance(mechanism, zoo.ReportNoisyMax | zoo.SparseVector):
        raise ValueError(
            f"{mechanism.name}: its neighbouring inputs are query-answer vectors that may all "
            "move by 1 (ℓ∞ adjacency), not databases differing in one entry; find_pair does "
            "not search that relation."
        )
    if isinstance(mechanism, zoo.KaryRandomizedResponse | zoo.OneHotRandomizedResponse):
        return SearchSpace(m=1, low=0.0, high=float(mechanism.k - 1), levels=int(mechanism.k))
    if isinstance(mechanism, zoo.TruncatedLaplace | zoo.TruncatedGaussian):
        return SearchSpace(m=1, low=float(mechanism.low), high=float(mechanism.high))
    if isinstance(mechanism, zoo.LaplaceHistogram | zoo.OrthogonalSeries):
        return SearchSpace(m=1)
    x = np.asarray(mechanism.reference_pair()[0])
    if x.ndim == 0:
        return SearchSpace(m=1)
    levels = (
        2
        if isinstance(mechanism, zoo.RandomizedResponse | zoo.ShuffledRandomizedResponse)
        else None
    )
    return SearchSpace(m=int(x.shape[0]), levels=levels, row=tuple(int(s) for s in x.shape[1:]))


def resolve_space(mechanism, space, m, domain, levels) -> SearchSpace:
    """``space`` (default :func:`search_space`) with the overrides of ``find_pair``, validated.

    The ``m``, ``domain`` and ``levels`` of :func:`rdpjax.search.find_pair` override it where
    given, and the result is validated again.
    """
    space = search_space(mechanism) if space is None else space
    if domain is not None:
        try:
            low, high = (float(v) for v in domain)
        except (TypeError, ValueError) as err:
            raise ValueError(f"domain must be a pair (low, high); got {domain!r}") from err
        space = dataclasses.replace(space, low=low, high=high)
    if m is not None:
        space = dataclasses.replace(space, m=m)
    if levels is not None:
        space = dataclasses.replace(space, levels=levels)
    return dataclasses.replace(space)  # re-validate


def assemble(base, a, b, j):
    """``x = base`` with entry j set to a, ``x' = base`` with entry j set to b: adjacent."""
    return base.at[j].set(a), base.at[j].set(b)


def from_uniform(u, space: SearchSpace):
    """Map uniforms on (0, 1) to uniform values on the domain (or on its levels)."""
    if space.levels is None:
        return space.low + space.width * u
    level = jnp.minimum(jnp.floor(u * space.levels), space.levels - 1)
    return space.low + level * space.width / (space.levels - 1)


def nearest_vertex(values, space: SearchSpace):
    """Every entry moved to the nearer end of ``[low, high]``."""
    return space.low + space.width * jnp.round((values - space.low) / space.width)
