"""What the device sampler costs: python bench/sampler_cost.py [--seconds 60] [--rounds 3]

Runs qtop's sampler as qtop sends it (bench/agent_setup.py: 11 thermal zones
and the measured command's memory, 12 channels) at 10 Hz on this machine,
under every agent shell there is (dash, bash, mksh, busybox ash), and in the
same round the naive loop that forks `cat` for each read and `sleep` for the
wait. Each measurement is a sustained window (60 s by default); each round
measures every shell and the fork-cat loop once, interleaved, so the ratio
compares runs of the same round. Prints, per shell, min / median / max over
the rounds of:

- CPU per tick in steady running (the sampler and every process it forked,
  from the kernel's accounting, start-up left out) and the share of a core,
  with the rate it ran at;
- how much cheaper than the fork-cat loop of the same round;
- the floor under it: the shell doing nothing but the sampler's wait (its
  timed read, or a forked `sleep` where it has none) and one line a tick; the
  same sampler with no channels (its clock, its sleep, one line a tick); what
  the 12 channels add to that in the same round; and, with a C compiler, what
  waking 10 times a second costs a C program that does the same (clock,
  sleep, one line): this machine's floor;
- tick lateness after the due time, p50 and p99;
- missed ticks.
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from agent_setup import (
    compile_c,
    make_sysfs,
    percentile,
    plan,
    profile,
    scratch,
    shells,
    spread,
    write_sampler_dir,
)

from qtop.device.plan import RunPlan
from qtop.device.protocol import ClockLine, SampleLine, parse_line
from qtop.transport.command import quote

INTERVAL_US = 100_000
# Start-up (shell, sourcing, the clock's first reading) is left out of the window.
WARMUP_S = 2.0


def process_cpu(pid: int) -> float:
    """CPU seconds of a process (to the nanosecond) and of the children it has reaped."""
    own_ns = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    children = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    return own_ns / 1e9 + children


def steady_cost(command: list[str], seconds: float, count, stop) -> tuple[float, int]:
    """CPU seconds and ticks over ``seconds`` of steady running (start-up left out)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = bytearray()

    def drain() -> None:
        while True:
            chunk = process.stdout.read1(65536) if process.stdout else b""
            if not chunk:
                return
            lines.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    time.sleep(WARMUP_S)
    cpu0, ticks0 = process_cpu(process.pid), count(lines)
    time.sleep(seconds)
    cpu1, ticks1 = process_cpu(process.pid), count(lines)
    stop(process)
    process.wait()
    reader.join()
    return cpu1 - cpu0, ticks1 - ticks0


def sampler_round(shell: str, directory: Path, seconds: float) -> dict[str, float]:
    samples = directory / "samples"

    def stop(process: subprocess.Popen) -> None:
        process.send_signal(signal.SIGTERM)
        wake = directory / "wake.sampler"
        if wake.exists():
            with open(wake, "r+b", buffering=0) as fifo:
                fifo.write(b"\n")

    def count(_: bytearray) -> int:
        return samples.read_bytes().count(b"\nS\t")

    command = [shell, str(directory / "sampler.sh"), str(directory)]
    cpu, counted = steady_cost(command, seconds, count, stop)
    lines = [parse_line(line) for line in samples.read_text().splitlines()]
    clock = next(line for line in lines if isinstance(line, ClockLine))
    ticks = [line for line in lines if isinstance(line, SampleLine)]
    start = ticks[0].time_us
    late = [(t.time_us - start - t.slot * INTERVAL_US) / 1000 for t in ticks]
    missed = sum(b.slot - a.slot - 1 for a, b in itertools.pairwise(ticks))
    return {
        "tick_ms": cpu / counted * 1e3,
        "core_pct": cpu / seconds * 100,
        "rate_hz": counted / seconds,
        "p50": percentile(late, 0.5),
        "p99": percentile(late, 0.99),
        "missed": missed,
        "resolution_ms": clock.resolution_us / 1000,
        "sleep": clock.sleep,
    }


def floor_directory(built: RunPlan, directory: Path) -> Path:
    """The sampler as qtop sends it, with a tick that reads nothing."""
    write_sampler_dir(built, directory)
    (directory / "tick.sh").write_text("qtop_tick() {\n\t:\n}\n")
    return directory


C_FLOOR = r"""
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec due, now;
    clock_gettime(CLOCK_MONOTONIC, &due);
    for (unsigned long seq = 0;; seq++) {
        due.tv_nsec += 100000000;
        if (due.tv_nsec >= 1000000000) { due.tv_nsec -= 1000000000; due.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        clock_gettime(CLOCK_REALTIME, &now);
        printf("S\t%lu\t%ld%06ld\n", seq, (long)now.tv_sec, now.tv_nsec / 1000);
        fflush(stdout);
    }
}
"""


