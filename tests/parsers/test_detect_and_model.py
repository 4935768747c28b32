"""Kind detection, ``parse`` dispatch, and the lossless ``to_dict`` / ``from_dict`` of the model."""

from __future__ import annotations

import json

import pytest
from profiler_fixtures import KIND_OF, read

from qtop.parsers import KINDS, UnknownProfilerKind, detect_kind, parse
from qtop.parsers.qnn_viewer_csv import OnnxRuntimeCsvError
from qtop.profiling.model import ParsedProfile, ProfileDecodeError, metric_key


@pytest.mark.parametrize(("name", "kind"), sorted(KIND_OF.items()))
def test_every_fixture_is_detected_by_content(name, kind):
    assert detect_kind(read(name), name) == kind


def test_kinds_cover_every_producer():
    assert set(KINDS) == set(KIND_OF.values())


def test_seed_text_saved_as_csv_is_still_text():
    # The seed's linting output was saved as qnn_linting_htp.csv: content wins over the name.
    assert detect_kind(read("seed_linting_excerpt.txt"), "qnn_linting_htp.csv") == "qnn-viewer-text"


def test_onnxruntime_csv_is_detected_as_csv_and_refused_by_parse():
    text = read("onnxruntime_qnn_ep.csv")

    kind = detect_kind(text, "qnn-profiling-data.csv")

    assert kind == "qnn-viewer-csv"
    with pytest.raises(OnnxRuntimeCsvError):
        parse(kind, text, "qnn-profiling-data.csv")


def test_detection_survives_a_bom():
    assert detect_kind("\ufeff" + read("viewer_standardized.json")) == "qnn-viewer-json"


def test_binary_log_is_refused_with_the_conversion_command():
    with pytest.raises(UnknownProfilerKind) as caught:
        detect_kind("QNNLOG\x00\x01\x02", "qnn-profiling-data_0.log")

    assert "binary" in str(caught.value)
    assert "qnn-profile-viewer --input_log" in str(caught.value)


def test_unrecognised_content_names_the_kinds():
    with pytest.raises(UnknownProfilerKind) as caught:
        detect_kind("just some notes\n", "notes.md")

    assert str(caught.value).startswith("notes.md: cannot tell which profiler wrote this file")
    assert "--kind (qnn-viewer-text, qnn-viewer-csv" in str(caught.value)


def test_unknown_kind_name_is_refused():
    with pytest.raises(UnknownProfilerKind, match="unknown profiler kind 'perfetto'"):
        parse("perfetto", "{}", "x.json")


@pytest.mark.parametrize(("name", "kind"), sorted(KIND_OF.items()))
def test_to_dict_is_plain_json_and_round_trips(name, kind):
    profile = parse(kind, read(name), name)

    data = profile.to_dict()
    text = json.dumps(data, allow_nan=False)

    assert data["schema"] == 1
    assert data["kind"] == kind
    assert ParsedProfile.from_dict(json.loads(text)) == profile


def test_to_dict_leaves_defaults_out():
    profile = parse("qnn-viewer-text", read("seed_linting_excerpt.txt"), "seed.txt")

    data = profile.to_dict()

    gather = data["graphs"][0]["executes"][0]["ops"][1]
    assert gather == {
        "name": "/Gather",
        "op_id": 21,
        "cycles": 7411,
        "wait_cycles": 420,
        "resources": ["DMA"],
    }
    assert set(data) == {"schema", "kind", "source", "graphs"}


def test_from_dict_refuses_a_newer_schema_and_bad_fields():
    with pytest.raises(ProfileDecodeError, match="newer than this qtop reads"):
        ParsedProfile.from_dict({"schema": 2, "kind": "optrace"})
    with pytest.raises(ProfileDecodeError, match=r"report\.unknown_lines: expected an integer"):
        ParsedProfile.from_dict({"kind": "optrace", "unknown_lines": "3"})
    with pytest.raises(ProfileDecodeError, match=r"graphs\[0\]\.executes\[0\]: .*'index'"):
        ParsedProfile.from_dict({"kind": "x", "graphs": [{"name": "g", "executes": [{}]}]})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Accelerator (execute excluding wait) time", "Accelerator (execute excluding wait)"),
        (
            "Accelerator (critical path execute) time (cycles)",
            "Accelerator (critical path execute)",
        ),
        ("Accelerator (execute) time (cycles)", "Accelerator  (execute)  time"),
        ("Wait (Scheduler) time", "Wait(Scheduler)"),
    ],
)
def test_metric_key_joins_spellings(a, b):
    assert metric_key(a) == metric_key(b)


def test_unknown_json_is_not_mistaken_for_text():
    averaged = '{"traceEvents": [{"name": "Accelerator (execute) time", "ph": "X", "dur": 5}]}'

    with pytest.raises(UnknownProfilerKind, match="neither optrace ops"):
        detect_kind(averaged, "avg.json")
    with pytest.raises(UnknownProfilerKind, match="JSON of a shape qtop does not know"):
        detect_kind('{"Accelerator (execute) time": 5}', "x.json")


def test_genie_stdout_starting_with_a_log_tag_is_not_json():
    assert detect_kind('[INFO] "Using create From Binary"\n[BEGIN]: Hi[END]\n') == "genie-stdout"
