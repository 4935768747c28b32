"""Power: current, voltage, power now, rolling average and peak, energy per inference."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.analysis.energy import PowerSource
from qtop.analysis.live import LiveAnalysis
from qtop.analysis.power_now import PowerNow, power_now
from qtop.analysis.power_source import (
    METHOD_CHARGE_COUNTER,
    METHOD_CURRENT_VOLTAGE,
    METHOD_ENERGY_COUNTERS,
    METHOD_POWER,
)
from qtop.textsafe import clean
from qtop.ui.format import MISSING, clock, fmt
from qtop.ui.panes.base import Pane
from qtop.ui.plot import Figure, Line, gap_limit
from qtop.ui.view import View
from qtop.ui.widgets.line_chart import LineChart

LOUD = "bold reverse $error"
METHOD_LABELS = {
    METHOD_POWER: "power",
    METHOD_CURRENT_VOLTAGE: "|I| × V",
    METHOD_ENERGY_COUNTERS: "energy counters",
    METHOD_CHARGE_COUNTER: "charge counter × V",
}


def readings_line(now: PowerNow) -> Content:
    parts: list[str | tuple[str, str]] = [
        ("power ", "$text-muted"), (f"{fmt(now.power_w, 2)} W", "bold"),
        ("  avg 10 s ", "$text-muted"), f"{fmt(now.average_w, 2)} W",
        ("  peak ", "$text-muted"), f"{fmt(now.peak_w, 2)} W",
    ]  # fmt: skip
    if now.current_a is not None:
        parts += [("  │  ", "$text-muted"), f"{now.current_a * 1000:.0f} mA"]
        if now.current_sign:
            parts.append((f" ({now.current_sign})", "$text-muted"))
    if now.voltage_v is not None:
        parts += [("  ", ""), f"{fmt(now.voltage_v, 2)} V"]
    return Content.assemble(*parts)


def energy_line(analysis: LiveAnalysis | None) -> Content:
    energy = analysis.energy if analysis is not None else None
    if energy is None:
        return Content.styled("energy per inference: waiting for a measured run", "$text-muted")
    if energy.charging:
        return Content.styled(" CHARGING: energy figures are meaningless; unplug and rerun ", LOUD)
    per = energy.energy_per_inference_j
    parts: list[str | tuple[str, str]] = [
        ("energy/inference ", "$text-muted"),
        (MISSING if per is None else f"{per * 1000:.2f} mJ", "bold $accent"),
    ]
    if per is not None and not energy.valid:
        parts.append((" NOT VALID", "bold $warning"))
    if energy.net_energy_per_inference_j is not None:
        parts += [("  net ", "$text-muted"), f"{energy.net_energy_per_inference_j * 1000:.2f} mJ"]
        if not energy.net_valid:
            parts.append((" NOT VALID", "bold $warning"))
    parts += [
        ("  │  ", "$text-muted"),
        f"{fmt(energy.mean_power_w, 2)} W × {clock(energy.span_s)}, {energy.inferences} inf.",
    ]
    return Content.assemble(*parts)


def power_warnings(now: PowerNow | None, analysis: LiveAnalysis | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if now is not None and now.charging:
        out.append(("BATTERY CHARGING: the current includes the charge current", LOUD))
    energy = analysis.energy if analysis is not None else None
    if energy is not None:
        out.extend(
            (f"not valid: {reason}", "$warning")
            for reason in energy.invalid_reasons
            if "charging" not in reason
        )
        out.extend(
            (w, "$warning")
            for w in energy.warnings
            if "charging" not in w and "idle baseline" not in w
        )
    return out


def source_name(source: PowerSource) -> str:
    """``meter ina226 · power``, ``supply battery · |I| × V``, ``rails odpm · energy``."""
    if source.is_meter:
        what = "meter"
    elif source.is_counter and not source.is_battery:
        what = "rails"
    else:
        what = "supply"
    return clean(f"{what} {source.group.split('/', 1)[-1]} · {METHOD_LABELS[source.method]}")


class PowerPane(Pane):
    """Power draw and the energy each inference costs."""

    TITLE = "power"
    DEFAULT_CSS = """
    PowerPane #power-readings { height: auto; max-height: 4; }
    PowerPane #power-energy { height: 1; }
    PowerPane #power-warnings { height: auto; max-height: 2; }
    /* Without telemetry the pane is the note saying how to add it, whole. */
    PowerPane.-none #power-readings { height: 1fr; max-height: 100%; }
    PowerPane.-none #power-energy, PowerPane.-none #power-chart,
    PowerPane.-none #power-warnings { display: none; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="power-readings")
        yield Static(id="power-energy")
        yield LineChart(id="power-chart", placeholder="no power readings yet")
        yield Static(id="power-warnings")

    def draw(self, view: View) -> None:
        analysis = view.analysis
        source = analysis.power_source if analysis is not None else None
        readings = self.query_one("#power-readings", Static)
        self.set_class(source is None, "-none")
        readings.set_class(source is None, "-wrap")
        if source is None:
            notes = analysis.power_notes if analysis is not None else ()
            text = notes[-1] if notes else "looking for power telemetry"
            self.put("#power-readings", Content.styled(clean(text), "$warning"))
            self.subtitle("no power telemetry" if notes else "")
            return
        now = power_now(view.model, source)
        assert now is not None
        self.subtitle(source_name(source))
        self.put("#power-readings", readings_line(now))
        self.put("#power-energy", energy_line(analysis))
        warnings = power_warnings(now, analysis)
        lines = [Content.styled(f"⚠ {clean(text)}", style) for text, style in warnings]
        self.put("#power-warnings", Content("\n").join(lines))
        self.query_one("#power-warnings").display = bool(lines)
        if not view.charts:
            return
        origin = view.model.t_first or 0.0
        points = [(t - origin, w) for t, w in now.trace]
        line = Line(points, 0, max_gap=gap_limit([x for x, _ in points]))
        chart = self.query_one("#power-chart", LineChart)
        chart.figure = Figure(lines=(line,), y_unit="W", x_format=clock)
