"""Every crash the fuzzing found, as a named case: a clean error or a partial result, never a crash.

Each test is one class of damage (the fuzz harness found several inputs per
class); together with ``fuzz_support.check_parser`` they pin the promise that
the report encodes, the breakdown and ``qtop ops`` text are computed, and the
live figures are finite.
"""

from __future__ import annotations

import json
import math

import pytest
from fuzz_support import check_hook, check_ops, check_parser, check_profile
from profiler_fixtures import read

from qtop.parsers import ProfilerParseError, ai_hub, genie, optrace, parse, qnn_viewer_text
from qtop.parsers.common import LARGEST_NUMBER, parse_number
from qtop.profiling.aggregate import breakdown
from qtop.profiling.latency import execute_latencies, genie_figures
from qtop.profiling.model import ParsedProfile
from qtop.profiling.render import render


def _optrace_with(**changes: object) -> dict:
    document = json.loads(read("optrace_chrometrace.json"))
    first_op = next(e for e in document["traceEvents"] if e.get("ph") == "X")
    first_op.update(changes)
    return document


@pytest.mark.parametrize("tid", [[256], {"a": 1}, [[]]])
def test_an_optrace_op_whose_tid_is_a_list_or_an_object_is_skipped_and_counted(tid):
    full = optrace.parse_chrometrace(read("optrace_chrometrace.json"))
    profile = optrace.parse_chrometrace(json.dumps(_optrace_with(tid=tid)))

    assert profile.unknown_lines == 1
    assert "list or object" in profile.unknown_samples[0]
    # Every op event is written twice (overview and per-core track): its copy stands in.
    assert profile.graphs[0].executes[0].ops == full.graphs[0].executes[0].ops
    check_profile(profile)


def test_optrace_thread_metadata_with_an_unhashable_tid_is_ignored():
    document = json.loads(read("optrace_chrometrace.json"))
    for event in document["traceEvents"]:
        if event.get("ph") == "M" and event.get("name") == "thread_name":
            event["tid"] = {"tid": event["tid"]}

    profile = optrace.parse_chrometrace(json.dumps(document))

    assert all(not op.thread_types for op in profile.graphs[0].executes[0].ops)
    check_profile(profile)


def test_a_runtrace_phase_whose_tid_is_a_list_is_skipped():
    document = json.loads(read("runtrace.json"))
    document["traceEvents"][1]["tid"] = [0, 1]

    profile = optrace.parse_runtrace(json.dumps(document))

    assert profile.unknown_lines == 1
    check_profile(profile)


@pytest.mark.parametrize("digits", ["1" + "0" * 170, "9" * 400, str(LARGEST_NUMBER + 1)])
def test_a_cycle_count_past_64_bits_is_not_a_number(digits):
    text = read("seed_linting_excerpt.txt").replace("7411", digits)

    profile = qnn_viewer_text.parse(text, "seed.txt")

    # The damaged line is counted, not read; the rest of the execute is.
    assert [op.op_id for op in profile.graphs[0].executes[0].ops] == [2, 3]
    assert profile.unknown_lines == 1
    check_profile(profile)  # 10**170 once overflowed the percentile arithmetic


def test_a_json_cycle_count_past_64_bits_is_left_out():
    text = read("viewer_standardized.json").replace('"value": 6137', '"value": 1' + "0" * 170)

    profile = parse("qnn-viewer-json", text, "viewer.json")
    full = parse("qnn-viewer-json", read("viewer_standardized.json"))

    def fc_ops(parsed: ParsedProfile) -> int:
        return sum(op.name == "fc" for g in parsed.graphs for ex in g.executes for op in ex.ops)

    assert fc_ops(profile) == fc_ops(full) - 1
    assert profile.unknown_lines == full.unknown_lines + 1
    check_profile(profile)


def test_the_largest_64_bit_counter_is_still_a_number():
    assert parse_number(str(LARGEST_NUMBER)) == LARGEST_NUMBER
    assert parse_number("1" + "0" * 170) is None
    assert parse_number("1e308") is None
    assert parse_number("5e-324") == 5e-324


def test_a_json_integer_past_the_digit_limit_reads_as_no_number():
    document = json.loads(read("ai_hub_profile.json"))
    text = json.dumps(document).replace("281", "9" * 5000, 1)

    profile = ai_hub.parse(text, "hub.json")

    assert not profile.truncated  # the rest of the file is read
    assert profile.ai_hub is not None
    assert not any(m.name == "estimated_inference_time" for m in profile.ai_hub.metrics)
    check_profile(profile)


@pytest.mark.parametrize("time_us", ["5e-324", "4.9e-324", "1e-320"])
def test_a_genie_rate_over_a_denormal_time_is_not_recomputed(time_us):
    text = json.dumps(
        {"GenieDialog_query": {"num-generated-tokens": 10, "token-generation-time": "T"}}
    ).replace('"T"', f'{{"value": {time_us}, "unit": "us"}}')

    profile = genie.parse_profile(text, "genie.json")

    (query,) = profile.queries
    assert query.value("token-generation-rate") is None
    check_profile(profile)  # 10 / 5e-330 s divided by zero


