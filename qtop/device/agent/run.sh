# shellcheck shell=sh source-path=SCRIPTDIR disable=SC2153 # the QTOP_ variables come from plan.sh
# qtop device agent: the run. Usage: run.sh RUN_DIR
# Started detached in a process group of its own, so the link can drop
# without touching it and `kill -- -PGID` stops everything it started: the
# sampler, the measured command, a timeout watchdog. It calibrates the timer,
# runs baseline, cooldown, warm-up and measured iterations for each variant,
# and appends one line per event to RUN_DIR/events (fd 3). When it ends, no
# process of its group is left but itself.

qtop_dir=$1
# shellcheck source=/dev/null
. "$qtop_dir/plan.sh"
# The run's token is in the environment of this script and of what it starts,
# and of nothing else: the launcher's processes (a setsid that forks and exits,
# the job-control shell) can outlive their parents for a moment, and a process
# that carries the token without a parent that does is an orphan of the run.
# So the token is read here and this script started again with it exported
# (exec: the same process, in the same group).
qtop_token=
read -r qtop_token 2>/dev/null <"$qtop_dir/token"
case $qtop_token in
'' | *[!0-9a-f]*)
	printf '%s\n' "no run token in $qtop_dir/token" >"$qtop_dir/launch.err"
	exit 12
	;;
esac
if [ "${QTOP_RUN_TOKEN:-}" != "$qtop_token" ]; then
	QTOP_RUN_TOKEN=$qtop_token
	export QTOP_RUN_TOKEN
	exec "$QTOP_SHELL" "$qtop_dir/run.sh" "$qtop_dir"
