"""``rdpjax search``: search a zoo mechanism's worst adjacent pair, and certify its bound.

    rdpjax search MECHANISM [--param NAME=VALUE ...] [--lam 2 5 7] [--m M] [--domain LOW HIGH]
                  [--steps S] [--restarts R] [--n N] [--search-n N] [--select-n N] [--seed S]
                  [--method M] [--alpha A] [--both-directions] [--reference] [--json]

Mechanisms and their parameters are those of ``rdpjax audit`` (:mod:`rdpjax.mechanisms.registry`).
"""

from __future__ import annotations

import functools
import json

import numpy as np

from rdpjax.cli._args import add_zoo_options, subcommand, zoo_listing, zoo_mechanism
from rdpjax.cli._types import CliError, alpha_level, count, order, whole

__all__ = ["add_command", "run"]


def run(args) -> int:
    """Handler of ``rdpjax search``; input errors raise :class:`CliError`."""
    import jax

    from rdpjax.search import certify, find_pair, search_keys, search_space

    mech = zoo_mechanism(args.mechanism, args.param)
    key_search = jax.random.key(args.seed)
    try:
        result = find_pair(
            mech,
            args.lam,
            key=key_search,
            m=args.m,
            domain=args.domain,
            steps=args.steps,
            restarts=args.restarts,
            n=args.n,
            search_n=args.search_n,
            select_n=args.select_n,
            alpha=args.alpha,
            both_directions=args.both_directions,
            method=args.method,
        )
        reference = None
        if args.reference:
            space = search_space(mech)
            x, x_prime = (np.asarray(v, np.float64) for v in mech.reference_pair())
            if args.m is not None and x.reshape(-1).size != args.m:
                raise CliError("--reference needs the reference pair's m; drop --m")
            x, x_prime = x.reshape(space.shape), x_prime.reshape(space.shape)
            reference = certify(
                mech,
                x,
                x_prime,
                args.lam,
                key=search_keys(key_search).certify,  # common random numbers with the pair found
                n=args.n,
                alpha=args.alpha,
                both_directions=args.both_directions,
            )
    except ValueError as err:
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
            "(same certification keys as the pair found):"
        )
        print(f"{'lambda':>8} {'lower':>10} {'estimate':>10} {'std_error':>10}  found − reference")
        for i, lam in enumerate(np.atleast_1d(reference.lam)):
            diff = result.lower[i] - reference.lower[i]
            se = np.hypot(result.std_error[i], reference.std_error[i])
            print(
                f"{lam:8g} {reference.lower[i]:10.6f} {reference.estimate[i]:10.6f} "
                f"{reference.std_error[i]:10.6f}  {diff:+.6f} ({diff / se:+.1f} se)"
            )
    return 0


def add_command(sub):
    """Add ``rdpjax search`` to ``sub`` (from ``add_subparsers``)."""
    from rdpjax.mechanisms import registry

    positive = functools.partial(whole, least=1)  # a whole number ≥ 1

    s = subcommand(
        sub,
        "search",
        help="search the worst adjacent pair of a zoo mechanism and certify its bound",
        description="Search the adjacent pair of databases (one entry differs) with the largest "
        "estimated D_λ: gradient ascent through the sampler and a kernel density estimate "
        "(continuous outputs) or an evolution strategy (discrete outputs, finite input "
        "domains), restarts vmapped. The pair found is then certified with `rdpjax bound`'s "
        "estimator on fresh draws that the search never saw, simultaneously over the orders "
        "(Bonferroni). --reference also certifies the mechanism's reference pair (pair (21) "
        "for paper 000) with the same certification keys (common random numbers), for "
        "comparison; its bounds are a separate family at the same level.",
        examples=[
            "rdpjax search gaussian --lam 2 5 7 --n 1e5 --reference",
            "rdpjax search shuffled-randomized-response --steps 60 --restarts 4 --json",
        ],
        notes=zoo_listing(),
    )
    add_zoo_options(s, registry.names())
    s.add_argument(
        "--lam",
        type=order,
        nargs="+",
        default=[2.0, 5.0, 7.0],
        metavar="λ",
        help="orders λ > 1; the certified bounds are simultaneous over them (default 2 5 7)",
    )
    s.add_argument(
        "--m", type=positive, default=None, help="entries per database (default: as (21))"
    )
    s.add_argument(
        "--domain",
        type=float,
        nargs=2,
        default=None,
        metavar=("LOW", "HIGH"),
        help="interval of every entry (default: the mechanism's, [0, 1] for paper 000)",
    )
    s.add_argument("--steps", type=positive, default=100, help="steps per restart (default 100)")
    s.add_argument("--restarts", type=positive, default=8, help="restarts per order (default 8)")
    s.add_argument(
        "--n", type=count, default=10**5, help="certification draws per side (default 1e5)"
    )
    s.add_argument(
        "--search-n",
        type=count,
        default=None,
        help="draws per side of the search objective (default min(n, 4096))",
    )
    s.add_argument(
        "--select-n",
        type=count,
        default=None,
        help="draws per side that pick the pair among the candidates (default min(n, 4 search-n))",
    )
    s.add_argument(
        "--method",
        choices=("auto", "gradient", "evolutionary"),
        default="auto",
        help="search method (default auto: gradient where the outputs are continuous)",
    )
    s.add_argument(
        "--alpha", type=alpha_level, default=0.05, help="family-wise error level (default 0.05)"
    )
    s.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
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
