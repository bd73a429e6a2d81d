"""rdpjax: black-box statistical lower bounds on the Rényi-DP parameter ε(λ), in JAX.

Implements Kutta, Askin, Dunsche, *Lower Bounds for Rényi Differential Privacy in a Black-Box
Setting* (arXiv:2212.04739v3). See ``README.md``; claims in ``docs/claims.md``.

Every name below is loaded on first use (PEP 562): ``import rdpjax`` itself does not import jax,
so the ``rdpjax`` command answers a mistake in its arguments before paying for jax.
"""

import importlib as _importlib

from rdpjax._internal.workarounds import cpu_pool_hang_workaround
from rdpjax._version import __version__ as __version__

cpu_pool_hang_workaround()  # jaxlib 0.11.1-0.11.2 on the CPU: see rdpjax/_internal/workarounds.py
del cpu_pool_hang_workaround

# Submodules reachable as ``rdpjax.NAME`` after a plain ``import rdpjax``.
_SUBMODULES = (
    "auditing",
    "canaries",
    "claims",
    "estimator",
    "histogram",
    "ldp",
    "mechanisms",
    "rejection",
    "search",
    "stream",
    "studies",
    "testing",
)
# The headline names, and the module each comes from.
_NAMES = {
    "AuditReport": "rdpjax.auditing",
    "Looks": "rdpjax.auditing",
    "audit": "rdpjax.auditing",
    "write_report": "rdpjax.auditing",
    "Claim": "rdpjax.claims",
    "ClaimCheck": "rdpjax.claims",
    "check_claim": "rdpjax.claims",
    "enable_compilation_cache": "rdpjax.compilation_cache",
    "DEFAULTS": "rdpjax.estimator.api",
    "Defaults": "rdpjax.estimator.api",
    "lower_bound": "rdpjax.estimator.api",
    "plan_bound": "rdpjax.estimator.api",
    "plugin_divergence": "rdpjax.estimator.divergence",
    "renyi_divergence": "rdpjax.estimator.divergence",
    "softmax_floor": "rdpjax.estimator.divergence",
    "Grid": "rdpjax.estimator.grid",
    "direct_kde": "rdpjax.estimator.kde",
    "fft_kde": "rdpjax.estimator.kde",
    "BoundOptions": "rdpjax.estimator.options",
    "Bound": "rdpjax.estimator.bound_plan",
    "BoundPlan": "rdpjax.estimator.bound_plan",
    "variance_autodiff": "rdpjax.estimator.variance",
    "variance_eq18": "rdpjax.estimator.variance",
    "databases": "rdpjax.mechanisms",
    "float64": "rdpjax._precision",
    "streamed_bound": "rdpjax.stream",
    "JaxSamplers": "rdpjax.stream",
    "MechanismPair": "rdpjax.stream",
    "BlackBox": "rdpjax.stream",
    "find_pair": "rdpjax.search",
    "coverage": "rdpjax.studies",
}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _importlib.import_module(f"rdpjax.{name}")
    if name in _NAMES:
        value = getattr(_importlib.import_module(_NAMES[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'rdpjax' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_SUBMODULES, *_NAMES])


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
    "Looks",
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
