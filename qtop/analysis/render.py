"""Text and Markdown sections for a ``SessionAnalysis``, and the results-table rows.

``qtop report`` composes these; they never read files or print. Latencies are
shown in milliseconds, energy per inference in millijoules, like the seed's
results table; the JSON form (``to_dict``) keeps SI units. Names that come from
the device or the profile (variants, channels, metrics, and the notes that quote
them) go through ``qtop.textsafe.plain``: no control character reaches a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qtop.analysis.energy import EnergyAnalysis
from qtop.analysis.pacing import PacingSummary, describe
from qtop.analysis.render_order import drift_lines, early_stop_lines
from qtop.analysis.session import SessionAnalysis, VariantAnalysis
from qtop.analysis.thermal import ThermalAnalysis, fit_problem
from qtop.table import MISSING, fmt, markdown_table, text_table
from qtop.textsafe import plain, plain_lines

# Appended to a figure that is there but cannot be trusted (too few sensor readings).
INVALID_MARK = " (invalid)"

SUMMARY_COLUMNS: tuple[str, ...] = (
    "config",
    "measured",
    "valid",
    "p50_s",
    "p95_s",
    "p99_s",
    "energy_per_inference_j",
    "net_energy_per_inference_j",
    "inferences_per_j",
    "mean_power_w",
    "energy_valid",
    "net_energy_valid",
    "stability",
    "onset_s",
    "sustained_slowdown",
    "peak_temperature_c",
    "miss_fraction",
    "achieved_rate_hz",
    "duty_cycle",
)
SUMMARY_HEADERS: tuple[str, ...] = (
    "config",
    "n",
    "valid",
    "P50 ms",
    "P95 ms",
    "P99 ms",
    "energy/inf mJ",
    "net mJ",
    "inf/J",
    "power W",
    "stability",
    "onset s",
    "slowdown",
    "peak °C",
)


def _ms(seconds: float | None, digits: int = 3) -> str:
    return fmt(seconds * 1e3 if seconds is not None else None, digits)


def _mj(joules: float | None) -> str:
    return fmt(joules * 1e3 if joules is not None else None, 2)


def marked(cell: str, valid: bool | None) -> str:
    """A figure's cell, marked when the figure is there but not valid."""
    return cell + INVALID_MARK if valid is False and cell != MISSING else cell


def _pct(ratio: float | None, signed: bool = False) -> str:
    if ratio is None:
        return "—"
    return f"{ratio:+.1%}" if signed else f"{ratio:.1%}"


def _title(variant: VariantAnalysis) -> str:
    return f" ({plain(variant.name)})" if variant.name else ""


# --- per-variant lines (shared by text and Markdown) ------------------------


def latency_lines(
    variant: VariantAnalysis, timer_overhead_s: float | None, latency_source: str = "wall"
) -> list[str]:
    m, validity = variant.measured, variant.validity
    state = "valid" if validity.valid else "NOT VALID"
    lines = [
        f"{state}: {m.count} measured iterations over {m.duration_s:.1f} s "
        f"(minimum {validity.min_iterations} iterations, {validity.min_duration_s:g} s)"
        + (f", {m.failed} failed" if m.failed else "")
    ]
    lines += [f"not valid: {plain(reason)}" for reason in validity.reasons]
    if variant.warmup is not None:
        w = variant.warmup
        lines.append(
            f"warm-up: {w.count} iterations, P50 {_ms(w.p50_s)} ms, max {_ms(w.max_s)} ms "
            "(not in the statistics)"
        )
    o = variant.outliers
    if o.sigma_s is not None and o.lower_bound_s is not None and o.upper_bound_s is not None:
        bounds = (
            f"[{_ms(o.lower_bound_s)}, {_ms(o.upper_bound_s)}] ms"
            if o.lower_bound_s > 0
            else f"above {_ms(o.upper_bound_s)} ms"
        )
        lines.append(
            f"outliers: {o.count} ({o.low} low, {o.high} high) outside median ± 10 × 1.4826 × MAD"
            f": {bounds}"
        )
    if timer_overhead_s is not None and latency_source == "wall":
        share = f" ({timer_overhead_s / m.p50_s:.2%} of P50)" if m.p50_s else ""
        lines.append(
            f"device timer overhead: {_ms(timer_overhead_s, 4)} ms{share}, "
            "subtracted from every latency"
        )
    elif timer_overhead_s is not None:
        lines.append(
            f"latency from the profiler ({latency_source}); the device timer "
            f"({_ms(timer_overhead_s, 4)} ms overhead) only places iterations in time"
        )
    lines += [f"hint: {plain(hint)}" for hint in variant.hints]
    for metric in variant.metrics:
        lines.append(
            f"{plain(metric.name)}: P50 {metric.p50:.4g}, P95 {metric.p95:.4g}, "
            f"range {metric.min:.4g} .. {metric.max:.4g} ({metric.count} runs)"
        )
    return lines


