# qtop device agent: the run. Usage: run.sh RUN_DIR
# Started detached in a process group of its own (setsid), so the link can
# drop without touching it and `kill -- -PGID` stops everything it started:
# the sampler, the measured command, a timeout watchdog. It calibrates the
# timer, runs baseline, cooldown, warm-up and measured iterations for each
# variant, and appends one line per event to RUN_DIR/events (fd 3).

qtop_dir=$1
. "$qtop_dir/lib.sh"
. "$qtop_dir/plan.sh"
printf '%s\n' "$$" >"$qtop_dir/pgid"
printf 'running\n' >"$qtop_dir/state"
"$QTOP_SHELL" "$qtop_dir/sampler.sh" "$qtop_dir" </dev/null &
qtop_sampler=$!
. "$qtop_dir/cooldown.sh"
qtop_load_fast_path "$qtop_dir"
exec 3>>"$qtop_dir/events"
trap 'qtop_stop=1' TERM INT HUP

qtop_date_works() {
	qtop_d=$(date +%s%N 2>/dev/null)
	case $qtop_d in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ "${#qtop_d}" -ge 16 ]
}

if [ "$qtop_fast" = bash ] && [ "${QTOP_CLOCK:-epoch}" = epoch ]; then
	qtop_clock=epoch
elif [ "${QTOP_CLOCK:-date}" != uptime ] && qtop_date_works; then
	qtop_clock=date
else
	qtop_clock=uptime
fi
case $qtop_clock in
epoch) qtop_now() { qtop_now_epoch; } ;;
date) qtop_now() { qtop_now_date; } ;;
*) qtop_now() { qtop_now_uptime; } ;;
esac

qtop_log() {
	qtop_now
	qtop_emit L "$T$1$T$2" >&3
}

qtop_phase() {
	qtop_now
	qtop_phase_start=$now
	qtop_emit P "$T$1$T$qtop_v$T$2$T$3$T$4" >&3
}

# Signal a process and its descendants, children first: `sh -c` (dash)
# forks the command instead of exec'ing it, so the program is a child.
qtop_signal_tree() {
	qtop_kids=
	read -r qtop_kids 2>/dev/null <"/proc/$2/task/$2/children"
	for qtop_kid in $qtop_kids; do
		qtop_signal_tree "$1" "$qtop_kid"
	done
	kill "-$1" "$2" 2>/dev/null
}

# Stop a command that overran QTOP_TIMEOUT_S: SIGINT (Genie writes its
# profile on a clean exit), then SIGTERM, then SIGKILL. Started before the
# timed window opens and stopped after it closes, so it costs the measurement
# nothing; it learns the command's pid from cmd.pid when it fires.
qtop_watchdog() {
	trap 'kill "$qtop_wsleep" 2>/dev/null; exit 0' TERM
	qtop_signals="WAIT INT TERM KILL"
	[ "${QTOP_SIGINT:-default}" = default ] || qtop_signals="WAIT TERM KILL"
	for qtop_signal in $qtop_signals; do
		if [ "$qtop_signal" != WAIT ]; then
			read -r qtop_victim <"$qtop_dir/cmd.pid"
			kill -0 "$qtop_victim" 2>/dev/null || exit 0
			printf '%s\n' "$qtop_proc" >"$qtop_dir/timed_out"
			qtop_signal_tree "$qtop_signal" "$qtop_victim"
		fi
		[ "$qtop_signal" != KILL ] || exit 0
		if [ "$qtop_signal" = WAIT ]; then
			sleep "$QTOP_TIMEOUT_S" &
		else
			sleep 5 &
		fi
		qtop_wsleep=$!
		wait "$qtop_wsleep"
	done
}

