"""Simulated ``qnn-profile-viewer``: renders a simulated profiling log like the real readers.

Reader by library name (a bare name, as the real viewer resolves it through
the library path, or a path that must exist):

* none / ``libQnnHtpProfilingReader.so``: text on stdout (basic, detailed, or
  linting with the HTP reader on a linting log); ``--output x.csv`` or
  ``x.json`` also writes CSV or standardized JSON;
* ``libQnnJsonProfilingReader.so``: standardized JSON into ``--output``;
* ``libQnnChrometraceProfilingReader.so``: an averaged Chrome trace (fails on
  optrace logs with ``Error printing stats.``, as reported for the real one);
* ``libQnnHtpOptraceProfilingReader.so``: the optrace chrometrace, only with
  a matching ``--schematic``; otherwise ``No Valid Input Schematics``.
"""

from __future__ import annotations

from pathlib import Path

from qtop.sim.tools.args import ArgError, parse_options, text_option
from qtop.sim.tools.models import schematic_graph
from qtop.sim.tools.profiling_log import SDK_VERSION, BadProfilingLog, ProfilingLog, read_log
from qtop.sim.tools.render_files import (
    render_averaged_trace,
    render_csv,
    render_json,
    render_optrace,
)
from qtop.sim.tools.render_text import render_text
from qtop.sim.tools.service import ToolContext

OPTIONS = {
    "--input_log": True,
    "--reader": True,
    "--output": True,
    "--schematic": True,
    "--standardized_json_output": False,
    "--config": True,
    "--help": False,
    "--version": False,
}
HTP_READER = "libQnnHtpProfilingReader.so"
JSON_READER = "libQnnJsonProfilingReader.so"
CHROMETRACE_READER = "libQnnChrometraceProfilingReader.so"
OPTRACE_READER = "libQnnHtpOptraceProfilingReader.so"
READERS = (HTP_READER, JSON_READER, CHROMETRACE_READER, OPTRACE_READER)
OPTRACE_STEPS = (
    "Processing payload (schematic)",
    "Processing payload (optrace)",
    "Resolving op metadata",
    "Resolving tensor->op dependencies",
    "Building timeline",
    "Render of Chrometrace",
    "Render of Runtrace",
    "QHAS HTML Generation",
    "QHAS JSON Generation",
    "Writing outputs",
    "Cleanup",
)


class ViewerError(Exception):
    """Printed on stderr; the viewer exits 1."""


def run_viewer(ctx: ToolContext) -> int:
    try:
        options = parse_options(ctx.argv, OPTIONS, {"-h": "--help"})
        if options.get("--version"):
            ctx.out(f"qnn-profile-viewer {SDK_VERSION}")
            return 0
        if options.get("--help"):
            ctx.out(
                "usage: qnn-profile-viewer --input_log LOG [--reader LIB] [--output FILE] "
                "[--schematic FILE] [--standardized_json_output] [--config FILE]"
            )
            return 0
        return _view(ctx, options)
    except ArgError as exc:
        ctx.err(f"ERROR: {exc}")
        return 1
    except ViewerError as exc:
        ctx.err(str(exc))
        return 1


def _view(ctx: ToolContext, options: dict[str, str | bool]) -> int:
    input_log = text_option(options, "--input_log")
    if not input_log:
        raise ArgError("Missing required argument: --input_log")
    reader = _reader(ctx, text_option(options, "--reader"))
    try:
        log = read_log(ctx.path(input_log))
    except OSError:
        raise ViewerError(f"ERROR: Could not open input log: {input_log}") from None
    except BadProfilingLog as exc:
        raise ViewerError(f"ERROR: Failed to read {input_log}: {exc}") from None
    output = text_option(options, "--output")
    ctx.truth.update({"input_log": input_log, "reader": reader, "output": output})
    if reader == OPTRACE_READER:
        return _optrace(ctx, log, options, output)
    if reader == CHROMETRACE_READER:
        if log.optrace:
            raise ViewerError("Error printing stats.")
        _write(ctx, _required_output(output), render_averaged_trace(log))
        return 0
    if reader == JSON_READER:
        _write(ctx, _required_output(output), render_json(log))
        return 0
    if output is not None:
        suffix = Path(output).suffix.lower()
        if suffix == ".csv":
            _write(ctx, output, render_csv(log, input_log))
        elif suffix == ".json":
            _write(ctx, output, render_json(log))
        else:
            raise ViewerError(f"ERROR: --output must end in .csv or .json, not {output}")
    ctx.final_stdout = render_text(log, input_log, linting_reader=reader == HTP_READER)
    return 0


def _reader(ctx: ToolContext, reader: str | None) -> str | None:
    if reader is None:
        return None
    name = Path(reader).name
    if "/" in reader and not ctx.path(reader).exists():
        raise ViewerError(f"ERROR: Unable to load reader {reader}: cannot open shared object file")
    if name not in READERS:
        raise ViewerError(f"ERROR: Unable to load reader {reader}: not a profiling reader")
    return name


def _required_output(output: str | None) -> str:
    if output is None:
        raise ArgError("this reader needs --output FILE")
    return output


def _optrace(
    ctx: ToolContext, log: ProfilingLog, options: dict[str, str | bool], output: str | None
) -> int:
    schematic = text_option(options, "--schematic")
    graph = schematic_graph(ctx.path(schematic)) if schematic else None
    htp_ops = log.extra.get("htp_ops", {}).get(graph) if graph else None
    if not log.optrace or htp_ops is None:
        ctx.out("No Valid Input Schematics")
        raise ViewerError("Error printing stats.")
    target = output or "chrometrace.json"
    for step, title in enumerate(OPTRACE_STEPS, start=1):
        ctx.out(f"[{step}/{len(OPTRACE_STEPS)}] {title}")
    _write(ctx, target, render_optrace(log, htp_ops))
    ctx.out(f"Complete! - {target}")
    return 0


def _write(ctx: ToolContext, output: str, text: str) -> None:
    path = ctx.path(output)
    try:
        temporary = path.with_name(f".{path.name}.partial")
        temporary.write_text(text)
        temporary.replace(path)
    except OSError as exc:
        raise ViewerError(f"ERROR: Could not write {output}: {exc.strerror}") from None
