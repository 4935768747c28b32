"""Latency: the device's P50/P95/P99 and count, and its latency over time."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.textsafe import clean
from qtop.ui.devices.section import Section
from qtop.ui.devices.view import DeviceView
from qtop.ui.panes.latency import figures_line, latency_figure
from qtop.ui.widgets.line_chart import LineChart


class LatencySection(Section):
    """The same figures and chart as the dashboard's latency pane, in a column's width."""

    DEFAULT_CSS = """
    LatencySection { height: 1fr; }
    LatencySection #device-latency-title { height: 1; color: $text-muted; }
    LatencySection #device-latency-figures { height: 3; }
    LatencySection LineChart { height: 1fr; min-height: 3; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="device-latency-title")
        yield Static(id="device-latency-figures")
        yield LineChart(id="device-latency-chart", placeholder="waiting for measured iterations")

    def draw(self, view: DeviceView) -> None:
        model = view.model
        if model is None:
            self.put("#device-latency-title", Content(""))
            self.put("#device-latency-figures", Content(""))
            return
        variant = f" · variant {clean(view.variant)}" if view.variant else ""
        self.put("#device-latency-title", Content(f"latency{variant}"))
        self.put("#device-latency-figures", figures_line(model, view.variant, narrow=True))
        if view.charts:
            for chart in self.query("#device-latency-chart").results(LineChart):
                chart.figure = latency_figure(model, view.variant)
