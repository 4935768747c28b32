"""The metric families of one model state: a view of the ``SessionModel``, nothing more.

Every figure comes from the model's own answers (``RunningStats.quantile``,
``ChannelStats.last``), from the live analysis the UI runs on the same model
(``analyze_live``: energy per inference, throttling onset) or from the power
pane's own reading (``power_now``); nothing is computed a second way, so a
scrape and the screen of the same moment agree. This module has the session,
its plan, latency and the link; ``qtop.metrics.physical`` has temperatures,
cooling, throttling, power and energy. ``docs/metrics.md`` lists every family
with its type, unit and labels: keep them together.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import InfoMetricFamily, Metric, StateSetMetricFamily

from qtop.analysis.pacing import live_pacing
from qtop.events import PHASES
from qtop.metrics import physical
from qtop.metrics.labels import clean_value
from qtop.metrics.scope import BASE_LABELS, PREFIX, Budget, Scope, finite
from qtop.stats.model import SessionModel, split_key

LATENCY_QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.999)
LINK_STATES = ("connecting", "connected", "disconnected", "reconnecting", "reconnected", "gap")
# The headless status line says the link is down in these states; so do the metrics.
LINK_DOWN_STATES = ("connecting", "disconnected", "reconnecting")


def model_families(model: SessionModel) -> tuple[list[Metric], Budget]:
    """Every family of ``model`` (a copy nobody else changes), and what the caps left out."""
    scope = Scope(model)
    families = [*session(scope), *latency(scope), *pacing(scope), *iteration_metrics(scope)]
    families += physical.families(scope)
    families += link(scope)
    return families, scope.budget


def session(scope: Scope) -> Iterator[Metric]:
    model, header, base = scope.model, scope.model.header, scope.base
    info = InfoMetricFamily(
        PREFIX + "session",
        "What is being measured: the device, the profile and this qtop",
        labels=list(BASE_LABELS),
    )
    described = {
        "soc": header.device.get("soc") if header else None,
        "source": header.source if header else None,
        "session": header.session_id if header else None,
        "transport": header.device.get("transport") if header else None,
        "qtop_version": header.qtop_version if header else None,
    }
    info.add_metric(base, {key: clean_value(str(value or "")) for key, value in described.items()})
    yield info
    phase = model.phase
    labels = [*base, scope.variant(phase.variant) or ""]
    states = StateSetMetricFamily(
        PREFIX + "phase",
        "The phase the run is in (one state is 1)",
        labels=[*BASE_LABELS, "variant"],
    )
    states.add_metric(labels, {name: name == phase.phase for name in PHASES})
    yield states
    elapsed = scope.gauge(
        "phase_elapsed", "Device time since the phase began", ("variant",), "seconds"
    )
    planned = scope.gauge(
        "phase_planned_iterations", "Iterations the phase plans to run", ("variant",)
    )
    lasting = scope.gauge(
        "phase_planned_duration", "How long the phase plans to run", ("variant",), "seconds"
    )
    if phase.started_t is not None and model.t_last is not None:
        elapsed.add_metric(labels, model.t_last - phase.started_t)
    if phase.planned_iterations is not None:
        planned.add_metric(labels, phase.planned_iterations)
    if phase.planned_duration_s is not None:
        lasting.add_metric(labels, phase.planned_duration_s)
    yield from (elapsed, planned, lasting)
    duration = scope.gauge(
        "session_duration", "Device time from the first event to the last", (), "seconds"
    )
    duration.add_metric(base, model.duration_s)
    yield duration
    for name, doc, value in (
        ("events", "Events the session model has applied", model.event_count),
        ("samples", "Sensor samples received", model.sample_count),
        ("missed_ticks", "Sampler ticks the device skipped", model.missed_ticks),
    ):
        counter = scope.counter(name, doc, ())
        counter.add_metric(base, value)
        yield counter


def latency(scope: Scope) -> Iterator[Metric]:
    model, base = scope.model, scope.base
    iterations = scope.counter(
        "iterations", "Iterations finished, by outcome", ("variant", "phase", "outcome")
    )
    for key in dict.fromkeys([*model.iterations_done, *model.iterations_failed]):
        phase, name = split_key(key)
        variant = scope.variant(name)
        if variant is None:
            continue
        label_values = [*base, variant, clean_value(phase)]
        iterations.add_metric([*label_values, "ok"], model.iterations_done.get(key, 0))
        iterations.add_metric([*label_values, "failed"], model.iterations_failed.get(key, 0))
    yield iterations
    summary = Metric(PREFIX + "latency", "Latency of successful iterations", "summary", "seconds")
    fastest = scope.gauge("latency_min", "Fastest iteration", ("variant", "phase"), "seconds")
    slowest = scope.gauge("latency_max", "Slowest iteration", ("variant", "phase"), "seconds")
    spread = scope.gauge(
        "latency_stdev", "Standard deviation of the latency", ("variant", "phase"), "seconds"
    )
    for key, stats in model.latency.items():
        phase, name = split_key(key)
        variant = scope.variant(name)
        if variant is None or stats.count == 0:
            continue
        values = [*base, variant, clean_value(phase)]
        labels = dict(zip((*BASE_LABELS, "variant", "phase"), values, strict=True))
        for q, value in stats.quantiles(LATENCY_QUANTILES).items():
            summary.add_sample(summary.name, {**labels, "quantile": f"{q:g}"}, value)
        summary.add_sample(summary.name + "_count", labels, stats.count)
        summary.add_sample(summary.name + "_sum", labels, stats.mean * stats.count)
        fastest.add_metric(values, stats.minimum)
        slowest.add_metric(values, stats.maximum)
        spread.add_metric(values, stats.stdev)
    yield from (summary, fastest, slowest, spread)


def pacing(scope: Scope) -> Iterator[Metric]:
    """A paced run's figures, as the latency pane's pacing line shows them."""
    labels = ("variant", "phase")
    paced = scope.counter("paced_iterations", "Iterations that ran on the schedule", labels)
    missed = scope.counter(
        "deadline_misses", "Paced iterations that ended past their deadline", labels
    )
    late = {
        name: scope.gauge(
            f"start_lateness_{name}",
            f"{doc} start lateness (start minus arrival)",
            labels,
            "seconds",
        )
        for name, doc in (("p50", "Median"), ("p95", "95th percentile"), ("max", "Largest"))
    }
    achieved = scope.gauge(
        "achieved_rate", "Iterations started per second of device time", labels, "hertz"
    )
    target = scope.gauge("target_rate", "The rate the schedule asks for", labels, "hertz")
    deadline = scope.gauge("deadline", "Time an iteration has from its arrival", labels, "seconds")
    duty = scope.gauge(
        "duty_cycle", "Share of the paced span the command was running", labels, "ratio"
    )
    for key in scope.model.pacing:
        phase, name = split_key(key)
        variant = scope.variant(name)
        figures = live_pacing(scope.model, phase, name)
        if variant is None or figures is None:
            continue
        values = [*scope.base, variant, clean_value(phase)]
        paced.add_metric(values, figures.iterations)
        missed.add_metric(values, figures.missed)
        for quantile, value in (
            ("p50", figures.lateness_p50_s),
            ("p95", figures.lateness_p95_s),
            ("max", figures.lateness_max_s),
        ):
            if finite(value):
                late[quantile].add_metric(values, value)
        for family, value in (
            (achieved, figures.achieved_rate_hz),
            (target, figures.target_rate_hz),
            (deadline, figures.deadline_s),
            (duty, figures.duty_cycle),
        ):
            if finite(value):
                family.add_metric(values, value)
    yield from (paced, missed, *late.values(), achieved, target, deadline, duty)


def iteration_metrics(scope: Scope) -> Iterator[Metric]:
    family = scope.gauge(
        "iteration_metric_median",
        "Median of a figure the tool reports per iteration (TTFT, tokens/s), measured phase",
        ("variant", "metric"),
    )
    for key, stats in scope.model.metrics.items():
        phase, rest = split_key(key)
        name, _, metric = rest.rpartition("|")
        if phase != "measure" or not stats.count:
            continue
        variant = scope.variant(name)
        label = scope.budget.iteration_metrics.value(metric)
        if variant is not None and label is not None:
            family.add_metric([*scope.base, variant, label], stats.quantile(0.5))
    yield family


def link(scope: Scope) -> Iterator[Metric]:
    state, base = scope.model.link, scope.base
    states = StateSetMetricFamily(
        PREFIX + "link_state",
        "The link to the device as qtop last saw it",
        labels=list(BASE_LABELS),
    )
    states.add_metric(base, {name: name == state.state for name in LINK_STATES})
    yield states
    up = scope.gauge("link_up", "1 while the link to the device is up", ())
    up.add_metric(base, 0 if state.state in LINK_DOWN_STATES else 1)
    yield up
    for name, doc, value in (
        ("link_disconnects", "Times the link to the device dropped", state.disconnects),
        ("link_reconnects", "Times qtop reconnected and resumed", state.reconnects),
    ):
        counter = scope.counter(name, doc, ())
        counter.add_metric(base, value)
        yield counter
    gaps = scope.counter(
        "link_gap", "Device time the device itself could not fill after a drop", (), "seconds"
    )
    gaps.add_metric(base, state.gap_seconds)
    yield gaps
