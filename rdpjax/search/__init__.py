"""Search for the worst adjacent pair of databases, and certify the bound found on fresh draws.

``ε(λ) = sup_{x~x'} D_λ(p_x, p_x')`` is a supremum over adjacent pairs (eq. (6) of Kutta, Askin,
Dunsche, arXiv:2212.04739v3), and a lower bound computed on one hand-picked pair, such as the
pair (21) of the paper, is only as good as that pick. Because the zoo's samplers are pure JAX and
the plug-in estimator is a smooth function of the sample locations, the pair itself can be
optimized:

* **objective** — the plug-in ``D_λ(p̂_x, q̂_{x',τ})`` of eq. (14)–(16) on ``search_n`` draws per
  side, with *common random numbers*: the same PRNG key for x and x' and for every step of one
  restart, so the objective is a deterministic, piecewise smooth function of the pair. Continuous
  outputs are linearly binned on a fixed grid (the binning weights are linear in the sample
  locations, hence differentiable), smoothed by the FFT KDE of eq. (10) at a fixed bandwidth and
  floored by eq. (13); discrete outputs are counted (eq. (9));
* **gradient search** (continuous outputs, reparameterized sampler) — projected gradient ascent
  with any optax transformation (Adam by default) on ``(base, a, b)``: x equals ``base`` with entry
  j set to ``a``, x' the same with entry j set to ``b``, so the pair is adjacent by construction;
  after each update the parameters are projected onto the box ``domain``. Restart r uses entry
  ``j = r mod m``;
* **evolutionary search** (discrete outputs, a finite input domain, or a gradient that vanishes)
  — a vmapped (1+P) evolution strategy: P mutations of the pair per step (entries resampled or
  perturbed, a and b swapped, the entry j moved), the best kept if it improves the objective.

Every order gets its own restarts, and orders and restarts are ``vmap``-ed into one compiled
``lax.scan``. One pair is then chosen for all orders: every final pair and three variants of it
(its nearest vertex of the box; the same differing entry with all other entries at the low end,
or all at the high end, of the domain — for mechanisms monotone in the data these include pairs
like (21)) are evaluated at every order on a *second*, independent set of draws (so noise that
one restart learned to exploit does not decide), and the candidate whose worst order comes
closest to that order's best candidate is kept. Its bounds are **certified** with
:func:`rdpjax.lower_bound` on a *third* set of draws from a key the search never touched: the
pair is a function of data independent of the certification draws, so the certified bound is a
valid lower bound on ``D_λ`` at that pair, hence on ε(λ). With L orders (and both directions, 2L
bounds) each bound is computed at level α/(L·directions) (Bonferroni, docs/methods.md §2.6), so all
reported bounds hold together with probability ≥ 1 − α. Choosing among restarts and variants
needs no correction: the choice never sees the certification draws.

**Numpy black boxes** ``sample(rng, database, m)`` have no gradient and no known output law: for
them :func:`find_pair` takes the database domain explicitly (``m`` entries in ``domain = (low,
high)``) and the neighbouring relation (``neighbours="replace-one"`` or ``"add-remove"``), all
three fields of :class:`Pairs`; it runs ``restarts`` optuna studies (TPE, seeded from the key)
of ``trials`` trials each (:class:`Budget`), every trial a pair scored by the plug-in estimate
on ``search_n`` draws with common random numbers, re-scores the best trials and their variants
on independent selection draws, and certifies the pair kept with
:func:`rdpjax.stream.streamed_bound` (a :class:`~rdpjax.stream.BlackBox`) on fresh draws at the same
simultaneous level (:class:`Certification`). The relation is recorded in
:attr:`SearchResult.neighbours`.

Cost: ``steps × restarts × L`` evaluations of the objective (``× population`` for the evolutionary
search), each O(search_n + g log g) for a grid of g points; ``4 × restarts × L²`` more for the
selection; then one :func:`rdpjax.lower_bound` on ``n`` draws per side.

**Modules**, in the order of the data flow:

* :mod:`rdpjax.search.config`: :class:`Pairs`, :class:`Budget`, :class:`Certification`, the
  options of :func:`find_pair` grouped by concept (the pairs searched, the search's budget, the
  certified bound), and :class:`BlackBoxOptions`, a black box's bound settings;
* :mod:`rdpjax.search.space`: :class:`SearchSpace`, :func:`search_space`, the pair's
  parametrization ``(base, a, b, j)`` and the projections onto the domain;
* :mod:`rdpjax.search.objective`: the plug-in objective and the pilot that fixes its grid,
  bandwidth and floor (the bound's rules); :func:`search_objective`;
* :mod:`rdpjax.search.optimize`: the gradient and evolutionary searches, restarts and orders
  vmapped into one compiled function, the candidates and the selection among them;
* :mod:`rdpjax.search.neighbours`: a black box's domain and neighbouring relation, pairs from
  free parameters, their variants and the analogue of (21);
* :mod:`rdpjax.search.derivative_free`: the optuna search and the selection for black boxes;
* :mod:`rdpjax.search.certification`: :class:`SearchKeys` and :func:`certify` on fresh draws;
* :mod:`rdpjax.search.result`: :class:`SearchResult`;
* :mod:`rdpjax.search.driver`: :func:`find_pair`.
"""

from rdpjax.search.certification import SearchKeys, certify, search_keys
from rdpjax.search.config import BlackBoxOptions, Budget, Certification, Pairs
from rdpjax.search.driver import find_pair
from rdpjax.search.objective import search_objective

# Reachable as before (``rdpjax.search.CANDIDATES``), outside ``__all__`` as before.
from rdpjax.search.optimize import CANDIDATES as CANDIDATES
from rdpjax.search.optimize import METHODS as METHODS
from rdpjax.search.result import SearchResult
from rdpjax.search.space import SearchSpace, search_space

__all__ = [
    "BlackBoxOptions",
    "Budget",
    "Certification",
    "Pairs",
    "SearchKeys",
    "SearchResult",
    "SearchSpace",
    "certify",
    "find_pair",
    "search_keys",
    "search_objective",
    "search_space",
]
