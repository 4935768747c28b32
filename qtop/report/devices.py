"""Recordings of several devices side by side: one row per device, per variant.

When the recordings given to ``report`` come from more than one device (the
glasses and the reference phone of ``qtop run A B``), the report ends with a
table that puts each variant's devices next to each other, with each figure
also as a ratio to the first device's, so "the glasses take 2.1x as long" is
read off rather than worked out. Each device's latency is timed by its own
clock, so the ratios compare durations, never instants.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qtop.analysis.render import summary_row
from qtop.report.summary import RecordingSummary, VariantSummary
from qtop.table import fmt, markdown_table, text_table

HEADERS = (
    "variant", "device", "recording", "n", "P50 ms", "×P50", "P95 ms", "P99 ms",
    "energy/inf mJ", "×energy", "peak °C", "onset s",
)  # fmt: skip


def devices_of(summaries: Sequence[RecordingSummary]) -> list[str]:
    """The distinct devices of the recordings, in the order given."""
    out: list[str] = []
    for summary in summaries:
        name = summary.device or "?"
        if name not in out:
            out.append(name)
    return out


def across_devices(summaries: Sequence[RecordingSummary]) -> bool:
    return len(devices_of(summaries)) > 1


def _figures(summary: RecordingSummary, variant: VariantSummary) -> dict[str, Any]:
    if summary.analysis is None:
        return {}
    found = summary.analysis.variant(variant.variant)
    return summary_row("", found) if found is not None else {}


def _ratio(value: float | None, reference: float | None) -> str:
    if value is None or reference is None or reference <= 0:
        return "—"
    return f"{value / reference:.2f}"


def _groups(
    summaries: Sequence[RecordingSummary],
) -> list[list[tuple[RecordingSummary, VariantSummary]]]:
    """Each variant's rows: the recordings that have it, by name, in the order given.

    A recording of a single variant that no other recording names (one model on the
    reference phone, three quantisations on the glasses) stands in every group, as
    compare lines up two single-variant sides whatever they are called.
    """

    def names(summary: RecordingSummary) -> list[str]:
        return [variant.variant for variant in summary.variants]

    def everywhere(summary: RecordingSummary) -> bool:
        others = {n for other in summaries if other is not summary for n in names(other)}
        return len(summary.variants) == 1 and summary.variants[0].variant not in others

    order: list[str] = []
    for summary in summaries:
        if not everywhere(summary):
            order += [name for name in names(summary) if name not in order]
    if not order:
        return [[(s, s.variants[0]) for s in summaries if s.variants]]
    groups = []
    for name in order:
        members = []
        for summary in summaries:
            found = next((v for v in summary.variants if v.variant == name), None)
            if found is None and everywhere(summary):
                found = summary.variants[0]
            if found is not None:
                members.append((summary, found))
        groups.append(members)
    return groups


def device_rows(summaries: Sequence[RecordingSummary]) -> list[list[str]]:
    """Rows grouped by variant (in first-seen order), each device's row under the others."""
    rows: list[list[str]] = []
    for group in _groups(summaries):
        reference_p50: float | None = None
        reference_energy: float | None = None
        for position, (summary, variant) in enumerate(group):
            figures = _figures(summary, variant)
            energy = figures.get("energy_per_inference_j")
            energy_mj = energy * 1000 if energy is not None else None
            if position == 0:
                reference_p50, reference_energy = variant.measured.p50_ms, energy_mj
            rows.append(
                [
                    variant.variant or "—",
                    summary.device or "?",
                    summary.path,
                    str(variant.measured.count),
                    fmt(variant.measured.p50_ms, 3),
                    _ratio(variant.measured.p50_ms, reference_p50),
                    fmt(variant.measured.p95_ms, 3),
                    fmt(variant.measured.p99_ms, 3),
                    fmt(energy_mj, 2),
                    _ratio(energy_mj, reference_energy),
                    fmt(figures.get("peak_temperature_c"), 1),
                    fmt(figures.get("onset_s"), 1),
                ]
            )
    return rows


NOTE = (
    "× is the ratio to the variant's first device; each device is timed by its own clock, "
    "so these compare durations, not instants"
)


def render_devices_text(summaries: Sequence[RecordingSummary]) -> str:
    table = text_table(HEADERS, device_rows(summaries), "  ")
    return f"devices side by side ({len(devices_of(summaries))} devices):\n{table}\n  {NOTE}"


def render_devices_markdown(summaries: Sequence[RecordingSummary]) -> str:
    table = markdown_table(HEADERS, device_rows(summaries))
    return f"#### Devices side by side\n\n{table}\n\n{NOTE}"
