import math

from hypothesis import given, settings
from hypothesis import strategies as st

from qtop.analysis.numeric import mean, stdev
from qtop.analysis.tally import Tally

# Latencies as recorded: whole microseconds, so an hour's repeat.
micro = st.integers(1, 10_000_000).map(lambda units: units / 1_000_000)
anywhere = st.floats(1e-100, 1e100) | st.floats(-1e100, -1e-100)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(micro | anywhere, min_size=1, max_size=12), st.lists(st.integers(0, 11), max_size=400)
)
def test_a_tally_gives_the_very_sort_mean_and_spread_of_a_pass_over_every_value(pool, picks):
    data = [pool[k % len(pool)] for k in picks] or pool
    tally = Tally.of(data)
    if len(set(data)) * 8 > len(data):
        assert tally is None
        return
    assert tally is not None
    ordered = sorted(data)
    assert tally.ordered() == ordered
    assert tally.mean() == mean(ordered)
    spread = tally.stdev(tally.mean())
    assert spread is None or spread == stdev(ordered, mean(ordered))


def test_no_tally_where_it_could_not_be_exact():
    repeats = [0.002] * 50 + [0.003] * 50
    assert Tally.of(repeats) is not None
    # 0.0 and -0.0 would count as one value, NaN as many; huge values overflow a product.
    assert Tally.of([*repeats, 0.0]) is None
    assert Tally.of([*repeats, -0.0]) is None
    assert Tally.of([*repeats, math.nan]) is None
    assert Tally.of([*repeats, 1e300]) is None
    assert Tally.of([]) is None
    # Values that hardly repeat: a pass over each is faster.
    assert Tally.of([k / 1000 for k in range(1, 101)]) is None
