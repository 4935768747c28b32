from qtop.device.probe import parse_probe
from qtop.device.sensors import plan_sensors
from qtop.events import Iteration, Link, Log, PhaseChange, Sample
from qtop.live.translate import Translator
from qtop.profiles import DeviceProfile

PROBE = "root\t/s\nzone\t/s/z0\tnsp-0\t40000\nend\n"


def translator():
    sensors = plan_sensors(parse_probe(PROBE), DeviceProfile(cpufreq="none"))
    return Translator(sensors, ("w8a8", "w8a16"), 0.1, run_dir="/tmp/r", now=lambda: 5.0)


def test_samples_are_placed_on_the_uptime_line_and_never_counted_twice():
    tr = translator()
    assert tr.samples_line("K\t0\t1000\tepoch\t600\t1\tread\t64") == []
    first = tr.samples_line("S\t1\t100600\t0\t41000\t")
    assert first == [
        Sample(
            t=0.1002, host_t=5.0, seq=0, values={"thermal/nsp-0": 41.0, "memory/command_rss": None}
        )
    ]
    assert tr.samples_line("S\t1\t100600\t0\t41000\t") == []
    assert tr.counts["duplicates_dropped"] == 1
    assert tr.samples_line("S\t2\t200600\t1\t41100\t")[0].seq == 1


def test_a_sampler_that_fell_behind_is_a_gap_with_its_extent():
    tr = translator()
    tr.samples_line("K\t0\t0\tuptime\t0\t10000\tsleep\t64")
    tr.samples_line("S\t1\t1000000\t0\t41000\t")
    events = tr.samples_line("S\t2\t1500000\t5\t41000\t")
    gap, sample = events
    assert gap == Link(
        t=1.5,
        host_t=5.0,
        state="gap",
        detail="the sampler fell behind on the device: 4 tick(s) not taken",
        gap_from=1.0,
        gap_to=1.5,
    )
    assert sample.seq == 1
    assert tr.counts["missed_ticks"] == 4


def test_missing_lines_are_a_gap_too():
    tr = translator()
    tr.samples_line("K\t0\t0\tuptime\t0\t10000\tsleep\t64")
    tr.samples_line("S\t1\t1000000\t0\t1\t")
    gap, sample = tr.samples_line("S\t4\t1300000\t3\t1\t")
    assert gap.state == "gap" and gap.detail.startswith("2 line(s)")
    assert sample.seq == 3
    assert tr.counts["gaps"] == 1 and tr.counts["lost_lines"] == 2
    assert "missed_ticks" not in tr.counts


def test_process_lines_become_iterations_net_of_the_timer_overhead():
    tr = translator()
    tr.events_line("K\t0\t0\tepoch\t-1000000\t1\tread\t64")
    (log,), _ = tr.events_line("C\t1\t2000000\t300,100,200")
    assert log.stream == "agent" and log.text.startswith("timer_overhead_s=0.000200000 ")
    (phase,), _ = tr.events_line("P\t2\t2000100\tmeasure\t2\t10\t\t")
    assert phase == PhaseChange(
        t=1.0001, host_t=5.0, phase="measure", variant="w8a16", planned_iterations=10
    )
    (stderr,), _ = tr.events_line("E\t3\t3000000\t0\tno such file")
    assert stderr == Log(t=2.0, host_t=5.0, seq=1, stream="stderr", text="no such file")
    events, process = tr.events_line("I\t4\t3000000\t0\tmeasure\t2\t0\t2500000\t3000000\t1\t0\t")
    assert events == [] and process is not None
    # Not marked as seen until committed: a reconnect may hand it over again.
    assert tr.events_line("I\t4\t3000000\t0\tmeasure\t2\t0\t2500000\t3000000\t1\t0\t")[1] == process
    iteration = tr.iteration(tr.process_exit(process))
    assert tr.commit_process(process) == []
    assert iteration == Iteration(
        t=2.0,
        host_t=5.0,
        seq=0,
        index=0,
        phase="measure",
        variant="w8a16",
        start=1.5,
        end=2.0,
        latency_s=0.4998,
        exit_status=1,
        error="no such file",
        latency_uncertainty_s=0.0001,
    )
    assert tr.events_line("I\t4\t3000000\t0\tmeasure\t2\t0\t2500000\t3000000\t1\t0\t")[1] is None


