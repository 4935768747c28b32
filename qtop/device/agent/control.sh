# qtop device agent: run control, appended to lib.sh and run by `sh -s`.
# Usage: control.sh leftovers SPOOL_DIR | stop RUN_DIR GRACE_TENTHS |
#        sizes RUN_DIR | advance RUN_DIR VARIANT | remove RUN_DIR

qtop_sizes() {
	for qtop_file in samples events stdout; do
		printf 'size\t%s\t%s\n' "$qtop_file" "$(wc -c <"$1/$qtop_file")"
	done
}

# Runs whose state says running and whose process group still has a live
# process. Leftovers from a crashed or detached qtop hold the NPU.
qtop_leftovers() {
	for qtop_run in "$1"/*/; do
		qtop_run=${qtop_run%/}
		[ -r "$qtop_run/pgid" ] && [ -r "$qtop_run/state" ] || continue
		read -r qtop_state <"$qtop_run/state"
		read -r qtop_pgid <"$qtop_run/pgid"
		[ "$qtop_state" = running ] && [ -n "$qtop_pgid" ] || continue
		qtop_group_alive "$qtop_pgid" || continue
		qtop_started=
		qtop_profile=
		while IFS="$T" read -r qtop_key qtop_value; do
			case $qtop_key in
			started) qtop_started=$qtop_value ;;
			profile) qtop_profile=$qtop_value ;;
			esac
		done <"$qtop_run/meta"
		printf 'run\t%s\t%s\t%s\t%s\n' "${qtop_run##*/}" "$qtop_pgid" "$qtop_started" "$qtop_profile"
	done
}

# TERM the whole group, give it GRACE_TENTHS tenths of a second, then KILL;
# then check that no process of the group is left.
qtop_stop_run() {
	if ! read -r qtop_pgid <"$1/pgid" || [ -z "$qtop_pgid" ]; then
		printf 'error\tno process group recorded in %s\n' "$1"
		return 3
	fi
	qtop_how=none
	if qtop_group_alive "$qtop_pgid"; then
		qtop_how=TERM
		kill -s TERM -- "-$qtop_pgid" 2>/dev/null || kill -TERM "-$qtop_pgid" 2>/dev/null
		qtop_i=0
		while qtop_group_alive "$qtop_pgid" && [ "$qtop_i" -lt "$2" ]; do
			sleep 0.1
			qtop_i=$(( qtop_i + 1 ))
		done
		if qtop_group_alive "$qtop_pgid"; then
			qtop_how=KILL
			kill -s KILL -- "-$qtop_pgid" 2>/dev/null || kill -KILL "-$qtop_pgid" 2>/dev/null
			sleep 0.2
		fi
	fi
	if qtop_group_alive "$qtop_pgid"; then
		printf 'alive\t%s\n' "$qtop_pgid"
		return 4
	fi
	read -r qtop_state <"$1/state"
	[ "$qtop_state" != running ] || printf 'stopped\n' >"$1/state"
	printf 'stopped\t%s\t%s\n' "$qtop_pgid" "$qtop_how"
	qtop_sizes "$1"
}

case $1 in
leftovers) qtop_leftovers "$2" ;;
stop) qtop_stop_run "$2" "$3" ;;
sizes) qtop_sizes "$2" ;;
advance) : >"$2/advance.$3" ;;
remove) [ -r "$2/pgid" ] && rm -rf "$2" ;;
*)
	printf 'error\tunknown control command %s\n' "$1"
	exit 2
	;;
esac
