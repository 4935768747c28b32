"""Render recording summaries as text, Markdown, JSON or CSV.

The per-recording sections show the model's latency table (the same numbers as
the live UI) followed by the analysis (validity, outliers, thermal decay,
energy); the results table has one row per recording and variant, like the
seed's: config, P50, P95, P99, energy per inference, peak memory, stability.

Every name in a recording (profile, device, variants, channels, markers, the
warnings that quote them) may come from the device: text and Markdown show it
through ``qtop.textsafe.plain``, and so does every CSV cell (the rule is in
``docs/recording-format.md``, "Exports"), so no control character reaches a
terminal or a file someone will ``cat``. JSON escapes them itself.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from qtop.analysis.render import marked, render_markdown, render_text, summary_row
from qtop.report.devices import across_devices, render_devices_markdown, render_devices_text
from qtop.report.summary import RecordingSummary, VariantSummary
from qtop.table import fmt, markdown_table, text_table
from qtop.textsafe import plain, plain_lines

RESULT_HEADERS = (
    "config", "n", "valid", "P50 ms", "P95 ms", "P99 ms", "energy/inf mJ", "net mJ",
    "peak mem MB", "stability", "onset s", "slowdown", "peak °C", "failed",
)  # fmt: skip
CSV_COLUMNS = (
    "recording", "device", "variant", "config", "measured", "failed", "valid", "p50_ms",
    "p90_ms",
    "p95_ms", "p99_ms", "p999_ms", "mean_ms", "stdev_ms", "min_ms", "max_ms", "warmup",
    "warmup_mean_ms", "peak_memory_mb", "energy_per_inference_mj",
    "net_energy_per_inference_mj", "energy_valid", "net_energy_valid", "inferences_per_j",
    "mean_power_w", "stability",
    "onset_s", "sustained_slowdown", "peak_temperature_c", "duration_s", "end_reason",
    "target_rate_hz", "achieved_rate_hz", "deadline_ms", "deadline_missed", "miss_fraction",
    "lateness_p50_ms", "lateness_p95_ms", "lateness_max_ms", "duty_cycle",
)  # fmt: skip


def _analysis_figures(summary: RecordingSummary, variant: VariantSummary) -> dict[str, Any]:
    """The analysis's summary row for one variant, or an empty dict without analysis."""
    if summary.analysis is None:
        return {}
    found = summary.analysis.variant(variant.variant)
    return summary_row("", found) if found is not None else {}


def _percent(ratio: float | None, signed: bool = False) -> str:
    if ratio is None:
        return "—"
    return f"{ratio:+.1%}" if signed else f"{ratio:.1%}"


def _times_1000(value: float | None) -> float | None:
    return None if value is None else value * 1000


def _result_row(summary: RecordingSummary, variant: VariantSummary) -> list[str]:
    m = variant.measured
    a = _analysis_figures(summary, variant)
    valid = a.get("valid")
    return [
        plain(variant.config),
        str(m.count),
        "—" if valid is None else ("yes" if valid else "NO"),
        fmt(m.p50_ms, 3),
        fmt(m.p95_ms, 3),
        fmt(m.p99_ms, 3),
        marked(fmt(_times_1000(a.get("energy_per_inference_j")), 2), a.get("energy_valid")),
        marked(fmt(_times_1000(a.get("net_energy_per_inference_j")), 2), a.get("net_energy_valid")),
        fmt(variant.peak_memory_mb, 1),
        _percent(a.get("stability")),
        fmt(a.get("onset_s"), 1),
        _percent(a.get("sustained_slowdown"), signed=True),
        fmt(a.get("peak_temperature_c"), 1),
        str(variant.failed),
    ]


def results_rows(summaries: Sequence[RecordingSummary]) -> list[list[str]]:
    return [_result_row(s, v) for s in summaries for v in s.variants]


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "—"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _latency_lines(variant: VariantSummary) -> list[str]:
    m, w = variant.measured, variant.warmup
    title = f"  latency{f' ({plain(variant.variant)})' if variant.variant else ''}"
    lines = [
        f"{title}: {m.count} measured, {w.count} warm-up, {variant.failed} failed"
        + ("" if m.exact or m.count == 0 else " (percentiles within ±0.1%)")
    ]
    if m.count:
        values = (m.p50_ms, m.p90_ms, m.p95_ms, m.p99_ms, m.p999_ms, m.mean_ms, m.stdev_ms,
                  m.min_ms, m.max_ms)  # fmt: skip
        table = text_table(
            ("P50", "P90", "P95", "P99", "P99.9", "mean", "stdev", "min", "max"),
            [[fmt(v, 3) for v in values]],
            indent="    ",
        )
        lines.append(table + "   (ms)")
    for name, value in sorted(variant.metrics.items()):
        lines.append(f"    {plain(name)}: {fmt(value, 3)} (median)")
    return lines


