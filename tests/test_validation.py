"""The shared checks of whole-number arguments and levels (rdpjax._validation) and their use at
entry points."""

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax._validation import check_int, check_level
from rdpjax.studies import coverage


def test_check_int_accepts_python_and_numpy_ints_and_returns_python_ints():
    for value in (3, np.int64(3), np.int32(3), np.uint8(3)):
        out = check_int(value, "n", 2)
        assert out == 3 and type(out) is int


@pytest.mark.parametrize(
    "value, message",
    [
        (1, "n must be an int ≥ 2; got 1."),
        (True, "n must be an int ≥ 2; got True."),
        (np.True_, "n must be an int ≥ 2; got "),
        (2.5e6, "n must be an int ≥ 2; got 2500000.0."),
        (np.float64(4.0), "n must be an int ≥ 2; got "),
        ("10", "n must be an int ≥ 2; got '10'."),
        (None, "n must be an int ≥ 2; got None."),
    ],
)
def test_check_int_rejects_with_the_name_and_the_range(value, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        check_int(value, "n", 2)


def test_check_int_upper_limit_is_inclusive_and_named():
    assert check_int(2**62, "n", 1, 2**62) == 2**62
    with pytest.raises(
        ValueError, match=r"n must be an int in \[1, 2\^62\]; got 4611686018427387905"
    ):
        check_int(2**62 + 1, "n", 1, 2**62)
    with pytest.raises(ValueError, match=r"k must be an int in \[2, 10\]; got 11"):
        check_int(11, "k", 2, 10)


def test_entry_points_take_numpy_ints():
    """Sizes read from arrays (np.int64) work where a Python int does; paper_pair and coverage
    had refused them with a message that showed the valid-looking value."""
    m = np.arange(5)[-1]  # np.int64(4)
    x, x_prime = rdpjax.mechanisms.databases.paper_pair(m)
    assert x.shape == x_prime.shape == (4,)
    # n, reps and batch_size pass as np.int64; the order λ = 0.5, checked after them, does not.
    with pytest.raises(ValueError, match="every order lam must be finite and > 1"):
        coverage(
            jax.random.key(0),
            rdpjax.mechanisms.Laplace(1.0),
            x,
            x_prime,
            0.5,
            n=np.int64(100),
            reps=np.int64(2),
            batch_size=np.int64(1),
        )


@pytest.mark.parametrize(
    ("lam", "match"),
    [
        (0.5, r"every order lam must be finite and > 1; got \[0.5\]"),
        ([2.0, float("nan")], "every order lam must be finite and > 1"),
        ([], "non-empty 1-D sequence"),
        ([[2.0, 3.0]], "non-empty 1-D sequence"),
        ("two", "must be a number or a sequence of numbers"),
    ],
)
def test_one_order_check_for_bounds_search_and_studies(lam, match):
    """rdpjax._validation.check_orders is what lower_bound, the search and coverage call."""
    from rdpjax._validation import check_orders

    with pytest.raises(ValueError, match=match):
        check_orders(lam)
    with pytest.raises(ValueError, match=match):
        rdpjax.lower_bound(np.arange(100.0), np.arange(100.0) + 0.5, lam)
    np.testing.assert_array_equal(check_orders([2, 5]), [2.0, 5.0])


@pytest.mark.parametrize("bad", ["0.05", True, None, [0.05], float("nan"), 0.0, 0.5, -1.0])
def test_a_level_is_a_number_in_the_open_interval(bad):
    with pytest.raises(ValueError, match=r"^alpha must be a number in \(0, 0\.5\); got "):
        check_level(bad)


def test_numpy_and_jax_scalars_are_levels():
    import jax.numpy as jnp

    for good in (0.05, np.float32(0.25), jnp.float32(0.25), np.array(0.1), 1e-9):
        assert check_level(good) == pytest.approx(float(good))
    assert check_level(0.9, "alpha", upper=1.0) == 0.9


@pytest.mark.parametrize("entry", ["lower_bound", "audit", "set_test"])
def test_public_entry_points_refuse_a_string_level_with_one_clear_error(entry):
    from rdpjax.claims import gdp
    from rdpjax.rejection import set_test

    rng = np.random.default_rng(0)
    p, q = rng.normal(size=500), rng.normal(size=500)
    calls = {
        "lower_bound": lambda: rdpjax.lower_bound(p, q, 2.0, alpha="0.05"),
        "audit": lambda: rdpjax.audit(
            jax.random.key(0), lambda g, db, m: db + g.normal(size=m), 1.0, 0.0, n=500,
            alpha="0.05",
        ),
        "set_test": lambda: set_test(jax.random.key(0), p, q, gdp(1.0), alpha="0.05"),
    }  # fmt: skip
    with pytest.raises(ValueError, match="alpha must be a number in"):
        calls[entry]()


def _audit(**kwargs):
    """An audit of a numpy Gaussian on 500 outputs a side, with ``kwargs`` replacing its own."""
    args = dict(key=jax.random.key(0), lam=None, both_directions=True)
    args.update(kwargs)
    sample = lambda g, db, m: db + g.normal(size=m)  # noqa: E731
    return rdpjax.audit(
        args["key"], sample, 1.0, 0.0, args["lam"], n=500, both_directions=args["both_directions"],
        progress=False,
    )  # fmt: skip


@pytest.mark.parametrize("lam", [np.array([[2.0], [5.0]]), "abc", [[2, 5], [7, 9]], [], 1.0])
def test_audit_checks_its_orders_as_lower_bound_does(lam):
    """A 2-D or non-numeric lam was a raw numpy TypeError inside audit (the hunt of 2026-12-07)."""
    with pytest.raises(ValueError, match="lam must be a number|every order lam"):
        _audit(lam=lam)


@pytest.mark.parametrize(
    "key", [0, None, "seed", jax.random.split(jax.random.key(0), 2), np.zeros(3, np.uint32)]
)
def test_one_key_is_checked_before_anything_is_drawn(key):
    """``audit(0, …)`` reached jax's PRNG internals; a batch of keys passed lower_bound's check."""
    with pytest.raises(ValueError, match="key must be (one|a) jax.random key"):
        _audit(key=key)
    if key is None:  # lower_bound's default: the rows in the order given
        return
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="key must be (one|a) jax.random key"):
        rdpjax.lower_bound(rng.normal(size=100), rng.normal(size=100), 2.0, key=key)


