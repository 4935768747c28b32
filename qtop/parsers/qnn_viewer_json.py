"""``qnn-profile-viewer --standardized_json_output --reader libQnnJsonProfilingReader.so``.

Shape (formats.md §1e): ``metadata`` and ``messages[]``, each with a
``method`` and ``profilingEvents[]`` of ``{identifier, unit, type, value,
sub-events}``. A ``BACKEND_EXECUTE`` message is one execute; the sub-events of
``Accelerator (execute) time (cycles)`` are its ops (identifiers without the
`` (cycles)`` suffix, ``type`` ``NODE``). ``type`` may be empty.
"""

from __future__ import annotations

from typing import Any

from qtop.parsers.common import (
    ExecuteDraft,
    OpDraft,
    ProfileBuilder,
    ProfilerParseError,
    describe,
    has_op_id,
    json_number,
    normalize_unit,
    split_op_identifier,
)
from qtop.parsers.lenient_json import is_partial, load_document
from qtop.profiling.model import TIME_UNITS_IN_US, Metric, ParsedProfile, metric_key

KIND = "qnn-viewer-json"

_FIX = (
    "pass the file written by 'qnn-profile-viewer --input_log X.log --output X.json "
    "--standardized_json_output --reader libQnnJsonProfilingReader.so', or use --kind"
)
# INFERRED: formats.md §1e shows no linting JSON; linting fields would most
# likely arrive as sub-events of an op named like the text reader's lines.
_LINTING_FIELDS = {
    metric_key("Wait (Scheduler) time"): "wait_cycles",
    metric_key("Overlap time"): "overlap_cycles",
    metric_key("Overlap (wait) time"): "overlap_wait_cycles",
}


class QnnViewerJsonError(ProfilerParseError):
    """Viewer JSON without the ``messages[].profilingEvents[]`` structure."""


def parse(data: str, source: str = "") -> ParsedProfile:
    """Parse the standardized JSON; raises ``QnnViewerJsonError`` when it has no messages."""
    builder = ProfileBuilder(KIND, source)
    document = load_document(data, source, QnnViewerJsonError, _FIX, builder)
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(messages, list):
        raise QnnViewerJsonError(source, "no 'messages' list at the top level", _FIX)
    metadata = document.get("metadata")
    if isinstance(metadata, dict):
        for key, value in metadata.items():
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                builder.info[str(key)] = str(value)
    for message in messages:
        _message(builder, message)
    if not builder.has_content:
        raise QnnViewerJsonError(source, "the messages hold no profiling events", _FIX)
    return builder.build()


def _message(builder: ProfileBuilder, message: Any) -> None:
    if not isinstance(message, dict):
        builder.unknown(None, f"message {describe(message)}")
        return
    method = message.get("method")
    if not isinstance(method, str):
        method = ""
    events = message.get("profilingEvents")
    if not isinstance(events, list):
        builder.unknown(None, f"message {method or '?'} without profilingEvents")
        return
    upper = method.upper()
    execute: ExecuteDraft | None = None
    if "EXECUTE" in upper and "IPS" not in upper:
        # INFERRED: formats.md §1e: the sample names no graph; accept a name if present.
        graph = message.get("graphName") or message.get("graph_name")
        execute = builder.new_execute(
            len(builder.executes) + 1, graph if isinstance(graph, str) else ""
        )
    for event in events:
        if is_partial(event):
            continue  # cut mid-event: its value may be missing or wrong
        if execute is None:
            _section_event(builder, method or "Ungrouped", event)
        else:
            _execute_event(builder, execute, event)


def _event_fields(event: Any) -> tuple[str, Any, str, list[Any]] | None:
    if not isinstance(event, dict) or not isinstance(event.get("identifier"), str):
        return None
    value = json_number(event.get("value"))
    subs = event.get("sub-events")
    return (
        event["identifier"],
        value,
        normalize_unit(event.get("unit")),
        (subs if isinstance(subs, list) else []),
    )


def _section_event(builder: ProfileBuilder, method: str, event: Any) -> None:
    fields = _event_fields(event)
    if fields is None or fields[1] is None:
        builder.unknown(None, f"event {describe(event)}")
        return
    identifier, value, unit, subs = fields
    metrics = builder.section(method)
    metrics.append(Metric(name=identifier, value=value, unit=unit))
    for sub in subs:
        if not is_partial(sub):
            _section_event(builder, method, sub)


def _execute_event(builder: ProfileBuilder, execute: ExecuteDraft, event: Any) -> None:
    fields = _event_fields(event)
    if fields is None or fields[1] is None:
        builder.unknown(None, f"event {describe(event)}")
        return
    identifier, value, unit, subs = fields
    if event.get("type") == "NODE" or has_op_id(identifier):
        _op_event(builder, execute, identifier, value, unit, subs)
        return
    execute.metrics.append(Metric(name=identifier, value=value, unit=unit))
    for sub in subs:
        if is_partial(sub):
            continue
        sub_fields = _event_fields(sub)
        if sub_fields is None or sub_fields[1] is None:
            builder.unknown(None, f"sub-event {describe(sub)}")
            continue
        _op_event(builder, execute, *sub_fields)


def _op_event(
    builder: ProfileBuilder,
    execute: ExecuteDraft,
    identifier: str,
    value: Any,
    unit: str,
    subs: list[Any],
) -> None:
    op_id, name = split_op_identifier(identifier)
    op = OpDraft(name=name, op_id=op_id)
    if unit in TIME_UNITS_IN_US:
        op.time_us = value * TIME_UNITS_IN_US[unit]
    else:
        op.cycles = value
    execute.ops.append(op)
    for sub in subs:
        sub_fields = None if is_partial(sub) else _event_fields(sub)
        attribute = _LINTING_FIELDS.get(metric_key(sub_fields[0])) if sub_fields else None
        if sub_fields is None or attribute is None or sub_fields[1] is None:
            builder.unknown(None, f"op sub-event {describe(sub)}")
            continue
        setattr(op, attribute, sub_fields[1])
