"""Power: current, voltage, power now, rolling average and peak, energy per inference."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.analysis.energy import STATUS_CHARGING, UNIT_SCALE, PowerSource
from qtop.analysis.live import LiveAnalysis
from qtop.stats.model import SessionModel
from qtop.textsafe import clean
from qtop.ui.format import MISSING, clock, fmt
from qtop.ui.panes.base import Pane
from qtop.ui.plot import Figure, Line, gap_limit
from qtop.ui.view import View
from qtop.ui.widgets.line_chart import LineChart

ROLLING_WINDOW_S = 10.0
LOUD = "bold reverse $error"


@dataclass(frozen=True, slots=True)
class PowerNow:
    """The latest readings of the chosen power source (watts, amps, volts)."""

    power_w: float | None
    current_a: float | None
    voltage_v: float | None
    average_w: float | None
    peak_w: float | None
    charging: bool
    trace: tuple[tuple[float, float], ...]


def _scaled(model: SessionModel, channel_id: str | None) -> float | None:
    if channel_id is None:
        return None
    value = model.last_value(channel_id)
    channel = model.channels.get(channel_id)
    if value is None or channel is None:
        return None
    return abs(value) * UNIT_SCALE.get(channel.unit, 1.0)


def _group_channel(model: SessionModel, source: PowerSource, kind: str) -> str | None:
    return next(
        (
            c.id
            for c in model.channels.values()
            if c.kind == kind and c.id.rsplit("/", 1)[0] == source.group
        ),
        None,
    )


def power_trace(model: SessionModel, source: PowerSource) -> list[tuple[float, float]]:
    """(device time, watts) from the model's series of the source's channels."""
    scales = [UNIT_SCALE.get(model.channels[c].unit, 1.0) for c in source.channels]
    views = [model.channel_series[c].view() for c in source.channels if c in model.channel_series]
    if len(views) != len(source.channels):
        return []
    if source.method == "power":
        return [(p.t, abs(p.mean) * scales[0]) for p in views[0]]
    volts = {p.t: abs(p.mean) * scales[1] for p in views[1]}
    return [(p.t, abs(p.mean) * scales[0] * volts[p.t]) for p in views[0] if p.t in volts]


def power_now(model: SessionModel, source: PowerSource | None) -> PowerNow | None:
    if source is None:
        return None
    trace = power_trace(model, source)
    current_id = _group_channel(model, source, "current")
    voltage_id = _group_channel(model, source, "voltage")
    current, voltage = _scaled(model, current_id), _scaled(model, voltage_id)
    if source.method == "power":
        power = _scaled(model, source.channels[0])
    else:
        power = current * voltage if current is not None and voltage is not None else None
    recent = [
        w for t, w in trace if model.t_last is not None and t >= model.t_last - ROLLING_WINDOW_S
    ]
    status = model.last_value(source.status_channel) if source.status_channel else None
    return PowerNow(
        power_w=power,
        current_a=current,
        voltage_v=voltage,
        average_w=sum(recent) / len(recent) if recent else None,
        peak_w=max((w for _, w in trace), default=None),
        charging=status is not None and round(status) == STATUS_CHARGING,
        trace=tuple(trace),
    )


def readings_line(now: PowerNow) -> Content:
    parts: list[str | tuple[str, str]] = [
        ("power ", "$text-muted"), (f"{fmt(now.power_w, 2)} W", "bold"),
        ("  avg 10 s ", "$text-muted"), f"{fmt(now.average_w, 2)} W",
        ("  peak ", "$text-muted"), f"{fmt(now.peak_w, 2)} W",
    ]  # fmt: skip
    if now.current_a is not None:
        parts += [("  │  ", "$text-muted"), f"{now.current_a * 1000:.0f} mA"]
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
    if energy.net_energy_per_inference_j is not None:
        parts += [("  net ", "$text-muted"), f"{energy.net_energy_per_inference_j * 1000:.2f} mJ"]
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
            (w, "$warning")
            for w in energy.warnings
            if "charging" not in w and "idle baseline" not in w
        )
    return out


def source_name(source: PowerSource) -> str:
    """``meter ina226 · power`` or ``supply battery · |I| × V``: each thing once."""
    what = "meter" if source.is_meter else "supply"
    how = "power" if source.method == "power" else "|I| × V"
    return clean(f"{what} {source.group.split('/', 1)[-1]} · {how}")


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