def test_raw_key_data_is_still_a_key():
    """``uint32[2]`` key data (the old ``PRNGKey``) is what it was: the same audit as its key."""
    raw = jax.random.key_data(jax.random.key(3))
    assert np.array_equal(
        _audit(key=raw, lam=2.0).lower, _audit(key=jax.random.key(3), lam=2.0).lower
    )


@pytest.mark.parametrize("value", ["False", "no", 0.0, 2, [True]])
def test_a_flag_is_a_bool_never_a_truthy_string(value):
    """``discrete="False"`` was read as True (a looser bound on frequencies, no error)."""
    from rdpjax._validation import check_flag

    with pytest.raises(ValueError, match="flag must be True or False; got"):
        check_flag(value, "flag")
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=200), 0.5 + rng.normal(size=200)
    for name in ("discrete", "both_directions", "second_order"):
        with pytest.raises(ValueError, match=f"^{name} must be True"):
            rdpjax.lower_bound(p, q, 2.0, **{name: value})
    with pytest.raises(ValueError, match="^both_directions must be True or False"):
        _audit(both_directions=value)


def test_flags_take_bools_numpy_bools_and_0_or_1():
    from rdpjax._validation import check_flag

    for value, expected in ((True, True), (np.False_, False), (1, True), (np.int64(0), False)):
        out = check_flag(value, "flag")
        assert out is expected
    assert check_flag(None, "flag", none=True) is None
    with pytest.raises(ValueError, match="flag must be True or False; got None"):
        check_flag(None, "flag")


def test_a_grid_size_beyond_the_memory_cap_is_refused_before_any_allocation():
    """``grid_size=10**9`` reached XLA and failed allocating 40 GB."""
    from rdpjax.estimator.grid import MAX_GRID_POINTS

    rng = np.random.default_rng(0)
    p, q = rng.normal(size=500), 0.5 + rng.normal(size=500)
    with pytest.raises(ValueError, match=r"grid_size=1000000000 asks for 1,000,000,000 grid"):
        rdpjax.lower_bound(p, q, 2.0, grid_size=10**9)
    p3, q3 = rng.normal(size=(500, 3)), rng.normal(size=(500, 3))
    with pytest.raises(ValueError, match=r"27,000,000 grid points over 3 axes"):
        rdpjax.lower_bound(p3, q3, 2.0, grid_size=300)
    assert 256**3 <= MAX_GRID_POINTS  # the 3-D default cap (200 a side) stays well inside


def test_the_audit_and_set_options_flags_are_bools_too():
    from rdpjax.auditing.options import AuditOptions
    from rdpjax.rejection import SetOptions

    with pytest.raises(ValueError, match="^densities must be True or False; got 'yes'"):
        AuditOptions(densities="yes")
    with pytest.raises(ValueError, match="^both_directions must be True or False; got 'False'"):
        SetOptions(both_directions="False")
    assert SetOptions(both_directions=np.False_).both_directions is np.False_


@pytest.mark.parametrize("bandwidth", [1e10, 1e300])
def test_a_bandwidth_far_above_the_data_range_is_refused_at_once(bandwidth):
    """It made the grid's search run without end (1e10) or overflow (1e300)."""
    rng = np.random.default_rng(0)
    p, q = rng.laplace(size=500), 1 + rng.laplace(size=500)
    with pytest.raises(ValueError, match=r"times the data range .* choose a smaller bandwidth"):
        rdpjax.lower_bound(p, q, 2.0, bandwidth=bandwidth)
    with pytest.raises(ValueError, match=r"more than grid_size=64"):
        rdpjax.lower_bound(p, q, 2.0, bandwidth=bandwidth, grid_size=64)


def test_a_large_bandwidth_in_2d_keeps_the_exact_grid_not_a_doubled_one():
    """The bucketed layout rounds margins up to 16 cells and doubled the size until they fit:
    at h = 14× the range, 5,120 points an axis (1.6·10¹¹ in 3-D: XLA asked for 1.3 TB)."""
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(500, 2)), 0.3 + rng.normal(size=(500, 2))
    bound = rdpjax.lower_bound(p, q, 2.0, bandwidth=100.0)
    assert max(bound.grid_shape) < 400 and np.isfinite(bound.lower).all()
    with pytest.raises(ValueError, match="the bandwidth, far above the data range, asks for"):
        rdpjax.lower_bound(p, q, 2.0, bandwidth=3e4)
