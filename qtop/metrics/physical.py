"""Families of the physical side: temperatures, cooling, throttling, power and energy.

Temperatures and cooling states are the model's last values; throttling and
energy per inference are the UI's live analysis of each measured variant
(``analyze_live``, on this scrape's copy of the model); power now is the
power pane's own reading (``power_now``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from prometheus_client.core import Metric

from qtop.analysis.live import LiveAnalysis, analyze_live, capture
from qtop.analysis.power_now import power_now
from qtop.events import ChannelInfo
from qtop.metrics.labels import MAX_TRIPS_PER_ZONE, clean_value
from qtop.metrics.scope import Scope, finite


def families(scope: Scope) -> list[Metric]:
    analyses = _analyses(scope)
    return [
        *temperatures(scope),
        *cooling(scope),
        *throttling(scope, analyses),
        *power(scope, analyses),
        *energy(scope, analyses),
    ]


def _analyses(scope: Scope) -> dict[str, LiveAnalysis]:
    """The live analysis of every variant measured so far, and of the current one."""
    model = scope.model
    names = [
        name
        for name in model.variants
        if model.done("measure", name) and scope.variant(name) is not None
    ]
    if model.phase.variant not in names:
        names.append(model.phase.variant)
    return {name: analyze_live(capture(model, name)) for name in names}


def _lowest_trips(channel: ChannelInfo) -> dict[str, float]:
    lowest: dict[str, float] = {}
    for trip in channel.trips:
        name = clean_value(trip.type)
        if name in lowest or len(lowest) < MAX_TRIPS_PER_ZONE:
            lowest[name] = min(trip.temp_c, lowest.get(name, math.inf))
    return lowest


def temperatures(scope: Scope) -> Iterator[Metric]:
    now = scope.gauge("temperature", "Last reading of a thermal zone", ("zone",), "celsius")
    peak = scope.gauge("temperature_peak", "Highest reading of the session", ("zone",), "celsius")
    trips = scope.gauge(
        "temperature_trip",
        "A trip point of the zone (the lowest of each type)",
        ("zone", "trip"),
        "celsius",
    )
    for channel in scope.model.channels_of_kind("temperature"):
        zone = scope.budget.zones.value(channel.id.removeprefix("thermal/"))
        if zone is None:
            continue
        labels = [*scope.base, zone]
        stats = scope.model.channel_stats.get(channel.id)
        if stats is not None and stats.last is not None:
            now.add_metric(labels, stats.last)
        if stats is not None and stats.maximum is not None:
            peak.add_metric(labels, stats.maximum)
        for trip, temp_c in _lowest_trips(channel).items():
            trips.add_metric([*labels, trip], temp_c)
    yield from (now, peak, trips)


def cooling(scope: Scope) -> Iterator[Metric]:
    state = scope.gauge(
        "cooling_state", "Cooling device state: above 0 it is throttling", ("cooling_device",)
    )
    limit = scope.gauge(
        "cooling_max_state", "Highest state of the cooling device", ("cooling_device",)
    )
    for channel in scope.model.channels_of_kind("cooling"):
        name = scope.budget.cooling.value(channel.id.removeprefix("cooling/"))
        if name is None:
            continue
        value = scope.model.last_value(channel.id)
        if value is not None:
            state.add_metric([*scope.base, name], value)
        if channel.max_state is not None:
            limit.add_metric([*scope.base, name], channel.max_state)
    yield from (state, limit)


def throttling(scope: Scope, analyses: dict[str, LiveAnalysis]) -> Iterator[Metric]:
    found = scope.gauge(
        "throttling_detected",
        "1 once the latency shows a throttling onset, 0 while it does not",
        ("variant",),
    )
    onset = scope.gauge(
        "throttling_onset",
        "When throttling began, after the measurement started",
        ("variant",),
        "seconds",
    )
    sustained = scope.gauge(
        "throttling_sustained_slowdown_ratio",
        "Final rolling-median latency over the baseline, minus 1",
        ("variant",),
    )
    peak = scope.gauge(
        "throttling_peak_slowdown_ratio",
        "Worst rolling-median latency over the baseline, minus 1",
        ("variant",),
    )
    for name, analysis in analyses.items():
        thermal, variant = analysis.thermal, scope.variant(name)
        if thermal is None or variant is None:
            continue
        labels = [*scope.base, variant]
        found.add_metric(labels, 0 if thermal.onset_t is None else 1)
        if finite(thermal.onset_offset_s):
            onset.add_metric(labels, thermal.onset_offset_s)
        if finite(thermal.sustained_slowdown):
            sustained.add_metric(labels, thermal.sustained_slowdown)
        if finite(thermal.peak_slowdown):
            peak.add_metric(labels, thermal.peak_slowdown)
    yield from (found, onset, sustained, peak)


def power(scope: Scope, analyses: dict[str, LiveAnalysis]) -> Iterator[Metric]:
    rows = (
        ("power", "Power now, from the chosen source", "watts"),
        ("power_average", "Mean power of the last 10 s", "watts"),
        ("power_peak", "Highest power of the session", "watts"),
        ("supply_current", "Supply current: negative out of the battery, positive into it",
         "amperes"),
        ("supply_voltage", "Supply voltage", "volts"),
    )  # fmt: skip
    gauges = [scope.gauge(name, doc, ("source",), unit) for name, doc, unit in rows]
    charging = scope.gauge(
        "battery_charging",
        "1 while the battery charges (energy figures are then meaningless)",
        ("source",),
    )
    current = analyses.get(scope.model.phase.variant)
    source = current.power_source if current is not None else None
    now = power_now(scope.model, source)
    if source is not None and now is not None:
        labels = [*scope.base, clean_value(source.group)]
        values = (now.power_w, now.average_w, now.peak_w, now.current_a, now.voltage_v)
        for family, value in zip(gauges, values, strict=True):
            if finite(value):
                family.add_metric(labels, value)
        if source.status_channel is not None:
            charging.add_metric(labels, 1 if now.charging else 0)
    yield from (*gauges, charging)


def energy(scope: Scope, analyses: dict[str, LiveAnalysis]) -> Iterator[Metric]:
    per = scope.gauge(
        "energy_per_inference",
        "Energy of one inference over the measured span",
        ("variant", "basis"),
        "joules",
    )
    valid = scope.gauge(
        "energy_per_inference_valid",
        "1 when the energy figure rests on enough sensor updates to trust",
        ("variant", "basis"),
    )
    mean = scope.gauge("measured_power", "Mean power over the measured span", ("variant",), "watts")
    idle = scope.gauge("idle_power", "Mean power of the idle baseline", ("variant",), "watts")
    charged = scope.gauge(
        "energy_charging",
        "1 when the battery charged during the measured span: no energy figure then",
        ("variant",),
    )
    for name, analysis in analyses.items():
        figures, variant = analysis.energy, scope.variant(name)
        if figures is None or variant is None or not figures.available:
            continue
        labels = [*scope.base, variant]
        charged.add_metric(labels, 1 if figures.charging else 0)
        for basis, joules, trusted in (
            ("gross", figures.energy_per_inference_j, figures.valid),
            ("net", figures.net_energy_per_inference_j, figures.net_valid),
        ):
            if finite(joules):
                per.add_metric([*labels, basis], joules)
                valid.add_metric([*labels, basis], 1 if trusted else 0)
        if finite(figures.mean_power_w):
            mean.add_metric(labels, figures.mean_power_w)
        if finite(figures.idle_power_w):
            idle.add_metric(labels, figures.idle_power_w)
    yield from (per, valid, mean, idle, charged)
