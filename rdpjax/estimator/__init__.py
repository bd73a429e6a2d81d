"""The estimator of paper 000 (Kutta, Askin, Dunsche, arXiv:2212.04739v3), one step a module.

The data flow, in the order of the modules:

* :mod:`~rdpjax.estimator.support` — discrete or continuous data; integer codes (eq. (9));
* :mod:`~rdpjax.estimator.grid` — the grid as a pytree and its layout policy (exact / bucketed);
* :mod:`~rdpjax.estimator.binning` — linear binning and code counts;
* :mod:`~rdpjax.estimator.kde` — the binned FFT KDE (eq. (10)) and the direct KDE;
* :mod:`~rdpjax.estimator.settings` — ``Defaults``: the h, τ, β rules and their resolvers;
* :mod:`~rdpjax.estimator.divergence` — the softmax floor (13) and the plug-in divergence;
* :mod:`~rdpjax.estimator.variance` — eq. (18) and the autodiff delta method;
* :mod:`~rdpjax.estimator.second_order` — the second-order bias and variance;
* :mod:`~rdpjax.estimator.delta` — estimate, standard error and bias for every order;
* :mod:`~rdpjax.estimator.bound_plan` — ``Bound``, ``Binned``, ``BoundPlan``: the bound (16);
* :mod:`~rdpjax.estimator.options` — ``BoundOptions``: the estimator's settings in one object;
* :mod:`~rdpjax.estimator.from_samples` — the host-side planner: checks, decisions, layout;
* :mod:`~rdpjax.estimator.api` — ``plan_bound`` and ``lower_bound``, from samples;
* :mod:`~rdpjax.estimator.orders` — the default orders without a claim (with one:
  :mod:`rdpjax.claims.orders`);
* :mod:`~rdpjax.estimator.sharding` — devices: meshes, sums and maps over them.
"""

from rdpjax.estimator.api import PROGRAM_BUDGET, lower_bound, plan_bound
from rdpjax.estimator.binning import count_codes, linear_binning
from rdpjax.estimator.bound_plan import DIRECTION_NAMES, Binned, Bound, BoundPlan
from rdpjax.estimator.divergence import plugin_divergence, renyi_divergence, softmax_floor
from rdpjax.estimator.grid import LAYOUTS, Grid, bucket_size
from rdpjax.estimator.kde import direct_kde, fft_kde
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.settings import DEFAULTS, Defaults
from rdpjax.estimator.variance import variance_autodiff, variance_eq18

__all__ = [
    "DEFAULTS",
    "DIRECTION_NAMES",
    "LAYOUTS",
    "PROGRAM_BUDGET",
    "Binned",
    "Bound",
    "BoundOptions",
    "BoundPlan",
    "Defaults",
    "Grid",
    "bucket_size",
    "count_codes",
    "direct_kde",
    "fft_kde",
    "linear_binning",
    "lower_bound",
    "plan_bound",
    "plugin_divergence",
    "renyi_divergence",
    "softmax_floor",
    "variance_autodiff",
    "variance_eq18",
]