def thermal_lines(thermal: ThermalAnalysis | None, t_start: float | None) -> list[str]:
    if thermal is None or thermal.baseline_p50_s is None:
        return ["no measured iterations: no thermal analysis"]
    lines = [
        f"baseline P50 {_ms(thermal.baseline_p50_s)} ms (first {thermal.window_s:g} s); "
        f"onset threshold {_ms(thermal.threshold_s)} ms (+{thermal.theta:.0%})"
    ]
    if thermal.onset_offset_s is not None:
        lines.append(
            f"throttling onset at +{thermal.onset_offset_s:.1f} s: rolling P50 "
            f"({thermal.window_s:g} s window) above the threshold for {thermal.hold_s:g} s"
        )
        event = thermal.corroboration
        if event is not None and t_start is not None:
            lines.append(f"corroborated: {plain(event.detail)} at +{event.t - t_start:.1f} s")
    else:
        lines.append("no throttling onset: the rolling P50 did not stay above the threshold")
    lines.append(
        f"slowdown: sustained {_pct(thermal.sustained_slowdown, True)} "
        f"(final P50 {_ms(thermal.final_p50_s)} ms), peak {_pct(thermal.peak_slowdown, True)}"
        + (
            f"; 90% of it reached after {thermal.time_to_90pct_s:.1f} s"
            if thermal.time_to_90pct_s is not None
            else ""
        )
    )
    fit = thermal.fit
    # tau only with its fit quality; a fit that explains nothing is named as failed.
    problem = fit_problem(fit)
    if fit is not None and problem is None:
        lines.append(
            f"decay fit: tau {fit.tau_s:.1f} s, R² {fit.r_squared:.3f}, L0 {_ms(fit.l0_s)} ms -> "
            f"Linf {_ms(fit.linf_s)} ms (rmse {_ms(fit.rmse_s)} ms, {fit.points} points)"
        )
    elif thermal.onset_offset_s is not None:
        lines.append(f"decay fit: failed ({problem}): no tau")
    s = thermal.stability
    if s is not None:
        lines.append(
            f"stability: {s.ratio:.1%} (worst/best throughput of {s.windows} × {s.window_s:g} s "
            f"windows: {s.worst_per_s:.4g}/{s.best_per_s:.4g} it/s): "
            + ("pass" if s.passed else "FAIL")
            + f" (pass ≥ {s.pass_ratio:.0%})"
        )
    else:
        lines.append("stability: needs two full windows of measurement")
    if thermal.hottest_channel is not None:
        at_onset = (
            f", {thermal.temperature_at_onset_c:g} °C at the onset"
            if thermal.temperature_at_onset_c is not None
            else ""
        )
        lines.append(
            f"hottest zone {plain(thermal.hottest_channel)}: peak {thermal.peak_temperature_c:g} °C"
            + at_onset
        )
    lines += [f"note: {plain(note)}" for note in thermal.notes]
    return lines


_HOW = {
    "held readings": "each reading held until the next update (zero-order hold)",
    "counter updates": "difference of the on-device counter between its updates",
}


