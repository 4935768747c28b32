"""Render recording summaries as text, Markdown, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from qtop.report.summary import RecordingSummary, VariantSummary
from qtop.report.table import fmt, markdown_table, text_table

FORMATS = ("text", "markdown", "json", "csv")

RESULT_HEADERS = (
    "config", "n", "P50 ms", "P95 ms", "P99 ms", "mean ms", "failed", "peak mem MB",
    "energy/inf mJ",
)  # fmt: skip
CSV_COLUMNS = (
    "recording", "variant", "config", "measured", "failed", "p50_ms", "p90_ms", "p95_ms",
    "p99_ms", "p999_ms", "mean_ms", "stdev_ms", "min_ms", "max_ms", "warmup", "warmup_mean_ms",
    "peak_memory_mb", "energy_per_inference_mj", "duration_s", "end_reason",
)  # fmt: skip


def _result_row(variant: VariantSummary) -> list[str]:
    m = variant.measured
    return [
        variant.config,
        str(m.count),
        fmt(m.p50_ms, 3),
        fmt(m.p95_ms, 3),
        fmt(m.p99_ms, 3),
        fmt(m.mean_ms, 3),
        str(variant.failed),
        fmt(variant.peak_memory_mb, 1),
        fmt(variant.energy_per_inference_mj, 2),
    ]


def results_rows(summaries: Sequence[RecordingSummary]) -> list[list[str]]:
    return [_result_row(v) for s in summaries for v in s.variants]


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _recording_text(summary: RecordingSummary) -> str:
    lines = [f"{summary.path}"]
    lines.append(
        f"  profile {summary.profile or '—'} · device {summary.device or '—'} · "
        f"{summary.source or 'unknown source'} · {_duration(summary.duration_s)} · "
        f"{summary.end_reason}"
    )
    for warning in summary.warnings:
        lines.append(f"  warning: {warning}")
    for variant in summary.variants:
        title = f"  latency{f' ({variant.variant})' if variant.variant else ''}"
        m, w = variant.measured, variant.warmup
        lines.append(
            f"{title}: {m.count} measured, {w.count} warm-up, {variant.failed} failed"
            + ("" if m.exact or m.count == 0 else " (percentiles ±0.1%)")
        )
        if m.count:
            lines.append(
                text_table(
                    ("P50", "P90", "P95", "P99", "P99.9", "mean", "stdev", "min", "max"),
                    [
                        [
                            fmt(v, 3)
                            for v in (
                                m.p50_ms,
                                m.p90_ms,
                                m.p95_ms,
                                m.p99_ms,
                                m.p999_ms,
                                m.mean_ms,
                                m.stdev_ms,
                                m.min_ms,
                                m.max_ms,
                            )
                        ]
                    ],
                    indent="    ",
                )
                + "   (ms)"
            )
        for name, value in sorted(variant.metrics.items()):
            lines.append(f"    {name}: {fmt(value, 3)} (median)")
    if summary.channels:
        rows = [
            [c.id, c.unit, fmt(c.last), fmt(c.minimum), fmt(c.maximum),
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
        lines.append(f"  marker at +{fmt(t, 1)} s: {label}")
    return "\n".join(lines)


def render(summaries: Sequence[RecordingSummary], fmt_name: str) -> str:
    if fmt_name == "json":
        payload = [s.to_dict() for s in summaries]
        return json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, allow_nan=False)
    if fmt_name == "csv":
        return _render_csv(summaries)
    if fmt_name == "markdown":
        parts = [markdown_table(RESULT_HEADERS, results_rows(summaries))]
        for summary in summaries:
            for warning in summary.warnings:
                parts.append(f"> warning: {warning}")
        return "\n\n".join(parts)
    sections = [_recording_text(s) for s in summaries]
    if len(summaries) > 1 or any(len(s.variants) > 1 for s in summaries):
        sections.append("results:\n" + text_table(RESULT_HEADERS, results_rows(summaries), "  "))
    return "\n\n".join(sections)


def _render_csv(summaries: Sequence[RecordingSummary]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for summary in summaries:
        for v in summary.variants:
            m = v.measured
            writer.writerow(
                [
                    v.recording,
                    v.variant,
                    v.config,
                    m.count,
                    v.failed,
                    m.p50_ms,
                    m.p90_ms,
                    m.p95_ms,
                    m.p99_ms,
                    m.p999_ms,
                    m.mean_ms,
                    m.stdev_ms,
                    m.min_ms,
                    m.max_ms,
                    v.warmup.count,
                    v.warmup.mean_ms,
                    v.peak_memory_mb,
                    v.energy_per_inference_mj,
                    round(summary.duration_s, 3),
                    summary.end_reason,
                ]
            )
    return buffer.getvalue().rstrip("\n")
