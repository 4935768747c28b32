# qtop device agent, bash fast path: sourced only by bash 5 or later, so the
# bash-only syntax here never reaches a POSIX shell.

# `read -t` on a FIFO that nobody writes to waits without forking `sleep`.
qtop_fast_init() {
	qtop_sleep_fifo="$1/.sleep.$$"
	mkfifo "$qtop_sleep_fifo" 2>/dev/null || return 1
	exec {qtop_sleep_fd}<>"$qtop_sleep_fifo" || return 1
	rm -f "$qtop_sleep_fifo"
}

# $EPOCHREALTIME is "seconds.microseconds" with the locale's decimal point.
qtop_now_epoch() {
	now=${EPOCHREALTIME//[!0-9]/}
}

# bash runs a trap only after `read -t` returns, so long waits are cut into
# slices of at most 250 ms: a stop is noticed within one slice.
qtop_sleep_us() {
	local left=$1 slice fraction
	while (( left > 0 )) && [[ -z $qtop_stop ]]; do
		slice=$(( left > 250000 ? 250000 : left ))
		fraction=00000$(( slice % 1000000 ))
		read -r -t "$(( slice / 1000000 )).${fraction: -6}" -u "$qtop_sleep_fd" qtop_void
		left=$(( left - slice ))
	done
}
