# shellcheck shell=sh
# shellcheck disable=SC2034 # what this file sets is read by the scripts it is sent with
# qtop device agent: functions shared by the probe, the runner, the sampler
# and control. POSIX sh (dash, busybox ash, mksh, bash). Inside a loop only
# builtins run, except `sleep` where the shell has no timed `read` and `date`
# for the runner's clock where the shell has no $EPOCHREALTIME.
#
# Times: the clock is read as seconds (qtop_s) and a 6-digit fraction
# (qtop_f); `now` is their concatenation, integer microseconds as text. mksh
# (Android's sh) has 32-bit arithmetic, so arithmetic only ever sees
# differences of nearby times (`1$qtop_f` keeps a leading 0 from meaning
# octal), never a whole time: that lasts 2000 s on any shell.
#
# Every field the agent prints goes through qtop_esc: backslash, tab, CR and
# newline become \\ \t \r \n, so no device-side string (a file name, a line of
# stderr, a zone type) can end a line or add a field.

T='	'
NL='
'
CR=$(printf '\r')
qtop_seq=0
qtop_stop=
qtop_sleeper='sleep'

# One line on stdout, one write (qtop_write: the text as it is). mksh's
# printf is not a builtin (a fork per line); its `print` is.
if [ -n "${KSH_VERSION:-}" ]; then
	qtop_put() { print -r -- "$1"; }
	qtop_write() { print -nr -- "$1"; }
else
	qtop_put() { printf '%s\n' "$1"; }
	qtop_write() { printf '%s' "$1"; }
fi

# $1 escaped into qtop_e. Only builtins; a value without a special character
# costs one `case`.
qtop_esc() {
	case $1 in
	*[\\"$T$CR$NL"]*) ;;
	*)
		qtop_e=$1
		return 0
		;;
	esac
	qtop_in=$1
	qtop_e=
	while :; do
		qtop_head=${qtop_in%%[\\"$T$CR$NL"]*}
		qtop_e=$qtop_e$qtop_head
		qtop_in=${qtop_in#"$qtop_head"}
		[ -n "$qtop_in" ] || return 0
		qtop_rest=${qtop_in#?}
		# shellcheck disable=SC1003 # a backslash, then an escaped backslash
		case ${qtop_in%"$qtop_rest"} in
		\\) qtop_e=$qtop_e'\\' ;;
		"$T") qtop_e=$qtop_e'\t' ;;
		"$CR") qtop_e=$qtop_e'\r' ;;
		*) qtop_e=$qtop_e'\n' ;;
		esac
		qtop_in=$qtop_rest
	done
}

# The escaped fields "$@", each after a tab, in qtop_l.
qtop_fields() {
	qtop_l=
	for qtop_field in "$@"; do
		qtop_esc "$qtop_field"
		qtop_l=$qtop_l$T$qtop_e
	done
}

# One protocol line: TAG, sequence number, time, then the fields "$@".
qtop_line() {
	qtop_tag=$1
	shift
	qtop_fields "$@"
	qtop_put "$qtop_tag$T$qtop_seq$T$now$qtop_l"
	qtop_seq=$((qtop_seq + 1))
}

# A record of the probe or of control: KIND then the escaped fields.
qtop_record() {
	qtop_kind=$1
	shift
	qtop_fields "$@"
	qtop_put "$qtop_kind$qtop_l"
}

