"""Fuzzing the profiler parsers: the entry points, what counts as a crash, and hostile inputs.

Shared by the property tests (tests/parsers/test_fuzz.py, hypothesis) and the
long run (bench/fuzz_parsers.py, plain ``random``). A *target* takes the raw
bytes of a file and goes through one real entry point:

* ``parser:<kind>``: one parser, the report's encoding and the latency and Genie
  figures the live session reads, and for a quarter of the inputs everything
  else a parsed profile must survive (the report's JSON round trip, the
  breakdown, the ``qtop ops`` text);
* ``ops``: ``qtop ops`` itself (detection, parse, text and ``--json``);
* ``hook:<latency source>``: a live profiler hook handed the file by a stand-in
  device, then every event it returns encoded as the recording would.

A target returns quietly when the input is read or refused with the parser's
own error; anything else (an exception, a non-finite number, a control
character on the way to the terminal, a hook that had to swallow an exception)
is a crash.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import random
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from qtop.commands.ops import ops_output
from qtop.errors import QtopError
from qtop.events import Iteration, Log
from qtop.live.hooks import DeviceAccess
from qtop.live.profiler_hook_base import ProfilerHook
from qtop.live.profiler_hooks import ExecuteStatsHook, GenieHook, ReportHook
from qtop.live.profiler_state import ProcessEvents
from qtop.live.profiler_timing import deinit_s, genie_tail_s, inference_latencies
from qtop.live.translate import ProcessExit, ProfilerFile
from qtop.parsers import KINDS, ProfilerParseError, parse
from qtop.profiles import Profile, load_profile_text
from qtop.profiling.aggregate import breakdown
from qtop.profiling.latency import genie_figures
from qtop.profiling.model import ParsedProfile
from qtop.profiling.render import render
from qtop.record.writer import encode_line
from qtop.transport.base import CommandResult

SOURCE = "fuzz-input"
TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "profiler"
GOLDEN = TESTS / "sim" / "golden"

# Control characters that may reach a terminal (newline separates lines and is fine).
_RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


class Crash(AssertionError):
    """The input broke a promise without raising (a value, a swallowed error, raw escapes)."""


# --- the real files the mutations start from ------------------------------------------------

_FIXTURE_KINDS: dict[str, tuple[Path, ...]] = {
    "qnn-viewer-text": (
        FIXTURES / "seed_linting_excerpt.txt",
        FIXTURES / "viewer_basic_2_13.txt",
        FIXTURES / "viewer_detailed_2_45.txt",
        FIXTURES / "viewer_linting_multigraph.txt",
        FIXTURES / "snpe_diagview_linting.txt",
        GOLDEN / "basic.txt",
        GOLDEN / "detailed.txt",
        GOLDEN / "linting.txt",
    ),
    "qnn-viewer-csv": (
        FIXTURES / "viewer_detailed.csv",
        FIXTURES / "viewer_tutorial_rows.csv",
        FIXTURES / "onnxruntime_qnn_ep.csv",
        GOLDEN / "profile.csv",
    ),
    "qnn-viewer-json": (FIXTURES / "viewer_standardized.json", GOLDEN / "standardized.json"),
    "optrace": (FIXTURES / "optrace_chrometrace.json", GOLDEN / "optrace_chrometrace.json"),
    "runtrace": (FIXTURES / "runtrace.json",),
    "qhas": (FIXTURES / "qhas_summary.json",),
    "genie-profile": (FIXTURES / "genie_profile.json", FIXTURES / "genie_profile_seed.json"),
    "genie-stdout": (FIXTURES / "genie_stdout_kpis.txt", FIXTURES / "genie_stdout_new.txt"),
    "ai-hub": (FIXTURES / "ai_hub_profile.json",),
}
assert set(_FIXTURE_KINDS) == set(KINDS)


@functools.cache
def seeds(kind: str) -> tuple[bytes, ...]:
    return tuple(path.read_bytes() for path in _FIXTURE_KINDS[kind])


@functools.cache
def all_seeds() -> tuple[bytes, ...]:
    return tuple(data for kind in KINDS for data in seeds(kind))


# --- what every parsed profile must survive -------------------------------------------------


def _finite(value: Any, what: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise Crash(f"{what} is {value}")


def _no_raw_control(text: str, what: str) -> None:
    found = _RAW_CONTROL.search(text)
    if found is not None:
        raise Crash(f"{what} prints a raw control character {found.group()!r}")


_LONGEST_JSON_INTEGER = 10**4000  # json.dumps refuses integers of 4,300 digits and more
_OP_NUMBERS = (
    "cycles", "wait_cycles", "overlap_cycles", "overlap_wait_cycles", "dominant_path_cycles",
    "time_us", "instances", "op_id",
)  # fmt: skip


def _numbers(profile: ParsedProfile) -> Iterator[Any]:
    """Every number in a parsed profile (what the report's JSON must be able to hold)."""
    metrics = [m for s in profile.sections for m in s.metrics]
    metrics += [m for q in profile.queries for m in q.metrics]
    for graph in profile.graphs:
        for execute in graph.executes:
            metrics += execute.metrics
            for op in execute.ops:
                yield from (getattr(op, name) for name in _OP_NUMBERS)
    if profile.ai_hub is not None:
        hub = profile.ai_hub
        metrics += hub.metrics
        yield from (*hub.inference_times_us, *hub.first_load_times_us, *hub.warm_load_times_us)
    yield from (m.value for m in metrics)


def check_profile(profile: ParsedProfile, downstream: bool = True) -> None:
    """The report encodes, the live figures are finite; with ``downstream`` the report
    also round-trips and the breakdown and ``qtop ops`` text are computed."""
    if not downstream:
        for value in _numbers(profile):
            _finite(value, "a value of the report")
            if isinstance(value, int) and abs(value) >= _LONGEST_JSON_INTEGER:
                raise Crash("an integer too long for the report's JSON")
    else:
        encoded = json.dumps(profile.to_dict(), allow_nan=False)
        if ParsedProfile.from_dict(json.loads(encoded)) != profile:
            raise Crash("the report does not round-trip through JSON")
        # Warm-up 0 and 1 take different paths (a single measured execute or several);
        # alternating by profile covers both for the price of one breakdown.
        result = breakdown(profile, warmup=profile.execute_count % 2)
        json.dumps(result.to_dict(), allow_nan=False)
        _no_raw_control(render(profile, result, top=0), "the ops text")
    latencies, _ = inference_latencies([profile])
    for latency in latencies:
        _finite(latency, "an inference latency")
        if latency < 0:
            raise Crash(f"a negative latency {latency}")
    _finite(deinit_s([profile]), "the de-init time")
    _finite(genie_tail_s(profile), "the Genie tail")
    for figure in genie_figures(profile):
        _finite(figure.latency_s, "a Genie latency")
        for name, value in figure.metrics().items():
            _finite(value, f"Genie {name}")


def check_parser(kind: str, data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        profile = parse(kind, text, SOURCE)
    except ProfilerParseError as exc:
        if not str(exc).startswith(SOURCE):
            raise Crash(f"the error does not name the file: {exc}") from None
        _no_raw_control(str(exc), "the error")
        return
    # What reads a parsed profile costs more than parsing it; a quarter of the inputs
    # (chosen by their bytes, so a replay does the same) goes all the way, and the ops
    # and hook targets take every input through those paths anyway.
    check_profile(profile, downstream=zlib.crc32(data) % 4 == 0)


def check_ops(data: bytes) -> None:
    """``qtop ops`` on the input (its kind detected), as text and as JSON."""
    text = data.decode("utf-8", errors="replace")
    for as_json in (False, True):
        try:
            output = ops_output(text, SOURCE, as_json=as_json, top=0)
        except QtopError as exc:
            _no_raw_control(str(exc), "the error")
            return
        _no_raw_control(output, "qtop ops")
        if as_json:
            json.loads(output)


# --- the live hooks -------------------------------------------------------------------------

_HOOK_PROFILES = {
    "execute_stats": (
        ExecuteStatsHook,
        "latency_source: execute_stats, profiler: {kind: qnn_log, path: /out, reader: libR.so}",
    ),
    "genie": (GenieHook, "latency_source: genie, profiler: {kind: genie_profile, path: /g.json}"),
    "file": (ReportHook, "profiler: {kind: file, path: /p.json}"),
}
RUN_DIR = "/spool/run"


class _Device(DeviceAccess):
    """Every viewer render and every file read returns the input."""

    def __init__(self, data: bytes) -> None:
        self.run_dir = RUN_DIR
        self.data = data

    async def run(self, argv: Sequence[str], timeout: float = 30.0) -> CommandResult:
        return CommandResult(0, self.data, b"")


@functools.cache
def _profile(source: str) -> Profile:
    _, run = _HOOK_PROFILES[source]
    text = f"name: fuzz\nrun: {{command: x, warmup: 1, iterations: 3, {run}}}\n"
    return load_profile_text(text, "fuzz.yaml")


def _hook(source: str) -> ProfilerHook:
    """A new hook (it keeps state between processes) for the profile of ``source``."""
    cls, _ = _HOOK_PROFILES[source]
    return cls(_profile(source))


def _exit() -> ProcessExit:
    files = (ProfilerFile(f"{RUN_DIR}/prof/0.0", "/out/qnn-profiling-data_0.log"),)
    return ProcessExit(
        RUN_DIR, 0, "measure", "", 1, 0, 100.0, 101.0, 1.0, 0, False, (), files, None
    )


@functools.cache
def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.new_event_loop()


def _run(coroutine: Any) -> Any:
    """Run a hook call to its end on this process's one loop (a loop per input is costly)."""
    return _loop().run_until_complete(coroutine)


def check_hook(source: str, data: bytes) -> None:
    hook = _hook(source)
    result = _run(hook(_exit(), _Device(data)))
    for event in result.events:
        encode_line(event)
        if isinstance(event, Log) and "the profiler hook failed" in event.text:
            # Replay the handling outside the hook's safety net, for the traceback.
            replay = _hook(source)
            out = ProcessEvents(_exit(), replay.state)
            _run(replay._handle(_exit(), _Device(data), replay.state.variant(""), out))
            raise Crash(event.text)
        if isinstance(event, Iteration):
            for value in (event.latency_s, event.start, event.end, *event.metrics.values()):
                _finite(value, "an iteration's figure")
            if event.latency_s < 0 or event.start > event.end:
                raise Crash(f"an impossible iteration {event}")


TARGETS: dict[str, Callable[[bytes], None]] = {
    **{f"parser:{kind}": (lambda data, kind=kind: check_parser(kind, data)) for kind in KINDS},
    "ops": check_ops,
    **{f"hook:{source}": (lambda data, s=source: check_hook(s, data)) for source in _HOOK_PROFILES},
}


def target_seeds(target: str) -> Sequence[bytes]:
    if target.startswith("parser:"):
        return seeds(target.removeprefix("parser:"))
    if target == "hook:execute_stats":
        return seeds("qnn-viewer-text")
    if target == "hook:genie":
        return seeds("genie-profile")
    return all_seeds()


# --- hostile values -------------------------------------------------------------------------

# Numbers a file may hold that no profiler writes: beyond 64 bits, beyond a float,
# beyond int()'s digit limit, denormals, NaN and infinities, negative zero.
HOSTILE_NUMBERS: tuple[str, ...] = (
    "0", "-0", "-0.0", "-1", "1e-7", "0.5",
    "18446744073709551615", "18446744073709551616", "9223372036854775808",
    "-9223372036854775809", "1e19", "1e20", "1" + "0" * 170, "-1" + "0" * 170,
    "1" + "0" * 309, "9" * 400, "9" * 4300, "9" * 5000,
    "1e308", "1.7976931348623157e308", "2e308", "-1e308", "1e999", "1e-400",
    "5e-324", "-5e-324", "4.9e-324", "2.2250738585072014e-308",
    "NaN", "Infinity", "-Infinity", "nan", "inf", "1.0e+400",
)  # fmt: skip
# JSON values that break code expecting a scalar or a string (unhashable ones above all).
HOSTILE_JSON: tuple[Any, ...] = (
    [], {}, [[]], {"a": {}}, [1, [2]], {"value": [], "unit": {}}, None, True, False, "",
    "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "a\nb\rc", "\x00", "\u009b31m", "Type: HMX",
    "0x10000000000000002", "0xZZ", "Input OpId_2", "q::*InputSlice", "GenieDialog_query",
    "X", "M", "C", "NODE", "us", "CYCLES", "toks/sec", -1, 0, 0.5, 2**63, -(2**63),
)  # fmt: skip
# Lines the text formats react to, to splice in anywhere.
HOSTILE_LINES: tuple[str, ...] = (
    "Execute Stat 1", "Execute Stat 999999999 (graph g)", "---", "------", "Init Stats:",
    "Execute Stats (Average):", "De-Init Stats:", "Graph 0 (x):", "--- Graph 0 (model):",
    "    NetRun: {n} us", "QNN (execute) time : {n}  us", "Accelerator (execute) time : {n}  us",
    "Accelerator (execute excluding wait) time : {n}  us", "RPC (execute) time : {n} ms",
    "    /x:OpId_{n} (cycles) : {n}  cycles", "    Input OpId_2 (cycles) : {n}  cycles",
    "        Wait (Scheduler) time : {n}  cycles", "        Overlap time : {n}  cycles",
    "        Overlap (wait) time : {n}  cycles", "        Resources : HVX, \x1b[31mDMA",
    "    y:OpId_1 (cycles) : 5 cycles Wait(Scheduler) {n} Resources: DMA",
    "Msg Timestamp, Message, Time, Unit of Measurement, Timing Source, Event Level, Event "
    "Identifier", "EXECUTE, {n}, US, BACKEND, ROOT, QNN (execute) time",
    "EXECUTE, {n}, CYCLES, BACKEND, SUB-EVENT, a:OpId_3 (cycles)",
    "1, EXECUTE, {n}, US, NETRUN, ROOT, Graph 0: \x1b]52;c;AAAA\x07",
    "[KPIS]:", "Init Time: {n} us", "Prompt Processing Time: {n} us, Prompt Processing Rate : "
    "{n} toks/sec", "Token Generation Time: {n} us, Token Generation Rate: {n} toks/sec",
    "[BEGIN]: \x1b]0;title\x07hello", "[END]", "[PROMPT]: x", "Using libGenie.so version 9",
    "\ufeffExecute Stat 2", "\r", "\t", "\x0c",
)  # fmt: skip
BAD_BYTES: tuple[bytes, ...] = (
    b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x00",
    b"\x1b]0;x\x07", b"\x1b[31m", b"\x9b", b"\r", b"\r\n", b"\xef\xbb\xbf", b"\n" * 3,
)  # fmt: skip
NESTING_DEPTHS: tuple[int, ...] = (10, 63, 64, 65, 200, 1000, 5000, 100_000)


# --- mutations with plain random (the long run) ---------------------------------------------

_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
# Mutations stack (a block duplicated a thousand times, twice); beyond this an input
# measures the machine, not the parser (bench/parser_speed.py covers big files).
MAX_INPUT = 1_000_000
_PLACEHOLDER = "\ue000{}\ue000"


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _flip_bit(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    if not data:
        return data
    at = rng.randrange(len(data))
    return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]


def _insert_bytes(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    at = rng.randrange(len(data) + 1)
    insert = rng.choice(BAD_BYTES) if rng.random() < 0.7 else bytes([rng.randrange(256)])
    return data[:at] + insert + data[at:]


def _delete_range(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    if not data:
        return data
    start = rng.randrange(len(data))
    return data[:start] + data[start + rng.randrange(1, 64) :]


def _truncate(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def _duplicate_lines(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    lines = _lines(data)
    start = rng.randrange(len(lines))
    block = lines[start : start + rng.randrange(1, 12)]
    times = rng.choice((1, 2, 3, 10, 100, 1000))
    return b"\n".join(lines[:start] + block * times + lines[start:])


def _shuffle_lines(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    lines = _lines(data)
    if len(lines) < 2:
        return data
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines[a], lines[b] = lines[b], lines[a]
    else:
        del lines[a]
    return b"\n".join(lines)


def _hostile_number(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    numbers = list(_NUMBER.finditer(data))
    token = rng.choice(HOSTILE_NUMBERS).encode()
    if not numbers:
        at = rng.randrange(len(data) + 1)
        return data[:at] + token + data[at:]
    match = rng.choice(numbers)
    return data[: match.start()] + token + data[match.end() :]


def _hostile_line(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    lines = _lines(data)
    line = rng.choice(HOSTILE_LINES).replace("{n}", rng.choice(HOSTILE_NUMBERS))
    lines.insert(rng.randrange(len(lines) + 1), line.encode())
    return b"\n".join(lines)


def _splice(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    other = rng.choice(pool)
    start = rng.randrange(len(other) + 1)
    piece = other[start : start + rng.randrange(1, 400)]
    at = rng.randrange(len(data) + 1)
    return data[:at] + piece + data[at:]


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _nodes(item, (*path, index))
    return found


def _replace_at(document: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return document


def _raw(token: str) -> str:
    return _PLACEHOLDER.format(token)


def dump_with_raw(document: Any) -> str:
    """JSON text in which ``_raw`` placeholders become raw tokens (NaN, 1e999, 400 digits)."""
    text = json.dumps(document, ensure_ascii=False)
    # The token was escaped as a JSON string (a nesting token holds quotes): undo that.
    return re.sub('"\ue000(.*?)\ue000"', lambda m: json.loads(f'"{m.group(1)}"'), text)


def hostile_json_value(rng: random.Random, original: Any) -> Any:
    roll = rng.random()
    if roll < 0.35:
        return _raw(rng.choice(HOSTILE_NUMBERS))
    if roll < 0.7:
        return json.loads(json.dumps(rng.choice(HOSTILE_JSON)))
    if roll < 0.8:
        depth = rng.choice(NESTING_DEPTHS)
        if rng.random() < 0.5:
            return _raw("[" * depth + "]" * depth)
        return _raw('{"a":' * depth + "1" + "}" * depth)
    if roll < 0.9 and isinstance(original, list) and original:
        return original + [rng.choice(original)] * rng.choice((1, 5, 100))
    if isinstance(original, dict) and original:
        copy = dict(original)
        del copy[rng.choice(list(copy))]
        return copy
    return [original] if rng.random() < 0.5 else {"value": original}


def _json_mutation(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return _hostile_number(rng, data, pool)
    for _ in range(rng.choice((1, 1, 2, 3))):
        path = rng.choice(_nodes(document))
        current = document
        for step in path:
            current = current[step]
        document = _replace_at(document, path, hostile_json_value(rng, current))
    return dump_with_raw(document).encode("utf-8")


_MUTATIONS = (
    (_flip_bit, 2),
    (_insert_bytes, 2),
    (_delete_range, 2),
    (_truncate, 3),
    (_duplicate_lines, 2),
    (_shuffle_lines, 2),
    (_hostile_number, 4),
    (_hostile_line, 3),
    (_splice, 1),
    (_json_mutation, 6),
)
_FUNCTIONS = [function for function, _ in _MUTATIONS]
_WEIGHTS = [weight for _, weight in _MUTATIONS]


def mutate(rng: random.Random, seed_inputs: Sequence[bytes]) -> bytes:
    """One hostile input: a real file through one to four mutations (JSON-aware for JSON)."""
    data = rng.choice(seed_inputs)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        (function,) = rng.choices(_FUNCTIONS, _WEIGHTS)
        data = function(rng, data, seed_inputs)[:MAX_INPUT]
    return data
