# shellcheck shell=sh
# shellcheck disable=SC2154 # lib.sh, which sets these variables, is sent before this file
# qtop device agent: run control, appended to lib.sh and run by `sh -s`.
# Usage: control.sh leftovers SPOOL_DIR | stop RUN_DIR GRACE_TENTHS |
#        sizes RUN_DIR | status RUN_DIR | advance RUN_DIR VARIANT | remove RUN_DIR
# Answers are records (lib.sh's qtop_record): KIND then escaped fields. No
# process is signalled unless it is of a run this user's qtop started.

qtop_sizes() {
	for qtop_file in samples events stdout; do
		qtop_size_of "$1/$qtop_file"
		qtop_record size "$qtop_file" "$qtop_size"
	done
}

qtop_kill_group() {
	kill -s "$1" -- "-$2" 2>/dev/null || kill -s "$1" "-$2" 2>/dev/null
}

# Runs whose state says running and whose process group still has a live
# process carrying the run's token. Leftovers from a crashed or detached
# qtop hold the NPU.
qtop_leftovers() {
	if ! qtop_spool_check "$1"; then
		qtop_record error "$qtop_error"
		return 3
	fi
	for qtop_run in "$1"/*/; do
		qtop_run=${qtop_run%/}
		if [ ! -d "$qtop_run" ] || [ -L "$qtop_run" ] || [ ! -O "$qtop_run" ]; then
			continue
		fi
		qtop_token=
		qtop_state=
		qtop_pgid=
		read -r qtop_token 2>/dev/null <"$qtop_run/token"
		read -r qtop_state 2>/dev/null <"$qtop_run/state"
		read -r qtop_pgid 2>/dev/null <"$qtop_run/pgid"
		[ "$qtop_state" = running ] || continue
		qtop_group_is_run "$qtop_pgid" "$qtop_token" || continue
		qtop_started=
		qtop_profile=
		while IFS="$T" read -r qtop_key qtop_value; do
			case $qtop_key in
			started) qtop_started=$qtop_value ;;
			profile) qtop_profile=$qtop_value ;;
			esac
		done <"$qtop_run/meta"
		qtop_record run "${qtop_run##*/}" "$qtop_pgid" "$qtop_started" "$qtop_profile"
	done
}

