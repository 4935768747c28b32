"""Genie: the ``genie-t2t-run --profile FILE`` JSON, and ``genie-t2t-run`` stdout.

Profile JSON (formats.md §3a, §7.1): events are found by their ``type``
(``GenieDialog_query``, ...), never by position, whether they sit in
``components[].events[]`` or are keyed by type name as in the seed. A metric
is a scalar or ``{"value", "unit"}``; a missing token count is recomputed
from rate x time (8 tokens / 0.166485 s = 48.05 toks/sec in the seed) and
marked as computed.

Stdout (§3b): ``[BEGIN]: ... [END]`` responses between ``[INFO]`` log lines,
and the ``[KPIS]`` block of old Genie versions.
"""

from __future__ import annotations

import re
from typing import Any

from qtop.parsers.common import (
    LONGEST_LINE,
    ProfileBuilder,
    ProfilerParseError,
    bounded,
    describe,
    is_known_unit,
    json_number,
    normalize_unit,
    parse_number,
    split_lines,
)
from qtop.parsers.lenient_json import is_partial, load_document
from qtop.profiling.model import GenieQuery, Metric, ParsedProfile, metric_key

KIND_PROFILE = "genie-profile"
KIND_STDOUT = "genie-stdout"

QUERY_TYPE = "GenieDialog_query"
_EVENT_TIMES = ("start", "stop")
_MAX_DEPTH = 8
_PROMPT_TOKENS = ("num-prompt-tokens",)
_GENERATED_TOKENS = ("num-generated-tokens",)
_PREFILL_RATE = ("prompt-processing-rate", "Prompt Processing Rate")
_DECODE_RATE = ("token-generation-rate", "Token Generation Rate")
# INFERRED: formats.md §3b: the old [KPIS] 'Prompt Processing Time' is the query's TTFT.
_PREFILL_TIME = ("time-to-first-token", "Prompt Processing Time")
_DECODE_TIME = ("token-generation-time", "Token Generation Time")

_KPI = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z -]*?)\s*:\s*(?P<value>[-+]?[0-9]+(?:\.[0-9]+)?)\s+"
    r"(?P<unit>[A-Za-z/%]+)\s*(?:,|$)"
)
LONGEST_KPI_LINE = 512  # KPI lines are short; the pattern must not crawl long ones
_LOG_LINE = re.compile(r"^\s*\[(?:INFO|WARN|WARNING|ERROR|DEBUG|VERBOSE)\]", re.I)
_VERSION = re.compile(r"Using libGenie\.so version\s+(?P<version>\S+)")
_PID = re.compile(r"^genie-t2t-run pid:\s*(?P<pid>[0-9]+)")
_SENTENCE_CODE = re.compile(r"\[(?P<code>BEGIN|RESUME|COMPLETE|ABORT)\]:\s?")
_END = "[END]"


class GenieError(ProfilerParseError):
    """A Genie profile or stdout capture without anything qtop can read."""


_PROFILE_FIX = (
    "pass the JSON written by 'genie-t2t-run --profile FILE' (it is written only when "
    "genie-t2t-run exits cleanly), or use --kind"
)


def parse_profile(data: str, source: str = "") -> ParsedProfile:
    """Parse the ``--profile`` JSON; raises ``GenieError`` when it holds no Genie event."""
    builder = ProfileBuilder(KIND_PROFILE, source)
    document = load_document(data, source, GenieError, _PROFILE_FIX, builder)
    if isinstance(document, dict) and isinstance(document.get("header"), dict):
        artifact = document["header"].get("artifact_type")
        if isinstance(artifact, str):
            builder.info["artifact_type"] = artifact
    found = 0
    for component, event_type, event in _events(document, "", 0):
        found += 1
        metrics = _event_metrics(builder, event)
        if event_type == QUERY_TYPE:
            metrics = _with_recomputed(metrics)
            builder.queries.append(
                GenieQuery(
                    index=len(builder.queries) + 1,
                    metrics=tuple(metrics),
                    component=component,
                    complete=not is_partial(event),
                )
            )
        else:
            builder.section(event_type, component).extend(metrics)
    if not found:
        raise GenieError(source, "no Genie events (objects with a 'Genie...' type)", _PROFILE_FIX)
    return builder.build()


