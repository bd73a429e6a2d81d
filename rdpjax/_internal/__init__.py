"""Compiler and runtime tricks, kept apart from the mathematics (as equinox keeps ``internal/``).

One trick a module; each says what it buys and where it was measured:

* :mod:`~rdpjax._internal.buffers` — samples copied to the device in one copy: 64-byte aligned
  host buffers that jax shares on the CPU, the large ones kept for reuse while nothing refers to
  them (``sys.getrefcount``), and the copy that reads the extremes block by block;
* :mod:`~rdpjax._internal.programs` — the program budget: compiled programs of jitted functions
  dropped once one holds too many (``PROGRAM_BUDGET``, ``trim_programs``);
* :mod:`~rdpjax._internal.packed` — the packed 1-D linear binning: one int64 scatter-add a
  sample, count and rounded fraction in one word;
* :mod:`~rdpjax._internal.fusion` — a fusion boundary (a conditional XLA's CPU backend keeps),
  so that drawn samples are written to memory once before they are binned;
* :mod:`~rdpjax._internal.progress` — progress reports from inside a compiled scan through one
  fixed host callback and a registry of runs; the tqdm bar of host-side loops;
* :mod:`~rdpjax._internal.threads` — two host computations side by side (the pilot's two sorts);
* :mod:`~rdpjax._internal.sharding` — device meshes, sums and maps over devices (``shard_map``),
  the replications' batch budget (the public names stay importable from
  :mod:`rdpjax.estimator.sharding`);
* :mod:`~rdpjax._internal.workarounds` — version-gated XLA flags for jaxlib bugs, set on import.

The rule: nothing statistical lives here. The mathematics (grids, the binning's split of a sample
between cells, densities, divergences, variances, bounds) stays in :mod:`rdpjax.estimator` and the
packages above it; a module here changes how fast or in how much memory a number is computed,
never the number (the packed binning moves a sample by at most 2^-(b+1) of a cell, a fixed map:
its docstring says why the bound's argument holds as it stands). This is the one private package
that every other package may import (``tests/test_layers.py``); it imports none of them.
Nothing here is public: names may change without notice.
"""
