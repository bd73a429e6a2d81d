"""``rdpjax search``: search a mechanism's worst neighbouring pair, and certify its bound.

    rdpjax search MECHANISM [--param NAME=VALUE ...] [--lam 2 5 7] [--m M] [--domain LOW HIGH]
                  [--steps S] [--restarts R] [--n N] [--search-n N] [--select-n N] [--seed S]
                  [--method M] [--alpha A] [--both-directions] [--reference] [--json]
    rdpjax search FILE.py:FUNCTION --numpy --size M --bounds LOW HIGH
                  --neighbours replace-one|add-remove [--trials T] [--restarts R] [--top K] ...

Mechanisms and their parameters are those of ``rdpjax audit`` (:mod:`rdpjax.mechanisms.registry`).
``FILE.py:FUNCTION`` (or ``package.module:function``) names the user's code, loaded as ``rdpjax
audit`` loads it (:mod:`rdpjax.cli._loading`): with ``--numpy`` a black box ``f(rng, database,
n)`` searched by optuna over the explicit domain and relation, without it a JAX sampler ``f(key,
database, n)`` searched like a zoo mechanism.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from rdpjax.cli._args import Catalog, add_zoo_options, subcommand, zoo_mechanism
from rdpjax.cli._loading import is_reference, load_function
from rdpjax.cli._types import CliError, alpha_level, count, order, seed, whole

__all__ = ["add_command", "run"]

_NEIGHBOURS = ("replace-one", "add-remove")  # rdpjax.search.neighbours.NEIGHBOURS (lazy import)
_NUMPY_HINT = (
    "with --numpy rdpjax calls f(rng, database, n), rng a numpy.random.Generator; for a JAX "
    "sampler f(key, database, n), drop --numpy"
)
_JAX_HINT = (
    "rdpjax called it as a JAX sampler f(key, database, n); for numpy code taking a "
    "numpy.random.Generator, add --numpy"
)


def _check_flags(args) -> None:
    """Options that belong to the other kind of search are errors, not silently ignored."""
    user = is_reference(args.mechanism)
    if args.numpy and not user:
        raise CliError(
            "--numpy describes your own function (FILE.py:FUNCTION); a zoo mechanism is JAX code"
        )
    if user and args.param:
        raise CliError("--param sets a zoo mechanism's parameters; your function takes its own")
    if args.numpy:
        missing = [
            flag
            for flag, value in (
                ("--size", args.m),
                ("--bounds", args.domain),
                ("--neighbours", args.neighbours),
            )
            if value is None
        ]
        if missing:
            raise CliError(
                f"{', '.join(missing)} required with --numpy: a black box's database domain "
                "(--size M --bounds LOW HIGH) and neighbouring relation (--neighbours "
                "replace-one or add-remove) are explicit"
            )
        wrong = [flag for flag, v in (("--steps", args.steps),) if v is not None]
        if args.method in ("gradient", "evolutionary"):
            wrong.append(f"--method {args.method}")
    else:
        wrong = [f for f, v in (("--trials", args.trials), ("--top", args.top)) if v is not None]
        if args.method in ("tpe", "random"):
            wrong.append(f"--method {args.method}")
    if wrong:
        kind = "a JAX mechanism (drop --numpy)" if args.numpy else "a numpy black box (--numpy)"
        raise CliError(f"{' and '.join(wrong)} applies to {kind} only")


def _mechanism(args):
    """The zoo mechanism, the user's JAX sampler as a mechanism, or the user's black box."""
    if not is_reference(args.mechanism):
        return zoo_mechanism(args.mechanism, args.param)
    fn = load_function(args.mechanism, hint=_NUMPY_HINT if args.numpy else _JAX_HINT)
    if args.numpy:
        return fn
    from rdpjax.mechanisms import from_sampler

    return from_sampler(fn, name=fn.__name__)


def _reference(mech, args, result):
    """``(x, x')`` of the reference pair: the zoo mechanism's (21), or the domain's analogue.

    The analogue is taken under the relation searched
    (:func:`rdpjax.search.neighbours.reference_params`).
    """
    from rdpjax.mechanisms import Mechanism
    from rdpjax.search import search_space
    from rdpjax.search.neighbours import black_box_space, pair, reference_params

    if not isinstance(mech, Mechanism):
        space = black_box_space(args.m, args.domain, args.levels)
        x, x_prime, _ = pair(reference_params(space, result.neighbours), space, result.neighbours)
        return x, x_prime
    space = search_space(mech)
    x, x_prime = (np.asarray(v, np.float64) for v in mech.reference_pair())
    if args.m is not None and x.reshape(-1).size != args.m:
        raise CliError("--reference needs the reference pair's m; drop --m")
    return x.reshape(space.shape), x_prime.reshape(space.shape)


def run(args) -> int:
    """Handler of ``rdpjax search``.

    Input errors raise :class:`CliError`, errors in the user's code
    :class:`~rdpjax.cli._loading.UserCodeError`.
    """
    import jax

    from rdpjax.search import Budget, Certification, Pairs, certify, find_pair, search_keys

    _check_flags(args)
    mech = _mechanism(args)
    key_search = jax.random.key(args.seed)
    try:
        result = find_pair(
            key_search,
            mech,
            args.lam,
            pairs=Pairs(
                m=args.m, domain=args.domain, levels=args.levels, neighbours=args.neighbours
            ),
            budget=Budget(
                method=args.method,
                steps=args.steps or 100,
                restarts=args.restarts,
                trials=args.trials or 200,  # set for a numpy black box only (_check_flags)
                top=args.top or 3,
                search_n=args.search_n,
                select_n=args.select_n,
            ),
            certification=Certification(
                n=args.n, alpha=args.alpha, both_directions=args.both_directions
            ),
            progress=False if args.json else None,
        )
        reference = None
        if args.reference:
            x, x_prime = _reference(mech, args, result)
            reference = certify(
                search_keys(key_search).certify,  # common random numbers with the pair found
                mech,
                x,
                x_prime,
                args.lam,
                n=args.n,
                alpha=args.alpha,
                both_directions=args.both_directions,
            )
    except (ValueError, ModuleNotFoundError) as err:
        raise CliError(str(err)) from err
    command = "rdpjax " + " ".join(getattr(args, "argv", []) or ["search", args.mechanism])
    if args.json:
        out = {"command": command, **result.to_dict()}
        if reference is not None:
            out["reference"] = {"x": x.tolist(), "x_prime": x_prime.tolist()}
            out["reference"].update(reference.to_dict())
        print(json.dumps(out, indent=1))
        return 0
    print(result)
    if reference is not None:
        print(
            f"\nreference pair x = {x.tolist()}, x' = {x_prime.tolist()} "
            f"({result.neighbours}; same certification keys as the pair found):"
        )
        from rdpjax.search.result import bound_table

        diff = np.asarray(result.lower) - np.asarray(reference.lower)
        se = np.hypot(result.std_error, reference.std_error)
        tails = [
            "  found − reference",
            *(f"  {d:+.6f} ({d / s:+.1f} se)" for d, s in zip(diff, se, strict=True)),
        ]
        r = reference
        print("\n".join(bound_table(r.lam, r.lower, r.estimate, r.std_error, tails)))
    return 0


def add_command(sub, listed: Catalog):
    """Add ``rdpjax search`` to ``sub`` (from ``add_subparsers``)."""
    positive = functools.partial(whole, least=1)  # a whole number ≥ 1
    levels = functools.partial(whole, least=2)

    s = subcommand(
        sub,
        "search",
        help="search the worst neighbouring pair of a mechanism and certify its bound",
        description="Search the neighbouring pair of databases with the largest estimated "
        "D_λ. A zoo mechanism or a JAX sampler (one entry differs): gradient ascent through "
        "the sampler and a kernel density estimate (continuous outputs) or an evolution "
        "strategy (discrete outputs, finite input domains), restarts vmapped. A numpy black "
        "box (FILE.py:FUNCTION --numpy): optuna's TPE sampler over the explicit domain (--size, "
        "--bounds) and neighbouring relation (--neighbours replace-one: one entry differs; "
        "add-remove: one entry removed or added), each trial scored on cheap draws. The pair "
        "found is then certified with `rdpjax bound`'s estimator on fresh draws that the "
        "search never saw, simultaneously over the orders (Bonferroni), and the relation is "
        "printed with it. --reference also certifies the mechanism's reference pair (pair (21) "
        "for paper 000; for a black box the domain's analogue of (21) under the relation) with "
        "the same certification keys (common random numbers), for comparison; its bounds are a "
        "separate family at the same level. Exit status 0, or 2 on bad input.",
        examples=[
            "rdpjax search gaussian --lam 2 5 7 --n 1e5 --reference",
            "rdpjax search shuffled-randomized-response --steps 60 --restarts 4 --json",
            "rdpjax search mech.py:sample --numpy --size 10 --bounds 0 1 "
            "--neighbours replace-one --trials 200 --reference",
        ],
        notes=listed.zoo_listing,
    )
    add_zoo_options(
        s,
        listed.zoo_names,
        help="a zoo mechanism (" + ", ".join(listed.zoo_names) + "), or your function as "
        "FILE.py:FUNCTION or package.module:function",
    )
    s.add_argument(
        "--numpy",
        action="store_true",
        help="your function is a numpy black box f(rng, database, n), rng a "
        "numpy.random.Generator; needs --size, --bounds and --neighbours",
    )
    s.add_argument(
        "--lam",
        type=order,
        nargs="+",
        default=[2.0, 5.0, 7.0],
        metavar="λ",
        help="orders λ > 1; the certified bounds are simultaneous over them (default 2 5 7)",
    )
    s.add_argument(
        "--m",
        "--size",
        dest="m",
        type=positive,
        default=None,
        metavar="M",
        help="entries per database (zoo default: as (21); required with --numpy)",
    )
    s.add_argument(
        "--domain",
        "--bounds",
        dest="domain",
        type=float,
        nargs=2,
        default=None,
        metavar=("LOW", "HIGH"),
        help="interval of every entry (zoo default: the mechanism's, [0, 1] for paper 000; "
        "required with --numpy)",
    )
    s.add_argument(
        "--levels",
        type=levels,
        default=None,
        metavar="K",
        help="entries on K equally spaced values of the interval (2: bits)",
    )
    s.add_argument(
        "--neighbours",
        "--neighbors",
        dest="neighbours",
        choices=_NEIGHBOURS,
        default=None,
        help="the neighbouring relation: replace-one (same size, one entry differs) or "
        "add-remove (one entry removed or added); required with --numpy, replace-one otherwise",
    )
    s.add_argument(
        "--steps", type=positive, default=None, help="steps per restart (JAX; default 100)"
    )
    s.add_argument(
        "--trials",
        type=positive,
        default=None,
        help="optuna trials per restart (--numpy; default 200)",
    )
    s.add_argument(
        "--restarts",
        type=positive,
        default=None,
        help="restarts per order (JAX; default 8), or independent optuna studies (--numpy; "
        "default 4)",
    )
    s.add_argument(
        "--top",
        type=positive,
        default=None,
        help="best trials per study re-scored on the selection draws (--numpy; default 3)",
    )
    s.add_argument(
        "--n", type=count, default=10**5, help="certification draws per side (default 1e5)"
    )
    s.add_argument(
        "--search-n",
        type=count,
        default=None,
        help="draws per side of the search objective (each trial; default min(n, 4096))",
    )
    s.add_argument(
        "--select-n",
        type=count,
        default=None,
        help="draws per side that pick the pair among the candidates (default min(n, 4 search-n))",
    )
    s.add_argument(
        "--method",
        choices=("auto", "gradient", "evolutionary", "tpe", "random"),
        default="auto",
        help="search method (default auto: gradient where the outputs are continuous; tpe for "
        "--numpy; random: random search, a baseline)",
    )
    s.add_argument(
        "--alpha", type=alpha_level, default=0.05, help="family-wise error level (default 0.05)"
    )
    s.add_argument("--seed", type=seed, default=0, help="PRNG seed (default 0)")
    s.add_argument(
        "--both-directions",
        action="store_true",
        help="certify both directions of the pair found (2 bounds per order)",
    )
    s.add_argument(
        "--reference",
        action="store_true",
        help="also certify the mechanism's reference pair (same certification keys)",
    )
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=run)
    return s
