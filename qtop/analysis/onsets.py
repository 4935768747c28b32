"""Throttling onsets of a whole recording, computed in a separate process.

A replay can seek to a throttling onset before it has played that far, so the
whole file is analysed once when it opens. That takes seconds on an hour's
recording; in a thread it would hold the interpreter lock and stall the
display, so it runs as ``python -m qtop.analysis.onsets FILE``, which prints a JSON
list of ``[variant, onset_t]``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from qtop.analysis.session import analyze
from qtop.errors import QtopError
from qtop.record.reader import Mark, open_recording


def recording_onsets(path: str) -> list[tuple[str, float]]:
    """(variant, device time of the throttling onset) for each variant that has one."""
    analysis = analyze(open_recording(path).events())
    return [
        (variant.name, variant.thermal.onset_t)
        for variant in analysis.variants
        if variant.thermal is not None and variant.thermal.onset_t is not None
    ]


async def onset_marks(path: Path) -> tuple[list[Mark], str]:
    """Seekable marks for the recording's onsets, and what went wrong (empty if nothing).

    Cancelling the caller kills the analysing process, so quitting never waits for it.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qtop.analysis.onsets",
        str(path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await process.communicate()
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        return [], err.decode(errors="replace").strip()
    marks = [
        Mark(t=onset, kind="onset", label=f"throttling onset {variant}".strip(), offset=-1)
        for variant, onset in json.loads(out)
    ]
    return marks, ""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m qtop.analysis.onsets RECORDING\n")
        return 2
    try:
        found = recording_onsets(argv[0])
    except QtopError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    sys.stdout.write(json.dumps(found) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
