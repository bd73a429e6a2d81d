"""rdpjax: black-box statistical lower bounds on the Rényi-DP parameter ε(λ), in JAX.

Implements Kutta, Askin, Dunsche, *Lower Bounds for Rényi Differential Privacy in a Black-Box
Setting* (arXiv:2212.04739v3). See ``README.md``; claims in ``docs/claims.md``.
"""

import importlib as _importlib

from rdpjax import claims, estimator, histogram, ldp, mechanisms
from rdpjax._precision import float64
from rdpjax._version import __version__ as __version__
from rdpjax._workarounds import cpu_pool_hang_workaround
from rdpjax.auditing import AuditReport, audit, write_report
from rdpjax.claims import Claim, ClaimCheck, check_claim
from rdpjax.compilation_cache import enable_compilation_cache
from rdpjax.estimator.api import DEFAULTS, Defaults, lower_bound, plan_bound
from rdpjax.estimator.divergence import plugin_divergence, renyi_divergence, softmax_floor
from rdpjax.estimator.grid import Grid
from rdpjax.estimator.kde import direct_kde, fft_kde
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.plan import Bound, BoundPlan
from rdpjax.estimator.variance import variance_autodiff, variance_eq18
from rdpjax.mechanisms import databases

cpu_pool_hang_workaround()  # jaxlib 0.11.1-0.11.2 on the CPU: see rdpjax/_workarounds.py
del cpu_pool_hang_workaround


# Submodules with heavier imports, loaded on first use (PEP 562): ``rdpjax.stream`` and the rest
# work after a plain ``import rdpjax``, which does not pay for them.
_LAZY_SUBMODULES = ("canaries", "search", "stream", "studies", "testing")
# Headline functions of those submodules, reachable as ``rdpjax.NAME`` the same way.
_LAZY_NAMES = {
    "streamed_bound": "stream",
    "mechanism_streamed_bound": "stream",
    "blackbox_bound": "stream",
    "find_pair": "search",
    "coverage": "studies",
}


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"rdpjax.{name}")
    if name in _LAZY_NAMES:
        return getattr(_importlib.import_module(f"rdpjax.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module 'rdpjax' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY_SUBMODULES, *_LAZY_NAMES])


__all__ = [
    "AuditReport",
    "Bound",
    "BoundOptions",
    "BoundPlan",
    "Claim",
    "ClaimCheck",
    "DEFAULTS",
    "Defaults",
    "Grid",
    "audit",
    "check_claim",
    "claims",
    "databases",
    "estimator",
    "direct_kde",
    "enable_compilation_cache",
    "fft_kde",
    "float64",
    "histogram",
    "ldp",
    "lower_bound",
    "mechanisms",
    "plan_bound",
    "plugin_divergence",
    "renyi_divergence",
    "softmax_floor",
    "variance_autodiff",
    "variance_eq18",
    "write_report",
]
