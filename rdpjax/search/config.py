"""The options of :func:`~rdpjax.search.find_pair`, grouped by concept in three frozen dataclasses.

* :class:`Pairs` — which pairs are searched: the database space (``m`` entries in ``domain``,
  optionally on ``levels`` values, or a whole :class:`~rdpjax.search.SearchSpace`) and the
  neighbouring relation (eq. (6) of Kutta, Askin, Dunsche, arXiv:2212.04739v3 is a supremum over
  *neighbouring* pairs);
* :class:`Budget` — how hard the search tries: the method, its steps, restarts, trials and
  population, and the draws per side of the search objective and of the selection;
* :class:`Certification` — the final bound on fresh draws: ``n`` draws per side, the
  family-wise level ``alpha`` (Bonferroni over orders and directions, docs/methods.md §2.6) and
  whether both directions of the pair are certified.

Each checks its own fields when it is made (a ``ValueError`` naming the field); the checks that
depend on the mechanism (a black box needs ``m``, ``domain`` and ``neighbours``; a JAX
mechanism's methods are not a black box's) are :func:`~rdpjax.search.find_pair`'s. The defaults
are those of :func:`~rdpjax.search.find_pair` before these classes existed, so the same defaults
give the same pairs and bounds.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from rdpjax._validation import check_int, check_level
from rdpjax.estimator.options import BoundOptions
from rdpjax.search.neighbours import check_neighbours
from rdpjax.search.space import SearchSpace
from rdpjax.stream.options import StreamOptions

if TYPE_CHECKING:
    import optax

__all__ = ["METHOD_NAMES", "BlackBoxOptions", "Budget", "Certification", "Pairs"]

METHOD_NAMES = ("auto", "gradient", "evolutionary", "tpe", "random")
"""Every ``Budget.method``: ``"auto"``, the JAX searches, then the black-box optuna samplers."""


def _domain(domain) -> tuple[float, float]:
    """``(low, high)`` as floats; ``ValueError`` unless a finite pair with ``low < high``."""
    try:
        low, high = (float(v) for v in domain)
    except (TypeError, ValueError) as err:
        raise ValueError(f"domain must be a pair (low, high); got {domain!r}") from err
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"domain must be finite with low < high; got {(low, high)}")
    return low, high


@dataclasses.dataclass(frozen=True)
class Pairs:
    """The pairs searched: the databases (their space) and the neighbouring relation.

    A JAX mechanism's space defaults to :func:`~rdpjax.search.search_space` (``[0, 1]^10`` for
    paper 000's mechanisms); a numpy black box's cannot be read off it, so ``m``, ``domain`` and
    ``neighbours`` are required for one (checked by :func:`~rdpjax.search.find_pair`).

    Attributes:
      m: number of entries; for a JAX mechanism default from
        :func:`~rdpjax.search.search_space` (10 for paper 000); required for a black box.
      domain: ``(low, high)`` of every entry; for a JAX mechanism default from
        :func:`~rdpjax.search.search_space` ((0, 1)); required for a black box.
      levels: restrict entries to this many equally spaced values (2: bits).
      space: a whole :class:`~rdpjax.search.SearchSpace` (e.g. rows in ``[0, 1]^d``:
        ``row=(d,)``) instead of :func:`~rdpjax.search.search_space`'s; ``m``, ``domain`` and
        ``levels`` still override it. A black box takes scalar entries only.
      neighbours: the neighbouring relation: required for a black box (``"replace-one"`` or
        ``"add-remove"``, :mod:`rdpjax.search.neighbours`); for a JAX mechanism ``None`` or
        ``"replace-one"`` (one entry differs).

    Raises:
      ValueError: for ``m < 1``, ``levels < 2``, a domain that is not a finite pair with
        ``low < high``, a ``space`` that is not a :class:`~rdpjax.search.SearchSpace`, or an
        unknown relation.
    """

    m: int | None = None
    domain: tuple[float, float] | None = None
    levels: int | None = None
    space: SearchSpace | None = None
    neighbours: str | None = None

    def __post_init__(self) -> None:
        if self.m is not None:
            object.__setattr__(self, "m", check_int(self.m, "m", 1))
        if self.domain is not None:
            object.__setattr__(self, "domain", _domain(self.domain))
        if self.levels is not None:
            object.__setattr__(self, "levels", check_int(self.levels, "levels", 2))
        if self.space is not None and not isinstance(self.space, SearchSpace):
            raise ValueError(f"space must be a SearchSpace or None; got {self.space!r}")
        if self.neighbours is not None:
            check_neighbours(self.neighbours)


@dataclasses.dataclass(frozen=True)
class Budget:
    """How hard the search tries: the method and its sizes (the search's cost).

    Cost: ``steps × restarts × L`` evaluations of the objective for L orders (``× population``
    for the evolutionary search), each on ``search_n`` draws per side, then ``4 × restarts × L²``
    on ``select_n`` for the selection (JAX mechanisms); ``restarts × trials`` bounds on
    ``search_n`` draws per side, then at most ``4 × top × restarts`` on ``select_n`` (black box).

    Attributes:
      method: JAX: ``"auto"``, ``"gradient"`` or ``"evolutionary"``. Auto uses the gradient for
        continuous outputs of a continuous domain when the gradient at the start is finite and
        non-zero, the evolutionary search otherwise; the result says which and why. Black box:
        ``"auto"`` or ``"tpe"`` (optuna's TPE sampler), or ``"random"`` (random search, a
        baseline).
      steps: search steps per restart (static; JAX mechanisms).
      restarts: independent restarts per order (JAX; vmapped; restart r of the gradient search
        changes entry ``r mod m``; default 8), or independent optuna studies (black box, each
        with its own sampler seed and search draws; default 4).
      trials: black box: trials per optuna study (each one bound on ``search_n`` draws per side).
      top: black box: best trials of each study re-scored on the selection draws (with their
        variants).
      population: proposals per step of the evolutionary search.
      search_n: draws per side of the search objective; default ``min(n, 4096)`` with ``n`` of
        :class:`Certification`.
      select_n: draws per side of the selection among candidates (the same draws for every
        candidate); default ``min(n, 4 · search_n)``.
      optimizer: any optax transformation for the gradient search; default Adam with a
        cosine-decayed step of 5% of the domain width. Its updates are followed by the
        projection onto the domain (``optax.projections.projection_box``).

    Raises:
      ValueError: for an unknown method, ``steps``, ``restarts``, ``trials``, ``top`` or
        ``population`` below 1, or ``search_n`` or ``select_n`` below 2.
    """

    method: str = "auto"
    steps: int = 100
    restarts: int | None = None
    trials: int = 200
    top: int = 3
    population: int = 8
    search_n: int | None = None
    select_n: int | None = None
    optimizer: optax.GradientTransformation | None = None

    def __post_init__(self) -> None:
        if self.method not in METHOD_NAMES:
            raise ValueError(f"method must be one of {METHOD_NAMES}; got {self.method!r}")
        for name, least in (("steps", 1), ("trials", 1), ("top", 1), ("population", 1)):
            object.__setattr__(self, name, check_int(getattr(self, name), name, least))
        for name, least in (("restarts", 1), ("search_n", 2), ("select_n", 2)):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_int(getattr(self, name), name, least))
        opt = self.optimizer  # an optax transformation has init and update: "adam" has neither
        if opt is not None and not (
            callable(getattr(opt, "init", None)) and callable(getattr(opt, "update", None))
        ):
            raise ValueError(
                f"optimizer must be an optax.GradientTransformation (optax.adam(0.05)) or None; "
                f"got {opt!r}"
            )


@dataclasses.dataclass(frozen=True)
class Certification:
    """The certified bound: :func:`~rdpjax.search.certify` on fresh draws of the pair found.

    With L orders (and both directions, 2L bounds) each bound is computed at level
    ``alpha / (L · directions)`` (Bonferroni, docs/methods.md §2.6), so all reported bounds hold
    together with probability ≥ 1 − α.

    Attributes:
      n: certification draws per side.
      alpha: family-wise error level in (0, 0.5) of all reported bounds.
      both_directions: certify ``D_λ`` in both directions of the pair found and keep the larger
        (2L bounds). The search already covers both orders of a pair (x and x' are both free;
        add-remove: removing and adding an entry).

    Raises:
      ValueError: for ``n < 2``, ``alpha`` outside (0, 0.5) or a ``both_directions`` that is
        not a bool.
    """

    n: int = 100_000
    alpha: float = 0.05
    both_directions: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_int(self.n, "n", 2))
        object.__setattr__(self, "alpha", check_level(self.alpha))
        if not isinstance(self.both_directions, bool | np.bool_):
            raise ValueError(f"both_directions must be a bool; got {self.both_directions!r}")
        object.__setattr__(self, "both_directions", bool(self.both_directions))


@dataclasses.dataclass(frozen=True)
class BlackBoxOptions:
    """A numpy black box's bound settings, as every bound of the search takes them.

    Attributes:
      bound: the estimator's :class:`rdpjax.BoundOptions` (``discrete``, …).
      stream: the :class:`rdpjax.stream.StreamOptions` (``support_size``, ``project``,
        ``batch_size``, …); each bound of the search sets its own pilot size unless this one
        names it.
    """

    bound: BoundOptions = dataclasses.field(default_factory=BoundOptions)
    stream: StreamOptions = dataclasses.field(default_factory=StreamOptions)

    @classmethod
    def of(cls, bound: BoundOptions | None, stream: StreamOptions | None) -> BlackBoxOptions:
        """The pair, each ``None`` read as its default; ``ValueError`` for anything else."""
        bound = BoundOptions() if bound is None else bound
        stream = StreamOptions() if stream is None else stream
        if not isinstance(bound, BoundOptions):
            raise ValueError(f"options must be a rdpjax.BoundOptions; got {bound!r}")
        if not isinstance(stream, StreamOptions):
            raise ValueError(f"stream must be a rdpjax.stream.StreamOptions; got {stream!r}")
        return cls(bound, stream)

    def with_pilot(self, pilot: int) -> StreamOptions:
        """The stream options with ``pilot`` draws a side, unless the user chose a pilot."""
        return self.stream if self.stream.pilot is not None else self.stream.replace(pilot=pilot)
