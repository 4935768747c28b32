import json

import pytest
from synthetic_streams import (
    BATTERY_POWER,
    BATTERY_STATUS,
    CDSP,
    CDSP_INFO,
    NSP,
    NSP_INFO,
    POWER_INFO,
    STATUS_INFO,
    back_to_back,
    phase,
    stream,
    ticks,
    write_recording,
)

from qtop.analysis.render import (
    SUMMARY_COLUMNS,
    SUMMARY_HEADERS,
    render_markdown,
    render_summary_table,
    render_text,
    summary_cells,
    summary_rows,
)
from qtop.analysis.session import analyze
from qtop.errors import UsageError
from qtop.record.reader import open_recording


def sustained_session():
    """60 s at 0.1 s, then 0.125 s after +60 s; 3 W while measuring, 1 W idle before."""
    latencies = [0.1] * 600 + [0.125] * 480

    def values(t: float) -> dict[str, float]:
        return {
            BATTERY_POWER: 1.0 if t < 10.0 else 3.0,
            BATTERY_STATUS: -1.0,
            NSP: 50.0 + t / 10,
            CDSP: 0.0 if t < 68.0 else 2.0,
        }

    return stream(
        [POWER_INFO, STATUS_INFO, NSP_INFO, CDSP_INFO],
        back_to_back(10.0, latencies),
        ticks(0.0, 132.0, 0.5, values),
        [phase(0.0, "baseline"), phase(9.5, "warmup"), phase(10.0, "measure")],
    )


def test_to_dict_is_plain_json_without_the_raw_samples():
    data = analyze(sustained_session()).to_dict()
    text = json.dumps(data, allow_nan=False)
    variant = json.loads(text)["variants"][0]
    assert "latencies_s" not in variant
    assert "blocks" not in variant["energy"]
    assert variant["measured"]["count"] == 1080
    assert variant["thermal"]["stability"]["ratio"] == pytest.approx(0.8)
    assert variant["energy"]["net_energy_j"] == pytest.approx(2.0 * 120.0)


def test_analysis_of_a_recording_equals_the_analysis_of_its_events(tmp_path):
    events = sustained_session()
    path = write_recording(tmp_path / "s.jsonl", events)
    replayed = analyze(open_recording(path).events())
    assert replayed.to_dict() == analyze(events).to_dict()


def test_text_section_shows_the_figures_an_engineer_acts_on():
    text = render_text(analyze(sustained_session()))
    assert "valid: 1080 measured iterations over 120.0 s" in text
    assert "throttling onset at +60." in text
    assert "corroborated: cooling/cdsp stepped 0 -> 2/12 at +58.0 s" in text
    assert "slowdown: sustained +25.0% (final P50 125.000 ms), peak +25.0%" in text
    assert "stability: 80.0% (worst/best throughput of 4 × 30 s windows: 8/10 it/s): FAIL" in text
    assert "gross: mean 3.000 W over 120.0 s = 360.000 J; 333.33 mJ/inference" in text
    assert (
        "net of idle 1.000 W (9.5 s baseline, 19 readings): 240.000 J; 222.22 mJ/inference" in text
    )
    assert "timeline (30 s windows):" in text


def test_markdown_section_has_headings_and_a_timeline_table():
    markdown = render_markdown(analyze(sustained_session()))
    assert markdown.startswith("### Analysis\n\n**Latency**\n\n- valid: 1080")
    assert "| +s | n | P50 ms | it/s | temp °C | cooling | power W |" in markdown
    assert "| 60 | 240 | 125.000 | 8.00 | 58.5 | 2 | 3.000 |" in markdown


def test_summary_rows_carry_raw_values_and_formatted_cells():
    (row,) = summary_rows("base.jsonl", analyze(sustained_session()))
    assert tuple(row) == SUMMARY_COLUMNS
    assert row["config"] == "base.jsonl"
    assert row["p50_s"] == pytest.approx(0.1)
    assert row["energy_per_inference_j"] == pytest.approx(360.0 / 1080)
    cells = summary_cells(row)
    assert len(cells) == len(SUMMARY_HEADERS)
    assert cells[:7] == ["base.jsonl", "1080", "yes", "100.000", "125.000", "125.000", "333.33"]
    assert cells[10] == "80.0%"
    table = render_summary_table([row], markdown=True)
    assert table.splitlines()[0].startswith("| config | n | valid | P50 ms |")


def test_no_iterations_means_no_variants():
    analysis = analyze(stream([NSP_INFO], ticks(0.0, 5.0, 1.0, lambda t: {NSP: 40.0})))
    assert analysis.variants == ()
    assert render_text(analysis).startswith("  note: no power telemetry")


def test_unusable_parameters_are_refused_with_a_fix():
    with pytest.raises(UsageError, match=r"analysis window_s=0 is not usable") as caught:
        analyze(sustained_session(), window_s=0)
    assert caught.value.fix == "a positive number of seconds, e.g. 10"
    with pytest.raises(UsageError, match=r"analysis stability_pass=1.5"):
        analyze([], stability_pass=1.5)