# The sampler's children in group $2 get SIGTERM. A sampler that forks `sleep`
# (dash) and takes its TERM after its last look at it, just before a fork,
# sleeps a whole interval more (up to 1000 s): with its runner alive, the
# runner ends that sleep; with the runner gone, this does, every round of a
# stop. Only processes of the run's group, whose parent is its sampler.
qtop_end_sampler_sleeps() {
	qtop_sampler=
	read -r qtop_sampler 2>/dev/null <"$1/sampler.pid"
	qtop_pgid_ok "$qtop_sampler" || return 0
	qtop_group=$2
	for qtop_stat in /proc/[0-9]*/stat; do
		read -r qtop_line 2>/dev/null <"$qtop_stat" || continue
		qtop_pid=${qtop_line%% *}
		qtop_line=${qtop_line##*) }
		# shellcheck disable=SC2086 # the fields after the command name are words
		set -- $qtop_line
		[ "$2" = "$qtop_sampler" ] && [ "$3" = "$qtop_group" ] && kill -TERM "$qtop_pid" 2>/dev/null
	done
	return 0
}

# This user's processes, but pid 1 and this shell, that carry the run's token
# $1, in qtop_found: after the group is empty, what the command started in a
# session of its own (a daemon) and so out of reach of `kill -- -PGID`. One
# grep over every environment, then an exact look at each it names.
qtop_token_stragglers() {
	qtop_found=
	# shellcheck disable=SC2013 # grep prints /proc/PID/environ names, one word each
	for qtop_file in $(grep -lF -e "QTOP_RUN_TOKEN=$1" /proc/[0-9]*/environ 2>/dev/null); do
		qtop_pid=${qtop_file#/proc/}
		qtop_pid=${qtop_pid%/environ}
		if ! qtop_pgid_ok "$qtop_pid" || [ "$qtop_pid" = $$ ]; then
			continue
		fi
		if qtop_carries_token "$qtop_pid" "$1"; then
			qtop_found="$qtop_found $qtop_pid"
		fi
	done
}

# TERM (and CONT) the stragglers carrying token $1, up to a second, then KILL.
qtop_end_stragglers() {
	qtop_token_stragglers "$1"
	[ -n "$qtop_found" ] || return 0
	# shellcheck disable=SC2086 # one field a pid
	qtop_record stragglers $qtop_found
	# shellcheck disable=SC2086 # pids
	kill -TERM $qtop_found 2>/dev/null
	# shellcheck disable=SC2086 # pids
	kill -CONT $qtop_found 2>/dev/null
	qtop_i=0
	while [ -n "$qtop_found" ] && [ "$qtop_i" -lt 10 ]; do
		sleep 0.1
		qtop_token_stragglers "$1"
		qtop_i=$((qtop_i + 1))
	done
	# shellcheck disable=SC2086 # pids
	[ -z "$qtop_found" ] || kill -KILL $qtop_found 2>/dev/null
}

# TERM the whole group (and CONT it: a stopped process acts on its TERM only
# once continued), give it GRACE_TENTHS tenths of a second, then KILL; then
# check that no process of the group is left, and end the run's stragglers
# outside it. The group is signalled only after qtop_group_is_run found the
# run's token in it; a group that is never empty in between cannot have been
# replaced, so the KILL needs no second look.
qtop_stop_run() {
	if ! qtop_run_dir_ok "$1"; then
		qtop_record error "$qtop_error"
		return 3
	fi
	qtop_pgid=
	read -r qtop_pgid 2>/dev/null <"$1/pgid"
	if ! qtop_pgid_ok "$qtop_pgid"; then
		qtop_record error "no usable process group recorded in $1/pgid"
		return 3
	fi
	qtop_how=none
	if qtop_group_alive "$qtop_pgid"; then
		if ! qtop_group_is_run "$qtop_pgid" "$qtop_token"; then
			qtop_record error "process group $qtop_pgid is not this run's (none of its processes carries the run's token); nothing was signalled"
			return 5
		fi
		qtop_how=TERM
		qtop_kill_group TERM "$qtop_pgid"
		qtop_kill_group CONT "$qtop_pgid"
		qtop_wake_all "$1"
		qtop_i=0
		while qtop_group_alive "$qtop_pgid" && [ "$qtop_i" -lt "$2" ]; do
			qtop_end_sampler_sleeps "$1" "$qtop_pgid"
			sleep 0.1
			qtop_i=$((qtop_i + 1))
		done
		if qtop_group_alive "$qtop_pgid"; then
			qtop_how=KILL
			qtop_kill_group KILL "$qtop_pgid"
			qtop_i=0
			while qtop_group_alive "$qtop_pgid" && [ "$qtop_i" -lt 20 ]; do
				sleep 0.1
				qtop_i=$((qtop_i + 1))
			done
		fi
	fi
	if qtop_group_alive "$qtop_pgid"; then
		qtop_record alive "$qtop_pgid"
		return 4
	fi
	qtop_end_stragglers "$qtop_token"
	read -r qtop_state <"$1/state"
	[ "$qtop_state" != running ] || qtop_put stopped >"$1/state"
	qtop_record stopped "$qtop_pgid" "$qtop_how"
	qtop_sizes "$1"
}

# The run's state and whether its runner (the group's leader, carrying the
# run's token) is alive. A runner killed from outside (the OOM killer, a
# kill -9) writes no end line: its state still says running.
qtop_status() {
	if ! qtop_run_dir_ok "$1"; then
		qtop_record error "$qtop_error"
		return 3
	fi
	qtop_state=
	qtop_pgid=
	read -r qtop_state 2>/dev/null <"$1/state"
	read -r qtop_pgid 2>/dev/null <"$1/pgid"
	qtop_runner=gone
	if qtop_runner_alive "$qtop_pgid" "$qtop_token"; then
		qtop_runner=alive
	fi
	qtop_record status "$qtop_state" "$qtop_runner"
}

# Is process $1 alive (not a zombie), the leader of group $1, and the run's
# (its environment carries token $2)? Only the builtin `read` is needed to say
# it is alive: a device without `tr` or `grep` never has a live run taken for
# a dead one, only a reused pid (a group leader of its own) for the run's shell.
qtop_runner_alive() {
	qtop_pgid_ok "$1" || return 1
	read -r qtop_line 2>/dev/null <"/proc/$1/stat" || return 1
	qtop_line=${qtop_line##*) }
	# shellcheck disable=SC2086 # the fields after the command name are words
	set -- "$1" "$2" $qtop_line
	[ "$3" != Z ] && [ "$3" != X ] && [ "$5" = "$1" ] && [ -O "/proc/$1" ] || return 1
	command -v tr >/dev/null 2>&1 && command -v grep >/dev/null 2>&1 || return 0
	qtop_carries_token "$1" "$2"
}

# A completed run's directory, once the host has everything in it. Its
# runner may still be exiting after its last line: that is waited for; a run
# still running is refused.
qtop_remove() {
	if ! qtop_run_dir_ok "$1"; then
		qtop_record error "$qtop_error"
		return 3
	fi
	read -r qtop_state 2>/dev/null <"$1/state"
	read -r qtop_pgid 2>/dev/null <"$1/pgid"
	qtop_i=0
	while qtop_group_is_run "$qtop_pgid" "$qtop_token"; do
		if [ "$qtop_state" = running ] || [ "$qtop_i" -ge 50 ]; then
			qtop_record error "the run in $1 is still running; not removed"
			return 4
		fi
		sleep 0.1
		qtop_i=$((qtop_i + 1))
	done
	rm -rf -- "$1"
	qtop_record removed "$1"
}

case $1 in
leftovers) qtop_leftovers "$2" ;;
stop) qtop_stop_run "$2" "$3" ;;
sizes) qtop_sizes "$2" ;;
status) qtop_status "$2" ;;
advance)
	case $3 in
	'' | *[!0-9]*) qtop_record error "variant $3 is not a number" ;;
	*)
		if qtop_run_dir_ok "$2"; then
			: >"$2/advance.$3"
		else
			qtop_record error "$qtop_error"
		fi
		;;
	esac
	;;
remove) qtop_remove "$2" ;;
*)
	qtop_record error "unknown control command $1"
	exit 2
	;;
esac
