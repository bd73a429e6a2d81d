"""Studies of the estimator itself: coverage by replication, paper 000's experiments, the demo.

* :mod:`~rdpjax.studies.coverage_study` — :func:`coverage`: R replications of a zoo audit in two
  compiled, vmapped calls, and how often the bound held (Wilson intervals);
* :mod:`~rdpjax.studies.reproduction` — :func:`~rdpjax.studies.reproduction.reproduce`: paper
  000 §V's seven experiments (``rdpjax reproduce``);
* :mod:`~rdpjax.studies.demo` — what ``make demo`` runs first.
"""

from rdpjax.studies.coverage_study import (
    CoverageResult,
    StudyOptions,
    coverage,
    format_coverage,
    wilson_interval,
)

__all__ = ["CoverageResult", "StudyOptions", "coverage", "format_coverage", "wilson_interval"]
