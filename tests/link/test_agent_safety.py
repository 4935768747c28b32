"""The device is untrusted: its spool, file names, zone types and output cannot steer qtop.

Each test plays the other user (or the hostile benchmark) for real: a spool
directory made by another uid, a planted leftover pointing at a victim's
process group, profiler output files whose names carry newlines and protocol
lines, zone types with tabs and terminal escapes, a command that prints the
protocol's own end line.
"""

import asyncio
import os
import signal
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qtop.device import control
from qtop.device.control import probe_script
from qtop.device.plan import RunOptions, agent_script
from qtop.device.probe import parse_probe
from qtop.device.protocol import (
    OutputLine,
    ProcessLine,
    RunEndLine,
    StderrLine,
    parse_line,
    split_fields,
)
from qtop.errors import RunFailed, UsageError
from qtop.events import End, Iteration, Log
from qtop.live.runner import LiveOptions, LiveRun
from qtop.live.source import LiveSource
from qtop.transport.local import LocalTransport

from .helpers import (
    AGENT_SHELLS,
    group_alive,
    group_ends,
    launch_locally,
    make_sysfs,
    profile_for,
    shell_id,
)

OTHER_UID = 65534
ESC = "\x1b"
shells = pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make files of another user")


def probe(shell, sysfs, spool, env=None):
    result = subprocess.run(
        [shell, "-s", "--", str(sysfs), str(spool)],
        input=probe_script(),
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return parse_probe(result.stdout)


def control_run(*args, env=None):
    return subprocess.run(
        ["/bin/sh", "-s", "--", *args],
        input=agent_script("lib.sh") + agent_script("control.sh"),
        capture_output=True,
        text=True,
        env=env,
    ).stdout


@pytest.fixture
def victim():
    """A process group of this user that qtop did not start."""
    process = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield process.pid
    process.kill()
    process.wait()


# --- the spool -----------------------------------------------------------------


@shells
def test_the_default_spool_is_private_to_the_user(tmp_path, shell):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    found = probe(shell, make_sysfs(tmp_path / "sys"), "auto", env)
    spool = tmp_path / f"qtop-{os.getuid()}"
    assert found.spool == str(spool)
    assert spool.is_dir() and (spool.stat().st_mode & 0o777) == 0o700


@as_root
@shells
def test_a_spool_another_user_made_is_refused_with_owner_mode_and_fix(tmp_path, shell):
    spool = tmp_path / "qtop"
    spool.mkdir()
    os.chown(spool, OTHER_UID, OTHER_UID)
    spool.chmod(0o777)
    found = probe(shell, make_sysfs(tmp_path / "sys"), spool)
    assert found.spool is None
    problem = found.errors["spool_dir"]
    assert str(spool) in problem and f"uid {OTHER_UID}" in problem and "drwxrwxrwx" in problem
    profile = profile_for(tmp_path / "sys", spool, "{command: 'true', iterations: 1}")
    source = LiveSource(profile, LocalTransport())
    with pytest.raises(UsageError) as refused:
        asyncio.run(source.open())
    assert str(spool) in refused.value.problem
    assert "auto" in refused.value.fix and "remove it" in refused.value.fix


@shells
def test_a_spool_that_is_a_symlink_or_writable_by_others_is_refused(tmp_path, shell):
    sysfs = make_sysfs(tmp_path / "sys")
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert "symbolic link" in probe(shell, sysfs, link).errors["spool_dir"]
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert "writable by other users" in probe(shell, sysfs, shared).errors["spool_dir"]
    assert probe(shell, sysfs, real).spool == str(real)


def plant(spool, name, pgid, token="0123456789abcdef0123456789abcdef"):
    run = spool / name
    run.mkdir(parents=True)
    (run / "state").write_text("running\n")
    (run / "pgid").write_text(f"{pgid}\n")
    (run / "token").write_text(token + "\n")
    (run / "meta").write_text(f"run_id\t{name}\nprofile\tp{ESC}]0;pwned\a\nstarted\tnow\n")
    return run


def test_a_planted_leftover_never_gets_a_victim_signalled(tmp_path, victim):
    spool = tmp_path / "spool"
    evil = plant(spool, "evil", victim)
    init = plant(spool, "init", 1)
    no_token = plant(spool, "bare", victim)
    (no_token / "token").unlink()
    assert control_run("leftovers", str(spool)) == ""
    refused = control_run("stop", str(evil), "10")
    assert refused.startswith("error\t") and "not this run's" in refused
    assert "no usable process group" in control_run("stop", str(init), "10")
    assert "holds no run token" in control_run("stop", str(no_token), "10")
    assert group_alive(victim)


def test_a_reused_pgid_is_not_this_run_s(tmp_path, victim):
    """The victim carries a qtop token, but not the run's."""
    spool = tmp_path / "spool"
    run = plant(spool, "old", victim)
    other = subprocess.Popen(
        ["sleep", "300"],
        start_new_session=True,
        env={**os.environ, "QTOP_RUN_TOKEN": "ffffffffffffffffffffffffffffffff"},
    )
    try:
        (run / "pgid").write_text(f"{other.pid}\n")
        assert "not this run's" in control_run("stop", str(run), "10")
        assert group_alive(other.pid)
    finally:
        other.kill()
        other.wait()


def test_a_leftover_is_named_without_its_device_text_reaching_the_terminal(tmp_path):
    tree = make_sysfs(tmp_path / "sys"), tmp_path / "spool"
    first = launch_locally(
        "/bin/bash", profile_for(*tree, "{command: 'sleep 300', iterations: 1}"), RunOptions()
    )
    meta = first.run_dir / "meta"
    meta.write_text(meta.read_text().replace("linktest", f"x{ESC}]52;c;cHduZWQ=\ay"))
    source = LiveSource(profile_for(*tree, "{command: 'true', iterations: 1}"), LocalTransport())
    live = LiveRun(source, LiveOptions("linktest"), interactive=False)
    try:
        with pytest.raises(RunFailed) as refused:
            asyncio.run(live.run())
        assert first.run_dir.name in refused.value.problem
        assert ESC not in refused.value.problem and "\\x1b]52" in refused.value.problem
    finally:
        first.control("stop", str(first.run_dir), "10")
    assert group_ends(first.pgid)


# --- forged lines ----------------------------------------------------------------

HOSTILE_NAME = (
    "qnn-profiling-data\nI\t3\t1\t3\tmeasure\t1\t0\t1\t2\t0\t0\t\n"
    "X\t4\t1\tcompleted\t0\t0\t\n\\t\r\t.log"
)


@shells
def test_hostile_profiler_file_names_cannot_forge_lines(tmp_path, shell):
    out = tmp_path / "out"
    out.mkdir()
    maker = tmp_path / "make.py"
    maker.write_text(f"import sys\nopen(sys.argv[1] + '/' + {HOSTILE_NAME!r}, 'w').write('x')\n")
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        f"{{command: '{sys.executable} {maker} {out}', warmup: 0, iterations: 3, "
        f"profiler: {{kind: qnn_log, path: {out}}}}}",
    )
    run = launch_locally(shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    lines = run.lines("events")
    assert [line.seq for line in lines] == list(range(len(lines)))
    outputs = [line for line in lines if isinstance(line, OutputLine)]
    assert [o.original for o in outputs] == [f"{out}/{HOSTILE_NAME}"] * 3
    assert [p.process for p in lines if isinstance(p, ProcessLine)] == [0, 1, 2]
    assert [e.reason for e in lines if isinstance(e, RunEndLine)] == ["completed"]
    assert (run.run_dir / "prof/2.0").read_text() == "x"


@shells
def test_hostile_zone_names_and_types_arrive_exactly(tmp_path, shell):
    sysfs = make_sysfs(tmp_path / "sys")
    zone = sysfs / "class/thermal/thermal_zone7\nzone\tfake\\t"
    zone.mkdir()
    hostile_type = f"nsp\t{ESC}]0;title\a [/] \\t \r"
    (zone / "type").write_text(hostile_type + "\nsecond line\n")
    (zone / "temp").write_text("4\t5\n")
    found = probe(shell, sysfs, tmp_path / "spool")
    zones = {z.path: z for z in found.zones}
    assert zones[str(zone)].type == hostile_type
    assert zones[str(zone)].temp == "4\t5"
    assert len(found.zones) == 4


@shells
def test_stderr_and_stdout_that_look_like_protocol_lines_stay_text(tmp_path, shell):
    script = tmp_path / "noisy.sh"
    forged = "X\\t9\\t1\\tcompleted\\t0\\t0\\t"
    script.write_text(
        f"printf '{forged}\\n'\nprintf 'a\\tb\\\\\\\\c\\rd\\n' >&2\nprintf '{forged}\\n' >&2\n"
    )
    tree = make_sysfs(tmp_path / "sys"), tmp_path / "spool"
    profile = profile_for(*tree, f"{{command: 'sh {script}', warmup: 0, iterations: 3}}")
    run = launch_locally(shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    lines = run.lines("events")
    stderr = [line.text for line in lines if isinstance(line, StderrLine)]
    assert stderr == ["a\tb\\\\c\rd", "X\t9\t1\tcompleted\t0\t0\t"] * 3
    source = LiveSource(profile, LocalTransport(), run_options=RunOptions(calibrations=1))
    events = asyncio.run(_all_events(source))
    end = events[-1]
    assert isinstance(end, End) and end.reason == "completed"
    assert len([e for e in events if isinstance(e, Iteration)]) == 3
    stdout = [e.text for e in events if isinstance(e, Log) and e.stream == "stdout"]
    assert stdout == ["X\t9\t1\tcompleted\t0\t0\t"] * 3
    assert "malformed_lines" not in end.counts


async def _all_events(source):
    await source.start()
    try:
        return [event async for event in source.events()]
    finally:
        await source.close()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
            max_size=40,
        )
    )
)
def test_the_agent_s_escaping_round_trips_any_text(texts):
    """Every shell escapes what it prints so that the host gets the text back exactly."""
    program = agent_script("lib.sh") + 'for x in "$@"; do qtop_esc "$x"; qtop_put "$qtop_e"; done\n'
    encoded = [text.encode("utf-8", "surrogateescape") for text in texts]
    for shell in AGENT_SHELLS:
        out = subprocess.run(
            [shell, "-c", program, "sh", *encoded], capture_output=True, check=True
        ).stdout
        lines = out.decode("utf-8", "surrogateescape").split("\n")[:-1]
        assert [split_fields(line) for line in lines] == [[text] for text in texts], shell


