# qtop device agent: the end of the launch script, after the run directory's
# files are written. Starts run.sh detached in a process group of its own and
# prints "launched <tab> RUN_DIR <tab> PGID" once run.sh has recorded it.

for qtop_file in samples events stdout err.cur cmd.pid timed_out; do
	: >"$qtop_dir/$qtop_file"
done
# An asynchronous command of a non-interactive shell starts with SIGINT
# ignored, and a shell cannot undo that, so the run would be deaf to the
# timeout's SIGINT. bash with job control (set -m), or python3, start it with
# SIGINT at its default; plain setsid is the fallback (the timeout then
# starts with SIGTERM). python3 counts only if it runs: a wrapper on the PATH
# (a pyenv shim needs bash) may not.
qtop_out="$qtop_dir/agent.err"
if command -v bash >/dev/null 2>&1 && command -v setsid >/dev/null 2>&1; then
	QTOP_SIGINT=default bash -c 'set -m; setsid "$0" "$1/run.sh" "$1" </dev/null >>"$2" 2>&1 &' \
		"$qtop_shell" "$qtop_dir" "$qtop_out"
elif python3 -c '' >/dev/null 2>&1; then
	QTOP_SIGINT=default python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])' "$qtop_shell" "$qtop_dir/run.sh" "$qtop_dir" </dev/null >>"$qtop_out" 2>&1 &
elif command -v setsid >/dev/null 2>&1; then
	QTOP_SIGINT=ignored setsid "$qtop_shell" "$qtop_dir/run.sh" "$qtop_dir" </dev/null >>"$qtop_out" 2>&1 &
elif command -v bash >/dev/null 2>&1; then
	QTOP_SIGINT=default bash -c 'set -m; "$0" "$1/run.sh" "$1" </dev/null >>"$2" 2>&1 &' \
		"$qtop_shell" "$qtop_dir" "$qtop_out"
else
	printf 'error\tthe device has no setsid, python3 or bash: the run cannot get a process group of its own, so it could not be stopped safely\n'
	exit 13
fi
qtop_i=0
while [ ! -s "$qtop_dir/pgid" ] && [ "$qtop_i" -lt 200 ]; do
	sleep 0.05
	qtop_i=$(( qtop_i + 1 ))
done
if ! read -r qtop_pgid <"$qtop_dir/pgid" || [ -z "$qtop_pgid" ]; then
	printf 'error\tthe run did not start within 10 s; see %s/agent.err\n' "$qtop_dir"
	exit 12
fi
printf 'launched\t%s\t%s\n' "$qtop_dir" "$qtop_pgid"
