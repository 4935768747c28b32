"""Profiler output parsers: one module per producer, all returning ``ParsedProfile``.

``detect_kind`` recognises a file by its content (the file name only breaks
ties: the seed's linting text was saved as ``.csv``); ``parse`` runs the
parser for a kind. Every parser is pure, accepts a UTF-8 BOM and CRLF, and
raises only its own subclass of ``ProfilerParseError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from qtop.parsers import ai_hub, genie, optrace, qnn_viewer_csv, qnn_viewer_json, qnn_viewer_text
from qtop.parsers.common import ProfilerParseError, strip_bom
from qtop.profiling.model import ParsedProfile

__all__ = ["KINDS", "ProfilerParseError", "UnknownProfilerKind", "detect_kind", "parse"]

PARSERS: dict[str, Callable[[str, str], ParsedProfile]] = {
    qnn_viewer_text.KIND: qnn_viewer_text.parse,
    qnn_viewer_csv.KIND: qnn_viewer_csv.parse,
    qnn_viewer_json.KIND: qnn_viewer_json.parse,
    optrace.KIND_OPTRACE: optrace.parse_chrometrace,
    optrace.KIND_RUNTRACE: optrace.parse_runtrace,
    optrace.KIND_QHAS: optrace.parse_qhas,
    genie.KIND_PROFILE: genie.parse_profile,
    genie.KIND_STDOUT: genie.parse_stdout,
    ai_hub.KIND: ai_hub.parse,
}
KINDS: tuple[str, ...] = tuple(PARSERS)

_SNIFF = 65536
_ARTIFACTS = {
    "OP_TRACE": optrace.KIND_OPTRACE,
    "RUN_TRACE": optrace.KIND_RUNTRACE,
    "QHAS": optrace.KIND_QHAS,
    "GENIE_PROFILE": genie.KIND_PROFILE,
}
_ARTIFACT = re.compile(r'"artifact_type"\s*:\s*"(?P<type>[A-Z_]+)"')
_JSON_MARKERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'"(?:execution_summary|execution_detail)"\s*:'), ai_hub.KIND),
    (re.compile(r'"profilingEvents"\s*:'), qnn_viewer_json.KIND),
    (
        re.compile(r'"(?:htp_overall_summary|qnn_op_instances_nodes|htp_op_instances)"'),
        optrace.KIND_QHAS,
    ),
    (re.compile(r'"Genie[A-Za-z]+_[A-Za-z]+"'), genie.KIND_PROFILE),
    (re.compile(r'"(?:QNN Op Name|HTP Op Type)"'), optrace.KIND_OPTRACE),
    (re.compile(r'"(?:QNN DSP Execute|summary_time_us)"'), optrace.KIND_RUNTRACE),
)
# Line-anchored markers use [ \t], never \s, so that no pattern runs across lines.
_CSV_MARKERS = (
    re.compile(r'^[ \t]*"?Msg Timestamp"?[ \t]*,', re.M | re.I),
    re.compile(
        r"^(?:[^,\n]*,)?[ \t]*(?:INIT|COMPOSE GRAPHS|FINALIZE|EXECUTE|DE-INIT|EXECUTE IPS)"
        r"[ \t]*,[ \t]*[0-9.]+[ \t]*,[ \t]*(?:US|CYCLES|COUNT|INF/SEC|BYTES)[ \t]*,",
        re.M,
    ),
)
_GENIE_STDOUT = re.compile(
    r"Using libGenie\.so|^[ \t]*\[(?:BEGIN|KPIS|PROMPT)\][ \t]*:|^genie-t2t-run pid:", re.M
)
_VIEWER_TEXT = re.compile(
    r"Execute Stat[ \t]+[0-9]|Qnn Init/Prepare|Printing All Data Received|Input Log File Location"
    r"|OpId_[0-9]+(?: \(cycles\))? *: *[0-9]+ +cycles|Accelerator \((?:critical path )?execute"
    r"|^[ \t]*NetRun[ \t]*:|^[ \t]*(?:Layer Times|Init Stats|De-Init Stats)[ \t]*:",
    re.M,
)
_EXTENSION_HINTS = {".csv": qnn_viewer_csv.KIND, ".txt": qnn_viewer_text.KIND}


class UnknownProfilerKind(ProfilerParseError):
    """A file whose producer qtop cannot tell, or a kind name it does not know."""


def detect_kind(data: str, filename: str = "") -> str:
    """The kind of profiler output in ``data``; raises ``UnknownProfilerKind`` if none fits."""
    text = strip_bom(data)
    head = text[:_SNIFF]
    if "\x00" in head:
        raise UnknownProfilerKind(
            filename,
            "this is binary data, not profiler text or JSON (qnn-profiling-data_N.log is binary)",
            "convert it on the board: qnn-profile-viewer --input_log qnn-profiling-data_0.log "
            "--output profile.csv (or .json), then run 'qtop ops' on that file",
        )
    stripped = head.lstrip()
    if stripped.startswith(("{", "[")):
        kind = _json_kind(head, text)
        if kind is not None:
            return kind
        if stripped.startswith("{"):
            # An object is JSON for sure; only '[' may still open a '[INFO]' Genie line.
            raise _unknown_json(filename, head)
    for marker in _CSV_MARKERS:
        if marker.search(head):
            return qnn_viewer_csv.KIND
    if _GENIE_STDOUT.search(head):
        return genie.KIND_STDOUT
    if _VIEWER_TEXT.search(head):
        return qnn_viewer_text.KIND
    if not stripped:
        hint = next((k for ext, k in _EXTENSION_HINTS.items() if filename.endswith(ext)), None)
        if hint is not None:
            return hint
    raise UnknownProfilerKind(
        filename,
        "cannot tell which profiler wrote this file",
        f"name the format with --kind ({', '.join(KINDS)})",
    )


def _unknown_json(filename: str, head: str) -> UnknownProfilerKind:
    if '"traceEvents"' in head:
        problem = (
            "a Chrome trace with neither optrace ops ('QNN Op Name') nor runtrace phases; "
            "the averaged trace of libQnnChrometraceProfilingReader.so is not read"
        )
        fix = (
            "render the log with the optrace reader (--reader "
            "libQnnHtpOptraceProfilingReader.so --schematic ...) or as text/CSV/JSON "
            "with the default reader"
        )
    else:
        problem = "JSON of a shape qtop does not know"
        fix = f"if it is one of {', '.join(KINDS)}, name it with --kind to see what is missing"
    return UnknownProfilerKind(filename, problem, fix)


def _json_kind(head: str, text: str) -> str | None:
    artifact = _ARTIFACT.search(head)
    if artifact is not None and artifact.group("type") in _ARTIFACTS:
        return _ARTIFACTS[artifact.group("type")]
    for pattern, kind in _JSON_MARKERS:
        if pattern.search(head):
            return kind
    if '"traceEvents"' in head:
        # The marker that tells optrace from runtrace may sit past the first events.
        for pattern, kind in _JSON_MARKERS[-2:]:
            if pattern.search(text):
                return kind
    return None


def parse(kind: str, data: str, source: str = "") -> ParsedProfile:
    """Parse ``data`` as ``kind``; raises the kind's ``ProfilerParseError`` subclass."""
    parser = PARSERS.get(kind)
    if parser is None:
        raise UnknownProfilerKind(
            source, f"unknown profiler kind {kind!r}", f"use one of: {', '.join(KINDS)}"
        )
    return parser(data, source)


def parse_auto(data: str, source: str = "", kind: str | None = None) -> ParsedProfile:
    """Detect the kind (unless given) and parse."""
    return parse(kind or detect_kind(data, source), data, source)