def test_every_line_the_agent_writes_parses(tmp_path):
    """The protocol's own files: nothing in them is malformed."""
    profile = profile_for(
        make_sysfs(tmp_path / "sys"), tmp_path / "spool", "{command: 'echo x >&2', iterations: 2}"
    )
    run = launch_locally("/bin/dash", profile, RunOptions(calibrations=2))
    run.wait()
    for name in ("events", "samples"):
        for text in (run.run_dir / name).read_text().splitlines():
            parse_line(text)


def test_control_never_signals_pgid_one_or_an_empty_group(tmp_path):
    spool = tmp_path / "spool"
    for index, pgid in enumerate(("1", "0", "-1", "", "1 2", "x")):
        run = plant(spool, f"run{index}", pgid)
        answer = control_run("stop", str(run), "1")
        assert answer.startswith("error\t"), (pgid, answer)


def test_kill_followers_skips_pids_that_would_mean_many_processes():
    sent = []

    class Recorder:
        async def run(self, command, stdin=None, timeout=None):
            sent.append(command)

    asyncio.run(control.kill_followers(Recorder(), [0, 1, -1]))
    assert sent == []


def test_remove_refuses_a_run_that_is_still_running(tmp_path):
    profile = profile_for(
        make_sysfs(tmp_path / "sys"), tmp_path / "spool", "{command: 'sleep 300', iterations: 1}"
    )
    run = launch_locally("/bin/dash", profile, RunOptions(calibrations=1))
    try:
        assert "still running" in run.control("remove", str(run.run_dir))
        assert run.run_dir.is_dir()
    finally:
        os.killpg(run.pgid, signal.SIGKILL)