def _events(node: Any, component: str, depth: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(component name, event type, event) wherever the events sit in the document."""
    if depth > _MAX_DEPTH:
        return []
    found: list[tuple[str, str, dict[str, Any]]] = []
    if isinstance(node, list):
        for item in node:
            found.extend(_events(item, component, depth + 1))
        return found
    if not isinstance(node, dict):
        return found
    event_type = node.get("type")
    if isinstance(event_type, str) and event_type.startswith("Genie"):
        return [(component, event_type, node)]
    name = node.get("name")
    if isinstance(name, str) and isinstance(node.get("events"), list):
        component = name
    for key, value in node.items():
        if isinstance(key, str) and key.startswith("Genie") and isinstance(value, dict):
            found.append((component, key, value))  # the seed's {"GenieDialog_query": {...}}
        elif isinstance(value, dict | list):
            found.extend(_events(value, component, depth + 1))
    return found


def _event_metrics(builder: ProfileBuilder, event: dict[str, Any]) -> list[Metric]:
    metrics = []
    for key, raw in event.items():
        if key == "type" or key in _EVENT_TIMES or not isinstance(key, str):
            continue
        if key == "duration":
            value = json_number(raw)
            if value is not None:
                # SOURCE: Genie's Profile.cpp writes event durations in microseconds.
                metrics.append(Metric("duration", value, "us"))
            continue
        if isinstance(raw, dict):
            if is_partial(raw):
                continue
            value = json_number(raw.get("value"))
            unit = normalize_unit(raw.get("unit"))
        else:
            value, unit = json_number(raw), ""
        if value is None:
            builder.unknown(None, f"Genie metric {key}: {describe(raw)}")
            continue
        metrics.append(Metric(key, value, unit))
    return metrics


def _seconds(metric: Metric | None) -> float | None:
    """A positive time in seconds (a denormal microsecond count is no time at all)."""
    micros = None if metric is None else metric.in_us()
    seconds = None if micros is None else micros / 1_000_000
    return seconds if seconds is not None and seconds > 0 else None


def _find(metrics: list[Metric], names: tuple[str, ...]) -> Metric | None:
    keys = {metric_key(name) for name in names}
    return next((metric for metric in metrics if metric.key in keys), None)


def _with_recomputed(metrics: list[Metric]) -> list[Metric]:
    """Add token counts and rates the file left out, from the pair it did give (rate = n / t)."""
    out = list(metrics)
    for count_names, rate_names, time_names in (
        (_PROMPT_TOKENS, _PREFILL_RATE, _PREFILL_TIME),
        (_GENERATED_TOKENS, _DECODE_RATE, _DECODE_TIME),
    ):
        count, rate = _find(out, count_names), _find(out, rate_names)
        time_metric = _find(out, time_names)
        seconds = _seconds(time_metric)
        if seconds is None or time_metric is None:
            continue
        if count is None and rate is not None and rate.unit == "toks/sec":
            tokens = bounded(rate.value * seconds)
            if tokens is not None:
                out.append(
                    Metric(
                        count_names[0],
                        round(tokens),
                        "",
                        note=f"recomputed as {rate.name} x {time_metric.name}",
                    )
                )
        elif rate is None and count is not None:
            per_second = bounded(count.value / seconds)
            if per_second is not None:
                out.append(
                    Metric(
                        rate_names[0],
                        round(per_second, 2),
                        "toks/sec",
                        note=f"recomputed as {count.name} / {time_metric.name}",
                    )
                )
    return out


def parse_stdout(data: str, source: str = "") -> ParsedProfile:
    """Parse ``genie-t2t-run`` stdout; raises ``GenieError`` when it has no Genie output."""
    lines, terminated = split_lines(data)
    reader = _StdoutReader(source)
    last = len(lines) - 1
    for number, line in enumerate(lines):
        reader.feed(number + 1, line, cut=number == last and not terminated)
    return reader.finish()


class _StdoutReader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.builder = ProfileBuilder(KIND_STDOUT, source)
        self.response: list[str] | None = None
        self.kpis: list[Metric] | None = None
        self.kpi_query: list[Metric] = []
        self.finished: list[tuple[str, bool]] = []
        self.genie_lines = 0

    def feed(self, number: int, line: str, cut: bool) -> None:
        if len(line) > LONGEST_LINE and self.response is None:
            self.builder.unknown(number, line)
            return
        stripped = line.strip()
        if self.kpis is not None and stripped and not stripped.startswith("["):
            if self._kpi_line(self.kpis, stripped, cut):
                return
            self.kpis = None
        if _LOG_LINE.match(line):
            self.genie_lines += 1
            return
        if self.response is not None:
            self._response_line(self.response, line)
            return
        self._outside_response(number, line, stripped)

    def _outside_response(self, number: int, line: str, stripped: str) -> None:
        version = _VERSION.search(stripped)
        pid = _PID.match(stripped)
        if version is not None:
            self.builder.info["libGenie version"] = version.group("version")
        elif pid is not None:
            self.builder.info["pid"] = pid.group("pid")
        elif stripped.startswith("[PROMPT]"):
            pass
        elif stripped.startswith("[KPIS]"):
            self.kpis = self.builder.section("KPIS")
        elif _SENTENCE_CODE.search(line):
            self.response = []
            self._response_line(self.response, line)
            return
        elif stripped.startswith(_END):
            pass
        elif stripped and not stripped.startswith("Query successfully"):
            self.builder.unknown(number, line)
            return
        self.genie_lines += 1

    def _response_line(self, response: list[str], line: str) -> None:
        text = _SENTENCE_CODE.sub("", line)
        end = text.find(_END)
        if end < 0:
            response.append(text)
            return
        response.append(text[:end])
        self.finished.append(("\n".join(response).strip(), True))
        self.response = None
        self.genie_lines += 1

    def _kpi_line(self, kpis: list[Metric], stripped: str, cut: bool) -> bool:
        """One line of the [KPIS] block; False when the line is not one (the block ended)."""
        if len(stripped) > LONGEST_KPI_LINE:
            return False
        pairs = list(_KPI.finditer(stripped))
        if not pairs:
            return False
        for pair in pairs:
            if cut and pair.end() == len(stripped) and not is_known_unit(pair.group("unit")):
                continue  # the unit (and maybe the number) was cut
            value = parse_number(pair.group("value"))
            if value is None:
                continue
            metric = Metric(pair.group("name").strip(), value, normalize_unit(pair.group("unit")))
            if metric.key == metric_key("Init Time"):
                kpis.append(metric)
            else:
                self.kpi_query.append(metric)
        self.genie_lines += 1
        return True

    def finish(self) -> ParsedProfile:
        builder = self.builder
        if self.response is not None:
            self.finished.append(("\n".join(self.response).strip(), False))
            builder.warn("unfinished_query", "the output ends before the query's [END]")
        for index, (text, complete) in enumerate(self.finished, start=1):
            metrics: list[Metric] = []
            if index == len(self.finished) and self.kpi_query:
                metrics = _with_recomputed(self.kpi_query)
            builder.queries.append(
                GenieQuery(index=index, metrics=tuple(metrics), complete=complete, response=text)
            )
        if self.kpi_query and not self.finished:
            builder.queries.append(
                GenieQuery(index=1, metrics=tuple(_with_recomputed(self.kpi_query)))
            )
        if not builder.has_content and not self.genie_lines:
            raise GenieError(
                self.source,
                "no genie-t2t-run output ([BEGIN]/[END], [KPIS] or 'Using libGenie.so') found",
                "pass what genie-t2t-run printed to stdout, or use --kind",
            )
        return builder.build()
