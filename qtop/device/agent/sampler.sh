# qtop device agent: the sampler. Usage: sampler.sh RUN_DIR
# One S line per tick: every configured file read with the `read` builtin
# (tick.sh, generated per run), values tab-separated, empty when unreadable.
# Ticks are due at start + slot * interval; a slot is skipped only when a
# whole interval was lost, and the host sees the skipped slot numbers.

qtop_dir=$1
. "$qtop_dir/lib.sh"
. "$qtop_dir/plan.sh"
. "$qtop_dir/tick.sh"
qtop_load_fast_path "$qtop_dir"
exec >>"$qtop_dir/samples" 2>/dev/null
trap 'qtop_stop=1' TERM INT HUP

if [ "$qtop_fast" = bash ]; then
	qtop_snow() { qtop_now_epoch; }
	qtop_emit_clock epoch
else
	qtop_snow() { qtop_now_uptime; }
	qtop_emit_clock uptime
fi

qtop_snow
qtop_start=$now
qtop_slot=0
while [ -z "$qtop_stop" ]; do
	l=
	qtop_tick
	printf 'S\t%s\t%s\t%s%s\n' "$qtop_seq" "$now" "$qtop_slot" "$l"
	qtop_seq=$(( qtop_seq + 1 ))
	qtop_snow
	qtop_next=$(( (now - qtop_start) / QTOP_INTERVAL_US ))
	[ "$qtop_next" -gt "$qtop_slot" ] || qtop_next=$(( qtop_slot + 1 ))
	qtop_slot=$qtop_next
	qtop_wait=$(( qtop_start + qtop_slot * QTOP_INTERVAL_US - now ))
	[ "$qtop_wait" -le 0 ] || qtop_sleep_us "$qtop_wait"
	qtop_snow
done
qtop_snow
qtop_emit Q ""
