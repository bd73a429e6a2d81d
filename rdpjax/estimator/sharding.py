"""Device meshes, sums and maps over devices: the public names of :mod:`rdpjax._internal.sharding`.

Splitting draws and replications over devices is a runtime trick and lives in the internal package
(issue 52); its docstring says how the chunks and replications are dealt out, and how to run on
several hosts. This module keeps the names users import (e.g.
``rdpjax.estimator.binning.linear_binning(x, grid, mesh=rdpjax.estimator.sharding.draw_mesh())``).
"""

from rdpjax._internal import sharding as _sharding
from rdpjax._internal.sharding import *  # noqa: F403  (its public names, as __all__ lists them)

__all__ = list(_sharding.__all__)
