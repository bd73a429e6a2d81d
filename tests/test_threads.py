"""rdpjax._internal.threads.both: the pair of a plain call, whichever thread runs each half."""

import threading

import numpy as np
import pytest

from rdpjax._internal import threads


@pytest.mark.parametrize("items", [threads.MIN_ITEMS - 1, threads.MIN_ITEMS])
def test_both_returns_what_two_plain_calls_return_in_order(items):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(items), rng.standard_normal(items).astype(np.float32)
    first, second = threads.both(np.sort, a, b, items=items)
    np.testing.assert_array_equal(first, np.sort(a))
    np.testing.assert_array_equal(second, np.sort(b))
    assert first.dtype == np.float64 and second.dtype == np.float32


def test_small_inputs_stay_in_the_callers_thread_and_large_ones_use_the_worker():
    def where(_):
        return threading.get_ident()

    here = threading.get_ident()
    assert threads.both(where, 0, 1, items=threads.MIN_ITEMS - 1) == (here, here)
    first, second = threads.both(where, 0, 1, items=threads.MIN_ITEMS)
    assert second == here
    assert first != here or threads._CORES < 2


@pytest.mark.parametrize("items", [1, threads.MIN_ITEMS])
def test_errors_propagate_as_from_the_plain_pair(items):
    def fail(tag):
        if tag != "ok":
            raise ValueError(tag)
        return tag

    with pytest.raises(ValueError, match="^a$"):
        threads.both(fail, "a", "ok", items=items)
    with pytest.raises(ValueError, match="^b$"):
        threads.both(fail, "ok", "b", items=items)
    with pytest.raises(ValueError, match="^a$"):  # both fail: the first call's error, as in a pair
        threads.both(fail, "a", "b", items=items)


def test_a_nested_call_runs_inline_rather_than_waiting_on_the_one_worker():
    def outer(tag):
        return threads.both(lambda v: (tag, v), 1, 2, items=threads.MIN_ITEMS)

    assert threads.both(outer, "a", "b", items=threads.MIN_ITEMS) == (
        (("a", 1), ("a", 2)),
        (("b", 1), ("b", 2)),
    )


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_makes_its_own_worker():
    import multiprocessing

    threads.both(np.sort, np.zeros(4), np.zeros(4), items=threads.MIN_ITEMS)  # the parent's
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_sorted_in_child).get(timeout=60)
    assert got == [[1.0, 2.0], [3.0, 4.0]]


def _sorted_in_child():
    a, b = np.array([2.0, 1.0]), np.array([4.0, 3.0])
    return [x.tolist() for x in threads.both(np.sort, a, b, items=threads.MIN_ITEMS)]
