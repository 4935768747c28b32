"""Simulated ``genie-t2t-run``: one dialog query, tokens streamed, profile written at exit.

The ``--profile`` file is written only when the process exits cleanly
(Genie's main.cpp writes it after the query). SIGINT or SIGTERM ends the
query early and exits cleanly with the profile written (the sim's
assumption, docs/assumptions.md); SIGKILL leaves no file.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from qtop.sim.tools.args import ArgError, parse_options, text_option
from qtop.sim.tools.service import ToolAborted, ToolContext

OPTIONS = {
    "--config": True,
    "--prompt": True,
    "--prompt_file": True,
    "--profile": True,
    "--log": True,
    "--action": True,
    "--sleep": True,
    "--pid": False,
    "--engine_role": True,
    "--lora": True,
    "--tokens_file": True,
    "--embedding_file": True,
    "--help": False,
    "--version": False,
}
ALIASES = {
    "-c": "--config",
    "-p": "--prompt",
    "-tok": "--tokens_file",
    "-e": "--embedding_file",
    "-h": "--help",
}
GENIE_VERSION = "1.17.0"
_WORDS = (
    "ready",
    " The",
    " answer",
    " depends",
    " on",
    " the",
    " model",
    " and",
    " its",
    " context",
    ".",
    " It",
    " runs",
    " on",
    " the",
    " NPU",
)
_TOKENS_PER_WORD = 1.35


class GenieError(Exception):
    """Printed on stderr; exit 1."""


def run_genie(ctx: ToolContext) -> int:
    try:
        options = parse_options(ctx.argv, OPTIONS, ALIASES)
        if options.get("--version") or options.get("--help"):
            ctx.out(f"Using libGenie.so version {GENIE_VERSION}")
            return 0
        return _run(ctx, options)
    except ArgError as exc:
        ctx.err(f"ERROR: {exc}")
        return 1
    except GenieError as exc:
        ctx.err(str(exc))
        return 1


def _prompt(ctx: ToolContext, options: dict[str, str | bool]) -> str:
    prompt = text_option(options, "--prompt")
    prompt_file = text_option(options, "--prompt_file")
    if prompt_file is not None:
        try:
            prompt = ctx.path(prompt_file).read_text()
        except OSError:
            raise GenieError(f"Failed to open prompt file: {prompt_file}") from None
    if not prompt:
        raise ArgError("one of --prompt or --prompt_file is required")
    return prompt


def _check_config(ctx: ToolContext, name: str | None) -> None:
    if not name:
        raise ArgError("-c/--config is required")
    try:
        config = json.loads(ctx.path(name).read_text())
    except OSError:
        raise GenieError(f"Failed to open config file: {name}") from None
    except ValueError:
        raise GenieError(f"Failed to parse config file: {name}") from None
    dialog = config.get("dialog") if isinstance(config, dict) else None
    if not isinstance(dialog, dict):
        raise GenieError("Failed to create the dialog config.")
    bins = dialog.get("engine", {}).get("model", {}).get("binary", {}).get("ctx-bins", [])
    for path in bins:
        if not Path(path).exists():
            raise GenieError(f"Failed to create the dialog: cannot open {path}")


def _run(ctx: ToolContext, options: dict[str, str | bool]) -> int:
    board = ctx.board
    genie = board.config.genie
    if options.get("--pid"):
        ctx.out(f"genie-t2t-run pid: {ctx.pid}")
    ctx.out(f"Using libGenie.so version {GENIE_VERSION}")
    ctx.out("")
    _check_config(ctx, text_option(options, "--config"))
    prompt = _prompt(ctx, options)
    chatty = (text_option(options, "--log") or "error") in ("info", "verbose")
    if chatty:
        ctx.out('[INFO] "Using create From Binary"')
        ctx.out('[INFO] "Allocated total size = 306545152 across 10 buffers"')
    if not board.npu.try_acquire(ctx.invocation):
        ctx.err("fastrpc memory map for fd: 49 with length: 704643072 failed with error: 0x1")
        ctx.err("Failed to map weights buffer to device! err: 1002")
        ctx.err("Failed to create the dialog.")
        ctx.truth["npu_busy_by_other"] = True
        return 1
    events: list[dict[str, Any]] = []
    create_start = _steady_us()
    if not ctx.sleep_until(ctx.start + genie.init_ms / 1000) and ctx.disconnected:
        raise ToolAborted()
    create_stop = _steady_us()
    events.append(
        {
            "type": "GenieDialog_create",
            "duration": create_stop - create_start,
            "start": create_start,
            "stop": create_stop,
            "init-time": {"value": create_stop - create_start, "unit": "us"},
        }
    )
    query = _query(ctx, prompt)
    events.append(query)
    ctx.out("[END]")
    free_start = _steady_us()
    if not ctx.sleep_until(time.monotonic() + genie.free_ms / 1000) and ctx.disconnected:
        raise ToolAborted()
    free_stop = _steady_us()
    events.append(
        {
            "type": "GenieDialog_free",
            "duration": free_stop - free_start,
            "start": free_start,
            "stop": free_stop,
        }
    )
    ctx.check_alive()
    profile = text_option(options, "--profile")
    if profile:
        _write_profile(ctx.path(profile), create_start, events)
    ctx.truth["profile"] = str(ctx.path(profile)) if profile else None
    return 0


def _query(ctx: ToolContext, prompt: str) -> dict[str, Any]:
    board = ctx.board
    genie = board.config.genie
    snap = board.snapshot()
    prompt_tokens = max(1, round(len(prompt.split()) * _TOKENS_PER_WORD))
    ttft_us = round(prompt_tokens / genie.prefill_tokens_per_s * snap.latency_multiplier * 1e6)
    token_us = round(snap.latency_multiplier * 1e6 / genie.decode_tokens_per_s)
    start = _steady_us()
    started = time.monotonic()
    board.npu.set_busy(True)
    generated = 0
    try:
        deadline = started + ttft_us / 1e6
        if ctx.sleep_until(deadline):
            ctx.partial("[BEGIN]: ")
            while generated < genie.generated_tokens:
                deadline += token_us / 1e6
                if not ctx.sleep_until(deadline):
                    break
                ctx.partial(_WORDS[generated % len(_WORDS)])
                generated += 1
    finally:
        board.npu.set_busy(False)
    if ctx.disconnected:
        raise ToolAborted()
    stop = _steady_us()
    generation_us = generated * token_us
    ctx.truth.update(
        {
            "prompt_tokens": prompt_tokens,
            "generated_tokens": generated,
            "ttft_us": ttft_us,
            "token_generation_time_us": generation_us,
            "cdsp_state": snap.cdsp_state,
            "nsp_temp_c": round(snap.nsp_temp_c, 3),
            "latency_multiplier": round(snap.latency_multiplier, 6),
        }
    )
    return {
        "type": "GenieDialog_query",
        "duration": stop - start,
        "start": start,
        "stop": stop,
        "num-prompt-tokens": {"value": prompt_tokens, "unit": ""},
        "prompt-processing-rate": {"value": prompt_tokens / (ttft_us / 1e6), "unit": "toks/sec"},
        "time-to-first-token": {"value": ttft_us, "unit": "us"},
        "num-generated-tokens": {"value": generated, "unit": ""},
        "token-generation-rate": {
            "value": generated / (generation_us / 1e6) if generation_us else 0.0,
            "unit": "toks/sec",
        },
        "token-generation-time": {"value": generation_us, "unit": "us"},
    }


def _write_profile(path: Path, timestamp: int, events: list[dict[str, Any]]) -> None:
    document = {
        "header": {
            "header_version": {"major": 0, "minor": 1, "patch": 0},
            "version": {"major": 0, "minor": 1, "patch": 0},
            "artifact_type": "GENIE_PROFILE",
        },
        "metadata": {"timestamp": timestamp},
        "components": [{"name": "dialog0", "type": "dialog", "events": events}],
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def _steady_us() -> int:
    return time.monotonic_ns() // 1000
