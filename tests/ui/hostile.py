"""A session whose device-side text is hostile: markup, click actions, terminal escapes.

Zone and cooling-device types, the hostname, trip types, op and graph names, the
command's output and an iteration's error are all strings another user of the
board can choose. Each carries something a terminal or Textual would act on if
it were passed through: Textual markup (``[/]`` raises MarkupError, ``@click``
becomes an action), OSC 0 (window title), OSC 52 (clipboard), CSI (cursor and
erase), an 8-bit CSI, a carriage return and a bidirectional override.
"""

from __future__ import annotations

import re

from qtop.events import (
    ChannelInfo,
    Channels,
    End,
    Event,
    Header,
    Iteration,
    Log,
    Marker,
    PhaseChange,
    ProfileReport,
    Sample,
    Trip,
)
from qtop.parsers import parse_auto

OSC52 = "\x1b]52;c;cXRvcCB3YXMgaGVyZQ==\x07"
TITLE = "\x1b]0;pwned\x07"
CLICK = "[@click=app.quit]X[/]"
# Each zone id and what the zone column shows of it (names are cut at 20 columns).
ZONES = {
    "thermal/cpu[/]": "cpu[/]",
    f"thermal/{CLICK}": "[@click=app.quit]X[…",
    f"thermal/nsp{TITLE}": "nsp",
    "thermal/gpu\x9b2J\u202e": "gpu\ufffd",
}
COOLER = "cooling/[red]cdsp[/red]"
T0 = 100.0
# What must never reach a screen: escape (7- and 8-bit), BEL, CR, bidi overrides.
RAW_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_events() -> list[Event]:
    channels = [
        ChannelInfo(id=zone, kind="temperature", unit="C",
                    trips=(Trip(type=f"passive{TITLE}[b]", temp_c=95.0),))
        for zone in ZONES
    ]  # fmt: skip
    channels.append(ChannelInfo(id=COOLER, kind="cooling", unit="state", max_state=3))
    profile = parse_auto(
        f"Execute Stat 1 (graph g[b]x[/b]{TITLE})\n"
        f"/{CLICK}:OpId_10 : 1000 cycles Wait(Scheduler) 37 Resources: HVX\n"
        f"/op{OSC52}/Conv:OpId_11 : 2000 cycles Wait(Scheduler) 74 Resources: HMX\n"
        "Accelerator (execute) time : 1384 us\n"
        "Accelerator (execute excluding wait) : 459 us\n",
        "viewer.txt",
    )
    events: list[Event] = [
        Header(
            session_id="hostile",
            profile={"name": "[b]evil[/b]"},
            device={"hostname": f"board{TITLE}", "soc": "[@click=app.quit]SoC[/]"},
        ),
        Channels(t=T0, channels=tuple(channels)),
        PhaseChange(t=T0, phase="measure", variant="[i]v[/i]", planned_iterations=40),
    ]
    for n in range(40):
        t = T0 + n * 0.5
        values: dict[str, float | None] = {zone: 60.0 + n for zone in ZONES}
        values[COOLER] = 1.0 if n > 20 else 0.0
        events.append(Sample(t=t, seq=n, values=values))
        failed = n == 30
        events.append(
            Iteration(
                t=t + 0.1, seq=n, index=n, variant="[i]v[/i]", start=t, end=t + 0.1,
                latency_s=0.1, exit_status=1 if failed else 0,
                error=f"[bold]boom[/bold] {OSC52}" if failed else None,
            )
        )  # fmt: skip
        events.append(Log(t=t, seq=n, stream="stdout", text=f"output {n} {OSC52}{CLICK}\r"))
    events += [
        Log(t=T0 + 20, seq=99, stream="stderr", level="warning", text=f"\x1b[2K{TITLE}[/]"),
        ProfileReport(
            t=T0 + 20,
            source_kind="qnn-viewer-text",
            path=f"x{TITLE}.txt",
            variant="[i]v[/i]",
            report=profile.to_dict(),
        ),
        Marker(t=T0 + 10, label="note", note=f"{CLICK} {OSC52}"),
        End(t=T0 + 20.5, reason="completed"),
    ]
    return events