# The measured path, identical for the calibration and for every iteration.
# The command runs in the foreground: an asynchronous command of a
# non-interactive shell ignores SIGINT, which the watchdog must be able to
# send. Its shell writes its own pid to cmd.pid (for the watchdog and the
# sampler's RSS read), then execs `sh -c COMMAND`; bash execs a simple
# command in turn, dash forks it, so the program is that pid or its child.
qtop_timed() {
	qtop_wd=
	if [ -n "$QTOP_TIMEOUT_S" ]; then
		qtop_watchdog &
		qtop_wd=$!
	fi
	qtop_now
	qtop_t0=$now
	sh -c 'printf "%s\n" "$$" >"$0"; exec sh -c "$1"' "$qtop_dir/cmd.pid" "$1" \
		</dev/null >>"$qtop_dir/stdout" 2>"$qtop_dir/err.cur"
	qtop_status=$?
	qtop_now
	qtop_t1=$now
	if [ -n "$qtop_wd" ]; then
		kill "$qtop_wd" 2>/dev/null
		wait "$qtop_wd"
	fi
}

qtop_calibrate() {
	qtop_proc=calibration
	qtop_k=0
	qtop_list=
	while [ "$qtop_k" -lt "$QTOP_CALIBRATIONS" ] && [ -z "$qtop_stop" ]; do
		qtop_timed "$QTOP_CALIBRATION_COMMAND"
		qtop_list=$qtop_list${qtop_list:+,}$(( qtop_t1 - qtop_t0 ))
		qtop_k=$(( qtop_k + 1 ))
	done
	now=$qtop_t1
	qtop_emit C "$T$qtop_list" >&3
	qtop_proc=0
}

# The command's stderr as E lines: the last QTOP_STDERR_LINES lines, after a
# note counting the ones left out (the end of stderr explains a failure).
qtop_report_stderr() {
	[ -s "$qtop_dir/err.cur" ] || return 0
	qtop_n=0
	while IFS= read -r qtop_line || [ -n "$qtop_line" ]; do
		qtop_n=$(( qtop_n + 1 ))
	done <"$qtop_dir/err.cur"
	qtop_skip=$(( qtop_n - QTOP_STDERR_LINES ))
	[ "$qtop_skip" -le 0 ] || qtop_emit E "$T$qtop_proc$T($qtop_skip earlier lines of stderr not shown)" >&3
	qtop_n=0
	while IFS= read -r qtop_line || [ -n "$qtop_line" ]; do
		qtop_n=$(( qtop_n + 1 ))
		[ "$qtop_n" -le "$qtop_skip" ] || qtop_emit E "$T$qtop_proc$T$qtop_line" >&3
	done <"$qtop_dir/err.cur"
}

