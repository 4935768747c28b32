"""Qualcomm AI Hub profile JSON (``profile_job.download_profile()``), to set against the device.

Times are µs, memory bytes, ``execution_cycles`` HTP cycles (formats.md §6).
``estimated_inference_time`` is the *minimum* of ``all_inference_times`` in
the known sample, so the breakdown compares medians; a warning says so when
the headline equals the minimum. Layers become the ops of one execute, keyed
by name (AI Hub has no OpId); ``op_join_key`` matches them to device names.
"""

from __future__ import annotations

from typing import Any

from qtop.parsers.common import OpDraft, ProfileBuilder, ProfilerParseError, describe, json_number
from qtop.parsers.lenient_json import is_partial, load_document
from qtop.profiling.model import AiHubSummary, Metric, Number, ParsedProfile

KIND = "ai-hub"
GRAPH_NAME = "ai-hub"

_SUMMARY_UNITS = {
    "estimated_inference_time": "us",
    "estimated_inference_peak_memory": "bytes",
    "first_load_time": "us",
    "first_load_peak_memory": "bytes",
    "warm_load_time": "us",
    "warm_load_peak_memory": "bytes",
    "compile_time": "us",
    "compile_peak_memory": "bytes",
}
_RANGES = ("inference_memory_increase_range", "inference_memory_peak_range")
_FIX = "pass the JSON from AI Hub's profile_job.download_profile(), or use --kind"


class AiHubError(ProfilerParseError):
    """An AI Hub profile without ``execution_summary`` or ``execution_detail``."""


def parse(data: str, source: str = "") -> ParsedProfile:
    """Parse an AI Hub profile; raises ``AiHubError`` when neither summary nor layers are there."""
    builder = ProfileBuilder(KIND, source)
    document = load_document(data, source, AiHubError, _FIX, builder)
    if not isinstance(document, dict):
        raise AiHubError(source, "the top level is not an object", _FIX)
    summary = document.get("execution_summary")
    detail = document.get("execution_detail")
    if not isinstance(summary, dict) and not isinstance(detail, list):
        raise AiHubError(source, "no 'execution_summary' or 'execution_detail'", _FIX)
    if isinstance(summary, dict):
        builder.ai_hub = _summary(summary)
        times = builder.ai_hub.inference_times_us
        estimate = json_number(summary.get("estimated_inference_time"))
        if times and estimate is not None and estimate == min(times):
            builder.warn(
                "estimate_is_minimum",
                f"estimated_inference_time ({estimate} us) is the fastest of "
                f"{len(times)} runs, not a typical one; compare the median",
            )
    if isinstance(detail, list):
        execute = builder.new_execute(1, GRAPH_NAME)
        for layer in detail:
            op = _layer(layer)
            if op is None:
                builder.unknown(None, f"layer {describe(layer)}")
            else:
                execute.ops.append(op)
    return builder.build()


def _numbers(value: Any) -> tuple[Number, ...]:
    if not isinstance(value, list):
        return ()
    numbers = (json_number(item) for item in value)
    return tuple(number for number in numbers if number is not None)


def _summary(summary: dict[str, Any]) -> AiHubSummary:
    metrics = []
    for key, unit in _SUMMARY_UNITS.items():
        value = json_number(summary.get(key))
        if value is not None:
            metrics.append(Metric(key, value, unit))
    for key in _RANGES:
        bounds = _numbers(summary.get(key))
        if len(bounds) == 2:
            metrics.append(Metric(f"{key} min", bounds[0], "bytes"))
            metrics.append(Metric(f"{key} max", bounds[1], "bytes"))
    return AiHubSummary(
        metrics=tuple(metrics),
        inference_times_us=_numbers(summary.get("all_inference_times")),
        first_load_times_us=_numbers(summary.get("all_first_load_times")),
        warm_load_times_us=_numbers(summary.get("all_warm_load_times")),
    )


def _layer(layer: Any) -> OpDraft | None:
    if not isinstance(layer, dict) or is_partial(layer) or not isinstance(layer.get("name"), str):
        return None
    op_type = layer.get("type")
    unit = layer.get("compute_unit")
    return OpDraft(
        name=layer["name"],
        time_us=json_number(layer.get("execution_time")),
        cycles=json_number(layer.get("execution_cycles")),
        op_type=op_type if isinstance(op_type, str) else "",
        compute_unit=unit.upper() if isinstance(unit, str) else "",
    )
