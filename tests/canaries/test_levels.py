"""Per-pair test levels (a weighted Bonferroni split) give each pair the bound of its own level."""

import numpy as np

from rdpjax.canaries import fdp, steinke


def test_per_pair_levels_equal_one_call_per_level():
    m = 1000
    n_guess = np.array([20, 100, 100, 400, 500])
    n_correct = np.array([19, 80, 80, 260, 300])
    levels = np.array([0.01, 0.001, 0.02, 0.005, 0.05])
    for lower in (
        lambda lv: fdp.epsilon_lower(m, n_guess, n_correct, 1e-5, lv),
        lambda lv: steinke.epsilon_lower(m, n_guess, n_correct, 1e-5, lv),
        lambda lv: steinke.epsilon_lower(m, n_guess, n_correct, 0.0, lv),
        lambda lv: fdp.mu_lower(m, n_guess, n_correct, lv),
    ):
        together = lower(levels)
        alone = [lower(float(lv))[i] for i, lv in enumerate(levels)]
        np.testing.assert_array_equal(together, alone)
        assert together[2] > together[1] > 0  # the same counts: a larger level, a larger bound
