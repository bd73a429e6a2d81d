"""The looks driver (rdpjax.stream.looks.run_looks): the order and sizes of the draws, looks
and stops, checkpoints and resumption, on toy accumulators that record what they are fed; and
the two statistics it runs (the Rényi looks and the betting test) unmoved by a sampler that
returns its batches sorted."""

import time

import jax
import numpy as np
import pytest
from references import Memory, interrupted_at

import rdpjax
from rdpjax.auditing.sequential.engine import look_ends
from rdpjax.claims import gdp, pure_dp
from rdpjax.rejection.betting import betting_test
from rdpjax.stream.batches import BlackBoxBatches
from rdpjax.stream.looks import SAVE_EVERY, Accumulator, Run, Throttle, run_looks

KEY = jax.random.key(31)


def _recording(events=None, stop_at=None):
    """An accumulator whose state is every pair of batches it was fed, in order (a tuple)."""
    events = [] if events is None else events

    def update(fed, bx, by):
        events.append(("update",))
        return (*fed, tuple(None if b is None else b.tolist() for b in (bx, by)))

    def look(fed, k):
        events.append(("look", k, len(fed)))
        return fed, k == stop_at

    return Accumulator(lambda: (), update, look, lambda fed: fed)


class _Logged:
    """A source whose batch ``piece`` of ``side`` is ``m`` copies of ``10 side + piece``."""

    def __init__(self, events):
        self.events = events

    def draw(self, side, piece, m):
        self.events.append(("draw", side, piece, m))
        return np.full(m, 10 * side + piece)

    def rng_state(self):
        return None

    def restore(self, state):
        pass


def test_each_batch_draws_x_then_x_prime_to_the_next_end_then_looks_where_asked():
    events = []
    fed = run_looks(_Logged(events), [2, 5, 9, 10], [1, 3], _recording(events))
    assert events == [
        ("draw", 0, 0, 2), ("draw", 1, 0, 2), ("update",),
        ("draw", 0, 1, 3), ("draw", 1, 1, 3), ("update",), ("look", 0, 2),
        ("draw", 0, 2, 4), ("draw", 1, 2, 4), ("update",),
        ("draw", 0, 3, 1), ("draw", 1, 3, 1), ("update",), ("look", 1, 4),
    ]  # fmt: skip
    assert fed[1] == ([1, 1, 1], [11, 11, 11])


def test_a_stop_at_a_look_ends_the_drawing():
    events = []
    fed = run_looks(_Logged(events), [2, 4, 6, 8], [0, 1, 2, 3], _recording(events, stop_at=1))
    assert len(fed) == 2 and events[-1] == ("look", 1, 2)
    assert max(e[2] for e in events if e[0] == "draw") == 1  # pieces 0 and 1 only


def _uniform(rng, database, m):
    return database + rng.random(m)


ENDS, LOOKS = [3, 6, 10, 15, 21, 28], [2, 5]


def _sides(fed):
    """Each side's outputs in the order they were fed."""
    return [np.concatenate([pair[s] for pair in fed if pair[s] is not None]) for s in (0, 1)]


def test_a_run_interrupted_mid_way_resumes_to_the_uninterrupted_record():
    whole = run_looks(BlackBoxBatches(_uniform, 0.0, 1.0, KEY, None), ENDS, LOOKS, _recording())
    memory = Memory()
    cut = BlackBoxBatches(interrupted_at(_uniform, 8), 0.0, 1.0, KEY, None)  # batch 4, side 1
    with pytest.raises(KeyboardInterrupt):
        run_looks(cut, ENDS, LOOKS, _recording(), checkpoint=memory)
    assert memory.state.drawn == (ENDS[2], ENDS[2]) and memory.state.pieces == (3, 3)
    source = BlackBoxBatches(_uniform, 0.0, 1.0, KEY, None)  # fresh generators: restored
    resumed = run_looks(source, ENDS, LOOKS, _recording(), checkpoint=Memory(memory.state))
    assert resumed == whole
    assert [len(pair[0]) for pair in whole] == list(np.diff([0, *ENDS]))


