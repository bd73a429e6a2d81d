"""Integer vector outputs in a streamed audit: the pilot's row book, and the bound it gives.

The reference for the bound is the in-memory audit of the same mechanism, which codes the rows
jointly from all the draws; the code book's own properties are checked against numpy's
``unique(axis=0)``.
"""

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.claims import pure_dp
from rdpjax.stream.rows import RowBook


def test_row_book_is_one_to_one_on_the_pilot_and_zero_elsewhere():
    rng = np.random.default_rng(0)
    pilot = rng.integers(-2, 3, size=(2000, 3))
    book = RowBook(pilot)
    codes = book(pilot)
    unique, inverse = np.unique(pilot, axis=0, return_inverse=True)
    assert book.size == unique.shape[0] + 1 and codes.min() == 1
    # equal rows, equal codes; distinct rows, distinct codes; the book inverts the codes
    for k in range(unique.shape[0]):
        assert len(set(codes[inverse.ravel() == k])) == 1
    assert np.unique(codes).size == unique.shape[0]
    assert np.array_equal(book.rows[codes - 1], pilot)
    assert book(np.array([[7, 7, 7]])).tolist() == [0]
    with pytest.raises(ValueError, match="shape"):
        book(np.zeros((3, 2), int))


def two_bits(rng, database, m):
    """Two independent randomized-response bits at ε = 1 each, on the first two records."""
    keep = np.e / (1 + np.e)
    flips = rng.random((m, 2)) >= keep
    return np.where(flips, 1 - np.asarray(database)[:2], np.asarray(database)[:2]).astype(np.int64)


def test_a_streamed_audit_takes_integer_rows_and_agrees_with_memory():
    common = dict(n=40_000, claim=pure_dp(1.5), lam=[2.0], progress=False)
    streamed = rdpjax.audit(jax.random.key(0), two_bits, [1, 1], [0, 0], memory_budget=0, **common)
    in_memory = rdpjax.audit(jax.random.key(0), two_bits, [1, 1], [0, 0], discrete=True, **common)
    assert streamed.streamed and not in_memory.streamed
    # Two ε = 1 bits both flipped: 2-DP, refuting 1.5-DP; D_2 of the pair is 2·D_2(RR_1) = 0.86.
    exact = 2 * float(pure_dp(1.0)(2.0))
    for report in (streamed, in_memory):
        assert 0.6 < float(report.lower[0]) <= exact
    assert abs(float(streamed.lower[0]) - float(in_memory.lower[0])) < 0.1
