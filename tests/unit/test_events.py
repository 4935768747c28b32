import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtop.events import (
    EVENT_TYPES,
    ChannelInfo,
    Channels,
    End,
    EventDecodeError,
    Header,
    Iteration,
    Keyframe,
    Link,
    Log,
    Marker,
    PhaseChange,
    ProfileReport,
    Sample,
    Trip,
    event_from_dict,
)

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
maybe_time = st.none() | finite
text = st.text(max_size=40)
names = st.text(min_size=1, max_size=20)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | finite | text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(text, json_values, max_size=5)
common = {"t": maybe_time, "host_t": maybe_time}

trips = st.builds(Trip, type=names, temp_c=finite, hyst_c=st.none() | finite)
channel_infos = st.builds(
    ChannelInfo,
    id=names,
    kind=names,
    unit=text,
    label=text,
    path=text,
    trips=st.lists(trips, max_size=3).map(tuple),
    max_state=st.none() | st.integers(0, 100),
)

events = st.one_of(
    st.builds(Header, **common, qtop_version=text, session_id=text, created=text, source=text,
              profile=json_objects, device=json_objects),
    st.builds(Channels, **common, channels=st.lists(channel_infos, max_size=4).map(tuple)),
    st.builds(Sample, **common, seq=st.integers(0, 2**40),
              values=st.dictionaries(names, st.none() | finite, max_size=12)),
    st.builds(Iteration, **common, seq=st.integers(0, 2**40), index=st.integers(0, 10**6),
              phase=st.sampled_from(["warmup", "measure"]), variant=text, start=finite,
              end=finite, latency_s=finite, exit_status=st.integers(-255, 255),
              error=st.none() | text, metrics=st.dictionaries(names, finite, max_size=4)),
    st.builds(PhaseChange, **common, phase=names, variant=text,
              planned_iterations=st.none() | st.integers(0, 10**6),
              planned_duration_s=st.none() | finite, note=text),
    st.builds(ProfileReport, **common, source_kind=text, path=text, variant=text,
              report=json_objects),
    st.builds(Log, **common, seq=st.integers(0, 2**40), stream=names, level=names, text=text),
    st.builds(Marker, **common, label=text, note=text, origin=names),
    st.builds(Link, **common, state=names, detail=text, attempt=st.integers(0, 100),
              gap_from=maybe_time, gap_to=maybe_time),
    st.builds(Keyframe, **common, state=json_objects),
    st.builds(End, **common, reason=names, detail=text,
              counts=st.dictionaries(names, st.integers(0, 10**9), max_size=4)),
)  # fmt: skip


@given(events)
def test_every_event_survives_a_dict_and_json_round_trip(event):
    data = event.to_dict()
    assert event_from_dict(data) == event
    wire = json.dumps(data, allow_nan=False)
    assert event_from_dict(json.loads(wire)) == event


def test_every_kind_is_covered_by_the_strategy():
    assert set(EVENT_TYPES) == {
        "header", "channels", "sample", "iteration", "phase", "profile_report", "log",
        "marker", "link", "keyframe", "end",
    }  # fmt: skip


def test_dict_form_starts_with_kind_then_device_time():
    data = Sample(t=1.5, seq=3, values={"a": 1.0}).to_dict()
    assert list(data)[:2] == ["kind", "t"]


def test_unavailable_sensor_values_stay_none_not_zero():
    event = event_from_dict({"kind": "sample", "t": 1.0, "seq": 0, "values": {"x": None}})
    assert event.values == {"x": None}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "nope"}, "unknown event kind"),
        ({"t": 1.0}, "unknown event kind"),
        ({"kind": "sample", "seq": "three"}, r"sample\.seq: Expected `int`, got `str`"),
        ({"kind": "iteration", "latency_s": "fast"}, r"iteration\.latency_s: Expected `float`"),
        ({"kind": "channels", "channels": {"id": 1}}, r"channels\.channels: Expected `array`"),
        ({"kind": "sample", "seq": True}, r"sample\.seq: Expected `int`, got `bool`"),
        ({"kind": "sample", "seq": 2**64}, r"sample\.seq: Expected `int` <="),
        ({"kind": "sample", "t": float("nan")}, r"sample\.t: Expected `float` >="),
        ({"kind": "iteration", "end": float("inf")}, r"iteration\.end: Expected `float` <="),
        ({"kind": "sample", "values": {"x": float("-inf")}}, r"sample\.values\[\.\.\.\]"),
        ({"kind": "end", "counts": {"x": 1.5}}, r"end\.counts\[\.\.\.\]: Expected `int`"),
    ],
)
def test_malformed_dicts_raise_decode_errors(data, message):
    with pytest.raises(EventDecodeError, match=message):
        event_from_dict(data)


def test_integer_json_numbers_decode_as_floats_where_declared():
    event = event_from_dict({"kind": "iteration", "latency_s": 1, "start": 2, "end": 3})
    assert isinstance(event.latency_s, float) and event.latency_s == 1.0


def test_fields_added_by_a_newer_writer_are_ignored():
    event = event_from_dict({"kind": "marker", "label": "x", "colour": "red"})
    assert event == Marker(label="x")
