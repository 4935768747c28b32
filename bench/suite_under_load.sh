#!/usr/bin/env bash
# The whole test suite (the default run, then `pytest -m slow`) N times in a row while
# CPU burners keep every core busy; stops at the first failure. Prints each run's times,
# the load average and how idle the machine was (the burners' proof), then how many
# runs passed. The goal (issue 15): 10 of 10 on a 2-core machine.
#
#   bench/suite_under_load.sh [RUNS] [BURNER_COMMAND ...]
#       RUNS defaults to 10; run from a checkout with the project's venv active.
#       Each BURNER_COMMAND runs in `sh -c`, in a session of its own; without any, one
#       `stress-ng --cpu 1` per core. Any CPU-bound command keeps a core busy, for
#       example a fuzz run: 'python bench/fuzz_parsers.py --jobs 1 --inputs 900000'.
#
# Why a session per burner: with sched_autogroup (the default on desktop and many CI
# kernels) the scheduler shares the CPU between sessions first, so burners started in
# this script's own session would only compete with pytest inside one share.
#
# A failing run leaves its output in $LOG_DIR (default: a fresh directory under /tmp).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

runs=${1:-10}
case $runs in '' | *[!0-9]*) echo "usage: $0 [RUNS] [BURNER_COMMAND ...]" >&2; exit 2 ;; esac
shift $(($# > 0 ? 1 : 0))
command -v setsid >/dev/null 2>&1 || { echo "setsid not found; fix: apt-get install util-linux" >&2; exit 2; }
python -c 'import pytest' 2>/dev/null || {
  echo "pytest not importable; fix: activate the venv (pip install -e '.[test]')" >&2
  exit 2
}
burner_commands=("$@")
if [ ${#burner_commands[@]} -eq 0 ]; then
  command -v stress-ng >/dev/null 2>&1 || {
    echo "stress-ng not found; fix: apt-get install stress-ng, or name burner commands" >&2
    exit 2
  }
  for _ in $(seq 1 "$(nproc)"); do burner_commands+=("stress-ng --cpu 1 --timeout 0"); done
fi
log_dir=${LOG_DIR:-$(mktemp -d /tmp/qtop-suite-under-load.XXXXXX)}
mkdir -p "$log_dir"

burner_pids=()
for index in "${!burner_commands[@]}"; do
  setsid sh -c "${burner_commands[$index]}" </dev/null >"$log_dir/burner$index.log" 2>&1 &
  burner_pids+=($!)
done
stop_burners() {
  for pid in "${burner_pids[@]}"; do kill -- "-$pid" 2>/dev/null; done
}
trap stop_burners EXIT
trap 'exit 130' INT TERM
echo "${#burner_pids[@]} burner(s), each in its own session (logs: $log_dir/burner*.log):"
printf '  %s\n' "${burner_commands[@]}"
echo "$runs runs; logs in $log_dir"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
# The machine's idle and total jiffies, from the first line of /proc/stat.
cpu_jiffies() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, t; exit }' /proc/stat; }
idle_percent() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ");
    printf "%.1f", 100 * (y[1] - x[1]) / (y[2] - x[2]) }'
}

passed=0
for run in $(seq 1 "$runs"); do
  for part in default slow; do
    if [ "$part" = default ]; then args=(-q -x); else args=(-q -x -m slow); fi
    log="$log_dir/run$run-$part.log"
    started=$(now)
    jiffies_before=$(cpu_jiffies)
    python -m pytest "${args[@]}" >"$log" 2>&1
    status=$?
    took=$(elapsed "$started" "$(now)")
    idle=$(idle_percent "$jiffies_before" "$(cpu_jiffies)")
    summary=$(tail -n 1 "$log")
    printf 'run %d %-7s %5s s  load %s  idle %s%%  %s\n' "$run" "$part" "$took" \
      "$(cut -d' ' -f1 /proc/loadavg)" "$idle" "$summary"
    if [ "$status" -ne 0 ]; then
      echo "run $run failed ($part suite); its output: $log"
      grep -E '^(FAILED|ERROR) ' "$log" | head -n 20
      echo "passed $passed of $runs runs in a row (stopped at the first failure)"
      exit 1
    fi
  done
  passed=$((passed + 1))
done
echo "passed $passed of $runs runs in a row"
