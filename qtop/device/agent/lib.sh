# qtop device agent: functions shared by run.sh and sampler.sh.
# POSIX sh (dash, busybox ash, toybox sh, bash). Inside a loop only builtins
# run; the one exception is `sleep` (and `date` for the runner's clock) on
# shells without a builtin way to wait or to read a fine clock.
# Every time here is an integer count of microseconds of one clock; the host
# turns it into seconds on the device's uptime line using the K line.

T='	'
qtop_seq=0
qtop_stop=

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

# /proc/uptime ticks every 10 ms; "1031.87" becomes 1031870000. The 1 before
# the fraction keeps a leading 0 from being read as octal.
qtop_now_uptime() {
	read -r qtop_up qtop_rest < /proc/uptime
	now=$(( ${qtop_up%.*} * 1000000 + (1${qtop_up#*.} - 100) * 10000 ))
}

qtop_now_date() {
	now=$(date +%s%N)
	now=$(( now / 1000 ))
}

# Sleep $1 microseconds (> 0); the bash fast path replaces this with `read -t`.
qtop_sleep_us() {
	qtop_f=$(( $1 % 1000000 ))
	qtop_f=00000$qtop_f
	sleep "$(( $1 / 1000000 )).${qtop_f#"${qtop_f%??????}"}"
}

# One protocol line: tag, sequence number, time, then "$2" (empty or
# starting with a tab). Written with a single printf, so one write(2).
qtop_emit() {
	printf '%s\t%s\t%s%s\n' "$1" "$qtop_seq" "$now" "$2"
	qtop_seq=$(( qtop_seq + 1 ))
}

# The K line: which clock this file's times use and how to put them on the
# uptime line (uptime_us = time + offset). Waiting for /proc/uptime to tick
# pins the offset to the moment of the tick instead of anywhere in 10 ms.
qtop_emit_clock() {
	qtop_clock=$1
	if [ "$qtop_clock" = uptime ]; then
		qtop_now_uptime
		qtop_emit K "${T}uptime${T}0${T}10000"
		return
	fi
	qtop_now_uptime
	qtop_u0=$now
	while :; do
		qtop_now_uptime
		[ "$now" = "$qtop_u0" ] || break
	done
	qtop_u1=$now
	"qtop_now_$qtop_clock"
	qtop_emit K "${T}${qtop_clock}${T}$(( qtop_u1 - now ))${T}${qtop_resolution_us:-1}"
}

# The bash fast path: $EPOCHREALTIME as the clock, `read -t` as the sleep.
qtop_load_fast_path() {
	qtop_fast=
	if [ -n "${BASH_VERSION:-}" ] && [ -n "${EPOCHREALTIME:-}" ] && [ -z "${QTOP_NO_FAST:-}" ]; then
		. "$1/fast_bash.sh" && qtop_fast_init "$1" && qtop_fast=bash
	fi
}

# Is any process of group $1 still alive (not a zombie)? Scans /proc with
# `read`, because `kill -0 -PGID` also counts zombies, which an init that does
# not reap (some containers) leaves behind for ever.
qtop_group_alive() {
	qtop_group=$1
	for qtop_stat in /proc/[0-9]*/stat; do
		read -r qtop_line < "$qtop_stat" 2>/dev/null || continue
		qtop_line=${qtop_line##*) }
		set -- $qtop_line
		[ "$3" = "$qtop_group" ] || continue
		[ "$1" = Z ] || [ "$1" = X ] || return 0
	done
	return 1
}
