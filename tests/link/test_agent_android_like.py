"""A whole live session on an Android-like device: mksh or busybox ash, no bash, no
python3, no /tmp, a `date` without %N (tests/link/android_like.py)."""

import pytest

from qtop.device.plan import RunOptions
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text

from .android_like import AndroidLike, Unavailable, build
from .helpers import make_sysfs
from .recording import check_complete, of_kind, record


def device(tmp_path, sh: str) -> AndroidLike:
    try:
        android = build(tmp_path / "root", sh)
    except Unavailable as exc:
        pytest.skip(str(exc))
    make_sysfs(android.root / "sys-fake")
    return android


def profile(agent_env: dict[str, str] | None = None):
    loaded = load_profile_text(
        "name: android\n"
        "device: {sysfs_root: /sys-fake, sample_interval: 50ms}\n"
        "run: {command: 'sleep 0.02; echo done', warmup: 1, iterations: 5, timeout: 5s}\n"
    )
    # QTOP_* names are the agent's own, refused in a profile: set here past the schema.
    return loaded.replace_device(env=agent_env) if agent_env else loaded


async def session(android: AndroidLike, tmp_path, agent_env: dict[str, str] | None = None):
    source = LiveSource(
        profile(agent_env), android.transport(), run_options=RunOptions(calibrations=3)
    )
    try:
        return await record(source, tmp_path / "run.jsonl")
    finally:
        android.close()


async def test_mksh_with_toolbox_tools_runs_a_whole_session(tmp_path):
    android = device(tmp_path, "mksh")
    events = await session(android, tmp_path)
    header = events[0]["device"]
    assert header["shell"] == "mksh"
    assert (header["clock"], header["clock_resolution_s"]) == ("epoch", 1e-06)
    assert (header["agent_sleep"], header["agent_arithmetic_bits"]) == ("read", 32)
    assert header["detached_with"] == "mksh job control and setsid"
    assert header["run_dir"].startswith("/data/local/tmp/qtop/")
    spool = android.host_path("/data/local/tmp/qtop")
    assert spool.stat().st_mode & 0o777 == 0o700
    check_complete(events, processes=6, faults=0)
    stdout = [e["text"] for e in of_kind(events, "log") if e["stream"] == "stdout"]
    assert stdout == ["done"] * 6
    warnings = [e for e in of_kind(events, "log") if e["level"] == "warning"]
    assert warnings == []


async def test_busybox_ash_without_job_control_says_sigint_is_ignored(tmp_path):
    android = device(tmp_path, "busybox")
    events = await session(android, tmp_path)
    header = events[0]["device"]
    assert header["shell"] == "sh"
    assert (header["clock"], header["agent_sleep"], header["agent_arithmetic_bits"]) == (
        "epoch",
        "read",
        64,
    )
    assert header["detached_with"] == "setsid (SIGINT ignored)"
    check_complete(events, processes=6, faults=0)
    agent = [e["text"] for e in of_kind(events, "log") if e["stream"] == "agent"]
    assert any("SIGINT is ignored" in text for text in agent)


async def test_a_shell_without_epochrealtime_falls_back_to_uptime_and_says_so(tmp_path):
    android = device(tmp_path, "mksh")
    events = await session(android, tmp_path, {"QTOP_NO_EPOCH": "1"})
    header = events[0]["device"]
    # busybox's date has no %N: the runner's clock is /proc/uptime too.
    assert (header["clock"], header["clock_resolution_s"]) == ("uptime", 0.01)
    assert header["sampler_clock"] == "uptime"
    check_complete(events, processes=6, faults=0)
    agent = [e["text"] for e in of_kind(events, "log") if e["stream"] == "agent"]
    assert any("no fine clock" in text for text in agent)
