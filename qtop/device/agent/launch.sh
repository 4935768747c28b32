# shellcheck shell=sh
# qtop device agent: the end of the launch script, after lib.sh, the run's
# variables (qtop_dir, qtop_shell) and its files. Starts run.sh detached in a
# session and process group of its own and prints "launched DIR PGID HOW" once
# run.sh has recorded its group. The run's token is not exported here: run.sh
# takes it from its file, so no process of the launch carries it.

# shellcheck disable=SC2154 # qtop_dir and qtop_shell come before this file
for qtop_file in samples events stdout err.cur cmd.pid timed_out; do
	: >"$qtop_dir/$qtop_file"
done
qtop_out="$qtop_dir/agent.err"

# An asynchronous command of a non-interactive shell starts with SIGINT
# ignored, and a shell cannot undo that, so the run would be deaf to the
# timeout's SIGINT. A shell with job control (set -m: bash, mksh) starts its
# job in a process group of its own with SIGINT at its default, and setsid
# then gives it a session of its own; python3 can do both itself. Plain
# setsid is the fallback (the timeout then starts with SIGTERM). python3 counts
# only if it runs: a wrapper on the PATH (a pyenv shim needs bash) may not.
qtop_jc=
for qtop_c in bash mksh sh; do
	command -v "$qtop_c" >/dev/null 2>&1 || continue
	if "$qtop_c" -c 'set -m 2>/dev/null; case $- in *m*) exit 0 ;; esac; exit 1' </dev/null >/dev/null 2>&1; then
		qtop_jc=$qtop_c
		break
	fi
done
qtop_setsid=
command -v setsid >/dev/null 2>&1 && qtop_setsid=setsid
if [ -n "$qtop_jc" ] && [ -n "$qtop_setsid" ]; then
	qtop_how="$qtop_jc job control and setsid"
	# shellcheck disable=SC2016 # expanded by the job-control shell
	QTOP_SIGINT=default "$qtop_jc" -c 'set -m; setsid "$0" "$1/run.sh" "$1" </dev/null >>"$2" 2>&1 &' \
		"$qtop_shell" "$qtop_dir" "$qtop_out"
elif python3 -c '' >/dev/null 2>&1; then
	qtop_how="python3 setsid"
	QTOP_SIGINT=default python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])' "$qtop_shell" "$qtop_dir/run.sh" "$qtop_dir" </dev/null >>"$qtop_out" 2>&1 &
elif [ -n "$qtop_jc" ]; then
	qtop_how="$qtop_jc job control"
	# shellcheck disable=SC2016 # expanded by the job-control shell
	QTOP_SIGINT=default "$qtop_jc" -c 'set -m; "$0" "$1/run.sh" "$1" </dev/null >>"$2" 2>&1 &' \
		"$qtop_shell" "$qtop_dir" "$qtop_out"
elif [ -n "$qtop_setsid" ]; then
	qtop_how="setsid (SIGINT ignored)"
	QTOP_SIGINT=ignored setsid "$qtop_shell" "$qtop_dir/run.sh" "$qtop_dir" </dev/null >>"$qtop_out" 2>&1 &
else
	qtop_record error "the device has no setsid, python3, or shell with job control: the run cannot get a process group of its own, so it could not be stopped safely"
	exit 13
fi
qtop_i=0
while [ ! -s "$qtop_dir/pgid" ] && [ ! -s "$qtop_dir/launch.err" ] && [ "$qtop_i" -lt 200 ]; do
	sleep 0.05
	qtop_i=$((qtop_i + 1))
done
qtop_pgid=
read -r qtop_pgid 2>/dev/null <"$qtop_dir/pgid"
if ! qtop_pgid_ok "$qtop_pgid"; then
	qtop_why="did not start within 10 s"
	[ ! -s "$qtop_dir/launch.err" ] || qtop_why="did not get a process group of its own ($(cat "$qtop_dir/launch.err"))"
	qtop_record error "the run $qtop_why (started with $qtop_how); see $qtop_out"
	exit 12
fi
qtop_record launched "$qtop_dir" "$qtop_pgid" "$qtop_how"
