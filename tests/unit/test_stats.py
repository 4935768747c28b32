import json
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtop.stats.quantiles import EXACT_LIMIT, SKETCH_ACCURACY, RunningStats, percentile
from qtop.stats.series import Series


def reference_percentile(values, q):
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def test_percentiles_of_a_known_sample():
    values = [ms / 1000 for ms in range(10, 110)]
    random.Random(1).shuffle(values)
    stats = RunningStats()
    stats.extend(values)
    assert stats.quantile(0.5) == pytest.approx(0.0595, abs=1e-12)
    assert stats.quantile(0.9) == pytest.approx(0.0991, abs=1e-12)
    assert stats.quantile(0.95) == pytest.approx(0.10405, abs=1e-12)
    assert stats.quantile(0.99) == pytest.approx(0.10801, abs=1e-12)
    assert stats.mean == pytest.approx(0.0595)
    assert stats.stdev == pytest.approx(0.0290115, rel=1e-5)
    assert (stats.minimum, stats.maximum, stats.count) == (0.01, 0.109, 100)


@given(
    st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=300), st.sampled_from([0.5, 0.95, 0.999])
)
def test_exact_mode_matches_the_reference_definition(values, q):
    stats = RunningStats()
    stats.extend(values)
    assert stats.quantile(q) == pytest.approx(reference_percentile(values, q), rel=1e-12)


def test_past_the_exact_limit_memory_is_bounded_and_error_stays_within_the_sketch_accuracy():
    rng = random.Random(3)
    values = [rng.lognormvariate(math.log(0.02), 0.3) for _ in range(EXACT_LIMIT * 5)]
    stats = RunningStats()
    stats.extend(values)
    assert not stats.is_exact
    assert len(stats.sketch.buckets) < 3000
    for q in (0.5, 0.9, 0.95, 0.99, 0.999):
        exact = reference_percentile(values, q)
        assert abs(stats.quantile(q) - exact) / exact < 2 * SKETCH_ACCURACY + 1e-3


def test_stats_snapshot_round_trips_exactly_through_json():
    stats = RunningStats()
    stats.extend([0.1, 0.2, 0.3])
    again = RunningStats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert again.to_dict() == stats.to_dict()
    again.add(0.4)
    stats.add(0.4)
    assert again.to_dict() == stats.to_dict()


def test_empty_stats_report_nan_not_zero():
    assert math.isnan(RunningStats().quantile(0.5))
    assert math.isnan(percentile([], 0.5))


def test_series_stays_bounded_and_keeps_extremes():
    series = Series(capacity=64)
    for i in range(100_000):
        series.add(float(i), 1000.0 if i == 54_321 else float(i % 10))
    assert len(series.view()) <= 64
    assert max(p.high for p in series.view()) == 1000.0
    assert sum(p.count for p in series.view()) == 100_000
    assert series.view()[0].t < 2000 and series.view()[-1].t > 98_000


def test_series_round_trip():
    series = Series(capacity=8)
    for i in range(21):
        series.add(float(i), float(i * i))
    again = Series.from_dict(json.loads(json.dumps(series.to_dict())))
    assert again.to_dict() == series.to_dict()