fi
# shellcheck source=lib.sh
. "$qtop_dir/lib.sh"
trap 'qtop_stop=1' TERM INT
# Detached on purpose: a hangup is not a stop (the host stops a run with SIGTERM).
trap '' HUP
# `kill -- -PGID` must reach this run and nothing else: refuse to run
# outside a process group of its own.
read -r qtop_line </proc/$$/stat
qtop_line=${qtop_line##*) }
# shellcheck disable=SC2086 # the fields after the command name are words
set -- $qtop_line
if [ "$3" != $$ ]; then
	qtop_put "not a process group leader (pgid $3, pid $$)" >"$qtop_dir/launch.err"
	exit 12
fi
# The state first: the launch reports the run once pgid is there, and whoever
# looks at the run from then on must find its state.
qtop_put running >"$qtop_dir/state"
qtop_put "$$" >"$qtop_dir/pgid"
"$QTOP_SHELL" "$qtop_dir/sampler.sh" "$qtop_dir" </dev/null &
qtop_sampler=$!
# shellcheck source=/dev/null
. "$qtop_dir/cooldown.sh"
exec 3>>"$qtop_dir/events"
qtop_clock_init "${QTOP_CLOCK:-}"
qtop_wait_init "$qtop_dir" run

# Every reading of the runner is checked against /proc/uptime once its K line
# is out (qtop_watch_fn): a step of the wall clock is taken off, and said once,
# by the runner itself (the watchdog, a subshell, has these functions too).
qtop_watch_fn=:
qtop_now() {
	$qtop_now_fn
	$qtop_watch_fn
	[ -z "$qtop_stepped" ] || [ -z "$qtop_step_log" ] || qtop_log_step
}

qtop_log_step() {
	qtop_stepped=
	qtop_x=$((qtop_step_u + 1000000))
	qtop_x="$qtop_step_s.${qtop_x#1} s forward"
	if [ "$qtop_step_s" -lt 0 ]; then
		qtop_x=$((1000000 - qtop_step_u))
		qtop_y=$((-qtop_step_s - 1))
		if [ "$qtop_x" -eq 1000000 ]; then
			qtop_x=0
			qtop_y=$((qtop_y + 1))
		fi
		qtop_x=$((qtop_x + 1000000))
		qtop_x="$qtop_y.${qtop_x#1} s back"
	fi
	qtop_line L info "the device's clock was set $qtop_x during the run (NTP, or by hand); measured against /proc/uptime and taken off: the run's times, durations and schedule go on as if it had not moved" >&3
}

qtop_log() {
	qtop_now
	qtop_line L "$1" "$2" >&3
}

qtop_phase() {
	qtop_now
	qtop_phase_s=$qtop_s
	qtop_phase_f=$qtop_f
	qtop_line P "$1" "$qtop_v" "$2" "$3" "$4" >&3
}

# The children of process $1 in qtop_kids.
qtop_children() {
	qtop_kids=
	if [ -r "/proc/$1/task/$1/children" ]; then
		read -r qtop_kids 2>/dev/null <"/proc/$1/task/$1/children"
		return 0
	fi
	for qtop_stat in /proc/[0-9]*/stat; do
		read -r qtop_line 2>/dev/null <"$qtop_stat" || continue
		qtop_pid=${qtop_line%% *}
		qtop_line=${qtop_line##*) }
		# shellcheck disable=SC2086 # the fields after the command name are words
		set -- "$1" $qtop_line
		[ "$3" != "$1" ] || qtop_kids="$qtop_kids $qtop_pid"
	done
}

# Signal a process and its descendants, children first: `sh -c` may fork
# the command instead of exec'ing it, so the program can be a child.
qtop_signal_tree() {
	qtop_children "$2"
	for qtop_kid in $qtop_kids; do
		qtop_signal_tree "$1" "$qtop_kid"
	done
	kill "-$1" "$2" 2>/dev/null
}

# Is process $1 alive (not a zombie)?
qtop_alive() {
	read -r qtop_line 2>/dev/null <"/proc/$1/stat" || return 1
	qtop_line=${qtop_line##*) }
	case $qtop_line in
	[ZX]*) return 1 ;;
	esac
}

# Adds $1 milliseconds to the time in qtop_due_s / qtop_due_u.
qtop_add_ms() {
	qtop_due_s=$((qtop_due_s + $1 / 1000))
	qtop_due_u=$((qtop_due_u + $1 % 1000 * 1000))
	if [ "$qtop_due_u" -ge 1000000 ]; then
		qtop_due_s=$((qtop_due_s + 1))
		qtop_due_u=$((qtop_due_u - 1000000))
	fi
}

qtop_due_now() {
	qtop_now
	qtop_due_s=$qtop_s
	qtop_due_u=$((1$qtop_f - 1000000))
}

# Stop a command that overran QTOP_TIMEOUT_MS: SIGINT (Genie writes its
# profile on a clean exit), then SIGTERM, then SIGKILL, 5 s apart. A
# background subshell started before the timed window opens and ended by
# qtop_end_helper after it closes; it finds the command in cmd.pid.
qtop_watchdog() {
	qtop_stop=
	qtop_step_log=
	qtop_signals="INT TERM KILL"
	[ "${QTOP_SIGINT:-default}" = default ] || qtop_signals="TERM KILL"
	qtop_due_now
	qtop_add_ms "$QTOP_TIMEOUT_MS"
	qtop_sleep_until "$qtop_due_s" "$qtop_due_u"
	qtop_victim=
	while :; do
		read -r qtop_victim qtop_rest <"$qtop_dir/cmd.pid"
		[ -z "$qtop_victim" ] || break
		qtop_sleep_us 10000
	done
	for qtop_signal in $qtop_signals; do
		qtop_alive "$qtop_victim" || exit 0
		qtop_put "$qtop_proc" >"$qtop_dir/timed_out"
		qtop_signal_tree "$qtop_signal" "$qtop_victim"
		[ "$qtop_signal" != KILL ] || exit 0
		qtop_due_now
		qtop_add_ms 5000
		qtop_sleep_until "$qtop_due_s" "$qtop_due_u"
	done
}

# End a helper subshell ($1) and anything it forked, whatever it was doing:
# stopped first (so it cannot fork again), then its children, then itself.
# With a timed `read` and a builtin clock it has no children and SIGKILL
# alone ends it.
qtop_end_helper() {
	if [ "$qtop_sleeper" != read ] || [ "$qtop_clock" = date ]; then
		kill -STOP "$1" 2>/dev/null
		while read -r qtop_line <"/proc/$1/stat"; do
			qtop_line=${qtop_line##*) }
			case $qtop_line in
			[TtZX]*) break ;;
			esac
		done 2>/dev/null
		qtop_children "$1"
		for qtop_kid in $qtop_kids; do
			kill -KILL "$qtop_kid" 2>/dev/null
		done
		# Dead before their parent is: never a moment with a live orphan.
		for qtop_kid in $qtop_kids; do
			qtop_spins=0
			while qtop_alive "$qtop_kid" && [ "$qtop_spins" -lt 10000 ]; do
				qtop_spins=$((qtop_spins + 1))
			done
		done
	fi
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Replaces this subshell with command $1: its words themselves where the
# host found plain words in every command (QTOP_EXEC=direct), else `sh -c`.
qtop_exec() {
	if [ "$QTOP_EXEC" = direct ]; then
		set -f
		IFS=' '
		# shellcheck disable=SC2086 # plain words, split on spaces
		exec $1
	fi
	exec sh -c "$1"
}

# The measured path, identical for the calibration and for every iteration:
# a subshell that records its pid (for the watchdog and the sampler's RSS
# read) and execs the command in the foreground (an asynchronous command of
# a non-interactive shell ignores SIGINT, which the watchdog must be able to
# send). With a builtin clock the subshell stamps the start itself, just
# before the exec: the window holds the exec (of `sh` too, where the command
# needs one), the command, and this shell waking up, which the calibration
# (the same path with an external `true`) measures. Without one the stamps
# are taken here, around the fork.
qtop_timed() {
	qtop_wd=
	if [ -n "$QTOP_TIMEOUT_MS" ]; then
		qtop_watchdog &
		qtop_wd=$!
	fi
	qtop_x=$qtop_shift_s.$qtop_shift_u
	qtop_now
	# A step this reading found took its measuring (up to two of uptime's ticks)
	# and its note after the reading: without a builtin clock that reading opens
	# the window, so the start is read again.
	[ "$qtop_x" = "$qtop_shift_s.$qtop_shift_u" ] || qtop_now
	qtop_t0=$now
	qtop_t0_s=$qtop_s
	qtop_t0_f=$qtop_f
	qtop_t0_shift_s=$qtop_shift_s
	qtop_t0_shift_u=$qtop_shift_u
	if [ "$qtop_clock" = epoch ]; then
		(
			# A stop whose trap ran after the loop's last look: no command.
			[ -z "$qtop_stop" ] || exit 143
			# shellcheck disable=SC2034 # the rest of the line is not needed
			read -r qtop_me qtop_rest </proc/self/stat
			# Tests hold the second command here (it stops itself), between the
			# runner's reading before the fork and this stamp.
			if [ "${QTOP_TEST_HOLD:-}" = command-start ] && [ "$qtop_proc" = 1 ]; then
				kill -STOP "$qtop_me"
			fi
			qtop_now_epoch
			qtop_put "$qtop_me $now" >"$qtop_dir/cmd.pid"
			qtop_exec "$1"
		) </dev/null >>"$qtop_dir/stdout" 2>"$qtop_dir/err.cur" 3>&- 4<&- 9<&-
	else
		(
			# A stop whose trap ran after the loop's last look: no command.
			[ -z "$qtop_stop" ] || exit 143
			# shellcheck disable=SC2034 # the rest of the line is not needed
			read -r qtop_me qtop_rest </proc/self/stat
			qtop_put "$qtop_me" >"$qtop_dir/cmd.pid"
			qtop_exec "$1"
		) </dev/null >>"$qtop_dir/stdout" 2>"$qtop_dir/err.cur" 3>&- 4<&- 9<&-
	fi
	qtop_status=$?
	qtop_now
	qtop_t1=$now
	qtop_t1_s=$qtop_s
	qtop_t1_f=$qtop_f
	if [ "$qtop_clock" = epoch ]; then
		qtop_stamp=
		read -r qtop_me qtop_stamp <"$qtop_dir/cmd.pid"
		case $qtop_stamp in
		'' | *[!0-9]*) ;;
		*)
			# The subshell's stamp is a plain reading, taken before or after a
			# step the end's reading found: of the stamp less the shift before
			# the command and less the shift after it, the one nearer the
			# runner's own reading before the fork is right (a fork takes far
			# less than a step).
			qtop_unshifted_stamp "$qtop_stamp" "$qtop_t0_shift_s" "$qtop_t0_shift_u"
			if [ "$qtop_t0_shift_s.$qtop_t0_shift_u" != "$qtop_shift_s.$qtop_shift_u" ]; then
				qtop_ms_between "$qtop_s" "$qtop_f" "$qtop_t0_s" "$qtop_t0_f"
				qtop_before=${qtop_d#-}
				qtop_unshifted_stamp "$qtop_stamp" "$qtop_shift_s" "$qtop_shift_u"
				qtop_ms_between "$qtop_s" "$qtop_f" "$qtop_t0_s" "$qtop_t0_f"
				[ "${qtop_d#-}" -le "$qtop_before" ] ||
					qtop_unshifted_stamp "$qtop_stamp" "$qtop_t0_shift_s" "$qtop_t0_shift_u"
			fi
			qtop_t0=$now
			qtop_t0_s=$qtop_s
			qtop_t0_f=$qtop_f
			now=$qtop_t1
			qtop_s=$qtop_t1_s
			qtop_f=$qtop_t1_f
			;;
		esac
	fi
	: >"$qtop_dir/cmd.pid"
	[ -z "$qtop_wd" ] || qtop_end_helper "$qtop_wd"
	qtop_d=$(((qtop_t1_s - qtop_t0_s) * 1000000 + 1$qtop_t1_f - 1$qtop_t0_f))
}

# The reading $1 (microseconds as text) less $2 seconds and $3 microseconds.
qtop_unshifted_stamp() {
	qtop_s=${1%??????}
	qtop_f=${1#"$qtop_s"}
	qtop_sub_time "$2" "$3"
}

# The calibration command: the one asked for, else an external `true` (a
# builtin would leave the exec of a program out of the measurement).
qtop_calibration_command() {
	qtop_cal=$QTOP_CALIBRATION_COMMAND
	[ -z "$qtop_cal" ] || return 0
	qtop_cal=:
	set -f
	qtop_ifs=$IFS
	IFS=:
	for qtop_x in $PATH; do
		if [ -f "$qtop_x/true" ] && [ -x "$qtop_x/true" ]; then
			case $QTOP_EXEC:$qtop_x in
			sh:*"'"* | direct:*[!A-Za-z0-9_./,:+@%=-]*) ;;
			sh:*)
				qtop_cal="'$qtop_x/true'"
				break
				;;
			*)
				qtop_cal=$qtop_x/true
				break
				;;
			esac
		fi
	done
	IFS=$qtop_ifs
	set +f
	if [ "$qtop_cal" = : ]; then
		# `:` is no program to exec: the commands go through `sh -c`, as it does.
		QTOP_EXEC='sh'
		qtop_log warning "no external 'true' on the PATH: the timer calibration leaves out the exec of a program"
	fi
}

