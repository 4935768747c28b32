"""What watching for a step of the wall clock costs the runner: python bench/clock_watch_cost.py

The runner reads `/proc/uptime` after every reading of its clock, to find a step of
the wall clock (NTP setting it) and take it off (docs/device-protocol.md). This
times, in every agent shell there is (dash, bash, mksh, busybox ash), a reading of
the runner's clock as it was before (`$EPOCHREALTIME`, or dash's forked `date`) and
as it is now (the same and the check), 2,000 of each back to back, interleaved
over rounds. Prints min / median / max over the rounds of the microseconds a
reading costs, each way, and what the check adds. The runner reads its clock 3 to
5 times an iteration; the rate printed is readings per second of the loop.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from agent_setup import scratch, shells, spread

from qtop.device.plan import agent_script

READINGS = 2_000


def timed_loop(shell: str, directory: str, reading: str, count: int) -> float:
    """Microseconds a reading costs: ``count`` of them in a loop, timed by the shell's
    own clock (one reading before, one after), the loop's own cost left in."""
    program = agent_script("lib.sh") + (
        'qtop_clock_init ""\n'
        "qtop_emit_clock >/dev/null\n"
        f"{reading}\n"
        "qtop_now_shifted\n"
        "qtop_a_s=$qtop_s\nqtop_a_f=$qtop_f\n"
        f"qtop_n=0\nwhile [ $qtop_n -lt {count} ]; do\n"
        f"\t{reading}\n\tqtop_n=$((qtop_n + 1))\ndone\n"
        "qtop_now_shifted\n"
        'qtop_us_since "$qtop_a_s" "$qtop_a_f"\n'
        'qtop_put "$qtop_d"\n'
    )
    out = subprocess.run(
        [shell, "-c", program, "sh", directory], capture_output=True, text=True, check=True
    ).stdout
    return int(out.strip()) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    found = shells()
    print(f"{READINGS} readings each way, {args.rounds} rounds, interleaved")
    results: dict[str, dict[str, list[float]]] = {
        name: {"plain": [], "watched": []} for name in found
    }
    with scratch() as directory:
        for _round in range(args.rounds):
            for name, shell in found.items():
                # dash forks `date` for each reading: fewer of them.
                count = READINGS // 10 if name == "dash" else READINGS
                for way, reading in (
                    ("plain", "$qtop_now_fn"),
                    ("watched", "$qtop_now_fn; qtop_check_step"),
                ):
                    results[name][way].append(timed_loop(shell, directory, reading, count))
    print(f"{'shell':8} {'plain us/reading':>24} {'watched us/reading':>24} {'check adds':>12}")
    for name, ways in results.items():
        added = statistics.median(ways["watched"]) - statistics.median(ways["plain"])
        print(
            f"{name:8} {spread(ways['plain']):>24} {spread(ways['watched']):>24} {added:>10.1f} us"
            f"   ({1e6 / statistics.median(ways['watched']):,.0f} readings/s watched)"
        )


if __name__ == "__main__":
    sys.exit(main())
