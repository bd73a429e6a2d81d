"""Shared options of every ``rdpjax`` subcommand, and the helpers that act on them.

The functions here add option groups to a subcommand's parser (``--lam``, ``MECHANISM --param``,
``--claim-*``, ``--cpu-devices``, …) and turn the parsed values into what the library takes (a
zoo mechanism, a claim, JAX's CPU devices). A mistake in the input is a :class:`CliError`:
:func:`rdpjax.cli.main` prints it as one line on stderr and exits with status 2.

The argument types and :class:`CliError` live in :mod:`rdpjax.cli._types`, the files and records
in :mod:`rdpjax.cli._files`; both are re-exported here.
"""

from __future__ import annotations

import argparse
import dataclasses
import textwrap

# The argument types, files and records, re-exported here (``rdpjax.cli._args.count``, …).
from rdpjax.cli._files import (  # noqa: F401
    command_line,
    output_dir,
    output_file,
    plot_suffixes,
    read_database,
    run_meta,
    settings,
    use_agg,
)
from rdpjax.cli._types import (  # noqa: F401
    CliError,
    Parser,
    alpha_level,
    bound_size,
    count,
    cpu_devices,
    dpsgd_triple,
    finite_float,
    order,
    positive_float,
    rdp_table,
    reps,
    seed,
    whole,
)

__all__ = [
    "Catalog",
    "CliError",
    "Parser",
    "add_claim_options",
    "add_cpu_devices",
    "add_experiments",
    "add_lam",
    "add_level_and_seed",
    "add_sizes",
    "add_zoo_options",
    "alpha_level",
    "catalog",
    "claim_from_args",
    "command_line",
    "count",
    "cpu_devices",
    "dpsgd_claim",
    "output_dir",
    "output_file",
    "order",
    "positive_float",
    "read_database",
    "reps",
    "run_meta",
    "set_cpu_devices",
    "settings",
    "subcommand",
    "use_agg",
    "whole",
    "zoo_mechanism",
]


# --------------------------------------------------------------------------------------------
# Shared options.


