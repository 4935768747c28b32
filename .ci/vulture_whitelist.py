"""Names vulture cannot see being used (`vulture`, configured in pyproject.toml).

Each is read by something outside the code vulture reads: a serialiser, a framework,
a protocol, or pytest's fixture injection.
"""

# Result fields: the reports' JSON documents are their dataclasses, field by field.
_.stdev_s  # qtop/analysis/latency.py
_.lag_window  # qtop/analysis/numeric.py
_.worst_p50_s  # qtop/analysis/thermal.py
_.n_base  # qtop/analysis/variability.py
_.n_new  # qtop/analysis/variability.py
_.op_cycles  # qtop/profiling/aggregate.py
_.op_wait_cycles  # qtop/profiling/aggregate.py
_.warm_load_times_us  # qtop/profiling/model.py
_.hub_name  # qtop/profiling/against.py
# An event field: encoded into every recording and read back by msgspec.
_.latency_uncertainty_s  # qtop/events.py
# argparse reads it: negative numbers are values, not options.
_._negative_number_matcher  # qtop/commands/_live_options.py
# adb's shell protocol v2 packet ids, the whole table (the simulator never sends this one).
_.WINDOW_SIZE  # qtop/sim/adb_wire.py
# The arguments of __exit__, whatever the body needs of them.
_.exc_info
_.exc_type
# A fixture requested for its effect (monkeypatched keyframe limits).
_.frequent_keyframes  # tests/unit/test_recording_format.py
# The one fixture file qtop must refuse to read as a profile.
_.REFUSED  # tests/parsers/profiler_fixtures.py
# reprlib reads its Repr's limits.
_.maxlevel
_.maxstring
_.maxother
_.maxlist
_.maxdict
_.maxtuple
