"""Getting a process's profiler output off the device, as text, for the hooks to parse.

The runner has already moved each file into the run directory (``prof/``),
so nothing here races the next process. Each fetch is one SSH exec of
``sh -c``: the run's own ``plan.sh`` is sourced first, so the viewer sees the
environment and working directory the measured command had (its
``LD_LIBRARY_PATH`` finds the reader libraries), and the files of the process
handled before are removed in the same exec (its events are in the stream by
then, so a retry after a dropped link never needs them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qtop.device.plan import DEVICE_VARIABLE
from qtop.live.hooks import DeviceAccess
from qtop.profiles import ProfilerOutput
from qtop.transport.base import CommandResult
from qtop.transport.command import quote

OPTRACE_READER = "libQnnHtpOptraceProfilingReader.so"
# A long run's render can take a while; a timeout counts as a dropped link and
# repeats the hook, so this is generous.
VIEWER_TIMEOUT_S = 120.0
_NO_SCHEMATIC = "No Valid Input Schematics"
_MISSING_CODE = 66


@dataclass(frozen=True, slots=True)
class Fetched:
    """Text from the device, or why there is none; ``notes`` are warnings worth a log line."""

    text: str | None = None
    problem: str = ""
    notes: tuple[str, ...] = ()
    fix: str = ""


def device_word(value: str) -> str:
    """A shell word for ``value``; a leading ``$NAME`` is expanded on the device (and required)."""
    match = DEVICE_VARIABLE.match(value)
    if match is None:
        return quote(value)
    name, rest = match.group(1), match.group(2) or ""
    return f'"${{{name}:?is not set on the device}}"' + (quote(rest) if rest else "")


def stored_prefix(run_dir: str, process: int) -> str:
    """Where the runner keeps process ``process``'s files: ``<run_dir>/prof/<process>.<k>``."""
    return f"{run_dir.rstrip('/')}/prof/{process}."


def _script(run_dir: str, command: str, cleanup: Sequence[int], environment: bool) -> list[str]:
    lines = []
    if cleanup:
        # One pattern per process: prof/3.* holds 3.0, 3.1 and 3.chrometrace.json, not 30.0.
        patterns = " ".join(quote(stored_prefix(run_dir, n)) + "*" for n in cleanup)
        lines.append(f"rm -f -- {patterns}")
    if environment:
        lines += [
            f". {quote(run_dir.rstrip('/') + '/plan.sh')} || exit 90",
            'if [ -n "$QTOP_WORKDIR" ]; then cd "$QTOP_WORKDIR" || exit 91; fi',
        ]
    lines.append(command)
    return ["sh", "-c", "\n".join(lines)]


def _last_line(result: CommandResult) -> str:
    """What a failed command said last (its error), or its exit status."""
    for text in (result.error_text, result.text):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return f"exit status {result.exit_status}"


def text_reader(profiler: ProfilerOutput) -> str | None:
    """The reader for the text render: the profile's, unless it is the optrace one."""
    reader = profiler.reader
    return None if reader is None or "optrace" in reader.lower() else reader


def optrace_reader(profiler: ProfilerOutput) -> str:
    reader = profiler.reader
    return reader if reader is not None and "optrace" in reader.lower() else OPTRACE_READER


async def remove(device: DeviceAccess, cleanup: Sequence[int]) -> None:
    """Remove handled processes' files (when no fetch came along to do it)."""
    await device.run(_script(device.run_dir, "true", cleanup, False))


async def read_text(device: DeviceAccess, path: str, cleanup: Sequence[int] = ()) -> Fetched:
    """A file's text (a Genie profile, an optrace render, a file of kind ``file``)."""
    command = f"[ -f {quote(path)} ] || exit {_MISSING_CODE}; exec cat -- {quote(path)}"
    result = await device.run(_script(device.run_dir, command, cleanup, False), VIEWER_TIMEOUT_S)
    if result.exit_status == _MISSING_CODE:
        return Fetched(problem=f"{path} is not there")
    if result.exit_status != 0:
        return Fetched(problem=f"cannot read {path}: {result.error_text or result.exit_status}")
    return Fetched(result.text)


def _viewer_command(profiler: ProfilerOutput, stored: str, extra: Sequence[str]) -> str:
    words = [device_word(profiler.viewer), "--input_log", quote(stored), *extra]
    return "exec " + " ".join(words)


async def render_text(
    device: DeviceAccess,
    profiler: ProfilerOutput,
    stored: str,
    use_reader: bool = True,
    cleanup: Sequence[int] = (),
) -> Fetched:
    """``qnn-profile-viewer`` text on stdout, with the profile's reader when it loads.

    A reader the viewer cannot load falls back to the default text reader (the
    per-execute blocks are there too, without the linting breakdown), with a note.
    """
    reader = text_reader(profiler) if use_reader else None
    if reader:
        command = _viewer_command(profiler, stored, ["--reader", device_word(reader)])
        result = await device.run(_script(device.run_dir, command, cleanup, True), VIEWER_TIMEOUT_S)
        if result.exit_status == 0:
            return Fetched(result.text)
        cleanup = ()
        note = (
            f"qnn-profile-viewer could not use the reader {reader} "
            f"({_last_line(result)}); reading the "
            "logs with its default text reader instead (no linting breakdown)"
        )
    else:
        note = ""
    command = _viewer_command(profiler, stored, [])
    result = await device.run(_script(device.run_dir, command, cleanup, True), VIEWER_TIMEOUT_S)
    notes = (note,) if note else ()
    if result.exit_status != 0:
        return Fetched(
            problem=f"{profiler.viewer} failed on {stored}: {_last_line(result)}",
            notes=notes,
            fix="check that qnn-profile-viewer runs on the device with the run's environment "
            "(device.env), or set run.profiler.viewer",
        )
    return Fetched(result.text, notes=notes)


async def render_optrace(
    device: DeviceAccess,
    profiler: ProfilerOutput,
    stored: str,
    output: str,
    cleanup: Sequence[int] = (),
) -> Fetched:
    """The optrace chrometrace: the viewer writes ``output`` on the device, then it is read."""
    extra = ["--reader", device_word(optrace_reader(profiler)), "--output", quote(output)]
    if profiler.schematic:
        extra += ["--schematic", device_word(profiler.schematic)]
    command = _viewer_command(profiler, stored, extra)
    result = await device.run(_script(device.run_dir, command, cleanup, True), VIEWER_TIMEOUT_S)
    if _NO_SCHEMATIC in result.text or _NO_SCHEMATIC in result.error_text:
        return Fetched(
            problem=f"qnn-profile-viewer found no schematic matching {stored} "
            f"('{_NO_SCHEMATIC}' with --schematic {profiler.schematic})",
            fix="compile the context with qnn-context-binary-generator --profiling_level "
            "detailed --profiling_option optrace, run it with --profiling_option optrace, and "
            "point run.profiler.schematic at the <graph>_schematic.bin that step wrote",
        )
    if result.exit_status != 0:
        return Fetched(problem=f"the optrace render of {stored} failed: {_last_line(result)}")
    return await read_text(device, output)