def energy_lines(energy: EnergyAnalysis) -> list[str]:
    if not energy.available:
        return [plain(energy.note)]
    updates = (
        f"updates every {energy.refresh_period_s:.3g} s"
        if energy.refresh_period_s is not None
        else "update period unknown"
    )
    interval = f"{energy.sample_interval_s:.3g} s" if energy.sample_interval_s is not None else "—"
    how = _HOW.get(energy.integrated_on or "", energy.integrated_on or "")
    lines = [
        f"source: {plain(energy.source or '')}; {updates}, sampled every {interval}; "
        f"{how}: {energy.readings} readings in the measurement"
    ]
    if energy.charging:
        spans = ", ".join(f"{a:.1f}..{b:.1f} s" for a, b in energy.charging_spans)
        lines.append(f"CHARGING during the measurement (device time {spans}): no energy figures")
    if energy.energy_j is not None:
        state = "" if energy.valid else " (NOT VALID)"
        lines.append(
            f"gross{state}: mean {fmt(energy.mean_power_w, 3)} W over {energy.span_s:.1f} s = "
            f"{fmt(energy.energy_j, 3)} J; {_mj(energy.energy_per_inference_j)} mJ/inference, "
            f"{fmt(energy.inferences_per_j, 3)} inferences/J"
        )
    if energy.idle_power_w is not None:
        state = "" if energy.net_valid or energy.net_energy_j is None else " (NOT VALID)"
        lines.append(
            f"net of idle{state} {fmt(energy.idle_power_w, 3)} W ({fmt(energy.idle_span_s, 1)} s "
            f"baseline, {energy.idle_readings} readings): {fmt(energy.net_energy_j, 3)} J; "
            f"{_mj(energy.net_energy_per_inference_j)} mJ/inference, "
            f"{fmt(energy.net_inferences_per_j, 3)} inferences/J"
        )
    lines += [f"not valid: {plain(reason)}" for reason in energy.invalid_reasons]
    lines += [f"warning: {plain(warning)}" for warning in energy.warnings]
    return lines


TIMELINE_HEADERS = ("+s", "n", "P50 ms", "it/s", "temp °C", "cooling", "power W")


def timeline_rows(variant: VariantAnalysis) -> list[list[str]]:
    return [
        [
            fmt(row.offset_s, 0),
            str(row.iterations),
            _ms(row.p50_s),
            fmt(row.throughput_per_s, 2),
            fmt(row.temperature_c, 1),
            fmt(row.cooling_state, 0),
            fmt(row.power_w, 3),
        ]
        for row in variant.timeline
    ]


# --- whole sections ---------------------------------------------------------


def _session_notes(analysis: SessionAnalysis) -> list[str]:
    """Session notes that no variant's energy section already printed."""
    shown = {variant.energy.note for variant in analysis.variants}
    return [note for note in analysis.notes if note not in shown]


def _latency_section(variant: VariantAnalysis, analysis: SessionAnalysis) -> list[str]:
    lines = latency_lines(variant, analysis.timer_overhead_s, analysis.latency_source)
    lines += early_stop_lines(variant, analysis.parameters)
    return lines + drift_lines(variant.drift)


def pacing_lines(pacing: PacingSummary) -> list[str]:
    return [describe(pacing)]


def _sections(
    variant: VariantAnalysis, analysis: SessionAnalysis, titled: bool
) -> list[tuple[str, list[str]]]:
    """Latency, pacing (a paced run), thermal and energy: the thermal section of a paced
    run starts with its duty cycle, since a paced run heats less than a saturated one."""
    thermal = thermal_lines(variant.thermal, variant.t_start)
    sections = [
        (
            "Latency" if titled else "latency",
            _latency_section(variant, analysis),
        )
    ]
    pacing = variant.pacing
    if pacing is not None:
        sections.append(("Pacing" if titled else "pacing", pacing_lines(pacing)))
        if pacing.duty_cycle is not None:
            thermal = [
                f"at a duty cycle of {pacing.duty_cycle:.0%} (busy share of the run, paced "
                f"at {pacing.target_rate_hz or 0:.4g}/s)",
                *thermal,
            ]
    sections.append(("Thermal" if titled else "thermal", thermal))
    sections.append(("Energy" if titled else "energy", energy_lines(variant.energy)))
    return sections