# A value that starts with $NAME takes NAME from the environment (the host has
# checked it is a plain variable name): "$QTOP_SIM_SYSFS/x" becomes its value
# followed by /x. Sets qtop_expanded; returns 1 when NAME is unset or empty.
qtop_expand_variable() {
	case $1 in
	'$'*)
		qtop_name=${1#?}
		qtop_rest=
		case $qtop_name in
		*/*)
			qtop_rest=/${qtop_name#*/}
			qtop_name=${qtop_name%%/*}
			;;
		esac
		eval "qtop_expanded=\${$qtop_name:-}"
		[ -n "$qtop_expanded" ] || return 1
		qtop_expanded=$qtop_expanded$qtop_rest
		;;
	*) qtop_expanded=$1 ;;
	esac
}

# --- clocks ------------------------------------------------------------------

# $EPOCHREALTIME (bash 5, mksh R57+, busybox ash) is "seconds.microseconds"
# with the locale's decimal point; one expansion is one reading.
qtop_now_epoch() {
	# shellcheck disable=SC3028 # checked by qtop_epoch_works
	qtop_t=$EPOCHREALTIME
	qtop_s=${qtop_t%[!0-9]*}
	qtop_f=${qtop_t#*[!0-9]}
	now=$qtop_s$qtop_f
}

# /proc/uptime ticks every 10 ms: "1031.87 ..." is 1031 s and 870000 us.
qtop_now_uptime() {
	read -r qtop_t qtop_rest </proc/uptime
	qtop_s=${qtop_t%.*}
	qtop_f=${qtop_t#*.}0000
	now=$qtop_s$qtop_f
}

qtop_now_date() {
	# A stop's TERM reaches the whole group and may end this `date` before it
	# prints: the reading is taken again, never left empty.
	qtop_date_tries=0
	while :; do
		qtop_t=$(date +%s%N 2>/dev/null)
		case $qtop_t in
		'' | *[!0-9]*) ;;
		*) break ;;
		esac
		qtop_date_tries=$((qtop_date_tries + 1))
		[ "$qtop_date_tries" -lt 5 ] || return 1
	done
	qtop_s=${qtop_t%?????????}
	qtop_f=${qtop_t#"$qtop_s"}
	qtop_f=${qtop_f%???}
	now=$qtop_s$qtop_f
}

# The size of file $1 in bytes, in qtop_size. A stop's TERM reaches the whole
# group: `wc` ignores it, and one that it ended all the same (between the fork
# and the trap) is run again; the size is never left empty. A file that cannot
# be read is 0 bytes long (status 1).
qtop_size_of() {
	qtop_size_tries=0
	while :; do
		qtop_size=$(
			trap '' TERM
			wc -c 2>/dev/null <"$1"
		)
		qtop_size=${qtop_size##* }
		case $qtop_size in
		'' | *[!0-9]*) ;;
		*) return 0 ;;
		esac
		qtop_size_tries=$((qtop_size_tries + 1))
		if [ "$qtop_size_tries" -ge 5 ] || [ ! -r "$1" ]; then
			qtop_size=0
			return 1
		fi
	done
}

qtop_epoch_works() {
	# shellcheck disable=SC3028 # where the shell has it
	case ${EPOCHREALTIME:-} in
	*[0-9][!0-9][0-9][0-9][0-9][0-9][0-9][0-9]) [ -z "${QTOP_NO_EPOCH:-}" ] ;;
	*) return 1 ;;
	esac
}

qtop_date_works() {
	qtop_t=$(date +%s%N 2>/dev/null)
	case $qtop_t in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ "${#qtop_t}" -ge 16 ]
}

# Chooses the clock: $1 is the preference (epoch, date, uptime; empty: the
# finest there is), $2 is "nofork" where a forked `date` per reading is too
# dear (the sampler). Defines qtop_now; sets qtop_clock and qtop_res_us.
qtop_clock_init() {
	qtop_clock=uptime
	if [ "${1:-epoch}" = epoch ] && qtop_epoch_works; then
		qtop_clock=epoch
	elif [ "${1:-date}" != uptime ] && [ "$2" != nofork ] && qtop_date_works; then
		qtop_clock='date'
	fi
	qtop_res_us=1
	[ "$qtop_clock" != uptime ] || qtop_res_us=10000
	# The reading function by name: a hot loop calls it as $qtop_now_fn, which
	# becomes qtop_now_shifted once the wall clock has stepped.
	qtop_read_fn=qtop_now_$qtop_clock
	qtop_now_fn=$qtop_read_fn
	qtop_shift_s=0
	qtop_shift_u=0
	qtop_stepped=
}

qtop_now() {
	$qtop_now_fn
}

# Microseconds from the reading ($1 seconds, $2 fraction) to the last one.
qtop_us_since() {
	qtop_d=$(((qtop_s - $1) * 1000000 + 1$qtop_f - 1$2))
}

# Whole milliseconds from ($3 seconds, $4 fraction) to ($1, $2): exact
# below 2000 s, within a millisecond up to 24 days.
qtop_ms_between() {
	qtop_d=$(($1 - $3))
	if [ "$qtop_d" -ge 2000 ] || [ "$qtop_d" -le -2000 ]; then
		qtop_d=$((qtop_d * 1000 + (1$2 - 1$4) / 1000))
		return 0
	fi
	qtop_d=$((qtop_d * 1000000 + 1$2 - 1$4))
	if [ "$qtop_d" -ge 0 ]; then
		qtop_d=$((qtop_d / 1000))
	else
		qtop_d=$((-((999 - qtop_d) / 1000)))
	fi
}

# Whole milliseconds from ($1, $2) to the last reading.
qtop_ms_since() {
	qtop_ms_between "$qtop_s" "$qtop_f" "$1" "$2"
}

# The uptime (qtop_up_s, and qtop_up_f in microseconds) just after
# /proc/uptime ticked, and a reading of the clock (qtop_s, qtop_f, now) at
# once after: a pair exact to the clock's resolution rather than anywhere
# within uptime's 10 ms. A busy device can take the CPU from the shell
# between the tick and the reading for longer than a tick (seen in CI: 21 ms,
# which passed for a step of the clock), so uptime is read again after the
# clock, and a pair that it ticked more than once between is taken again, up
# to 3 times. qtop_clean says whether the last pair is known to within two
# ticks; without one, the last pair stands.
qtop_read_at_tick() {
	qtop_clean=
	qtop_at_tries=0
	qtop_now_uptime
	while :; do
		qtop_u0=$now
		while :; do
			qtop_now_uptime
			[ "$now" = "$qtop_u0" ] || break
		done
		qtop_up_s=$qtop_s
		qtop_up_f=$qtop_f
		if [ "$qtop_clock" = uptime ]; then
			qtop_clean=1
			return 0
		fi
		$qtop_read_fn
		read -r qtop_t1 qtop_rest </proc/uptime
		qtop_t1_s=${qtop_t1%.*}
		qtop_t1_f=${qtop_t1#*.}0000
		if [ $(((qtop_t1_s - qtop_up_s) * 1000000 + 1$qtop_t1_f - 1$qtop_up_f)) -le 10000 ]; then
			qtop_clean=1
			return 0
		fi
		qtop_at_tries=$((qtop_at_tries + 1))
		[ "$qtop_at_tries" -lt 3 ] || return 0
		qtop_now_uptime
	done
}

# The K line: which clock this file's times use, and the uptime (the
# device's CLOCK_BOOTTIME, in microseconds) at the moment of one reading.
# The times after it are on the clock as it reads now: any shift taken off
# for an earlier step starts again from nothing.
qtop_emit_clock() {
	qtop_read_at_tick
	qtop_offset_s=$((qtop_s - qtop_up_s))
	qtop_offset_u=$((1$qtop_f - 1$qtop_up_f))
	if [ "$qtop_offset_u" -lt 0 ]; then
		qtop_offset_s=$((qtop_offset_s - 1))
		qtop_offset_u=$((qtop_offset_u + 1000000))
	fi
	qtop_shift_s=0
	qtop_shift_u=0
	qtop_now_fn=$qtop_read_fn
	qtop_arith=64
	[ $((2147483647 + 1)) -gt 0 ] || qtop_arith=32
	qtop_line K "$qtop_clock" "$qtop_up_s$qtop_up_f" "$qtop_res_us" "$qtop_sleeper" "$qtop_arith"
}

# --- a clock that does not step --------------------------------------------------
#
# The wall clock steps whenever NTP (or anyone) sets it: a board without a
# battery-backed clock boots at its build date and steps when the network
# comes up, perhaps minutes into a run. /proc/uptime never steps (NTP's
# slewing moves both clocks alike, and a suspend advances both) but counts in
# 10 ms. So a reading's offset from uptime is compared with the one the K line
# stated: a move of qtop_step_us or more is a step, measured at uptime's
# ticks and from then on taken off every reading (qtop_shift_s, qtop_shift_u).
# The times a script writes stay on the clock its K line describes, as if it
# had never stepped. Smaller moves are uptime's resolution and a preemption
# between the two reads; a smaller step stays in the times.
qtop_step_us=20000

# Takes $1 seconds and $2 microseconds (0 <= $2 < 1000000) off the reading.
qtop_sub_time() {
	qtop_x=$((1$qtop_f - $2))
	qtop_s=$((qtop_s - $1))
	if [ "$qtop_x" -lt 1000000 ]; then
		qtop_x=$((qtop_x + 1000000))
		qtop_s=$((qtop_s - 1))
	fi
	qtop_f=${qtop_x#1}
	now=$qtop_s$qtop_f
}

qtop_now_shifted() {
	$qtop_read_fn
	qtop_sub_time "$qtop_shift_s" "$qtop_shift_u"
}

# Has the reading's offset from the uptime ($1 seconds, $2 microseconds)
# moved by a step from the K line's? qtop_ds/qtop_du: by how much, in
# seconds and (when under 3 s) in microseconds. Never a whole time in
# arithmetic (32-bit mksh).
qtop_offset_moved() {
	qtop_ds=$((qtop_s - $1 - qtop_offset_s))
	case $qtop_ds in
	-2 | -1 | 0 | 1 | 2) ;;
	*) return 0 ;;
	esac
	qtop_du=$((qtop_ds * 1000000 + 1$qtop_f - 1$2 - qtop_offset_u))
	[ "$qtop_du" -ge "$qtop_step_us" ] || [ "$qtop_du" -le "-$qtop_step_us" ]
}

# Looks at the (shifted) reading against /proc/uptime. A step is measured
# twice by qtop_read_at_tick: both must see it, or it was a preemption between
# the reads, and a pair not known to within two ticks is no evidence (the K
# line's and a pair's readings each come 0-20 ms late, so together they are
# off by less than the 20 ms of a step). A reading after a tick can only come
# late, never early, so the smaller of the two offsets is the truer. The step
# goes into the shift and off
# this reading, and every later reading is shifted ($qtop_now_fn);
# qtop_step_s/qtop_step_u hold it (0 <= qtop_step_u < 1000000) and qtop_stepped
# says there was one; qtop_step_unknown says that a preemption left it unknown.
qtop_check_step() {
	qtop_stepped=
	qtop_step_unknown=
	read -r qtop_t qtop_rest </proc/uptime
	qtop_offset_moved "${qtop_t%.*}" "${qtop_t#*.}0000" || return 0
	qtop_keep_s=$qtop_s
	qtop_keep_f=$qtop_f
	qtop_seen=0
	while [ "$qtop_seen" -lt 2 ]; do
		qtop_read_at_tick
		if [ -z "$qtop_clean" ]; then
			qtop_step_unknown=1
			break
		fi
		qtop_sub_time "$qtop_shift_s" "$qtop_shift_u"
		qtop_offset_moved "$qtop_up_s" "$qtop_up_f" || break
		qtop_x=$((qtop_s - qtop_up_s - qtop_offset_s))
		qtop_y=$((1$qtop_f - 1$qtop_up_f - qtop_offset_u))
		while [ "$qtop_y" -lt 0 ]; do
			qtop_x=$((qtop_x - 1))
			qtop_y=$((qtop_y + 1000000))
		done
		if [ "$qtop_seen" -eq 0 ] || [ "$qtop_x" -lt "$qtop_step_s" ] ||
			{ [ "$qtop_x" -eq "$qtop_step_s" ] && [ "$qtop_y" -lt "$qtop_step_u" ]; }; then
			qtop_step_s=$qtop_x
			qtop_step_u=$qtop_y
		fi
		qtop_seen=$((qtop_seen + 1))
	done
	qtop_s=$qtop_keep_s
	qtop_f=$qtop_keep_f
	now=$qtop_s$qtop_f
	[ "$qtop_seen" -eq 2 ] || return 0
	qtop_stepped=1
	qtop_shift_s=$((qtop_shift_s + qtop_step_s))
	qtop_shift_u=$((qtop_shift_u + qtop_step_u))
	if [ "$qtop_shift_u" -ge 1000000 ]; then
		qtop_shift_s=$((qtop_shift_s + 1))
		qtop_shift_u=$((qtop_shift_u - 1000000))
	fi
	qtop_sub_time "$qtop_step_s" "$qtop_step_u"
	qtop_now_fn=qtop_now_shifted
}

# --- waiting -------------------------------------------------------------------

# Microseconds (qtop_d) a timed read of $1 seconds on fd 9 took, its stderr
# to $2: how qtop_wait_init finds out what the shell's timed read does.
qtop_time_read() {
	qtop_now
	qtop_w_s=$qtop_s
	qtop_w_f=$qtop_f
	# shellcheck disable=SC3045 # the point is to find out whether and how it works
	read -r -t "$1" qtop_void <&9 2>"$2"
	qtop_now
	qtop_us_since "$qtop_w_s" "$qtop_w_f"
}

# A FIFO nobody writes to, on fd 9: `read -t` on it is a sleep without a
# fork, and a byte written to it (qtop_wake_all) ends the sleep at once (bash
# runs a trap only after `read -t` returns). Fd 9 rather than standard input:
# an asynchronous list (the watchdog) starts with its standard input from
# /dev/null, where a timed read returns at once and would spin on a core.
# Falls back to a forked `sleep` where `read -t` does not take fractions. A
# shell without the option (dash) refuses it at once and says so on stderr:
# the time alone would not tell, because where the clock forks `date`, the two
# readings around the refusal can take longer than the 50 ms asked for on a
# busy device, and a refused `read -t` taken for a sleep spins on a core.
qtop_wait_init() {
	qtop_fifo="$1/wake.$2"
	rm -f "$qtop_fifo"
	mkfifo "$qtop_fifo" 2>/dev/null && exec 9<>"$qtop_fifo" || return 0
	if [ -n "${QTOP_NO_TIMED_READ:-}" ]; then
		exec 9<&-
		return 0
	fi
	qtop_refusal="$1/timed-read.$2"
	# A signal (a child ending) cuts a timed read short, and mksh then says so
	# on stderr ("read: select: Interrupted system call"): an early return or a
	# complaint is tried again, up to 3 times, before the shell is taken not to
	# sleep in it. A shell without the option refuses every time.
	qtop_tries=0
	while :; do
		qtop_time_read 0.05 "$qtop_refusal"
		qtop_refused=
		[ ! -s "$qtop_refusal" ] || qtop_refused=1
		rm -f "$qtop_refusal"
		qtop_tries=$((qtop_tries + 1))
		if [ -z "$qtop_refused" ] && [ "$qtop_d" -ge 30000 ]; then
			break
		fi
		[ "$qtop_tries" -lt 3 ] || break
	done
	if [ -n "$qtop_refused" ] || [ "$qtop_d" -lt 30000 ] || [ "$qtop_d" -ge 1000000 ]; then
		exec 9<&-
		return 0
	fi
	qtop_sleeper='read'
	# busybox drops a timed read's fraction below the millisecond (0.0093 waits
	# 9 ms): it would wake early and wait again. Such a shell returns at once
	# from 0.0009, which no other does unless a signal cuts it short; with a
	# clock of microseconds that is seen, and its sleeps are asked in whole
	# milliseconds, rounded up.
	qtop_read_ms=
	qtop_tries=0
	while [ "$qtop_res_us" = 1 ] && [ -z "$qtop_read_ms" ] && [ "$qtop_tries" -lt 3 ]; do
		qtop_time_read 0.0009 /dev/null
		[ "$qtop_d" -ge 900 ] || qtop_read_ms=1
		qtop_tries=$((qtop_tries + 1))
	done
	if [ -n "$qtop_read_ms" ]; then
		# shellcheck disable=SC2317 # called by the scripts that source this file
		qtop_sleep_us() {
			qtop_x=$((($1 + 999) / 1000 % 1000 + 1000))
			# shellcheck disable=SC3045 # qtop_wait_init found that it works
			read -r -t "$((($1 + 999) / 1000000)).${qtop_x#1}" qtop_void <&9
		}
		return 0
	fi
	# shellcheck disable=SC2317 # called by the scripts that source this file
	qtop_sleep_us() {
		qtop_x=$(($1 % 1000000 + 1000000))
		# shellcheck disable=SC3045 # qtop_wait_init found that it works
		read -r -t "$(($1 / 1000000)).${qtop_x#1}" qtop_void <&9
	}
}

# A loop of `read <file` is cheaper with standard input closed: a shell saves
# and restores an open stdin around every such redirection (bash: 14 system
# calls a read instead of 6), and the sampler reads a dozen files a tick.
qtop_close_stdin() {
	exec 0<&-
}

# Sleep $1 microseconds (0 < $1 < 2^31), less when woken or signalled. A
# forked sleep runs in the foreground (dash then uses vfork, the cheapest
# fork there is), so a trapped signal is handled once it ends: whoever stops
# this shell signals it first and then ends its sleep (qtop_end_sampler; a
# group's SIGTERM reaches the sleep too), and callers look at qtop_stop
# before they sleep again. qtop_wait_init replaces it with the timed read.
qtop_sleep_us() {
	qtop_x=$(($1 % 1000000 + 1000000))
	sleep "$(($1 / 1000000)).${qtop_x#1}"
}

# Sleep until the time ($1 seconds, $2 microseconds) in slices of at most a
# second, or until a stop.
qtop_sleep_until() {
	while [ -z "$qtop_stop" ]; do
		qtop_now
		qtop_x=$(($1 - qtop_s))
		if [ "$qtop_x" -gt 1 ]; then
			qtop_sleep_us 1000000
			continue
		fi
		# Long past (a process held stopped for half an hour): 32-bit mksh
		# would overflow on its microseconds.
		[ "$qtop_x" -ge -1 ] || return 0
		qtop_d=$((qtop_x * 1000000 + $2 - (1$qtop_f - 1000000)))
		[ "$qtop_d" -gt 0 ] || return 0
		# A timed read may count whole milliseconds (busybox): never ask for less.
		[ "$qtop_d" -ge 1000 ] || qtop_d=1000
		qtop_sleep_us "$qtop_d"
	done
}

# Wakes every process of run directory $1 sleeping in `read -t`.
qtop_wake_all() {
	for qtop_w in "$1"/wake.*; do
		[ -p "$qtop_w" ] && printf '\n' 1<>"$qtop_w"
	done
	return 0
}

# --- processes ---------------------------------------------------------------

# A process group that may be signalled as a group: digits, above 1 (`kill
# -- -1` would mean every process).
qtop_pgid_ok() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ "$1" -gt 1 ]
}

# The live (not zombie) processes of group $1 in qtop_members. Reads /proc
# with `read`: `kill -0 -PGID` also counts zombies, which an init that does
# not reap (some containers) leaves behind for ever.
qtop_scan_group() {
	qtop_group=$1
	qtop_members=
	for qtop_stat in /proc/[0-9]*/stat; do
		read -r qtop_line 2>/dev/null <"$qtop_stat" || continue
		qtop_pid=${qtop_line%% *}
		qtop_line=${qtop_line##*) }
		# shellcheck disable=SC2086 # the fields after the command name are words
		set -- $qtop_line
		[ "$3" = "$qtop_group" ] || continue
		[ "$1" = Z ] || [ "$1" = X ] || qtop_members="$qtop_members $qtop_pid"
	done
}

qtop_group_alive() {
	qtop_scan_group "$1"
	[ -n "$qtop_members" ]
}

# Does process $1 belong to this user and carry the run's token $2 in its
# environment (exactly, as one variable)?
qtop_carries_token() {
	[ -O "/proc/$1" ] || return 1
	tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep -qxF "QTOP_RUN_TOKEN=$2"
}

# Does a live process of group $1 carry the run's token $2? Only then is the
# group a run qtop started: a recorded pgid may have been reused, or planted.
qtop_group_is_run() {
	qtop_pgid_ok "$1" || return 1
	case $2 in
	'' | *[!0-9a-f]*) return 1 ;;
	esac
	qtop_scan_group "$1"
	for qtop_pid in $qtop_members; do
		qtop_carries_token "$qtop_pid" "$2" && return 0
	done
	return 1
}

