"""Every profile key, with values it takes and values it refuses (message, fix and line)."""

from __future__ import annotations

import pytest

from qtop.profiles import check_profile_text
from qtop.profiles.model import Profile
from qtop.profiles.schema import schema_fields
from qtop.profiles.sections import Section, SectionList

from .profile_cases import CASES, case_ids, line_of_key, profile_with

GOOD = [(case.key, value) for case in CASES for value in case.good]


def every_key_path(cls: type = Profile, prefix: str = "") -> list[str]:
    paths = []
    for field in schema_fields(cls):
        path = f"{prefix}{field.name}"
        paths.append(path)
        kind = field.key.kind
        if isinstance(kind, Section):
            paths += every_key_path(kind.cls, path + ".")
        elif isinstance(kind, SectionList):
            paths += [f"{path}[].{sub}" for sub in every_key_path(kind.cls)]
    return paths


def test_the_table_covers_every_key_of_the_schema():
    covered = {case.key for case in CASES}
    # Keys of list items are exercised through their list (device.power_meter, run.variants).
    items_covered_by_their_list = {
        path for path in every_key_path() if "[]." in path and path.split("[]")[0] in covered
    }
    missing = set(every_key_path()) - covered - items_covered_by_their_list
    assert not missing
    assert all(case.good and case.bad for case in CASES)


@pytest.mark.parametrize(("key", "value"), GOOD, ids=[f"{k}={v}" for k, v in GOOD])
def test_a_good_value_is_taken_without_a_word(key, value):
    checked = check_profile_text(profile_with(key, value), "p.yaml")
    assert checked.issues == ()
    assert checked.profile is not None


@pytest.mark.parametrize(
    ("key", "value", "bad"), case_ids(), ids=[f"{k}={v}" for k, v, _ in case_ids()]
)
def test_a_bad_value_is_refused_with_its_line_message_and_fix(key, value, bad):
    text = profile_with(key, value)
    checked = check_profile_text(text, "p.yaml")
    assert checked.profile is None
    where = bad.key or key
    found = [issue for issue in checked.errors if issue.key == where]
    assert len(found) == 1, checked.errors
    issue = found[0]
    assert (issue.message, issue.fix) == (bad.message, bad.fix)
    assert issue.source == "p.yaml"
    assert issue.line == line_of_key(text, key)
    assert issue.text() == f"p.yaml:{issue.line}: {where}: {bad.message}"


def test_a_missing_required_key_names_the_section_and_an_example():
    checked = check_profile_text(profile_with("run.command", None), "p.yaml")
    [issue] = checked.errors
    assert issue.text() == "p.yaml:1: run: missing required key 'command'"
    assert issue.fix == "add it, e.g. command: ./qnn-net-run --retrieve_context model.bin " \
        "--input_list inputs.txt"  # fmt: skip


def test_a_key_with_no_value_is_an_error_not_a_silent_default():
    checked = check_profile_text(profile_with("run.timeout", ""), "p.yaml")
    [issue] = checked.errors
    assert (issue.key, issue.message) == ("run.timeout", "has no value")
    assert issue.fix == "give it one, e.g. timeout: 5m, or delete the line"


@pytest.mark.parametrize(
    ("key", "value", "message", "fix"),
    [
        (
            "device.sample_interval",
            "100",
            "100 s is unusually long here (a number without a unit is seconds)",
            "did you mean 100ms? write the unit, e.g. 100ms",
        ),
        (
            "run.cooldown.below",
            "150",
            "150 °C is above where SoCs throttle or shut down: waiting to cool below it never "
            "waits",
            "write a number from -40 to 200 °C, e.g. 45",
        ),
        (
            "device.env",
            "{LD_LIBRARY_PATH: '/opt/lib:$LD_LIBRARY_PATH'}",
            "values are passed literally: a $NAME in it is not expanded on the device",
            "write the whole value out",
        ),
        (
            "run.iterations",
            "5",
            "5 measured iterations are fewer than min_iterations (30): reports will mark the "
            "result not valid",
            "measure at least 30, or lower min_iterations",
        ),
    ],
)
def test_a_likely_mistake_is_a_warning_with_the_likely_fix(key, value, message, fix):
    checked = check_profile_text(profile_with(key, value), "p.yaml")
    assert checked.profile is not None
    [warning] = checked.warnings
    assert (warning.message, warning.fix) == (message, fix)


def test_an_explicit_unit_is_not_second_guessed():
    checked = check_profile_text(profile_with("device.sample_interval", "20s"), "p.yaml")
    assert checked.issues == ()
