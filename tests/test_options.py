"""The option objects (issue 46): each is frozen and checked when made, the keyword shorthand
routes a name to the object that has it and rejects every other name, and an object passed
whole gives the same result as its fields passed by name."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.auditing import AuditOptions, Looks, Training
from rdpjax.auditing.options import audit_options
from rdpjax.estimator.options import changed_fields, resolve_options
from rdpjax.stream import JaxSamplers, StreamOptions, streamed_bound
from rdpjax.stream.options import split_options
from rdpjax.studies import StudyOptions

RNG = np.random.default_rng(0)
P, Q = 1.0 + RNG.standard_normal(3000), RNG.standard_normal(3000)


def test_the_objects_are_frozen():
    for obj in (rdpjax.BoundOptions(), StreamOptions(), AuditOptions(), StudyOptions()):
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.__setattr__(dataclasses.fields(obj)[0].name, None)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: StreamOptions(outside="drop"), "outside must be 'clip' or 'raise'"),
        (lambda: StreamOptions(margin=-1.0), "margin must be a finite number"),
        (lambda: StreamOptions(pilot=1), "pilot must be an int"),
        (lambda: StreamOptions(chunk=0), "chunk must be an int"),
        (lambda: StreamOptions(binning="fft"), "binning must be one of"),
        (lambda: StreamOptions(progress=3), "progress must be None or callable"),
        (lambda: AuditOptions(progress="yes"), "progress must be None, True or False"),
        (lambda: Looks(max_n=1.5), "max_n must be a whole number"),
        (lambda: Looks(resume=True), "resume=True needs the checkpoint"),
        (lambda: AuditOptions(stream=StreamOptions(project=abs)), "sets the stream's project"),
        (lambda: StudyOptions(batch_size=0), "batch_size must be an int"),
        (lambda: Training(fraction=1.5), "fraction must be a number in"),
        (lambda: Training(max_outputs=5), "max_outputs must be an int"),
    ],
)
def test_bad_values_are_a_value_error_when_made(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_unknown_names_are_a_type_error_listing_the_fields():
    with pytest.raises(TypeError, match="'bandwith'.*bandwidth"):
        rdpjax.lower_bound(P, Q, 2.0, bandwith=0.1)
    with pytest.raises(TypeError, match="'bandwith'"):
        rdpjax.plan_bound(P, Q, 2.0, bandwith=0.1)
    with pytest.raises(TypeError, match="'chunks'.*StreamOptions.*chunk"):
        split_options(None, None, {"chunks": 4}, caller="streamed_bound")
    with pytest.raises(TypeError, match="'memory'"):
        audit_options(None, {"memory": 1})
    with pytest.raises(TypeError, match="options must be a rdpjax.BoundOptions"):
        resolve_options({"bandwidth": 1.0}, {}, caller="lower_bound")  # type: ignore[arg-type]


def test_names_go_to_the_object_that_has_them():
    bound, stream = split_options(None, None, {"chunk": 512, "floor": 0.01}, caller="f")
    assert stream.chunk == 512 and bound.floor == 0.01
    opts = audit_options(None, {"bandwidth": 0.3, "pilot": 100, "densities": True})
    assert opts.bound.bandwidth == 0.3 and opts.stream.pilot == 100 and opts.densities
    base = AuditOptions(bound=rdpjax.BoundOptions(floor=0.02))
    assert audit_options(base, {"bandwidth": 0.3}).bound.floor == 0.02  # fields replace, not reset


def test_an_object_and_its_fields_by_name_give_the_same_bound():
    by_name = rdpjax.lower_bound(P, Q, [2.0, 5.0], bandwidth=0.25, layout="exact")
    whole = rdpjax.lower_bound(
        P, Q, [2.0, 5.0], options=rdpjax.BoundOptions(bandwidth=0.25, layout="exact")
    )
    np.testing.assert_array_equal(by_name.lower, whole.lower)
    assert float(by_name.bandwidth[0]) == 0.25


def test_plan_bound_has_no_map_by_default_and_refuses_auto():
    _, p, q = rdpjax.plan_bound(P, Q, 2.0)  # unmapped: the samples come back as they went in
    np.testing.assert_allclose(np.asarray(p).ravel(), P)
    np.testing.assert_allclose(np.asarray(q).ravel(), Q)
    with pytest.raises(ValueError, match="transform='auto' is lower_bound's"):
        rdpjax.plan_bound(P, Q, 2.0, transform="auto")


def test_a_stream_takes_no_quantile_map():
    def p(k, m):
        return 1.0 + jax.random.normal(k, (m,))

    def q(k, m):
        return jax.random.normal(k, (m,))

    with pytest.raises(ValueError, match="needs the draws in memory"):
        streamed_bound(jax.random.key(0), JaxSamplers(p, q), 2.0, n=4000, transform="quantile")


def test_changed_fields_names_what_differs_from_the_defaults():
    assert changed_fields(rdpjax.BoundOptions()) == {}
    assert changed_fields(rdpjax.BoundOptions(floor=0.1, layout="exact")) == {
        "floor": 0.1,
        "layout": "exact",
    }
    assert changed_fields(StreamOptions(pilot=64)) == {"pilot": 64}