def test_a_paced_iteration_is_late_from_its_arrival_and_misses_by_its_deadline():
    sensors = plan_sensors(parse_probe(PROBE), DeviceProfile(cpufreq="none"))
    tr = Translator(sensors, ("",), 0.1, now=lambda: 5.0, deadline_s=0.1)
    tr.events_line("K\t0\t0\tepoch\t-1000000\t1\tread\t64")
    tr.events_line("C\t1\t2000000\t1000,1000,1000")

    def paced(seq: int, start: int, end: int, scheduled: int | str, status: int = 0) -> Iteration:
        fields = (seq, end, seq, "measure", 1, seq, start, end, status, 0, scheduled)
        line = "I\t" + "\t".join(map(str, fields))
        _, process = tr.events_line(line)
        iteration = tr.iteration(tr.process_exit(process))
        tr.commit_process(process)
        return iteration

    # Arrived at 2.0 s, started 30 ms later, 61 ms of work (60 ms net of the timer).
    on_time = paced(2, 3030000, 3091000, 3000000)
    assert (on_time.scheduled, on_time.lateness_s, on_time.missed) == (2.0, 0.03, False)
    # 20 ms more queueing: its response is 110 ms after its arrival, past the deadline.
    late = paced(3, 3150000, 3211000, 3100000)
    assert (late.lateness_s, late.missed) == (0.05, True)
    # A failed iteration delivered nothing by its deadline.
    assert paced(4, 3200000, 3201000, 3200000, status=1).missed is True
    # Not paced: no schedule, and nothing missed.
    unpaced = paced(5, 3300000, 3301000, "")
    assert (unpaced.scheduled, unpaced.lateness_s, unpaced.missed) == (None, None, None)


def test_malformed_lines_are_refused_with_a_counted_warning():
    tr = translator()
    (warning,), process = tr.events_line("garbage")
    assert process is None and warning.level == "warning" and "'garbage'" in warning.text
    (warning,) = tr.samples_line("S\tx")
    assert "samples file" in warning.text
    # A forged end line with an extra field, or a bad escape, is refused whole.
    assert tr.events_line("X\t0\t1\tcompleted\t0\t0\t\textra")[1] is None
    assert tr.events_line("L\t0\t1\twarning\tbad \\q escape")[0][0].level == "warning"
    assert tr.run_end is None and tr.last_seq["events"] == -1
    assert tr.counts["malformed_lines"] == 4


def test_after_ten_warnings_malformed_lines_are_only_counted():
    tr = translator()
    warnings = [event for n in range(25) for event in tr.samples_line(f"S\t{n}\tno time")]
    assert len(warnings) == 10 and "only counted" in warnings[-1].text
    assert tr.end_event("failed", "").counts["malformed_lines"] == 25


def test_a_sample_line_with_the_wrong_number_of_values_is_malformed():
    tr = translator()
    tr.samples_line("K\t0\t0\tuptime\t0\t10000\tsleep\t64")
    assert [e.kind for e in tr.samples_line("S\t1\t10\t0\t41000\t\t7")] == ["log"]
    assert tr.counts["samples"] == 0


def test_recalibration_moves_the_overhead_and_its_spread():
    tr = translator()
    tr.events_line("K\t0\t0\tepoch\t0\t1\tread\t64")
    tr.events_line("C\t1\t10\t" + ",".join(["1000"] * 21))
    assert tr.overhead_s == 0.001 and tr.overhead_spread_s == 0.0
    (log,), _ = tr.events_line("C\t2\t20\t" + ",".join(["3000"] * 15))
    # The window keeps the latest 21: 6 old and 15 new.
    assert tr.overhead_s == 0.003 and tr.overhead_spread_s == 0.001
    assert log.text.startswith("timer_overhead_s=0.003000000 +-0.001000000 (recalibrated")


def test_a_later_clock_line_moves_the_clock_and_keeps_samples_contiguous():
    tr = translator()
    tr.samples_line("K\t0\t1000000\tepoch\t5000000\t1\tread\t64")
    first = tr.samples_line("S\t1\t1100000\t0\t41000\t")[0]
    # The wall clock stepped back by an hour; the sampler says where it stands now.
    tr.samples_line("K\t2\t-3598800000\tepoch\t5200000\t1\tread\t64")
    second = tr.samples_line("S\t3\t-3598700000\t1\t41000\t")[-1]
    assert (first.seq, first.t) == (0, 5.1)
    assert (second.seq, second.t) == (1, 5.3)
    assert tr.counts["clock_resyncs"] == 1 and "gaps" not in tr.counts