# --- the spool -----------------------------------------------------------------

# The spool directory from $1 ("auto": /data/local/tmp/qtop where /tmp is not
# writable and that exists, as on Android; else ${TMPDIR:-/tmp}/qtop-UID).
# Creates it 0700 when absent. Sets qtop_spool, or qtop_error and returns 1
# when qtop_spool_check refuses it.
qtop_spool_ready() {
	qtop_spool=$1
	qtop_error=
	if [ "$qtop_spool" = auto ]; then
		if [ ! -w /tmp ] && [ -d /data/local/tmp ]; then
			qtop_spool=/data/local/tmp/qtop
		else
			qtop_uid=$(id -u 2>/dev/null)
			if ! qtop_pgid_ok "$qtop_uid" && [ "$qtop_uid" != 0 ] && [ "$qtop_uid" != 1 ]; then
				qtop_error="cannot tell this user's id (no working 'id -u') to name the spool directory"
				return 1
			fi
			qtop_spool=${TMPDIR:-/tmp}
			qtop_spool=${qtop_spool%/}/qtop-$qtop_uid
		fi
	fi
	case $qtop_spool in
	/?*) ;;
	*)
		qtop_error="'$qtop_spool' is not an absolute path"
		return 1
		;;
	esac
	qtop_spool=${qtop_spool%/}
	if [ ! -e "$qtop_spool" ] && [ ! -L "$qtop_spool" ]; then
		qtop_parent=${qtop_spool%/*}
		[ -z "$qtop_parent" ] || [ -d "$qtop_parent" ] || mkdir -p "$qtop_parent" 2>/dev/null
		mkdir -m 700 "$qtop_spool" 2>/dev/null
	fi
	qtop_spool_check "$qtop_spool"
}

# A spool directory qtop may use: a directory, not a symbolic link, owned by
# this user and writable by nobody else (anyone who can write in it can plant
# a run that qtop would offer to stop). Sets qtop_error otherwise.
qtop_spool_check() {
	if [ -L "$1" ]; then
		qtop_error="$1 is a symbolic link ($(ls -ldn "$1" 2>/dev/null)), not a directory of your own"
		return 1
	fi
	if [ ! -d "$1" ]; then
		if [ -e "$1" ]; then
			qtop_error="$1 exists and is not a directory"
		else
			qtop_error="$1 cannot be created (is its parent directory writable?)"
		fi
		return 1
	fi
	qtop_ls=$(ls -ldn "$1" 2>/dev/null)
	# shellcheck disable=SC2086 # the fields of ls -l are words
	set -- "$1" $qtop_ls
	if [ ! -O "$1" ]; then
		qtop_error="$1 belongs to uid $4, not to you (uid $(id -u 2>/dev/null)); mode $2: another user could plant runs in it"
		return 1
	fi
	case $2 in
	?????w* | ????????w*)
		qtop_error="$1 (mode $2) is writable by other users: they could plant runs in it"
		return 1
		;;
	esac
	if [ ! -w "$1" ]; then
		qtop_error="$1 (mode $2) is not writable"
		return 1
	fi
}

# $1 is a run directory this user's qtop made: in a good spool, this user's,
# not a symbolic link, holding the run's token (in qtop_token). Sets
# qtop_error otherwise.
qtop_run_dir_ok() {
	qtop_spool_check "${1%/*}" || return 1
	if [ -L "$1" ] || [ ! -d "$1" ] || [ ! -O "$1" ]; then
		qtop_error="$1 is not a run directory of this user"
		return 1
	fi
	qtop_token=
	read -r qtop_token 2>/dev/null <"$1/token"
	case $qtop_token in
	'' | *[!0-9a-f]*)
		qtop_error="$1 holds no run token: it is not a run qtop started"
		return 1
		;;
	esac
}
