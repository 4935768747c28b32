"""Cut and damaged JSON: everything complete is kept, the containers the cut fell in are marked."""

from __future__ import annotations

import json
from typing import Any

import pytest
from profiler_fixtures import read

from qtop.parsers import lenient_json
from qtop.parsers.lenient_json import (
    MAX_DEPTH,
    JsonUnreadable,
    PartialDict,
    PartialList,
    is_partial,
    load_json,
)

JSON_FIXTURES = (
    "viewer_standardized.json",
    "optrace_chrometrace.json",
    "runtrace.json",
    "qhas_summary.json",
    "genie_profile.json",
    "genie_profile_seed.json",
    "ai_hub_profile.json",
)


def test_a_whole_document_is_what_json_loads_gives():
    text = read("optrace_chrometrace.json")

    loaded = load_json(text)

    assert loaded.complete and loaded.value == json.loads(text)
    assert not is_partial(loaded.value)


def test_a_cut_event_is_marked_and_the_complete_ones_kept():
    text = '{"traceEvents": [{"ph": "X", "ts": 1}, {"ph": "X", "ts": 2}, {"ph": "X", "t'

    loaded = load_json(text)

    assert not loaded.complete
    events = loaded.value["traceEvents"]
    assert isinstance(loaded.value, PartialDict) and isinstance(events, PartialList)
    assert events[:2] == [{"ph": "X", "ts": 1}, {"ph": "X", "ts": 2}]
    assert not is_partial(events[0])
    assert isinstance(events[2], PartialDict) and events[2] == {"ph": "X"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b"', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": 1, "b": ', {"a": 1}),
        ('{"a": 1, "b": "some te', {"a": 1}),
        ('{"a": 1, "b": 1234', {"a": 1}),  # the number may have had more digits
        ('{"a": 1, "b": -Infinity', {"a": 1}),
        ('{"a": 1, "b": true', {"a": 1, "b": True}),
        ('{"a": 1, "b": "x"', {"a": 1, "b": "x"}),
        ('{"a": 1, "b": [1, 2, 3', {"a": 1, "b": [1, 2]}),
        ('{"a": 1,', {"a": 1}),
        ('{"a\\"b": {"c', {'a"b': {}}),
        ("[", []),
    ],
)
def test_whatever_the_cut_left_of_the_last_member_is_dropped(text, expected):
    assert load_json(text).value == expected


def test_damage_in_the_middle_keeps_the_complete_part_and_names_its_line():
    text = '{"events": [\n{"a": 1},\n{"a": 2} @@ {"a": 3}\n]}\n'

    loaded = load_json(text)

    assert loaded.value == {"events": [{"a": 1}, {"a": 2}]}
    assert loaded.stop_line == 3


def test_a_control_character_inside_a_string_stops_the_reading_there():
    loaded = load_json('{"events": [{"a": 1}, {"name": "x\x01y", "b": 2}]}')

    assert loaded.value == {"events": [{"a": 1}, {}]}


def test_a_second_document_after_the_first_is_not_read():
    loaded = load_json('{"a": 1}\n{"a": 2}\n')

    assert loaded.value == {"a": 1} and not loaded.complete
    assert loaded.stop_line == 2


def test_an_integer_past_the_digit_limit_reads_as_infinity_and_the_rest_is_read():
    loaded = load_json('{"a": [1, ' + "9" * 5000 + ", -" + "9" * 5000 + "], " + '"b": 2}')

    assert loaded.complete
    assert loaded.value == {"a": [1, float("inf"), float("-inf")], "b": 2}


def test_a_cut_deeper_than_the_limit_is_refused_with_its_line():
    # MAX_DEPTH open containers are rebuilt; one more is refused.
    deepest = '{"a": ' * (MAX_DEPTH - 1) + "[1, 2, 3"
    inner: Any = load_json(deepest).value
    for _ in range(MAX_DEPTH - 1):
        inner = inner["a"]
    assert inner == [1, 2]

    with pytest.raises(JsonUnreadable, match=f"nested deeper than {MAX_DEPTH} levels") as caught:
        load_json("\n" + '{"a": ' * MAX_DEPTH + "[1, 2")
    assert caught.value.line == 2


def test_text_that_is_not_json_is_unreadable():
    with pytest.raises(JsonUnreadable, match="does not start with"):
        load_json("\n\nExecute Stat 1\n")


class _CountingDecoder(json.JSONDecoder):
    """Adds up how much text each decode call was handed from its start."""

    def __init__(self) -> None:
        super().__init__()
        self.handed = 0

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        self.handed += len(s) - idx
        return super().raw_decode(s, idx)


def test_the_salvage_decodes_each_part_of_a_deep_cut_file_once(monkeypatch):
    # 60 levels before a long cut list: the old salvage handed every level the whole rest.
    text = '{"k": ' * 60 + "[" + '{"v": [1, 2, 3]}, ' * 5000
    decoder = _CountingDecoder()
    monkeypatch.setattr(lenient_json, "_DECODER", decoder)

    loaded = load_json(text)

    inner: Any = loaded.value
    for _ in range(60):
        inner = inner["k"]
    assert len(inner) == 5000
    assert decoder.handed <= len(text) + 200


def _consistent(part: Any, whole: Any) -> None:
    """``part`` is what a cut kept of ``whole``: equal, or a marked prefix of it."""
    if not is_partial(part):
        assert part == whole
        return
    if isinstance(part, list):
        assert isinstance(whole, list) and len(part) <= len(whole)
        for mine, theirs in zip(part, whole, strict=False):
            _consistent(mine, theirs)
        return
    assert isinstance(whole, dict)
    assert list(part) == [key for key in whole if key in part]
    for key, value in part.items():
        _consistent(value, whole[key])


@pytest.mark.parametrize("name", JSON_FIXTURES)
def test_a_fixture_cut_at_every_position_keeps_a_consistent_prefix(name):
    text = read(name)
    whole = json.loads(text)
    for at in range(1, len(text)):
        try:
            loaded = load_json(text[:at])
        except JsonUnreadable:
            assert not text[:at].strip("{[ \n")  # nothing usable yet
            continue
        _consistent(loaded.value, whole)
