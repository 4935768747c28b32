#!/usr/bin/env bash
# The whole test suite (the default run, then `pytest -m slow`) N times in a row while
# stress-ng keeps every core busy; stops at the first failure. Prints each run's times
# and how many runs passed. The goal (issue 15): 10 of 10 on a 2-core machine.
#
#   bench/suite_under_load.sh [RUNS]        (default 10; run from anywhere in a checkout,
#                                            with the project's venv active)
#   BURNERS=4 bench/suite_under_load.sh 3   (stress-ng workers; default: one per core)
#
# A failing run leaves its output in $LOG_DIR (default: a fresh directory under /tmp).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

runs=${1:-10}
case $runs in '' | *[!0-9]*) echo "usage: $0 [RUNS]" >&2; exit 2 ;; esac
command -v stress-ng >/dev/null 2>&1 || {
  echo "stress-ng not found; fix: apt-get install stress-ng" >&2
  exit 2
}
python -c 'import pytest' 2>/dev/null || {
  echo "pytest not importable; fix: activate the venv (pip install -e '.[test]')" >&2
  exit 2
}
burners=${BURNERS:-$(nproc)}
log_dir=${LOG_DIR:-$(mktemp -d /tmp/qtop-suite-under-load.XXXXXX)}
mkdir -p "$log_dir"

stress-ng --cpu "$burners" --timeout 0 >/dev/null 2>&1 &
burner=$!
trap 'kill "$burner" 2>/dev/null; wait "$burner" 2>/dev/null' EXIT INT TERM
echo "stress-ng --cpu $burners (pid $burner); $runs runs; logs in $log_dir"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }

passed=0
for run in $(seq 1 "$runs"); do
  for part in default slow; do
    if [ "$part" = default ]; then args=(-q -x); else args=(-q -x -m slow); fi
    log="$log_dir/run$run-$part.log"
    started=$(now)
    python -m pytest "${args[@]}" >"$log" 2>&1
    status=$?
    took=$(elapsed "$started" "$(now)")
    summary=$(tail -n 1 "$log")
    printf 'run %d %-7s %5s s  load %s  %s\n' "$run" "$part" "$took" \
      "$(cut -d' ' -f1 /proc/loadavg)" "$summary"
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
