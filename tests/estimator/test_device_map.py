"""The quantile map on the device against the host reference, value for value.

:func:`rdpjax.estimator.device_map.map_rest` gathers the rest rows by an index computed inside its
program and maps them there; the reference is numpy's: :func:`pilot_split`'s slicing, the host
map (:meth:`QuantileMap.__call__`, chunked), ``finite_extremes`` and ``scale_subsample``. They
must agree exactly (the bound of ``transform="quantile"`` was unchanged by the move, bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest

from rdpjax._precision import float64
from rdpjax.estimator.device_map import map_rest, rest_size
from rdpjax.estimator.from_samples import padded_rows
from rdpjax.estimator.inputs import finite_extremes, to_device_with_extremes
from rdpjax.estimator.settings import SCALE_POINTS, scale_subsample
from rdpjax.estimator.transform import fit_pilot_map, pilot_split


def _correlated(rng, n, d):
    cov = 0.5 * np.eye(d) + 0.5
    return rng.laplace(size=(n, d)) @ np.linalg.cholesky(cov).T


@pytest.mark.parametrize(
    ("n", "d", "pad"),
    [
        (1000, 1, True),
        (1001, 1, False),
        (2047, 2, True),
        (4097, 3, True),
        (65537, 1, True),
        (70_000, 2, False),
    ],  # fmt: skip
)
def test_the_device_map_is_the_host_map_of_the_rest_rows(n, d, pad):
    rng = np.random.default_rng(n + d)
    p, q = _correlated(rng, n, d) + 0.3, _correlated(rng, n + 17, d)
    with float64():
        qmap = fit_pilot_map(p, q)
        for x in (p, q):
            rows_in = padded_rows(len(x)) if pad else len(x)
            placed, _ = to_device_with_extremes(x, "x", np.float64, rows_in, np.nan)
            m = rest_size(len(x))
            rows_out = padded_rows(m) if pad else m
            got = map_rest(x, qmap, rows=rows_out, points=SCALE_POINTS, placed=placed)
            want = qmap(pilot_split(x)[1])
            assert got.n == m == len(want)
            rows = np.asarray(got.rows)
            assert rows.shape == (rows_out, d)
            np.testing.assert_array_equal(rows[:m], want)
            assert np.all(np.isnan(rows[m:]))
            for mine, ref in zip(got.extremes, finite_extremes(want, "x"), strict=True):
                np.testing.assert_array_equal(mine, ref)
            sub, length = scale_subsample(want, SCALE_POINTS)
            assert got.subsample[1] == length
            np.testing.assert_array_equal(np.asarray(got.subsample[0]), sub)


def test_float32_samples_are_mapped_from_their_float64_values():
    rng = np.random.default_rng(3)
    p = rng.standard_cauchy((5000, 1)).astype(np.float32)
    q = rng.standard_cauchy((5000, 1)).astype(np.float32)
    with float64():
        qmap = fit_pilot_map(p, q)
        got = map_rest(p, qmap, rows=rest_size(len(p)), points=SCALE_POINTS)
        np.testing.assert_array_equal(np.asarray(got.rows), qmap(pilot_split(p)[1]))
