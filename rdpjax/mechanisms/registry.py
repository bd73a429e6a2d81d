"""The one registry of the zoo's names: CLI name → factory, typed parameters, paper defaults, label.

Every place that names a zoo mechanism reads it from here: the command line (``rdpjax audit
laplace --param scale=2``), the seven experiments of paper 000
(:data:`rdpjax.studies.reproduction.EXPERIMENTS`) and the table of ``python -m rdpjax.mechanisms``
(:func:`rdpjax.mechanisms.zoo.reference_zoo`).

Each :class:`Entry` declares its parameters as :class:`Param` with a type (a real number in an
interval, a whole number ≥ k, or one of a few choices) and the value used in its paper, so that
text from the command line is parsed and checked before any mechanism is built, and a mistake is
reported with the parameter's name and the values it accepts:

    >>> from rdpjax.mechanisms import registry
    >>> entry = registry.get("orthogonal-series")
    >>> entry.parse(["k=2", "ties=literal"])
    {'k': 2, 'ties': 'literal'}
    >>> entry.label(**entry.parse(["k=2", "ties=literal"]))
    'Orthogonal series α=1, k=2, literal'
    >>> entry.parse(["k=2.5"])
    Traceback (most recent call last):
    ...
    ValueError: --param k=2.5: k must be a whole number in [1, 30]; got '2.5'

The mechanisms' constructors still validate their arguments; the registry's types are the same
ranges, stated where a user can read them (``rdpjax audit --help`` lists them).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rdpjax.mechanisms.additive import Gaussian, Laplace
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.local import (
    KaryRandomizedResponse,
    LaplaceHistogram,
    OneHotRandomizedResponse,
)
from rdpjax.mechanisms.noisy_gd import NoisyGradientDescent
from rdpjax.mechanisms.noisy_max import ReportNoisyMax
from rdpjax.mechanisms.randomized_response import RandomizedResponse
from rdpjax.mechanisms.series import OrthogonalSeries
from rdpjax.mechanisms.shuffle import ShuffledRandomizedResponse
from rdpjax.mechanisms.sparse_vector import VARIANTS, SparseVector
from rdpjax.mechanisms.subsampled import PoissonSubsampled
from rdpjax.mechanisms.truncated import TruncatedGaussian, TruncatedLaplace

__all__ = ["ENTRIES", "Entry", "Param", "choice", "experiments", "get", "names", "real", "whole"]


# --------------------------------------------------------------------------------------------
# Parameters.


@dataclasses.dataclass(frozen=True)
class Param:
    """One typed parameter of a zoo mechanism: ``kind`` is ``"real"``, ``"int"`` or ``"choice"``.

    Attributes:
      name: the keyword of the factory and of ``--param NAME=VALUE``.
      kind: ``"real"`` (a finite number in ``low``..``high``), ``"int"`` (a whole number in
        ``[low, high]``) or ``"choice"`` (one of ``choices``).
      default: the value used in the mechanism's paper.
      low, high: bounds of a number (``None``: unbounded); ``low_open``/``high_open`` say whether
        the bound itself is excluded (reals only; integer bounds are inclusive).
      choices: the accepted strings of a choice.
    """

    name: str
    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    low_open: bool = True
    high_open: bool = True
    choices: tuple[str, ...] = ()

    def accepted(self) -> str:
        """The accepted values in words, e.g. ``"a number > 0"``, ``"one of split, literal"``."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        what = "a whole number" if self.kind == "int" else "a number"
        low, high = self.low, self.high
        if self.kind == "int":
            low = None if low is None else int(low)
            high = None if high is None else int(high)
            if high is not None:
                return f"{what} in [{low}, {high}]"
            return f"{what} ≥ {low}" if low is not None else what
        if low is not None and high is not None:
            lo, hi = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{what} in {lo}{low:g}, {high:g}{hi}"
        if low is not None:
            return f"{what} {'>' if self.low_open else '≥'} {low:g}"
        if high is not None:
            return f"{what} {'<' if self.high_open else '≤'} {high:g}"
        return f"a finite {what[2:]}"

    def _in_range(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        if self.high is not None and (value >= self.high if self.high_open else value > self.high):
            return False
        return True

    def _refuse(self, got: Any) -> ValueError:
        return ValueError(f"{self.name} must be {self.accepted()}; got {got!r}")

    def parse(self, text: str) -> float | int | str:
        """The value of ``text`` (as typed after ``NAME=``), or a ``ValueError`` naming the rule.

        Whole numbers may be written ``5``, ``5.0`` or ``1e1``; ``2.7`` is refused, not rounded.
        """
        text = text.strip()
        if self.kind == "choice":
            if text not in self.choices:
                raise self._refuse(text)
            return text
        try:
            number = float(text)
            return self.check(int(number) if self.kind == "int" and number.is_integer() else number)
        except (ValueError, OverflowError):
            raise self._refuse(text) from None

    def check(self, value: Any) -> float | int | str:
        """``value`` (a Python value) if it has this parameter's type and range, else ValueError."""
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise self._refuse(value)
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._refuse(value)
        if self.kind == "int":
            if isinstance(value, float) and not value.is_integer():
                raise self._refuse(value)
            if not (math.isfinite(value) and self._in_range(value)):
                raise self._refuse(value)
            return int(value)
        if not (math.isfinite(value) and self._in_range(float(value))):
            raise self._refuse(value)
        return float(value)


def real(
    name: str,
    default: float,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = True,
    high_open: bool = True,
) -> Param:
    """A finite real parameter in the interval from ``low`` to ``high`` (open ends by default)."""
    return Param(name, "real", float(default), low, high, low_open, high_open)


def whole(name: str, default: int, *, least: int, most: int | None = None) -> Param:
    """A whole-number parameter in ``[least, most]``."""
    return Param(name, "int", int(default), least, most, False, False)


def choice(name: str, default: str, choices: Iterable[str]) -> Param:
    """A parameter taking one of the strings ``choices``."""
    return Param(name, "choice", default, choices=tuple(choices))


def _positive(name: str, default: float) -> Param:
    return real(name, default, low=0.0)


def _nonnegative(name: str, default: float) -> Param:
    return real(name, default, low=0.0, low_open=False)


# --------------------------------------------------------------------------------------------
# Entries.


@dataclasses.dataclass(frozen=True)
class Entry:
    """A zoo mechanism under its command-line name.

    Attributes:
      name: the command-line name (``"subsampled-laplace"``).
      title: the short display name (``"Subsampled Laplace"``); for paper 000 it is also the
        experiment's name (:data:`rdpjax.studies.reproduction.EXPERIMENTS`, whose random streams are
        keyed by it).
      paper: ``"000"``, ``"001"``, ``"003"`` or ``"classic"`` (the DP-testing literature).
      params: the typed parameters, each with its paper's value as default.
      build: keyword parameters → the mechanism.
      describe: keyword parameters → the label (``"Subsampled Laplace b=5, γ=0.5"``), with the
        papers' symbols.
    """

    name: str
    title: str
    paper: str
    params: tuple[Param, ...]
    build: Callable[..., Mechanism] = dataclasses.field(repr=False)
    describe: Callable[..., str] = dataclasses.field(repr=False)

    def defaults(self) -> dict[str, Any]:
        """The parameters of the paper: ``{name: default}``."""
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param:
        """The parameter ``name``, or a ``ValueError`` listing those this entry takes."""
        for p in self.params:
            if p.name == name:
                return p
        raise ValueError(f"unknown parameter {name!r} for {self.name}; {self.takes()}")

    def takes(self) -> str:
        """``"it takes scale (a number > 0)"``: the parameters in words."""
        if not self.params:
            return "it takes no parameters"
        return "it takes " + "; ".join(f"{p.name} ({p.accepted()})" for p in self.params)

    def parse(self, items: Iterable[str]) -> dict[str, Any]:
        """Typed values from ``NAME=VALUE`` strings (the ``--param`` options).

        The last one of a name wins.

        Raises:
          ValueError: one line naming the item, the parameter and the accepted values.
        """
        out: dict[str, Any] = {}
        for item in items:
            name, sep, text = item.partition("=")
            name = name.strip()
            if not sep or not name:
                raise ValueError(f"--param expects NAME=VALUE; got {item!r}")
            param = self.param(name)
            try:
                out[name] = param.parse(text)
            except ValueError as err:
                raise ValueError(f"--param {item}: {err}") from None
        return out

    def _resolve(self, params: Mapping[str, Any]) -> dict[str, Any]:
        values = self.defaults()
        for name, value in params.items():
            values[name] = self.param(name).check(value)
        return values

    def make(self, **params: Any) -> Mechanism:
        """The mechanism at the paper's parameters, with ``params`` overriding some.

        Raises:
          ValueError: for an unknown parameter or a value of the wrong type or range.
        """
        return self.build(**self._resolve(params))

    def label(self, **params: Any) -> str:
        """The display label at these parameters (the paper's by default)."""
        return self.describe(**self._resolve(params))

    def reference_pair(self, mechanism: Mechanism | None = None) -> tuple[Any, Any]:
        """The pair of databases this entry is audited on: ``mechanism.reference_pair()``.

        That is pair (21) of arXiv:2212.04739 for paper 000; ``mechanism`` defaults to
        :meth:`make`'s.
        """
        return (self.make() if mechanism is None else mechanism).reference_pair()


def _g(value: float) -> str:
    return f"{value:g}"


def _noisy_max_label(eps, noise, output_kind) -> str:
    kind = output_kind if noise == "laplace" else noise
    if noise != "laplace" and output_kind != "index":
        kind = f"{noise}, {output_kind}"
    return f"Report noisy max ε={_g(eps)} ({kind})"


_SVT_NAMES = {
    "lyu": "Lyu Alg. 1",
    "lee_clifton": "Lee-Clifton",
    "stoddard": "Stoddard",
    "chen": "Chen",
}


def _sparse_vector_label(eps, threshold, cutoff, variant) -> str:
    stops = VARIANTS[variant][2]  # only the stopping variants use the cutoff c
    cutoff_text = f", c={cutoff}" if stops else ""
    threshold_text = "" if threshold == 0.5 else f", T={_g(threshold)}"
    return f"Sparse vector ε={_g(eps)}{cutoff_text}{threshold_text} ({_SVT_NAMES[variant]})"


def _entries() -> list[Entry]:
    scale = _positive("scale", 5.0)
    rate = real("rate", 0.5, low=0.0, high=1.0, high_open=False)
    return [
        # Paper 000 (Kutta, Askin, Dunsche, arXiv:2212.04739v3, §V): the seven experiments.
        Entry(
            "laplace", "Laplace", "000", (scale,),
            lambda scale: Laplace(scale),
            lambda scale: f"Laplace b={_g(scale)}",
        ),
        Entry(
            "gaussian", "Gaussian", "000", (scale,),
            lambda scale: Gaussian(scale),
            lambda scale: f"Gaussian b={_g(scale)}",
        ),
        Entry(
            "subsampled-laplace", "Subsampled Laplace", "000", (scale, rate),
            lambda scale, rate: PoissonSubsampled(Laplace(scale), rate),
            lambda scale, rate: f"Subsampled Laplace b={_g(scale)}, γ={_g(rate)}",
        ),
        Entry(
            "subsampled-gaussian", "Subsampled Gaussian", "000", (scale, rate),
            lambda scale, rate: PoissonSubsampled(Gaussian(scale), rate),
            lambda scale, rate: f"Subsampled Gaussian b={_g(scale)}, γ={_g(rate)}",
        ),
        Entry(
            "randomized-response", "Randomized response", "000", (_nonnegative("eps0", 1.5),),
            lambda eps0: RandomizedResponse(eps0),
            lambda eps0: f"Randomized response ε0={_g(eps0)}",
        ),
        Entry(
            "shuffled-randomized-response", "Shuffled RR", "000", (_nonnegative("eps0", 1.5),),
            lambda eps0: ShuffledRandomizedResponse(eps0),
            lambda eps0: f"Shuffled RR ε0={_g(eps0)}, m=10",  # m: the size of pair (21)
        ),
        Entry(
            "noisy-gd", "Noisy GD", "000",
            (
                real("step_size", 0.2, low=0.0, high=2.0),
                _positive("noise", 1.0),
                whole("steps", 10, least=1),
            ),
            lambda step_size, noise, steps: NoisyGradientDescent(step_size, noise, steps),
            lambda step_size, noise, steps: f"Noisy GD η={_g(step_size)}, b={_g(noise)}, K={steps}",
        ),
        # Paper 001 (truncated noise on [0, 1]).
        Entry(
            "truncated-laplace", "Truncated Laplace", "001", (_positive("scale", 1.0),),
            lambda scale: TruncatedLaplace(scale),
            lambda scale: f"Truncated Laplace B={_g(scale)}",
        ),
        Entry(
            "truncated-gaussian", "Truncated Gaussian", "001", (_positive("scale", 0.5),),
            lambda scale: TruncatedGaussian(scale),
            lambda scale: f"Truncated Gaussian s={_g(scale)}",
        ),
        # Paper 003 (α-LDP mechanisms).
        Entry(
            "kary-randomized-response", "k-ary RR", "003",
            (_nonnegative("alpha", 1.0), whole("k", 5, least=2)),
            lambda alpha, k: KaryRandomizedResponse(alpha, k),
            lambda alpha, k: f"k-ary RR α={_g(alpha)}, k={k}",
        ),
        Entry(
            "onehot-randomized-response", "One-hot RR", "003",
            (_nonnegative("alpha", 1.0), whole("k", 5, least=2, most=30)),
            lambda alpha, k: OneHotRandomizedResponse(alpha, k),
            lambda alpha, k: f"One-hot RR α={_g(alpha)}, k={k}",
        ),
        Entry(
            "laplace-histogram", "Laplace histogram", "003",
            (_positive("alpha", 1.0), whole("bins", 5, least=2)),
            lambda alpha, bins: LaplaceHistogram(alpha, bins),
            lambda alpha, bins: f"Laplace histogram α={_g(alpha)}, {bins} bins",
        ),
        Entry(
            "orthogonal-series", "Orthogonal series", "003",
            (
                _positive("alpha", 1.0),
                whole("k", 3, least=1, most=30),
                choice("ties", "split", ("split", "literal")),
            ),
            lambda alpha, k, ties: OrthogonalSeries(alpha, k, ties=ties),
            lambda alpha, k, ties: f"Orthogonal series α={_g(alpha)}, k={k}"
            + (", literal" if ties == "literal" else ""),
        ),
        # DP-testing classics, with published incorrect variants.
        Entry(
            "report-noisy-max", "Report noisy max", "classic",
            (
                _positive("eps", 1.0),
                choice("output_kind", "index", ("index", "value")),
                choice("noise", "laplace", ("laplace", "exponential")),
            ),
            lambda eps, output_kind, noise: ReportNoisyMax(
                eps, noise=noise, output_kind=output_kind
            ),
            lambda eps, output_kind, noise: _noisy_max_label(eps, noise, output_kind),
        ),
        Entry(
            "sparse-vector", "Sparse vector", "classic",
            (
                _positive("eps", 1.0),
                choice("variant", "lyu", tuple(VARIANTS)),
                real("threshold", 0.5),
                whole("cutoff", 1, least=1),
            ),
            lambda eps, variant, threshold, cutoff: SparseVector(
                eps, threshold=threshold, cutoff=cutoff, variant=variant
            ),
            lambda eps, variant, threshold, cutoff: _sparse_vector_label(
                eps, threshold, cutoff, variant
            ),
        ),
    ]  # fmt: skip


ENTRIES: dict[str, Entry] = {entry.name: entry for entry in _entries()}
"""Every zoo mechanism by command-line name, in the order of the zoo's table."""


def names() -> list[str]:
    """The command-line names, sorted."""
    return sorted(ENTRIES)


def get(name: str) -> Entry:
    """The entry called ``name``.

    Raises:
      ValueError: ``unknown mechanism '…'; choose one of: …`` (sorted).
    """
    try:
        return ENTRIES[name]
    except KeyError:
        raise ValueError(
            f"unknown mechanism {name!r}; choose one of: {', '.join(names())}"
        ) from None


def experiments() -> list[Entry]:
    """The seven experiments of paper 000 §V, in the paper's order."""
    return [entry for entry in ENTRIES.values() if entry.paper == "000"]