def test_a_genie_count_too_large_to_recompute_is_left_out():
    text = json.dumps(
        {
            "GenieDialog_query": {
                "token-generation-rate": {"value": 1.8e19, "unit": "toks/sec"},
                "token-generation-time": {"value": 1.8e19, "unit": "us"},
            }
        }
    )

    (query,) = genie.parse_profile(text).queries

    assert query.value("num-generated-tokens") is None


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_tokens_are_not_values(token):
    hub = ai_hub.parse(read("ai_hub_profile.json").replace("1995", token))
    trace = optrace.parse_runtrace(read("runtrace.json").replace('"dur": 7889', f'"dur": {token}'))
    seed = genie.parse_profile(read("genie_profile_seed.json").replace("166485", token))

    assert hub.ai_hub is not None
    assert hub.ai_hub.inference_times_us[:2] == (350, 321)  # the damaged first run left out
    assert trace.unknown_lines == 1
    (query,) = seed.queries
    assert query.time_us("time-to-first-token") is None
    for profile in (hub, trace, seed):
        check_profile(profile)


@pytest.mark.parametrize("duration", ["1e308", "1.7976931348623157e308", "-1e308", "1e30"])
def test_huge_runtrace_durations_are_damage(duration):
    text = read("runtrace.json").replace('"dur": 7889', f'"dur": {duration}')

    profile = optrace.parse_runtrace(text, "runtrace.json")

    assert profile.unknown_lines == 1
    check_profile(profile)


def test_a_negative_execute_time_is_not_a_latency():
    text = read("viewer_detailed_2_45.txt").replace(
        "QNN (execute) time : 3955", "QNN (execute) time : -1", 1
    )

    latencies = execute_latencies(qnn_viewer_text.parse(text))

    # The first execute falls back to its next root, RPC (execute) time: 3161 us.
    assert latencies[0].metric == "rpc execute"
    assert all(item.latency_s >= 0 for item in latencies)


def test_negative_genie_times_give_no_latency():
    text = read("genie_profile_seed.json").replace("166485", "-166485").replace("97013", "-1")

    assert genie_figures(genie.parse_profile(text)) == []


@pytest.mark.parametrize(
    ("accelerator", "excluding"),
    [("5e-324", "1000"), ("100", "200"), ("100", "-5"), ("0", "0")],
)
def test_the_wait_share_needs_roots_that_agree(accelerator, excluding):
    text = (
        read("seed_linting_excerpt.txt")
        .replace("Accelerator (execute) time : 1384", f"Accelerator (execute) time : {accelerator}")
        .replace("wait) : 159", f"wait) : {excluding}")
    )

    result = breakdown(qnn_viewer_text.parse(text), warmup=0)

    assert result.graphs[0].executes[0].wait_share is None
    json.dumps(result.to_dict(), allow_nan=False)  # once -inf


def test_an_op_share_over_a_denormal_total_is_absent():
    text = (
        "Execute Stat 1\n"
        "    a:OpId_1 (cycles) : 1e19  cycles\n"
        "    b:OpId_2 (cycles) : 5e-324  cycles\n"
        "    c:OpId_3 (cycles) : -1e19  cycles\n"
    )

    result = breakdown(qnn_viewer_text.parse(text), warmup=0)

    assert all(math.isfinite(op.share_median) for op in result.graphs[0].ops if op.share_median)
    json.dumps(result.to_dict(), allow_nan=False)


def test_escapes_in_names_and_responses_never_reach_the_terminal():
    text = read("seed_linting_excerpt.txt").replace("/Gather", "/Gather\x1b]0;pwned\x07") + "\n"
    profile = qnn_viewer_text.parse(text)
    shown = render(profile, breakdown(profile))
    stdout = genie.parse_stdout("[BEGIN]: hi \x1b]52;c;AAAA\x07 there[END]\n")
    response = render(stdout, breakdown(stdout))

    assert "\x1b" not in shown and "\x07" not in shown
    assert "/Gather\\x1b]0;pwned\\x07" in shown
    assert "hi \\x1b]52;c;AAAA\\x07 there" in response


def test_a_parse_error_escapes_the_file_name_it_quotes():
    with pytest.raises(ProfilerParseError) as caught:
        qnn_viewer_text.parse("nothing here\n", "evil\x1b[2J.txt")

    assert "\x1b" not in str(caught.value)
    assert str(caught.value).startswith("evil\\x1b[2J.txt: ")


def test_a_deeply_nested_unknown_value_is_noted_briefly():
    message = "[" * 900 + "]" * 900
    text = (
        '{"messages": ['
        + message
        + ', {"method": "X", "profilingEvents": ['
        + ('{"identifier": "QNN (execute) time", "unit": "US", "value": 1}]}]}')
    )

    profile = parse("qnn-viewer-json", text, "deep.json")

    assert profile.unknown_lines == 1
    assert len(profile.unknown_samples[0]) < 100


@pytest.mark.parametrize(
    "damage",
    [
        b"\xff\xfe", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b"\r", b"\xef\xbb\xbf",
    ],
)  # fmt: skip
def test_invalid_utf8_and_control_bytes_anywhere_in_any_format(damage):
    for name in ("seed_linting_excerpt.txt", "viewer_detailed.csv", "optrace_chrometrace.json"):
        data = read(name).encode()
        middle = len(data) // 2
        hostile = data[:middle] + damage + data[middle:]
        for kind in ("qnn-viewer-text", "qnn-viewer-csv", "optrace"):
            check_parser(kind, hostile)
        check_ops(hostile)
        check_hook("execute_stats", hostile)
        check_hook("file", hostile)