def render_text(analysis: SessionAnalysis, indent: str = "  ") -> str:
    """The analysis of every variant as indented plain text."""
    out: list[str] = []
    for variant in analysis.variants:
        out.append(f"analysis{_title(variant)}:")
        for name, lines in _sections(variant, analysis, titled=False):
            out.append(f"{indent}{name}:")
            out += [f"{indent * 2}{line}" for line in lines]
        if variant.timeline:
            window = variant.timeline_window_s
            out.append(f"{indent}timeline ({window:g} s windows):")
            out.append(text_table(TIMELINE_HEADERS, timeline_rows(variant), indent * 2))
    out += [f"{indent}note: {plain(note)}" for note in _session_notes(analysis)]
    return plain_lines("\n".join(out))


def render_markdown(analysis: SessionAnalysis, heading_level: int = 3) -> str:
    """The analysis of every variant as Markdown (headings, bullet lists, tables)."""
    hashes = "#" * heading_level
    out: list[str] = []
    for variant in analysis.variants:
        out.append(f"{hashes} Analysis{_title(variant)}")
        for name, lines in _sections(variant, analysis, titled=True):
            out.append(f"**{name}**\n\n" + "\n".join(f"- {line}" for line in lines))
        if variant.timeline:
            window = variant.timeline_window_s
            out.append(
                f"**Timeline** ({window:g} s windows)\n\n"
                + markdown_table(TIMELINE_HEADERS, timeline_rows(variant))
            )
    out += [f"> note: {plain(note)}" for note in _session_notes(analysis)]
    return plain_lines("\n\n".join(out))


# --- the results table (one row per recording and variant) ------------------


def summary_row(label: str, variant: VariantAnalysis) -> dict[str, Any]:
    """Raw values (SI units, ratios) keyed by SUMMARY_COLUMNS, for JSON and CSV."""
    thermal, energy, pacing = variant.thermal, variant.energy, variant.pacing
    config = f"{label} {variant.name}".strip() if label else variant.name
    return {
        "config": config,
        "measured": variant.measured.count,
        "valid": variant.validity.valid,
        "p50_s": variant.measured.p50_s,
        "p95_s": variant.measured.p95_s,
        "p99_s": variant.measured.p99_s,
        "energy_per_inference_j": energy.energy_per_inference_j,
        "net_energy_per_inference_j": energy.net_energy_per_inference_j,
        "inferences_per_j": energy.inferences_per_j,
        "mean_power_w": energy.mean_power_w,
        "energy_valid": energy.valid,
        "net_energy_valid": energy.net_valid,
        "stability": thermal.stability.ratio if thermal and thermal.stability else None,
        "onset_s": thermal.onset_offset_s if thermal else None,
        "sustained_slowdown": thermal.sustained_slowdown if thermal else None,
        "peak_temperature_c": thermal.peak_temperature_c if thermal else None,
        "miss_fraction": pacing.miss_fraction if pacing else None,
        "achieved_rate_hz": pacing.achieved_rate_hz if pacing else None,
        "duty_cycle": pacing.duty_cycle if pacing else None,
    }


def summary_rows(label: str, analysis: SessionAnalysis) -> list[dict[str, Any]]:
    return [summary_row(label, variant) for variant in analysis.variants]


def summary_cells(row: dict[str, Any]) -> list[str]:
    """One row formatted for SUMMARY_HEADERS (ms, mJ, percentages)."""
    return [
        plain(str(row["config"])) or "—",
        str(row["measured"]),
        "yes" if row["valid"] else "NO",
        _ms(row["p50_s"]),
        _ms(row["p95_s"]),
        _ms(row["p99_s"]),
        marked(_mj(row["energy_per_inference_j"]), row["energy_valid"]),
        marked(_mj(row["net_energy_per_inference_j"]), row["net_energy_valid"]),
        marked(fmt(row["inferences_per_j"], 2), row["energy_valid"]),
        marked(fmt(row["mean_power_w"], 3), row["energy_valid"]),
        _pct(row["stability"]),
        fmt(row["onset_s"], 1),
        _pct(row["sustained_slowdown"], True),
        fmt(row["peak_temperature_c"], 1),
    ]


def render_summary_table(rows: Sequence[dict[str, Any]], markdown: bool = False) -> str:
    cells = [summary_cells(row) for row in rows]
    if markdown:
        return markdown_table(SUMMARY_HEADERS, cells)
    return text_table(SUMMARY_HEADERS, cells, "  ")