def subcommand(sub, name: str, *, help: str, description: str, examples: list[str], notes=""):
    """A subparser whose help ends with examples (and ``notes``), kept on their own lines."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    if notes:
        epilog += "\n\n" + notes
    return sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 88),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


@dataclasses.dataclass(frozen=True)
class Catalog:
    """What the help texts list: the zoo's names and parameters, paper 000's experiments.

    Reading them imports the mechanisms (and jax, about a second), so the parser gets the real
    lists only when the command line asks for help (:func:`catalog`); otherwise every list is a
    placeholder that no parse depends on (names are checked when the command runs).
    """

    zoo_names: tuple[str, ...]
    zoo_listing: str
    slugs: tuple[str, ...]
    looks: str = "…"


def catalog(full: bool = True) -> Catalog:
    """The :class:`Catalog`; ``full=False`` gives placeholders without importing anything."""
    if not full:
        return Catalog(("…",), "", ("…",))
    from rdpjax.auditing.sequential.schedule import DEFAULT_FIRST, DEFAULT_RATIO
    from rdpjax.mechanisms import registry
    from rdpjax.studies.reproduction import EXPERIMENTS, experiment_slug

    def shown(param) -> str:
        if param.kind == "choice":
            return f"{param.name}={param.default} ({'|'.join(param.choices)})"
        return f"{param.name}={param.default:g}"

    lines = ["zoo mechanisms and their parameters (--param NAME=VALUE; default: the paper's):"]
    for name in registry.names():
        params = ", ".join(shown(p) for p in registry.get(name).params)
        lines.append(f"  {name:<29} {params}")
    slugs = tuple(experiment_slug(name) for name in EXPERIMENTS)
    sizes = [round(DEFAULT_FIRST * DEFAULT_RATIO**j) for j in range(3)]
    looks = ", ".join(f"{s:,}" for s in sizes) + ", …"  # the default schedule's first looks
    return Catalog(tuple(registry.names()), "\n".join(lines), slugs, looks)


def add_lam(parser, *, required: bool = False, parse=float, default=(2.0, 5.0, 7.0), note=None):
    """``--lam λ [λ ...]``; ``default=None`` leaves the choice to the library (``note``: how)."""
    if required:
        tail = ""
    elif default is None:
        tail = f" (default: {note})" if note else ""
    else:
        tail = " (default " + " ".join(f"{v:g}" for v in default) + ")"
    parser.add_argument(
        "--lam",
        type=parse,
        nargs="+",
        required=required,
        default=None if required or default is None else list(default),
        metavar="λ",
        help="one or more orders λ > 1; bounds are simultaneous over them" + tail,
    )


def add_zoo_options(parser, names: list[str], *, optional: bool = False, help=None) -> None:
    """The ``MECHANISM`` positional and ``--param NAME=VALUE``."""
    parser.add_argument(
        "mechanism",
        nargs="?" if optional else None,
        default=None,
        metavar="MECHANISM",
        help=help or "a zoo mechanism: " + ", ".join(names),
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter of the zoo mechanism (repeatable), e.g. --param scale=2; "
        "the parameters are listed below",
    )


def add_experiments(parser, slugs: list[str], help: str) -> None:
    parser.add_argument(
        "--experiment",
        action="append",
        default=[],
        metavar="NAME",
        help=f"{help} (repeatable): " + ", ".join(slugs),
    )


def add_sizes(parser, help: str) -> None:
    """``--n N [N ...]``, also repeatable: every value is kept (each ≥ 20, as a bound needs)."""
    parser.add_argument(
        "--n", type=bound_size, nargs="+", action="extend", default=None, metavar="N", help=help
    )


def add_level_and_seed(parser) -> None:
    parser.add_argument(
        "--alpha", type=alpha_level, default=0.05, help="family-wise error level (default 0.05)"
    )
    parser.add_argument("--seed", type=seed, default=0, help="PRNG seed (default 0)")


def add_cpu_devices(parser) -> None:
    parser.add_argument(
        "--cpu-devices",
        type=cpu_devices,
        default=None,
        metavar="K",
        help="on a CPU, split the replications over K devices, side by side (auto: one per "
        "core). JAX shows one CPU device unless told; results change only by rounding. "
        "Has no effect on a GPU or TPU, whose devices are used as they are",
    )


def add_claim_options(parser, *, dpsgd: str | None = None) -> None:
    """``--claim-epsilon | --claim-zcdp | --claim-gdp | --claim-rdp`` (mutually exclusive).

    With ``dpsgd`` (how the command checks such a claim, for the help text), also
    ``--claim-dpsgd σ,q,T``: DP-SGD's accountant claim (:func:`dpsgd_claim`).
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--claim-epsilon",
        type=finite_float,
        metavar="E",
        help="check the claim that the mechanism is ε-DP with ε = E (rdpjax.claims.pure_dp)",
    )
    group.add_argument(
        "--claim-zcdp",
        type=finite_float,
        metavar="RHO",
        help="check the claim ρ-zCDP: ε(λ) ≤ ρλ (rdpjax.claims.zcdp)",
    )
    group.add_argument(
        "--claim-gdp",
        type=finite_float,
        metavar="MU",
        help="check the claim μ-GDP: ε(λ) ≤ λμ²/2 (rdpjax.claims.gdp)",
    )
    group.add_argument(
        "--claim-rdp",
        type=rdp_table,
        metavar="λ=ε,...",
        help="check claimed RDP values, e.g. 2=0.1,5=0.4 (rdpjax.claims.rdp)",
    )
    if dpsgd is not None:
        group.add_argument(
            "--claim-dpsgd",
            type=dpsgd_triple,
            metavar="σ,q,T",
            help="check DP-SGD's accountant claim: noise multiplier σ, Poisson sampling rate q, "
            "T steps, i.e. dp_accounting's SelfComposedDpEvent(PoissonSampledDpEvent(q, "
            f"GaussianDpEvent(σ)), T) (rdpjax.claims.from_dp_accounting), {dpsgd}",
        )
    parser.add_argument(
        "--claim-delta",
        type=finite_float,
        metavar="D",
        default=None,
        help="with --claim-epsilon E: check the claim (E, D)-DP by certified rejection sets "
        "(rdpjax.claims.approx_dp); D = 0 is E-DP, checked as --claim-epsilon E alone",
    )


