# shellcheck shell=sh
# shellcheck disable=SC2154 # lib.sh, which sets these variables, is sent before this file
# qtop device agent: what `qtop probe` asks beyond probe.sh, once, on request.
# Usage: inspect.sh SYSFS_ROOT WORKDIR WINDOW_MS INTERVAL_MS [FILE...]
# Prints tab-separated records: the shell running this script, the QNN/Genie
# tools (on PATH or in WORKDIR) with qnn-net-run's version, every hwmon device
# under the sysfs root, the processes that hold the NPU, then FILE... read
# every INTERVAL_MS for WINDOW_MS, at least once (one `w` line per read: uptime
# in µs, then each file's value), so the host can see how often each sensor
# changes.
# Forks are fine here: this runs once and never during a measurement. Records
# and their escaped fields are lib.sh's qtop_record.

qtop_root=$1
qtop_workdir=$2
qtop_window_ms=$3
qtop_interval_ms=$4
shift 4
if qtop_expand_variable "$qtop_root"; then
	qtop_root=${qtop_expanded%/}
else
	qtop_root=/nonexistent
fi

qtop_record shell "$(readlink /proc/$$/exe 2>/dev/null)"

for qtop_tool in qnn-net-run qnn-profile-viewer genie-t2t-run; do
	qtop_path=
	if [ -n "$qtop_workdir" ] && [ -x "$qtop_workdir/$qtop_tool" ] && [ ! -d "$qtop_workdir/$qtop_tool" ]; then
		qtop_path=$qtop_workdir/$qtop_tool
	else
		qtop_path=$(command -v "$qtop_tool" 2>/dev/null)
	fi
	qtop_record tool "$qtop_tool" "$qtop_path"
	if [ "$qtop_tool" = qnn-net-run ] && [ -n "$qtop_path" ]; then
		qtop_timeout=
		command -v timeout >/dev/null 2>&1 && qtop_timeout="timeout 10"
		$qtop_timeout "$qtop_path" --version </dev/null 2>&1 | head -n 4 | while IFS= read -r qtop_line; do
			qtop_record version "$qtop_tool" "$qtop_line"
		done
	fi
done

for qtop_dir in "$qtop_root"/class/hwmon/hwmon*; do
	[ -d "$qtop_dir" ] || continue
	qtop_name=
	read -r qtop_name 2>/dev/null <"$qtop_dir/name"
	qtop_inputs=
	for qtop_file in "$qtop_dir"/*_input; do
		[ -e "$qtop_file" ] || continue
		qtop_inputs=$qtop_inputs${qtop_inputs:+,}${qtop_file##*/}
	done
	qtop_record hwmon "$qtop_dir" "$qtop_name" "$qtop_inputs"
done

# The NPU is exclusive: a process of an HTP tool, or any process with a FastRPC
# handle on the CDSP open, would make a new run fail to create its context.
qtop_scanned=0
qtop_hidden=0
for qtop_proc in /proc/[0-9]*; do
	qtop_pid=${qtop_proc#/proc/}
	[ "$qtop_pid" != "$$" ] || continue
	qtop_comm=
	read -r qtop_comm 2>/dev/null <"$qtop_proc/comm" || continue
	qtop_scanned=$((qtop_scanned + 1))
	[ -r "$qtop_proc/fd" ] && [ -x "$qtop_proc/fd" ] || qtop_hidden=$((qtop_hidden + 1))
	case $qtop_comm in
	qnn-net-run | genie-t2t-run | qnn-throughput-* | snpe-net-run)
		qtop_record npu "$qtop_pid" "$qtop_comm" tool
		;;
	esac
done
qtop_pid=
# shellcheck disable=SC2012 # the link targets are what is read; toybox's find has no -printf
ls -l /proc/[0-9]*/fd 2>/dev/null | while IFS= read -r qtop_line; do
	case $qtop_line in
	/proc/*/fd:)
		qtop_pid=${qtop_line#/proc/}
		qtop_pid=${qtop_pid%/fd:}
		;;
	*'-> /dev/fastrpc-cdsp'*)
		if [ -n "$qtop_pid" ]; then
			qtop_comm=
			read -r qtop_comm 2>/dev/null <"/proc/$qtop_pid/comm"
			qtop_record npu "$qtop_pid" "$qtop_comm" fastrpc
			qtop_pid=
		fi
		;;
	esac
done
qtop_record npu_scan "$qtop_scanned" "$qtop_hidden"

# At least one read, so a window of 0 still gives the current values. Times
# stay text and only differences are computed: mksh's arithmetic is 32-bit.
qtop_now_uptime
qtop_s0=$qtop_s
qtop_f0=$qtop_f
qtop_pause=$((qtop_interval_ms / 1000)).$(printf '%03d' $((qtop_interval_ms % 1000)))
while [ "$#" -gt 0 ]; do
	qtop_line=w$T$now
	for qtop_file in "$@"; do
		qtop_value=
		read -r qtop_value 2>/dev/null <"$qtop_file"
		qtop_esc "$qtop_value"
		qtop_line=$qtop_line$T$qtop_e
	done
	qtop_put "$qtop_line"
	qtop_ms_between "$qtop_s" "$qtop_f" "$qtop_s0" "$qtop_f0"
	[ "$qtop_d" -lt "$qtop_window_ms" ] || break
	sleep "$qtop_pause"
	qtop_now_uptime
done
qtop_record end
