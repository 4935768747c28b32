# shellcheck shell=sh source-path=SCRIPTDIR
# qtop device agent: the sampler. Usage: sampler.sh RUN_DIR
# One S line per tick: every configured file read with the `read` builtin
# (tick.sh, generated per run), values escaped and tab-separated, empty when
# unreadable. Ticks are due at start + slot * interval; a slot is skipped
# only when a whole interval was lost, and the host sees the skipped slot
# numbers. The tick's time is the clock read first thing after waking. With
# a clock of microseconds the wait to the next due time counts from a second
# reading, after the line, so a tick is late only by its wake-up, not by its
# own reads; with /proc/uptime's 10 ms steps a second reading would tell
# nothing, and a tick is late by about its own cost. That never adds up.

qtop_dir=$1
# shellcheck source=lib.sh
. "$qtop_dir/lib.sh"
# shellcheck source=/dev/null
. "$qtop_dir/plan.sh"
# shellcheck source=/dev/null
. "$qtop_dir/tick.sh"
# Tests hold the sampler (it stops itself) at a named point, to act in a
# window that timing alone would hit only by chance: "sampler-sleep" is after
# its last look at qtop_stop and before it sleeps.
qtop_hold=
[ "${QTOP_TEST_HOLD:-}" != sampler-sleep ] || qtop_hold="kill -STOP $$"
# Whoever stops the run ends this sampler's forked sleeps by this pid (control,
# when the runner is gone).
qtop_put "$$" >"$qtop_dir/sampler.pid"
exec >>"$qtop_dir/samples" 2>/dev/null
trap 'qtop_stop=1' TERM INT
# Detached on purpose: a hangup is not a stop (the host stops a run with SIGTERM).
trap '' HUP
# A forked `date` per tick would cost more than the tick: without
# $EPOCHREALTIME the sampler uses /proc/uptime.
qtop_clock_init "${QTOP_CLOCK:-}" nofork
qtop_wait_init "$qtop_dir" sampler
qtop_close_stdin
qtop_emit_clock
qtop_interval=$QTOP_INTERVAL_US

# A tick that came a step of the clock later or any earlier than due looks at
# /proc/uptime: if the wall clock stepped, the step comes off this reading and
# every later one, and the tick is looked at again. A look that a preemption
# left without an answer is taken again from a fresh reading (up to 5 times):
# a step taken for a long sleep would start the schedule again.
qtop_stepped_now() {
	case $qtop_clock in uptime) return 1 ;; esac
	qtop_looks=0
	while :; do
		qtop_check_step
		case $qtop_stepped in ?*) return 0 ;; esac
		case $qtop_step_unknown in '') return 1 ;; esac
		qtop_looks=$((qtop_looks + 1))
		case $qtop_looks in 5) return 1 ;; esac
		$qtop_now_fn
	done
}

# The schedule starts again from a new K line's reading.
qtop_restart() {
	qtop_emit_clock
	qtop_due_s=$qtop_s
	qtop_due_u=$((1$qtop_f - 1000000))
	qtop_late=0
}

# The loop is written for the shell's speed: `case` rather than `[`, several
# arithmetic expansions per `:`, the clock's function called directly.
$qtop_now_fn
qtop_due_s=$qtop_s
qtop_due_u=$((1$qtop_f - 1000000))
qtop_slot=0
while :; do
	case $qtop_stop in ?*) break ;; esac
	qtop_late=$((qtop_s - qtop_due_s))
	case $qtop_late in
	[0-9][0-9][0-9][0-9]* | -[0-9][0-9][0-9][0-9]*)
		qtop_stepped_now && continue
		# The device slept 1000 s or more: the schedule starts again from here.
		qtop_restart
		;;
	*) qtop_late=$((qtop_late * 1000000 + 1$qtop_f - 1000000 - qtop_due_u)) ;;
	esac
	case $qtop_late in
	-*)
		if [ "$qtop_late" -ge "-$qtop_res_us" ]; then
			qtop_late=0
		elif qtop_stepped_now; then
			continue
		elif [ "$qtop_late" -lt "-$qtop_interval" ]; then
			qtop_restart
		else
			# Woken early (a signal; a timed read that counts whole milliseconds
			# where the clock could not tell): the rest is waited as one
			# millisecond at least, never as a run of zero-length reads.
			qtop_late=$((-qtop_late))
			[ "$qtop_late" -ge 1000 ] || qtop_late=1000
			qtop_sleep_us "$qtop_late"
			$qtop_now_fn
			continue
		fi
		;;
	esac
	case $((qtop_late >= qtop_step_us)) in 1) qtop_stepped_now && continue ;; esac
	qtop_skip=$((qtop_late / qtop_interval))
	case $qtop_skip in
	0) ;;
	*) : $((qtop_slot += qtop_skip)) $((qtop_late -= qtop_skip * qtop_interval)) \
		$((qtop_due_u += qtop_skip * qtop_interval)) ;;
	esac
	l=
	qtop_tick
	qtop_put "S$T$qtop_seq$T$now$T$qtop_slot$l"
	: $((qtop_seq += 1)) $((qtop_slot += 1)) $((qtop_due_u += qtop_interval)) \
		$((qtop_due_s += qtop_due_u / 1000000)) $((qtop_due_u %= 1000000))
	case $qtop_stop in ?*) break ;; esac
	$qtop_hold
	case $qtop_res_us in
	1)
		$qtop_now_fn
		qtop_wait=$(((qtop_due_s - qtop_s) * 1000000 + qtop_due_u + 1000000 - 1$qtop_f))
		# A clock stepped back waits no longer than an interval; the next tick
		# then finds the step.
		qtop_wait=$((qtop_wait > qtop_interval ? qtop_interval : qtop_wait))
		;;
	*) qtop_wait=$((qtop_interval - qtop_late)) ;;
	esac
	# A tick that overran its interval waits for nothing: the next one is due.
	case $qtop_wait in -* | 0) ;; *) qtop_sleep_us "$qtop_wait" ;; esac
	$qtop_now_fn
done
qtop_line Q
