"""qtop probe's inspection: parsing, refresh periods, the sign of current_now."""

from __future__ import annotations

import itertools

import pytest

from qtop.device.inspect import current_sign, parse_inspection, refresh_of
from qtop.errors import RunFailed

FILES = ("/sys/class/power_supply/battery/status", "/sys/class/power_supply/battery/current_now")


def window(*rows: tuple[int, str, str]) -> str:
    return "\n".join(f"w\t{t}\t{status}\t{current}" for t, status, current in rows)


def test_records_become_tools_hwmon_holders_and_the_window():
    text = "\n".join(
        [
            "shell\t/system/bin/sh",
            "tool\tqnn-net-run\t/data/local/tmp/prismml/qnn-net-run",
            "version\tqnn-net-run\tqnn-net-run pid:1234",
            "version\tqnn-net-run\tQNN SDK v2.36.0.250627",
            "tool\tqnn-profile-viewer\t",
            "hwmon\t/sys/class/hwmon/hwmon2\tina226\tcurr1_input,power1_input",
            "npu\t812\tqnn-net-run\ttool",
            "npu\t812\tqnn-net-run\tfastrpc",
            "npu\t455\tcamera_server\tfastrpc",
            "npu_scan\t214\t37",
            window((1_000_000, "Discharging", "-420000"), (1_050_000, "Discharging", "")),
            "end",
        ]
    )
    found = parse_inspection(text, FILES)
    assert found.shell_binary == "/system/bin/sh"
    assert found.tools == {
        "qnn-net-run": "/data/local/tmp/prismml/qnn-net-run",
        "qnn-profile-viewer": "",
    }
    assert found.versions["qnn-net-run"][1] == "QNN SDK v2.36.0.250627"
    assert [(h.name, h.inputs) for h in found.hwmon] == [
        ("ina226", ("curr1_input", "power1_input"))
    ]
    assert [(h.pid, h.command, h.reason) for h in found.npu_holders] == [
        (455, "camera_server", "fastrpc"),
        (812, "qnn-net-run", "fastrpc"),
    ]
    assert (found.processes_scanned, found.processes_hidden) == (214, 37)
    assert found.series(FILES[1]) == [(1.0, "-420000"), (1.05, "")]
    assert found.last(FILES[0]) == "Discharging"
    assert found.last("/not/watched") is None


def test_an_inspection_cut_short_is_an_error():
    with pytest.raises(RunFailed, match="stopped before its end"):
        parse_inspection("shell\t/bin/sh\n", FILES, "glasses")


def test_a_one_second_gauge_is_found_from_when_its_value_changes():
    rows = [(t * 50_000, "Discharging", str(-400_000 - (t // 20) * 1000)) for t in range(81)]
    found = parse_inspection(window(*rows) + "\nend", FILES)
    refresh = refresh_of(found.series(FILES[1]))
    assert refresh is not None
    assert (refresh.changes, refresh.window_s) == (4, 4.0)
    assert refresh.period_s == pytest.approx(1.0)
    assert refresh.describe() == "refreshes about every 1 s (4 changes in 4.0 s)"
    steady = refresh_of([(0.0, "5"), (2.0, "5"), (4.0, "5")])
    assert steady is not None and steady.period_s is None
    assert steady.describe().startswith("did not change in 4.0 s")
    assert refresh_of([(0.0, "5")]) is None


def test_a_32_bit_shells_wrapped_clock_is_put_back_in_order():
    before_wrap = 2**31 - 700_000  # mksh: the next count wraps to negative
    rows = [
        (before_wrap, "Discharging", "-1"),
        (before_wrap + 500_000, "Discharging", "-2"),
        (before_wrap + 1_000_000 - 2**32, "Discharging", "-3"),
        (before_wrap + 1_500_000 - 2**32, "Discharging", "-4"),
    ]
    found = parse_inspection(window(*rows) + "\nend", FILES)
    times = [t for t, _ in found.series(FILES[1])]
    assert [round(b - a, 6) for a, b in itertools.pairwise(times)] == [0.5, 0.5, 0.5]
    refresh = refresh_of(found.series(FILES[1]))
    assert refresh is not None and refresh.period_s == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("status", "current", "said"),
    [
        ("Discharging", "-420000", "negative while discharging (the kernel ABI)"),
        ("Charging", "1753000", "positive while charging (the kernel ABI)"),
        ("Discharging", "1104003", "positive while discharging (inverted against the kernel "
         "ABI; qtop takes the direction from status)"),
        ("Charging", "-1753000", "negative while charging (inverted against the kernel ABI; "
         "qtop takes the direction from status)"),
        ("Full", "-12000", "cannot tell now (status Full, current_now -12000)"),
        ("Discharging", "0", "cannot tell now (status Discharging, current_now 0)"),
        (None, "5", "cannot tell now (status unreadable, current_now 5)"),
        ("Discharging", "", "unknown (current_now unreadable)"),
    ],
)  # fmt: skip
def test_the_sign_of_current_now_is_judged_against_status(status, current, said):
    assert current_sign(status, current) == said