# $1 runs of the empty command through the measured path; a C line with
# their durations.
qtop_calibrate() {
	qtop_saved_proc=$qtop_proc
	qtop_proc=calibration
	qtop_k=0
	qtop_list=
	while [ "$qtop_k" -lt "$1" ] && [ -z "$qtop_stop" ]; do
		qtop_timed "$qtop_cal"
		[ -z "$qtop_stop" ] || break
		qtop_list=$qtop_list${qtop_list:+,}$qtop_d
		qtop_k=$((qtop_k + 1))
	done
	if [ "$qtop_k" -gt 0 ]; then
		now=$qtop_t1
		qtop_cal_s=$qtop_t1_s
	else
		# A stop came before any run finished: no run's end to stamp the line with.
		qtop_now
		qtop_cal_s=$qtop_s
	fi
	qtop_line C "$qtop_list" >&3
	qtop_proc=$qtop_saved_proc
}

# The command's stderr as E lines: the last QTOP_STDERR_LINES lines, after a
# note counting the ones left out (the end of stderr explains a failure).
qtop_report_stderr() {
	[ -s "$qtop_dir/err.cur" ] || return 0
	qtop_n=0
	while IFS= read -r qtop_text || [ -n "$qtop_text" ]; do
		qtop_n=$((qtop_n + 1))
	done <"$qtop_dir/err.cur"
	qtop_skip=$((qtop_n - QTOP_STDERR_LINES))
	[ "$qtop_skip" -le 0 ] || qtop_line E "$qtop_proc" "($qtop_skip earlier lines of stderr not shown)" >&3
	qtop_n=0
	while IFS= read -r qtop_text || [ -n "$qtop_text" ]; do
		qtop_n=$((qtop_n + 1))
		[ "$qtop_n" -le "$qtop_skip" ] || qtop_line E "$qtop_proc" "$qtop_text" >&3
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
# shellcheck disable=SC2317 # called through qtop_each_output
qtop_keep() {
	qtop_to="prof/$2.$qtop_k"
	qtop_k=$((qtop_k + 1))
	mv -f -- "$1" "$qtop_dir/$qtop_to" 2>/dev/null && return 0
	qtop_log warning "could not move the profiler output $1 into $qtop_dir/prof"
	return 1
}

# Calls $1 with each profiler file there is now: the logs in the output
# directory, or the one file. Only builtins when there is none.
qtop_each_output() {
	qtop_k=0
	# shellcheck disable=SC2153 # set by plan.sh
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
# shellcheck disable=SC2317 # called through qtop_each_output
qtop_set_aside() {
	qtop_keep "$1" "stale.$qtop_proc" &&
		qtop_log warning "profiler output $1 was there before process $qtop_proc started (not written by it): moved to $qtop_dir/$qtop_to"
}

# After a process exits and before the next starts, its output is moved
# into the run directory, so the next process cannot overwrite it and the
# host reads it from there (again, after a dropped link). An F line per file.
# shellcheck disable=SC2317 # called through qtop_each_output
qtop_take() {
	qtop_keep "$1" "$qtop_proc" || return 0
	qtop_now
	qtop_line F "$qtop_proc" "$qtop_to" "$1" >&3
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
	if [ -n "$QTOP_TIMEOUT_MS" ]; then
		read -r qtop_x <"$qtop_dir/timed_out"
		[ "$qtop_x" != "$qtop_proc" ] || qtop_overran=1
	fi
	now=$qtop_t1
	qtop_line I "$qtop_proc" "$1" "$qtop_v" "$2" "$qtop_t0" "$qtop_t1" "$qtop_status" "$qtop_overran" "$qtop_sched" >&3
	qtop_proc=$((qtop_proc + 1))
	# Tests hold the runner (it stops itself) here once, between a measured
	# iteration's end and the next one's start: a window that timing alone would
	# hit only by chance.
	if [ "${QTOP_TEST_HOLD:-}" = runner-between ] && [ "$1" = measure ]; then
		QTOP_TEST_HOLD=
		kill -STOP $$
	fi
	# A command stopped by the timeout failed, even if it exited 0 on the SIGINT.
	if [ "$qtop_status" -eq 0 ] && [ "$qtop_overran" = 0 ]; then
		qtop_fails=0
	else
		qtop_fails=$((qtop_fails + 1))
		if [ "$QTOP_MAX_FAILURES" -gt 0 ] && [ "$qtop_fails" -ge "$QTOP_MAX_FAILURES" ]; then
			qtop_failed="$qtop_fails consecutive iterations failed"
		fi
	fi
}

# Pacing: iteration $1 of the phase arrives at the phase's start plus $1
# periods (QTOP_PERIOD_US), or plus the first $1 gaps of the arrivals file
# ("SECONDS MICROSECONDS" a line, drawn by the host; read again from its top
# when it runs out). Arrivals never wait for the command: an iteration whose
# arrival has passed starts at once, and the next arrival is still counted
# from the schedule. qtop_sched is the arrival in the clock's microseconds
# (empty when the run is not paced).
qtop_pace() {
	qtop_sched=
	[ -n "$QTOP_PERIOD_US$QTOP_ARRIVALS" ] || return 0
	if [ "$1" -eq 0 ]; then
		qtop_pace_s=$qtop_phase_s
		qtop_pace_u=$((1$qtop_phase_f - 1000000))
		[ -z "$QTOP_ARRIVALS" ] || exec 4<"$qtop_dir/arrivals"
	elif [ -n "$QTOP_ARRIVALS" ]; then
		qtop_gap_s=
		qtop_gap_u=
		if ! read -r qtop_gap_s qtop_gap_u <&4; then
			exec 4<"$qtop_dir/arrivals"
			read -r qtop_gap_s qtop_gap_u <&4
		fi
		qtop_pace_s=$((qtop_pace_s + qtop_gap_s))
		qtop_pace_u=$((qtop_pace_u + qtop_gap_u))
	else
		qtop_pace_u=$((qtop_pace_u + QTOP_PERIOD_US))
	fi
	qtop_pace_s=$((qtop_pace_s + qtop_pace_u / 1000000))
	qtop_pace_u=$((qtop_pace_u % 1000000))
	qtop_x=$((1000000 + qtop_pace_u))
	qtop_sched=$qtop_pace_s${qtop_x#1}
	qtop_sleep_until "$qtop_pace_s" "$qtop_pace_u"
}

# Iterations of one phase: $1 phase, $2 count (empty: no limit), $3 duration
# in milliseconds (empty: none); indices start at qtop_base. The host creates
# advance.<variant> to end the variant's measurement: with a profiler-driven
# latency source once it has parsed enough executes (the count is then only a
# cap, and a process that failed or timed out does not count towards it: it
# measured nothing, so another one is needed), and with `stop: early` once the
# P90 bound is tight enough. The timer is calibrated again every
# QTOP_RECALIBRATE_S seconds.
qtop_loop() {
	qtop_i=0
	qtop_counted=0
	while [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; do
		[ -z "$2" ] || [ "$qtop_counted" -lt "$2" ] || break
		if [ -n "$3" ] && [ "$qtop_i" -gt 0 ]; then
			qtop_ms_between "$qtop_t1_s" "$qtop_t1_f" "$qtop_phase_s" "$qtop_phase_f"
			[ "$qtop_d" -lt "$3" ] || break
		fi
		[ ! -e "$qtop_dir/advance.$qtop_v" ] || break
		if [ "$QTOP_RECALIBRATE_S" -gt 0 ] && [ $((qtop_t1_s - qtop_cal_s)) -ge "$QTOP_RECALIBRATE_S" ]; then
			qtop_calibrate "$QTOP_RECALIBRATIONS"
		fi
		qtop_pace "$qtop_i"
		qtop_process "$1" $((qtop_i + qtop_base))
		qtop_i=$((qtop_i + 1))
		[ "$QTOP_MODE" = open ] && [ "$qtop_fails" -gt 0 ] || qtop_counted=$((qtop_counted + 1))
	done
}

qtop_cooldown() {
	qtop_phase cooldown "" "" "$QTOP_COOLDOWN_NOTE"
	qtop_cool_s=$qtop_s
	qtop_cool_f=$qtop_f
	while [ -z "$qtop_stop" ]; do
		qtop_hottest
		if [ -z "$hot" ]; then
			qtop_log warning "cooldown: none of the zones could be read; not waiting"
			return
		fi
		[ "$hot" -ge "$QTOP_COOLDOWN_BELOW_MC" ] || return
		qtop_now
		qtop_ms_since "$qtop_cool_s" "$qtop_cool_f"
		if [ "$qtop_d" -ge "$QTOP_COOLDOWN_TIMEOUT_MS" ]; then
			qtop_log warning "cooldown: gave up after the timeout with the hottest zone at $((hot / 1000)).$((hot % 1000 / 100)) C"
			return
		fi
		qtop_sleep_us 500000
	done
}

qtop_run_variant() {
	# shellcheck source=/dev/null
	. "$qtop_dir/variant_$qtop_v.sh"
	qtop_variant_env
	[ -z "$QTOP_COOLDOWN_BELOW_MC" ] || qtop_cooldown
	if [ "$QTOP_MODE" = open ]; then
		qtop_phase measure "$QTOP_ITERATIONS" "$QTOP_DURATION_US" ""
		qtop_loop measure "$QTOP_MAX_PROCESSES" "$QTOP_DURATION_MS"
	else
		if [ "$QTOP_WARMUP" -gt 0 ]; then
			qtop_phase warmup "$QTOP_WARMUP" "" ""
			qtop_loop warmup "$QTOP_WARMUP" ""
		fi
		qtop_phase measure "$QTOP_ITERATIONS" "$QTOP_DURATION_US" ""
		qtop_loop measure "$QTOP_ITERATIONS" "$QTOP_DURATION_MS"
	fi
	qtop_variant_unenv
}

# Per-variant counters of an interleaved run, in variables named by variant
# number: qtop_get PREFIX V sets qtop_x (0 when unset), qtop_put_n PREFIX V N.
qtop_get() {
	eval "qtop_x=\${$1_$2:-0}"
}

qtop_put_n() {
	eval "$1_$2=\$3"
}

# Has variant $1 of an interleaved run measured all it should?
qtop_variant_done() {
	[ ! -e "$qtop_dir/advance.$1" ] || return 0
	if [ -n "$QTOP_ITERATIONS" ]; then
		qtop_get qtop_n "$1"
		[ "$qtop_x" -lt "$QTOP_ITERATIONS" ] || return 0
	fi
	if [ -n "$QTOP_DURATION_MS" ]; then
		qtop_get qtop_ms "$1"
		[ "$qtop_x" -lt "$QTOP_DURATION_MS" ] || return 0
	fi
	return 1
}

# One block of variant qtop_v: its cooldown, its warm-up before its first
# block only, then up to QTOP_BLOCK measured iterations (fewer when its count
# or its measured time is nearly reached). Indices go on from its last block.
qtop_block() {
	# shellcheck source=/dev/null
	. "$qtop_dir/variant_$qtop_v.sh"
	qtop_variant_env
	[ -z "$QTOP_COOLDOWN_BELOW_MC" ] || qtop_cooldown
	qtop_get qtop_blk "$qtop_v"
	qtop_nblk=$((qtop_x + 1))
	qtop_put_n qtop_blk "$qtop_v" "$qtop_nblk"
	if [ "$qtop_nblk" -eq 1 ] && [ "$QTOP_WARMUP" -gt 0 ] && [ -z "$qtop_stop" ]; then
		qtop_phase warmup "$QTOP_WARMUP" "" ""
		qtop_loop warmup "$QTOP_WARMUP" ""
	fi
	qtop_get qtop_n "$qtop_v"
	qtop_done_n=$qtop_x
	qtop_get qtop_ms "$qtop_v"
	qtop_done_ms=$qtop_x
	qtop_count=$QTOP_BLOCK
	if [ -n "$QTOP_ITERATIONS" ] && [ $((QTOP_ITERATIONS - qtop_done_n)) -lt "$qtop_count" ]; then
		qtop_count=$((QTOP_ITERATIONS - qtop_done_n))
	fi
	qtop_left_ms=
	[ -z "$QTOP_DURATION_MS" ] || qtop_left_ms=$((QTOP_DURATION_MS - qtop_done_ms))
	if [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; then
		qtop_phase measure "$QTOP_ITERATIONS" "$QTOP_DURATION_US" "block $qtop_nblk${QTOP_BLOCKS:+/$QTOP_BLOCKS}"
		qtop_base=$qtop_done_n
		qtop_loop measure "$qtop_count" "$qtop_left_ms"
		qtop_base=0
		qtop_put_n qtop_n "$qtop_v" $((qtop_done_n + qtop_counted))
		if [ "$qtop_i" -gt 0 ]; then
			qtop_ms_between "$qtop_t1_s" "$qtop_t1_f" "$qtop_phase_s" "$qtop_phase_f"
			qtop_put_n qtop_ms "$qtop_v" $((qtop_done_ms + qtop_d))
		fi
	fi
	qtop_variant_unenv
}

# The blocks of one repetition of the plan, whose first variant is number $1:
# round after round (QTOP_ROUNDS, cycled) until every variant is done.
qtop_run_blocks() {
	qtop_first=$1
	qtop_busy=1
	while [ -n "$qtop_busy" ] && [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; do
		qtop_busy=
		for qtop_round in $QTOP_ROUNDS; do
			qtop_ifs=$IFS
			IFS=,
			# shellcheck disable=SC2086 # a round is variant numbers split at commas
			set -- $qtop_round
			IFS=$qtop_ifs
			for qtop_rel in "$@"; do
				qtop_v=$((qtop_first + qtop_rel - 1))
				qtop_variant_done "$qtop_v" && continue
				qtop_busy=1
				if [ "$qtop_blocks_run" -gt 0 ] && [ "$QTOP_BLOCK_PAUSE_MS" -gt 0 ]; then
					qtop_phase cooldown "" "" "pause between blocks"
					qtop_due_s=$qtop_phase_s
					qtop_due_u=$((1$qtop_phase_f - 1000000))
					qtop_add_ms "$QTOP_BLOCK_PAUSE_MS"
					qtop_sleep_until "$qtop_due_s" "$qtop_due_u"
				fi
				[ -z "$qtop_stop" ] || return 0
				qtop_block
				qtop_blocks_run=$((qtop_blocks_run + 1))
				[ -z "$qtop_stop" ] && [ -z "$qtop_failed" ] || return 0
			done
		done
	done
}

# The sampler ends on SIGTERM (its trap; and SIGCONT, as a stopped sampler
# acts on it only once continued) and a byte on its FIFO (bash runs the trap
# only once `read -t` returns). In that order: a sampler that forks `sleep`
# (dash) handles the signal when its sleep ends, so its sleeps are ended next,
# every round until it is gone, a sleep it forked after its last look at the
# flag too: the stop is never as late as a sampling interval.
qtop_end_sampler() {
	kill -TERM "$qtop_sampler" 2>/dev/null
	kill -CONT "$qtop_sampler" 2>/dev/null
	[ ! -p "$qtop_dir/wake.sampler" ] || printf '\n' 1<>"$qtop_dir/wake.sampler"
	qtop_tries=0
	while qtop_alive "$qtop_sampler"; do
		qtop_tries=$((qtop_tries + 1))
		qtop_children "$qtop_sampler"
		for qtop_kid in $qtop_kids; do
			kill -TERM "$qtop_kid" 2>/dev/null
		done
		if [ "$qtop_tries" -gt 200 ]; then
			kill -KILL "$qtop_sampler" 2>/dev/null
			break
		fi
		qtop_sleep_us 10000
	done
	wait "$qtop_sampler"
}

# Every process of this run's group but this shell (what the command left
# running in the background, say) is killed: a run leaves nothing behind.
qtop_sweep() {
	qtop_round=0
	while [ "$qtop_round" -lt 50 ]; do
		qtop_scan_group $$
		qtop_left=
		for qtop_pid in $qtop_members; do
			[ "$qtop_pid" = $$ ] && continue
			kill -KILL "$qtop_pid" 2>/dev/null
			qtop_left=1
		done
		[ -n "$qtop_left" ] || return 0
		qtop_round=$((qtop_round + 1))
		qtop_sleep_us 10000
	done
}

qtop_finish() {
	qtop_v=0
	qtop_end_sampler
	qtop_sweep
	[ "$1" != completed ] || qtop_phase "done" "" "" ""
	qtop_size_of "$qtop_dir/stdout"
	qtop_out=$qtop_size
	qtop_size_of "$qtop_dir/samples"
	qtop_put "$1" >"$qtop_dir/state"
	qtop_now
	qtop_line X "$1" "$qtop_out" "$qtop_size" "$2" >&3
	exit 0
}

qtop_v=0
qtop_proc=0
qtop_emit_clock >&3
if [ "$qtop_clock" != uptime ]; then
	qtop_watch_fn=qtop_check_step
	qtop_step_log=1
fi
# The launcher says how it left SIGINT, but a launcher that itself ran with SIGINT
# ignored (a background job of a script, nohup) passes that on: an ignored signal
# stays ignored across exec and `set -m`. This shell's own mask says for sure.
if [ -r "/proc/$$/status" ]; then
	while read -r qtop_key qtop_x; do
		case $qtop_key in
		SigIgn:)
			# SIGINT is signal 2: bit 1 of the mask's last hex digit.
			case $qtop_x in *[2367abefABEF]) QTOP_SIGINT=ignored ;; esac
			break
			;;
		esac
	done <"/proc/$$/status"
fi
[ "${QTOP_SIGINT:-default}" = default ] || qtop_log warning "SIGINT is ignored by the run on this device (it was started without job control, or by a process that ignores it): a timeout starts with SIGTERM"
[ "$qtop_clock" != uptime ] || qtop_log warning "no fine clock on this device (no \$EPOCHREALTIME, no date +%N): iteration times have 10 ms resolution"
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
qtop_calibration_command
qtop_v=1
# shellcheck source=/dev/null
. "$qtop_dir/variant_1.sh"
qtop_variant_env
# Tests hold the runner (it stops itself) here, to stop the run before its
# first calibration: a window that timing alone would hit only by chance.
[ "${QTOP_TEST_HOLD:-}" != runner-calibrate ] || kill -STOP $$
qtop_calibrate "$QTOP_CALIBRATIONS"
qtop_variant_unenv
qtop_v=0
if [ "$QTOP_BASELINE_MS" -gt 0 ] && [ -z "$qtop_stop" ]; then
	qtop_phase baseline "" "$QTOP_BASELINE_US" ""
	qtop_due_s=$qtop_phase_s
	qtop_due_u=$((1$qtop_phase_f - 1000000))
	qtop_add_ms "$QTOP_BASELINE_MS"
	qtop_sleep_until "$qtop_due_s" "$qtop_due_u"
fi
qtop_base=0
qtop_blocks_run=0
qtop_v=1
if [ "$QTOP_ORDER" = blocks ]; then
	qtop_rep=1
	while [ "$qtop_rep" -le "$QTOP_VARIANTS" ] && [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; do
		qtop_run_blocks "$qtop_rep"
		qtop_rep=$((qtop_rep + QTOP_GROUP))
	done
else
	while [ "$qtop_v" -le "$QTOP_VARIANTS" ] && [ -z "$qtop_stop" ] && [ -z "$qtop_failed" ]; do
		qtop_run_variant
		qtop_v=$((qtop_v + 1))
	done
fi
if [ -n "$qtop_stop" ]; then
	qtop_finish stopped ""
elif [ -n "$qtop_failed" ]; then
	qtop_finish failed "$qtop_failed"
fi
qtop_finish completed ""
