# shellcheck shell=sh
# shellcheck disable=SC2154 # lib.sh, which sets these variables, is sent before this file
# qtop device agent: the probe, run once per connection before anything is
# launched. Usage: probe.sh SYSFS_ROOT SPOOL_DIR [METER_PATH...]
# Prints tab-separated records: who the device is (id), what its shell and
# tools can do (cap), and every sensor under the sysfs root. SYSFS_ROOT is the
# directory that stands for /sys (/sys itself on a board): zones, supplies,
# cpufreq and the SoC's identity are read under it, and so is a meter path
# under /sys; a meter path elsewhere is read as it is. Forks are fine here;
# nothing in this file runs per tick. Records and their escaped fields are
# lib.sh's qtop_record.

qtop_read() {
	qtop_value=
	read -r qtop_value 2>/dev/null <"$1"
}

# A root of "$NAME/rest" is taken from the device's environment (the host
# has checked that NAME is a plain variable name).
qtop_root=$1
qtop_spool=$2
shift 2
if qtop_expand_variable "$qtop_root"; then
	qtop_root=$qtop_expanded
else
	qtop_record error sysfs_root "\$$qtop_name is not set in the device's environment"
	qtop_root=/nonexistent
fi
qtop_root=${qtop_root%/}
qtop_record root "${qtop_root:-/}"
[ -d "$qtop_root/class" ] || qtop_record error sysfs_class "${qtop_root:-/} has no class/ directory"

qtop_read /proc/sys/kernel/hostname
[ -n "$qtop_value" ] || qtop_value=$(hostname 2>/dev/null)
qtop_record id hostname "$qtop_value"
qtop_record id uname "$(uname -a 2>/dev/null)"
for qtop_file in machine soc_id family revision; do
	qtop_read "$qtop_root/devices/soc0/$qtop_file"
	[ -z "$qtop_value" ] || qtop_record id "soc_$qtop_file" "$qtop_value"
done
for qtop_file in "$qtop_root/firmware/devicetree/base/model" /proc/device-tree/model; do
	qtop_read "$qtop_file"
	if [ -n "$qtop_value" ]; then
		qtop_record id model "$qtop_value"
		break
	fi
done
qtop_timeout=
command -v timeout >/dev/null 2>&1 && qtop_timeout="timeout 10"
if command -v qnn-net-run >/dev/null 2>&1; then
	$qtop_timeout qnn-net-run --version </dev/null 2>&1 | head -n 4 | while IFS= read -r qtop_line; do
		qtop_record id qnn "$qtop_line"
	done
fi
[ -z "${QNN_SDK_ROOT:-}" ] || qtop_record id qnn_sdk_root "$QNN_SDK_ROOT"

if command -v bash >/dev/null 2>&1; then
	qtop_record cap bash "$(command -v bash)" "$(bash -c 'echo "${BASH_VERSINFO[0]}"' 2>/dev/null)" \
		"$(bash -c 'echo "$BASH_VERSION"' 2>/dev/null)"
fi
for qtop_tool in setsid tail mksh; do
	command -v "$qtop_tool" >/dev/null 2>&1 && qtop_record cap "$qtop_tool" "$(command -v "$qtop_tool")"
done
# As launch.sh decides: a python3 that does not run (a shim needing bash) is none.
python3 -c '' >/dev/null 2>&1 && qtop_record cap python3 "$(command -v python3)"
qtop_d=$(date +%s%N 2>/dev/null)
case $qtop_d in
'' | *[!0-9]*) qtop_record cap date_ns 0 ;;
*) qtop_record cap date_ns 1 ;;
esac
tail -s 0.1 -c +1 /dev/null >/dev/null 2>&1 && qtop_record cap tail_sleep 1
# mksh (Android's sh) computes in 32 bits: microsecond timestamps overflow it.
if [ "$(( 2147483647 + 1 ))" -gt 0 ] 2>/dev/null; then
	qtop_record cap arith 64
else
	qtop_record cap arith 32