_CLAIM_OPTIONS = {
    "claim_epsilon": ("--claim-epsilon", "pure_dp"),
    "claim_zcdp": ("--claim-zcdp", "zcdp"),
    "claim_gdp": ("--claim-gdp", "gdp"),
    "claim_rdp": ("--claim-rdp", "rdp"),
}


def claim_from_args(args):
    """The :class:`rdpjax.claims.Claim` the options name, or ``None``.

    ``--claim-epsilon E --claim-delta D`` is :func:`rdpjax.claims.approx_dp` (E, D), which is
    ``pure_dp(E)`` (the claim of ``--claim-epsilon E`` alone) when D = 0.

    Raises:
      CliError: for an invalid claim, or ``--claim-delta`` without ``--claim-epsilon``.
    """
    triple = getattr(args, "claim_dpsgd", None)
    if triple is not None:
        return dpsgd_claim(*triple)
    delta = getattr(args, "claim_delta", None)
    if delta is not None:
        from rdpjax import claims

        epsilon = getattr(args, "claim_epsilon", None)
        if epsilon is None:
            raise CliError(
                f"--claim-delta {delta:g} needs --claim-epsilon E: together they claim (E, D)-DP"
            )
        try:
            return claims.approx_dp(epsilon, delta)
        except ValueError as err:
            raise CliError(f"--claim-epsilon {epsilon:g} --claim-delta {delta:g}: {err}") from err
    for dest, (flag, constructor) in _CLAIM_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        from rdpjax import claims

        try:
            return getattr(claims, constructor)(value)
        except ValueError as err:
            shown = f"{value:g}" if isinstance(value, float) else value
            if dest == "claim_rdp":
                shown = ",".join(f"{k:g}={v:g}" for k, v in value.items())
            raise CliError(f"{flag} {shown}: {err}") from err
    return None


def dpsgd_claim(sigma: float, rate: float, steps: int):
    """The claim of ``--claim-dpsgd σ,q,T``: T steps of the Poisson-subsampled Gaussian.

    ``from_dp_accounting(SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T))``
    (add-or-remove-one neighbours, dp_accounting's default for DP-SGD). The claim's kind is
    ``"dp_accounting"``: ``rdpjax canaries`` reads its trade-off curve from dp_accounting's PLD
    (:func:`rdpjax.canaries.tradeoffs.pld_conversion`), ``rdpjax audit`` its RDP curve.

    Raises:
      CliError: dp_accounting is not installed, or it rejects the event.
    """
    try:
        import dp_accounting
    except ImportError as err:
        raise CliError("--claim-dpsgd needs dp_accounting: pip install dp-accounting") from err
    from rdpjax import claims

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma)), steps
    )
    try:
        return claims.from_dp_accounting(event, name=f"DP-SGD σ={sigma:g}, q={rate:g}, T={steps}")
    except ValueError as err:
        raise CliError(f"--claim-dpsgd {sigma:g},{rate:g},{steps}: {err}") from err


# --------------------------------------------------------------------------------------------
# Mechanisms and devices.


def zoo_mechanism(name: str, param_items: list[str]):
    """The zoo mechanism ``name`` with ``--param NAME=VALUE`` overrides (CliError if bad)."""
    from rdpjax.mechanisms import registry

    try:
        entry = registry.get(name)
        return entry.make(**entry.parse(param_items))
    except ValueError as err:
        raise CliError(str(err)) from err


def set_cpu_devices(k: int | None) -> None:
    """Give JAX ``k`` CPU devices; possible only before JAX's first computation."""
    if k is None:
        return
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", k)  # raises once JAX's backends exist
    except RuntimeError as err:
        have = len(jax.devices("cpu"))
        if have != k:
            raise CliError(
                f"--cpu-devices {k}: JAX has already started in this process with {have} CPU "
                "device(s); the count can only be set before JAX's first computation (run "
                "rdpjax in a fresh process)"
            ) from err