# Expand a profiler path: a leading $NAME comes from the environment (the
# host checked the name), a relative path is taken from the working directory.
qtop_expand_path() {
	qtop_expand_variable "$1" || return 1
	qtop_path=$qtop_expanded
	case $qtop_path in
	/*) ;;
	*) qtop_path=$PWD/$qtop_path ;;
	esac
}

# Move one profiler file into the run directory as prof/<process>.<k> (one
# fork). $1 the file, $2 the stored name's prefix; sets qtop_to on success.
qtop_keep() {
	qtop_to="prof/$2.$qtop_k"
	qtop_k=$(( qtop_k + 1 ))
	mv -f -- "$1" "$qtop_dir/$qtop_to" 2>/dev/null && return 0
	qtop_log warning "could not move the profiler output $1 into $qtop_dir/prof"
	return 1
}

# Calls $1 with each profiler file there is now: the logs in the output
# directory, or the one file. Only builtins when there is none.
qtop_each_output() {
	qtop_k=0
	if [ "$QTOP_PROF_MATCH" = dir ]; then
		for qtop_f in "$qtop_prof"/qnn-profiling-data*.log; do
			[ -f "$qtop_f" ] && "$1" "$qtop_f"
		done
	elif [ -f "$qtop_prof" ]; then
		"$1" "$qtop_prof"
	fi
	return 0
}

# Before a process starts, anything in its output's place is not its output:
# qnn-net-run overwrites its log, and Genie may keep an older profile.
qtop_set_aside() {
	qtop_keep "$1" "stale.$qtop_proc" &&
		qtop_log warning "profiler output $1 was there before process $qtop_proc started (not written by it): moved to $qtop_dir/$qtop_to"
}

# After a process exits and before the next starts, its output is moved
# into the run directory, so the next process cannot overwrite it and the
# host reads it from there (again, after a dropped link). An F line per file.
qtop_take() {
	qtop_keep "$1" "$qtop_proc" && qtop_emit F "$T$qtop_proc$T$qtop_to$T$1" >&3
}

# One run of the command; an I line tells the host it exited (the profiler
# hooks fetch and parse its output then, from the F lines before it).
qtop_process() {
	[ -z "$qtop_prof" ] || qtop_each_output qtop_set_aside
	qtop_timed "$QTOP_COMMAND"
	[ -z "$qtop_stop" ] || return 0
	now=$qtop_t1
	qtop_report_stderr
	[ -z "$qtop_prof" ] || qtop_each_output qtop_take
	qtop_overran=0
	if [ -n "$QTOP_TIMEOUT_S" ]; then
		read -r qtop_x <"$qtop_dir/timed_out"
		[ "$qtop_x" != "$qtop_proc" ] || qtop_overran=1
	fi
	qtop_emit I "$T$qtop_proc$T$1$T$qtop_v$T$2$T$qtop_t0$T$qtop_t1$T$qtop_status$T$qtop_overran" >&3
	qtop_proc=$(( qtop_proc + 1 ))
	# A command stopped by the timeout failed, even if it exited 0 on the SIGINT.
	if [ "$qtop_status" -eq 0 ] && [ "$qtop_overran" = 0 ]; then
		qtop_fails=0
	else
		qtop_fails=$(( qtop_fails + 1 ))
		if [ "$QTOP_MAX_FAILURES" -gt 0 ] && [ "$qtop_fails" -ge "$QTOP_MAX_FAILURES" ]; then
			qtop_failed="$qtop_fails consecutive iterations failed"
		fi
	fi
}

qtop_pace() {
	[ -n "$QTOP_PERIOD_US" ] || return 0
	qtop_now
	qtop_wait=$(( qtop_phase_start + $1 * QTOP_PERIOD_US - now ))
	[ "$qtop_wait" -le 0 ] || qtop_sleep_us "$qtop_wait"
}

# Iterations of one phase: $1 phase, $2 count (empty: no limit), $3 duration
# in microseconds (empty: none). With a profiler-driven latency source the
# host creates advance.<variant> once it has parsed enough executes; the
# count is then only a cap, and a process that failed or timed out does not
# count towards it (it measured nothing, so another one is needed).
qtop_loop() {
	qtop_i=0
	qtop_counted=0
	while [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; do
		[ -z "$2" ] || [ "$qtop_counted" -lt "$2" ] || break
		if [ -n "$3" ] && [ "$qtop_i" -gt 0 ]; then
			[ $(( qtop_t1 - qtop_phase_start )) -lt "$3" ] || break
		fi
		[ "$QTOP_MODE" != open ] || [ ! -e "$qtop_dir/advance.$qtop_v" ] || break
		qtop_pace "$qtop_i"
		qtop_process "$1" "$qtop_i"
		qtop_i=$(( qtop_i + 1 ))
		[ "$QTOP_MODE" = open ] && [ "$qtop_fails" -gt 0 ] || qtop_counted=$(( qtop_counted + 1 ))
	done
}

qtop_cooldown() {
	qtop_phase cooldown "" "" "$QTOP_COOLDOWN_NOTE"
	qtop_cool_start=$now
	while [ -z "$qtop_stop" ]; do
		qtop_hottest
		if [ -z "$hot" ]; then
			qtop_log warning "cooldown: none of the zones could be read; not waiting"
			return
		fi
		[ "$hot" -ge "$QTOP_COOLDOWN_BELOW_MC" ] || return
		qtop_now
		if [ $(( now - qtop_cool_start )) -ge "$QTOP_COOLDOWN_TIMEOUT_US" ]; then
			qtop_log warning "cooldown: gave up after the timeout with the hottest zone at $(( hot / 1000 )).$(( hot % 1000 / 100 )) C"
			return
		fi
		qtop_sleep_us 500000
	done
}

qtop_run_variant() {
	. "$qtop_dir/variant_$qtop_v.sh"
	qtop_variant_env
	[ -z "$QTOP_COOLDOWN_BELOW_MC" ] || qtop_cooldown
	if [ "$QTOP_MODE" = open ]; then
		qtop_phase measure "$QTOP_ITERATIONS" "$QTOP_DURATION_US" ""
		qtop_loop measure "$QTOP_MAX_PROCESSES" "$QTOP_DURATION_US"
	else
		if [ "$QTOP_WARMUP" -gt 0 ]; then
			qtop_phase warmup "$QTOP_WARMUP" "" ""
			qtop_loop warmup "$QTOP_WARMUP" ""
		fi
		qtop_phase measure "$QTOP_ITERATIONS" "$QTOP_DURATION_US" ""
		qtop_loop measure "$QTOP_ITERATIONS" "$QTOP_DURATION_US"
	fi
	qtop_variant_unenv
}

qtop_finish() {
	qtop_v=0
	# dash runs a trap only after its `sleep` child exits: end that child too.
	qtop_signal_tree TERM "$qtop_sampler"
	wait "$qtop_sampler"
	[ "$1" != completed ] || qtop_phase done "" "" ""
	qtop_out=$(wc -c <"$qtop_dir/stdout")
	qtop_samples=$(wc -c <"$qtop_dir/samples")
	printf '%s\n' "$1" >"$qtop_dir/state"
	qtop_now
	qtop_emit X "$T$1$T${qtop_out##* }$T${qtop_samples##* }$T$2" >&3
	exit 0
}

qtop_v=0
qtop_emit_clock "$qtop_clock" >&3
[ "${QTOP_SIGINT:-default}" = default ] || qtop_log warning "SIGINT is ignored by the run on this device (no bash or python3 to start it): a timeout starts with SIGTERM"
[ "$qtop_clock" != uptime ] || qtop_log warning "no fine clock on this device (no bash 5, no date +%N): iteration times have 10 ms resolution"
if [ -n "$QTOP_WORKDIR" ] && ! cd "$QTOP_WORKDIR"; then
	qtop_finish failed "cannot enter the working directory $QTOP_WORKDIR"
fi
qtop_prof=
if [ -n "$QTOP_PROF_PATH" ]; then
	qtop_expand_path "$QTOP_PROF_PATH" ||
		qtop_finish failed "profiler.path $QTOP_PROF_PATH: \$$qtop_name is not set in the device's environment"
	qtop_prof=$qtop_path
	mkdir -p "$qtop_dir/prof" || qtop_finish failed "cannot create $qtop_dir/prof"
fi
qtop_fails=0
qtop_failed=
qtop_v=1
. "$qtop_dir/variant_1.sh"
qtop_variant_env
qtop_calibrate
qtop_variant_unenv
qtop_v=0
if [ "$QTOP_BASELINE_US" -gt 0 ] && [ -z "$qtop_stop" ]; then
	qtop_phase baseline "" "$QTOP_BASELINE_US" ""
	qtop_sleep_us "$QTOP_BASELINE_US"
fi
qtop_v=1
while [ "$qtop_v" -le "$QTOP_VARIANTS" ] && [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; do
	qtop_run_variant
	qtop_v=$(( qtop_v + 1 ))
done
if [ -n "$qtop_stop" ]; then
	qtop_finish stopped ""
elif [ -n "$qtop_failed" ]; then
	qtop_finish failed "$qtop_failed"
fi
qtop_finish completed ""