def test_a_side_ahead_at_resumption_is_caught_up_batch_by_batch():
    """A state saved after x's batch but before x''s (as rdpjax wrote before the driver): each
    side then goes on drawing its own batches, and each side's outputs are the uninterrupted
    run's."""
    whole = run_looks(BlackBoxBatches(_uniform, 0.0, 1.0, KEY, None), ENDS, LOOKS, _recording())
    source = BlackBoxBatches(_uniform, 0.0, 1.0, KEY, None)
    fed = []
    for j, end in enumerate(ENDS[:4]):  # x to ENDS[3], x' to ENDS[2]
        m = end - (ENDS[j - 1] if j else 0)
        fed.append(
            (source.draw(0, j, m).tolist(), source.draw(1, j, m).tolist() if j < 3 else None)
        )
    run = Run(tuple(fed), (ENDS[3], ENDS[2]), (4, 3), source.rng_state())
    resumed = run_looks(
        BlackBoxBatches(_uniform, 0.0, 1.0, KEY, None), ENDS, LOOKS, _recording(),
        checkpoint=Memory(run),
    )  # fmt: skip
    for a, b in zip(_sides(resumed), _sides(whole), strict=True):
        np.testing.assert_array_equal(a, b)
    sizes = [tuple(None if b is None else len(b) for b in pair) for pair in resumed[4:]]
    assert sizes == [(6, 5), (7, 6), (None, 7)]  # x: 15 → 21 → 28; x': 10 → 15 → 21 → 28


def test_a_finished_run_resumes_to_its_result_without_drawing():
    memory = Memory()
    whole = run_looks(_Logged([]), [2, 4], [0, 1], _recording(), checkpoint=memory)
    events = []
    again = run_looks(_Logged(events), [2, 4], [0, 1], _recording(events), checkpoint=memory)
    assert again == whole and events == [("look", 1, 2)]


def test_the_throttle_writes_when_asked_or_when_due():
    throttle = Throttle()
    assert throttle.due(True) and not throttle.due(False)
    throttle.saved_at = time.monotonic() - SAVE_EVERY
    assert throttle.due(False)


def test_the_renyi_looks_end_their_batches_at_each_look():
    ends, looks = look_ends((100, 200, 450), 150)
    assert ends == [100, 200, 350, 450] and looks == [0, 1, 3]


def _laplace(rng, database, m):
    return float(np.sum(database)) + rng.laplace(0.0, 1.0, m)


def _sorted(sample):
    def drawn_sorted(rng, database, m):
        return np.sort(sample(rng, database, m))

    drawn_sorted.__name__ = sample.__name__
    return drawn_sorted


def test_a_sampler_returning_sorted_batches_moves_neither_statistic():
    """Both accumulators see a batch only as a multiset (the Rényi looks' totals; the betting
    test's own random order): sorting every batch changes no look and no bet."""
    x, xp = np.array([1.0]), np.array([0.0])
    kw = dict(n=rdpjax.Looks(max_n=1_600), batch_size=300, lam=[2.0], progress=False)
    renyi = [
        rdpjax.audit(KEY, s, x, xp, claim=pure_dp(0.5), **kw) for s in (_laplace, _sorted(_laplace))
    ]
    assert len(renyi[0].looks) > 1  # the Rényi looks ran (an ε-DP claim: not the betting test)
    assert [look.n for look in renyi[0].looks] == [look.n for look in renyi[1].looks]
    for a, b in zip(renyi[0].looks, renyi[1].looks, strict=True):
        np.testing.assert_allclose(a.lower, b.lower, rtol=1e-9, atol=1e-12)
    bets = [
        betting_test(KEY, s, x, xp, gdp(1.0), max_n=1_500, batch=128)
        for s in (_laplace, _sorted(_laplace))
    ]
    assert bets[0] == bets[1] and len(bets[0].path) > 3
