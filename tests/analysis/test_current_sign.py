"""Which sign convention a gauge's current_now follows, judged against status."""

import pytest
from synthetic_streams import (
    BATTERY_CURRENT,
    BATTERY_STATUS,
    CURRENT_INFO,
    STATUS_INFO,
    back_to_back,
    stream,
    ticks,
)

from qtop.analysis.current_sign import (
    ALWAYS_POSITIVE,
    NEGATIVE_DISCHARGE,
    POSITIVE_DISCHARGE,
    UNKNOWN,
    classify,
)
from qtop.analysis.render import render_text
from qtop.analysis.session import analyze
from qtop.events import ChannelInfo

RAW = "power/battery/current_now"
RAW_INFO = ChannelInfo(id=RAW, kind="current_raw", unit="A")


def pairs(discharging: float, charging: float | None, n: int = 20):
    out = [(discharging, -1.0)] * n
    if charging is not None:
        out += [(charging, 1.0)] * n
    return out


@pytest.mark.parametrize(
    ("discharging", "charging", "convention"),
    [
        (-0.4, 0.9, NEGATIVE_DISCHARGE),  # the kernel ABI
        (-0.4, None, NEGATIVE_DISCHARGE),
        (0.4, -0.9, POSITIVE_DISCHARGE),  # qcom pm8150b-fg: Discharging +1104003
        (0.4, None, POSITIVE_DISCHARGE),  # the simulated glasses
        (0.4, 0.9, ALWAYS_POSITIVE),  # System76 EC
    ],
)
def test_each_convention_is_recognised(discharging, charging, convention):
    assert classify(pairs(discharging, charging), RAW).convention == convention


def test_a_few_disagreeing_samples_do_not_change_the_verdict_but_many_do():
    mostly = [(0.4, -1.0)] * 19 + [(-0.4, -1.0)]
    assert classify(mostly).convention == POSITIVE_DISCHARGE
    mixed = [(0.4, -1.0)] * 10 + [(-0.4, -1.0)] * 10
    sign = classify(mixed)
    assert sign.convention == UNKNOWN
    assert sign.reason == "its sign does not follow status consistently"


def test_without_a_direction_or_a_current_nothing_is_claimed():
    idle = classify([(0.3, 0.0)] * 50 + [(0.0, -1.0)] * 50 + [(0.3, None)] * 50)
    assert idle.convention == UNKNOWN
    assert idle.reason.startswith("fewer than 5 samples with status Charging or Discharging")
    only_charging = classify([(0.5, 1.0)] * 10)
    assert only_charging.convention == UNKNOWN
    assert "no discharging was seen" in only_charging.reason
    assert classify([(-0.5, 1.0)] * 10).convention == POSITIVE_DISCHARGE


def test_the_description_says_what_the_driver_does_and_what_qtop_shows():
    sign = classify(pairs(0.4, None, n=30), RAW)
    assert sign.describe() == (
        "power/battery/current_now: current_now is POSITIVE while discharging (inverted, as "
        "some vendors do); no charging was seen, so an always-positive gauge is not ruled out "
        "(0 of 30 discharging samples negative); qtop shows the battery current negative while "
        "discharging, positive while charging"
    )
    assert sign.short() == "gauge: + discharging (inverted)"


def test_a_session_names_its_gauge_convention_in_its_notes():
    def values(t: float) -> dict[str, float]:
        charging = t >= 10.0
        raw = -0.9 if charging else 0.35
        return {
            RAW: raw,
            BATTERY_CURRENT: abs(raw) if charging else -abs(raw),
            BATTERY_STATUS: 1.0 if charging else -1.0,
        }

    events = stream(
        [CURRENT_INFO, RAW_INFO, STATUS_INFO],
        back_to_back(1.0, [0.1] * 50),
        ticks(0.0, 20.0, 0.1, values),
    )
    analysis = analyze(events)
    assert analysis.current_sign is not None
    assert analysis.current_sign.convention == POSITIVE_DISCHARGE
    assert (analysis.current_sign.discharging, analysis.current_sign.charging) == (100, 101)
    assert analysis.to_dict()["current_sign"]["convention"] == POSITIVE_DISCHARGE
    assert "note: battery current sign: power/battery/current_now: current_now is POSITIVE" in (
        render_text(analysis)
    )


def test_an_older_recording_without_the_drivers_sign_says_so():
    events = stream(
        [CURRENT_INFO, STATUS_INFO],
        back_to_back(1.0, [0.1] * 50),
        ticks(0.0, 8.0, 0.1, lambda t: {BATTERY_CURRENT: -0.3, BATTERY_STATUS: -1.0}),
    )
    sign = analyze(events).current_sign
    assert sign is not None and sign.convention == UNKNOWN
    assert sign.reason == (
        "power/battery has no current_now channel with the driver's sign (recorded by an "
        "older qtop)"
    )


def test_a_board_without_a_battery_has_no_verdict():
    assert analyze(stream([], back_to_back(1.0, [0.1] * 5))).current_sign is None