fi
qtop_record cap pagesize "$(getconf PAGESIZE 2>/dev/null || echo 4096)"
[ -r /proc/uptime ] && qtop_record cap uptime 1
# Whether NTP has set the wall clock yet, where systemd can say (timedatectl asks
# the kernel): the run takes a step off its own times, but the dates the device
# writes itself jump. Anything but yes or no (no systemd) says nothing.
if command -v timedatectl >/dev/null 2>&1; then
	qtop_value=$($qtop_timeout timedatectl show -p NTPSynchronized --value </dev/null 2>/dev/null)
	case $qtop_value in
	yes | no) qtop_record cap clock_synced "$qtop_value" ;;
	esac
fi
if qtop_spool_ready "$qtop_spool"; then
	qtop_record cap spool "$qtop_spool"
else
	qtop_record error spool_dir "$qtop_error"
fi

for qtop_dir in "$qtop_root"/class/thermal/thermal_zone*; do
	[ -d "$qtop_dir" ] || continue
	qtop_read "$qtop_dir/type"
	qtop_type=$qtop_value
	qtop_read "$qtop_dir/temp"
	qtop_record zone "$qtop_dir" "$qtop_type" "$qtop_value"
	for qtop_file in "$qtop_dir"/trip_point_*_type; do
		[ -e "$qtop_file" ] || continue
		qtop_trip=${qtop_file%_type}
		qtop_read "$qtop_file"
		qtop_trip_type=$qtop_value
		qtop_read "${qtop_trip}_temp"
		qtop_trip_temp=$qtop_value
		qtop_read "${qtop_trip}_hyst"
		qtop_record trip "$qtop_dir" "${qtop_trip##*trip_point_}" "$qtop_trip_type" "$qtop_trip_temp" "$qtop_value"
	done
done
for qtop_dir in "$qtop_root"/class/thermal/cooling_device*; do
	[ -d "$qtop_dir" ] || continue
	qtop_read "$qtop_dir/type"
	qtop_type=$qtop_value
	qtop_read "$qtop_dir/max_state"
	qtop_max=$qtop_value
	qtop_read "$qtop_dir/cur_state"
	qtop_record cooling "$qtop_dir" "$qtop_type" "$qtop_max" "$qtop_value"
done
for qtop_dir in "$qtop_root"/class/power_supply/*; do
	[ -d "$qtop_dir" ] || continue
	qtop_read "$qtop_dir/type"
	qtop_files=
	for qtop_file in status current_now voltage_now power_now charge_counter; do
		[ ! -e "$qtop_dir/$qtop_file" ] || qtop_files=$qtop_files${qtop_files:+,}$qtop_file
	done
	qtop_record supply "$qtop_dir" "${qtop_dir##*/}" "$qtop_value" "$qtop_files"
done
# Android ODPM power monitors: cumulative energy per rail since boot (energy_value:
# a timestamp line, then one line per rail), and which subsystem each rail feeds.
for qtop_dir in "$qtop_root"/bus/iio/devices/iio:device*; do
	[ -r "$qtop_dir/energy_value" ] || continue
	qtop_read "$qtop_dir/name"
	qtop_record odpm "$qtop_dir" "$qtop_value"
	while IFS= read -r qtop_line || [ -n "$qtop_line" ]; do
		qtop_record odpm_line "$qtop_dir" "$qtop_line"
	done <"$qtop_dir/energy_value"
	[ -r "$qtop_dir/enabled_rails" ] || continue
	while IFS= read -r qtop_line || [ -n "$qtop_line" ]; do
		qtop_record odpm_rail "$qtop_dir" "$qtop_line"
	done <"$qtop_dir/enabled_rails"
done
for qtop_dir in "$qtop_root"/devices/system/cpu/cpufreq/policy*; do
	[ -d "$qtop_dir" ] || continue
	qtop_read "$qtop_dir/scaling_cur_freq"
	qtop_record cpufreq "$qtop_dir" "${qtop_dir##*/}" "$qtop_value"
done
for qtop_file in "$@"; do
	case $qtop_file in
	/sys | /sys/*) qtop_file=$qtop_root${qtop_file#/sys} ;;
	esac
	qtop_read "$qtop_file"
	qtop_record meter "$qtop_file" "$qtop_value"
done
qtop_record end
