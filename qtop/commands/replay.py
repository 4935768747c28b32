"""qtop replay: the live UI fed from a recording."""

from __future__ import annotations

import argparse

HELP = "replay a recording in the same UI (pause, step, seek, speed)"
DESCRIPTION = """\
Replay a recording in the same UI as a live session: space pauses, . steps,
+/- change speed, arrows seek, [ and ] jump between markers.
--headless replays at full speed and prints the summary.

examples:
  qtop replay recordings/2026-11-29T10-00-00-sim-evk.jsonl
  qtop replay run.jsonl --speed 8
  qtop replay run.jsonl --follow      # a recording still being written
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
    parser.add_argument("file", metavar="FILE", help="recording (.jsonl)")
    parser.add_argument("--speed", type=_speed, default=1.0, help="0.5 to 16, or max (default 1)")
    parser.add_argument("--follow", action="store_true", help="keep reading as the file grows")
    parser.add_argument(
        "--headless", action="store_true", help="replay at full speed and print the summary"
    )


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from qtop.record.replay import ReplaySource
    from qtop.report.render import render
    from qtop.report.summary import summarize_model
    from qtop.session import Session

    if not args.headless:
        from qtop.commands._stub import not_available

        raise not_available("replay", "the UI has not landed; use --headless")
    source = ReplaySource(args.file, speed=float("inf"), follow=args.follow)
    session = Session(source)

    async def replay_to_end() -> None:
        async for event in source.events():
            session.consume(event)
            if source.finished or (session.model.end is not None and not args.follow):
                break

    asyncio.run(replay_to_end())
    summary = summarize_model(session.model, args.file, tuple(source.recording.warnings()))
    sys.stdout.write(render([summary], "text") + "\n")
    return 0