def _recording_text(summary: RecordingSummary) -> str:
    lines = [plain(summary.path)]
    lines.append(
        f"  profile {plain(summary.profile) or '—'} · device {plain(summary.device) or '—'} · "
        f"{plain(summary.source) or 'unknown source'} · {_duration(summary.duration_s)} · "
        f"{plain(summary.end_reason)}"
    )
    if summary.end_detail:
        lines.append(f"  ended: {plain(summary.end_detail)}")
    lines.extend(f"  warning: {plain(warning)}" for warning in summary.warnings)
    for variant in summary.variants:
        lines.extend(_latency_lines(variant))
    if summary.analysis is not None:
        lines.append(render_text(summary.analysis, indent="  "))
    if summary.channels:
        rows = [
            [plain(c.id), plain(c.unit), fmt(c.last), fmt(c.minimum), fmt(c.maximum),
             str(c.unavailable) if c.unavailable else ""]
            for c in summary.channels
        ]  # fmt: skip
        lines.append(f"  sensors ({summary.samples} ticks, {summary.missed_ticks} missed):")
        lines.append(text_table(("channel", "unit", "last", "min", "max", "n/a"), rows, "    "))
    if summary.disconnects or summary.gaps:
        lines.append(
            f"  link: {summary.disconnects} disconnect(s), {summary.reconnects} reconnect(s), "
            f"{summary.gaps} gap(s) totalling {summary.gap_seconds:.1f} s"
        )
    for t, label in summary.markers:
        lines.append(f"  marker at +{fmt(t, 1)} s: {plain(label)}")
    return "\n".join(lines)


def non_finite_as_null(value: Any) -> Any:
    """``value`` with every float that is not finite as null, in nested dicts and lists:
    JSON has no infinity, and a damaged recording (a -1e308 s latency in ms, times a
    1.8e308 s latency pushed past any float) still gets its report and its export."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: non_finite_as_null(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [non_finite_as_null(item) for item in value]
    return value


def render(summaries: Sequence[RecordingSummary], fmt_name: str) -> str:
    if fmt_name == "json":
        payload = [non_finite_as_null(s.to_dict()) for s in summaries]
        return json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, allow_nan=False)
    if fmt_name == "csv":
        return _render_csv(summaries)
    if fmt_name == "markdown":
        parts = [markdown_table(RESULT_HEADERS, results_rows(summaries))]
        for summary in summaries:
            parts.extend(f"> warning: {plain(warning)}" for warning in summary.warnings)
            if summary.analysis is not None:
                parts.append(f"### {plain(summary.path)}\n\n{render_markdown(summary.analysis, 4)}")
        if across_devices(summaries):
            parts.insert(1, render_devices_markdown(summaries))
        return plain_lines("\n\n".join(parts))
    sections = [_recording_text(s) for s in summaries]
    if len(summaries) > 1 or any(len(s.variants) > 1 for s in summaries):
        sections.append("results:\n" + text_table(RESULT_HEADERS, results_rows(summaries), "  "))
    if across_devices(summaries):
        sections.append(render_devices_text(summaries))
    return plain_lines("\n\n".join(sections))


def _rounded(seconds: float) -> float | None:
    return round(seconds, 3) if math.isfinite(seconds) else None


def _valid_cell(figures: dict[str, Any], figure: str, flag: str) -> bool | None:
    """Whether an energy figure is valid; empty where there is no such figure."""
    return figures.get(flag) if figures.get(figure) is not None else None


def _render_csv(summaries: Sequence[RecordingSummary]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for summary in summaries:
        for v in summary.variants:
            m = v.measured
            a = _analysis_figures(summary, v)
            writer.writerow(
                [
                    plain(v.recording), plain(summary.device), plain(v.variant), plain(v.config),
                    m.count, v.failed,
                    a.get("valid"),
                    m.p50_ms, m.p90_ms, m.p95_ms, m.p99_ms, m.p999_ms, m.mean_ms, m.stdev_ms,
                    m.min_ms, m.max_ms, v.warmup.count, v.warmup.mean_ms, v.peak_memory_mb,
                    _times_1000(a.get("energy_per_inference_j")),
                    _times_1000(a.get("net_energy_per_inference_j")),
                    _valid_cell(a, "energy_per_inference_j", "energy_valid"),
                    _valid_cell(a, "net_energy_per_inference_j", "net_energy_valid"),
                    a.get("inferences_per_j"), a.get("mean_power_w"), a.get("stability"),
                    a.get("onset_s"), a.get("sustained_slowdown"), a.get("peak_temperature_c"),
                    _rounded(summary.duration_s), plain(summary.end_reason),
                    *_pacing_cells(summary, v),
                ]
            )  # fmt: skip
    return buffer.getvalue().rstrip("\n")


def _pacing_cells(summary: RecordingSummary, variant: VariantSummary) -> list[Any]:
    """The pacing columns of a variant (empty for a run that was not paced)."""
    found = summary.analysis.variant(variant.variant) if summary.analysis else None
    pacing = found.pacing if found is not None else None
    if pacing is None:
        return [None] * 9
    return [
        pacing.target_rate_hz, pacing.achieved_rate_hz, _times_1000(pacing.deadline_s),
        pacing.missed, pacing.miss_fraction, _times_1000(pacing.lateness_p50_s),
        _times_1000(pacing.lateness_p95_s), _times_1000(pacing.lateness_max_s), pacing.duty_cycle,
    ]  # fmt: skip
