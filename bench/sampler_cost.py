"""What the device sampler costs: python bench/sampler_cost.py

Runs qtop's sampler (qtop/device/agent/sampler.sh) on this machine against a
fake sysfs of 12 files, under dash and under bash, and compares it with the
naive loop that forks `cat` for every read. Prints, per shell:

- CPU per tick (the sampler and every process it forked, from the kernel's
  accounting) and the share of one core at 10 Hz;
- tick jitter at 10 Hz: how late each tick starts after its due time (p50, p99);
- the highest sustained rate with 12 channels and no skipped tick.
"""

from __future__ import annotations

import itertools
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from qtop.device.plan import agent_script
from qtop.transport.command import assignment, quote

CHANNELS = 12
SHELLS = ("/bin/dash", "/bin/bash")


def make_files(root: Path) -> list[Path]:
    files = []
    for index in range(CHANNELS):
        path = root / f"zone{index}" / "temp"
        path.parent.mkdir(parents=True)
        path.write_text(f"{40000 + index * 100}\n")
        files.append(path)
    return files


def sampler_dir(root: Path, files: list[Path], interval_us: int) -> Path:
    run = root / f"run-{interval_us}-{time.monotonic_ns()}"
    run.mkdir()
    for name in ("lib.sh", "fast_bash.sh", "sampler.sh"):
        (run / name).write_text(agent_script(name))
    (run / "plan.sh").write_text(assignment("QTOP_INTERVAL_US", str(interval_us)) + "\n")
    body = "".join(f"\tv=; read -r v <{quote(str(f))}; l=$l$T$v\n" for f in files)
    (run / "tick.sh").write_text("qtop_tick() {\n" + body + "}\n")
    (run / "samples").write_text("")
    return run


def fork_cat_script(files: list[Path], interval_s: float) -> str:
    reads = " ".join(quote(str(f)) for f in files)
    return (
        "seq=0\nwhile :; do\n\tl=\n"
        f'\tfor f in {reads}; do v=$(cat "$f"); l="$l $v"; done\n'
        '\tprintf "%s %s\\n" "$seq" "$l"\n\tseq=$((seq + 1))\n'
        f"\tsleep {interval_s}\ndone\n"
    )


def cpu_of(command: list[str], seconds: float) -> tuple[float, subprocess.CompletedProcess]:
    """CPU seconds of a process and everything it forked, over ``seconds`` of running."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, subprocess.CompletedProcess(command, process.returncode, out)


def run_sampler(shell: str, root: Path, files: list[Path], interval_us: int, seconds: float):
    run = sampler_dir(root, files, interval_us)
    cpu, _ = cpu_of([shell, str(run / "sampler.sh"), str(run)], seconds)
    ticks = []
    for line in (run / "samples").read_text().splitlines():
        fields = line.split("\t")
        if fields[0] == "S":
            ticks.append((int(fields[2]), int(fields[3])))
    return cpu, ticks


def lateness_ms(ticks: list[tuple[int, int]], interval_us: int) -> list[float]:
    start = ticks[0][0]
    return [(t - (start + slot * interval_us)) / 1000 for t, slot in ticks]


def skipped(ticks: list[tuple[int, int]]) -> int:
    return sum(b[1] - a[1] - 1 for a, b in itertools.pairwise(ticks))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    seconds = 10.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = make_files(root / "sys")
        print(f"{CHANNELS} channels, 10 Hz, {seconds:g} s per measurement")
        print(f"{'sampler':<28}{'CPU/tick':>10}{'% core':>9}{'p50 late':>10}{'p99 late':>10}")
        for shell in SHELLS:
            cpu, ticks = run_sampler(shell, root, files, 100000, seconds)
            late = lateness_ms(ticks, 100000)
            print(
                f"{'qtop ' + os.path.basename(shell):<28}{cpu / len(ticks) * 1e3:>8.3f}ms"
                f"{cpu / seconds * 100:>8.2f}%{statistics.median(late):>8.2f}ms"
                f"{percentile(late, 0.99):>8.2f}ms"
            )
        for shell in SHELLS:
            script = fork_cat_script(files, 0.1)
            cpu, done = cpu_of([shell, "-c", script], seconds)
            count = len(done.stdout.splitlines())
            print(
                f"{'fork cat per read, ' + os.path.basename(shell):<28}"
                f"{cpu / count * 1e3:>8.3f}ms{cpu / seconds * 100:>8.2f}%"
            )
        print("\nhighest sustained rate with no skipped tick (3 s each):")
        for shell in SHELLS:
            best = None
            for rate in (10, 20, 50, 100, 200, 500, 1000, 2000):
                interval = round(1e6 / rate)
                _, ticks = run_sampler(shell, root, files, interval, 3.0)
                if skipped(ticks) or len(ticks) < 0.95 * 3.0 * rate:
                    break
                best = rate
            print(f"  qtop {os.path.basename(shell)}: {best} Hz")


if __name__ == "__main__":
    main()