def waiting_round(shell: str, sleeper: str, directory: Path, seconds: float) -> float:
    """CPU per tick of the shell doing nothing but the sampler's wait and one line."""
    fifo = directory / "wake.waiting"
    if sleeper == "read":
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
        wait = "read -r -t 0.1 v <&9"
        setup = f"exec 9<>{quote(str(fifo))}; exec 0<&-; "
    else:
        wait, setup = "sleep 0.1", ""
    script = f"{setup}while :; do {wait}; echo; done"
    cpu, ticks = steady_cost(
        [shell, "-c", script], seconds, lambda out: out.count(b"\n"), lambda p: p.kill()
    )
    return cpu / ticks * 1e3


def c_floor(directory: Path) -> Path | None:
    source = directory / "floor.c"
    source.write_text(C_FLOOR)
    return compile_c(source, directory / "floor")


def c_floor_round(binary: Path, seconds: float) -> float:
    cpu, ticks = steady_cost(
        [str(binary)], seconds, lambda out: out.count(b"\n"), lambda p: p.kill()
    )
    return cpu / ticks * 1e3


def fork_cat_round(files: list[str], seconds: float) -> float:
    reads = " ".join(quote(f) for f in files)
    script = (
        "seq=0\nwhile :; do\n\tl=\n"
        f'\tfor f in {reads}; do v=$(cat "$f"); l="$l $v"; done\n'
        '\tprintf "%s %s\\n" "$seq" "$l"\n\tseq=$((seq + 1))\n\tsleep 0.1\ndone\n'
    )
    cpu, ticks = steady_cost(
        ["/bin/dash", "-c", script], seconds, lambda out: out.count(b"\n"), lambda p: p.kill()
    )
    return cpu / ticks * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    available = shells()
    with scratch() as tmp:
        root = Path(tmp)
        make_sysfs(root / "sys")
        command = subprocess.Popen(["sleep", "100000"])
        results: dict[str, list[dict[str, float]]] = {name: [] for name in available}
        floors: dict[str, list[float]] = {name: [] for name in available}
        waiting: dict[str, list[float]] = {name: [] for name in available}
        machine_floor: list[float] = []
        binary = c_floor(root)
        fork_cat: list[float] = []
        files: list[str] = []
        try:
            for round_index in range(args.rounds):
                for name, shell in available.items():
                    used = profile(root, "100ms", "{command: 'true', iterations: 1}")
                    built, sensors = plan(shell, used)
                    files = [r.path for r in sensors.reads if r.kind == "file"]
                    directory = write_sampler_dir(built, root / f"{name}-{round_index}")
                    # The command-memory read follows cmd.pid to a live process.
                    (directory / "cmd.pid").write_text(f"{command.pid} 0\n")
                    results[name].append(sampler_round(shell, directory, args.seconds))
                    empty = floor_directory(built, root / f"{name}-{round_index}-floor")
                    floors[name].append(sampler_round(shell, empty, args.seconds)["tick_ms"])
                    sleeper = str(results[name][-1]["sleep"])
                    waiting[name].append(waiting_round(shell, sleeper, empty, args.seconds))
                if binary is not None:
                    machine_floor.append(c_floor_round(binary, args.seconds))
                memory = f"/proc/{command.pid}/statm"
                fork_cat.append(fork_cat_round([*files, memory], args.seconds))
        finally:
            command.kill()
            command.wait()
    channels = len(files) + 1
    print(
        f"sampler at 10 Hz, {channels} channels (incl. the command's memory), "
        f"{args.seconds:g} s windows, {args.rounds} rounds; min / median / max"
    )
    print(f"fork-cat loop (dash, {channels} cat forks + 1 sleep per tick): "
          f"{spread(fork_cat)} ms per tick")  # fmt: skip
    if machine_floor:
        print(f"C program waking at 10 Hz (clock, sleep, one line): "
              f"{spread(machine_floor)} ms per tick")  # fmt: skip
    for name, rounds in results.items():
        if not rounds:
            continue
        ratio = [f / r["tick_ms"] for f, r in zip(fork_cat, rounds, strict=True)]
        first = rounds[0]
        print(f"{name} (sleep: {first['sleep']}, clock resolution {first['resolution_ms']:g} ms)")
        print(f"  rate             {spread([r['rate_hz'] for r in rounds])} Hz")
        print(f"  CPU per tick     {spread([r['tick_ms'] for r in rounds])} ms")
        print(f"  share of a core  {spread([r['core_pct'] for r in rounds])} %")
        print(f"  cheaper than fork-cat, same round: {spread(ratio)} x")
        added = [r["tick_ms"] - f for r, f in zip(rounds, floors[name], strict=True)]
        print(f"  floor: waiting alone {spread(waiting[name])} ms; no channels "
              f"{spread(floors[name])} ms; the 12 channels add {spread(added)} ms")  # fmt: skip
        print(f"  lateness p50     {spread([r['p50'] for r in rounds])} ms")
        print(f"  lateness p99     {spread([r['p99'] for r in rounds])} ms")
        print(f"  missed ticks     {spread([r['missed'] for r in rounds])}")


if __name__ == "__main__":
    main()
