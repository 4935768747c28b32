"""qtop replay: the live UI fed from a recording."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qtop.record.replay import ReplaySource

HELP = "replay a recording in the same UI (pause, step, seek, speed)"
DESCRIPTION = """\
Replay a recording in the same UI as a live session: space pauses, . steps,
+/- change speed (* as fast as possible), arrows seek 5 s (shift: 1 min),
[ and ] jump between marks (phase changes, markers, reconnects, throttling
onset), ? lists every key. --headless replays at full speed and prints the
summary.

Several recordings (the devices of one 'qtop run A B', say) open together in
the combined view, one column per recording, aligned on each one's own start:
the devices' clocks have nothing in common, so second 30 of one plays with
second 30 of the other. Pause, speed and seeks act on all of them.

examples:
  qtop replay recordings/2026-11-29T10-00-00-sim-evk.jsonl
  qtop replay run.jsonl --speed 8
  qtop replay run.jsonl --follow      # a recording still being written
  qtop replay recordings/side-by-side/*.jsonl
"""


def _speed(text: str) -> float:
    if text in ("max", "inf"):
        return float("inf")
    try:
        value = float(text.rstrip("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a factor such as 0.5, 4 or max") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the speed must be more than 0")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", nargs="+", help="recording (.jsonl); several open side by side"
    )
    parser.add_argument("--speed", type=_speed, default=1.0, help="0.5 to 16, or max (default 1)")
    parser.add_argument("--follow", action="store_true", help="keep reading as the file grows")
    parser.add_argument("--paused", action="store_true", help="open paused at the start")
    parser.add_argument(
        "--headless", action="store_true", help="replay at full speed and print the summary"
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from qtop.report.render import render
    from qtop.report.summary import summarize_recording

    if not args.headless:
        return _replay_in_ui(args)
    summaries = []
    for path in args.file:
        if args.follow:
            _follow_to_end(path)
        summaries.append(summarize_recording(path)[0])
    sys.stdout.write(render(summaries, "text") + "\n")
    return 0


def _follow_to_end(path: str) -> None:
    """Wait for a recording that is still being written to reach its end line."""
    import asyncio

    from qtop.record.reader import open_recording

    async def follow() -> None:
        async for _offset, _event in open_recording(path).follow(stop_at_end=True):
            pass

    asyncio.run(follow())


def _replay_in_ui(args: argparse.Namespace) -> int:
    import sys

    from qtop.record.replay import ReplaySource
    from qtop.session import Session
    from qtop.ui import open_ui

    if not sys.stdout.isatty():
        from qtop.errors import UsageError

        raise UsageError(
            "qtop replay needs a terminal for its UI (standard output is not one)",
            "run it in a terminal, or add --headless to print the summary",
        )
    sources = [
        ReplaySource(path, speed=args.speed, follow=args.follow, paused=args.paused)
        for path in args.file
    ]
    if len(sources) == 1:
        return open_ui(Session(sources[0]))
    from qtop.session_set import DeviceSession, distinct_names
    from qtop.ui.devices.app import DevicesApp

    names = distinct_names(_device_name(source) for source in sources)
    app = DevicesApp([DeviceSession(n, Session(s)) for n, s in zip(names, sources, strict=True)])
    app.run()
    return app.return_code or 0


def _device_name(source: ReplaySource) -> str:
    """What a recording's column is called: its device and profile, from its header."""
    from qtop.report.summary import device_name

    header = source.recording.header
    device = device_name(header.device)
    profile = str(header.profile.get("name", ""))
    return " · ".join(part for part in (device, profile) if part) or source.recording.path.name
