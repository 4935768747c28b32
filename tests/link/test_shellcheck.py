"""shellcheck finds nothing in the agent, as stored and as sent (with a generated plan)."""

import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from qtop.device.control import probe_script
from qtop.device.plan import RunOptions, agent_script, build_run_plan, launch_script, new_run_id
from qtop.device.sensors import plan_sensors

from .helpers import make_sysfs, probe_locally, profile_for

SHELLCHECK = shutil.which("shellcheck")
pytestmark = pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed")
AGENT = Path(str(resources.files("qtop.device.agent")))


def shellcheck(*paths: Path, cwd: Path) -> str:
    result = subprocess.run(
        [SHELLCHECK, "-x", "--shell=sh", *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    return result.stdout + result.stderr


def test_the_agent_scripts_are_clean():
    assert shellcheck(*sorted(AGENT.glob("*.sh")), cwd=AGENT) == ""


def test_the_scripts_as_sent_and_a_generated_plan_are_clean(tmp_path):
    sysfs = make_sysfs(tmp_path / "sys")
    profile = profile_for(
        sysfs,
        tmp_path / "spool",
        "{command: 'qnn-net-run --x \"$MODEL\"', warmup: 1, iterations: 3, timeout: 2s, "
        "env: {MODEL: \"it's $HOME\"}, cooldown: {below: 50, zones: ['nsp*'], timeout: 10s}, "
        "profiler: {kind: qnn_log, path: $OUT}, "
        "variants: [{name: a, env: {X: '1'}}, {name: b, env: {X: '2'}}]}",
        "env: {OUT: /tmp/out}",
    )
    probe = probe_locally("/bin/dash", profile)
    plan = build_run_plan(
        profile, probe, plan_sensors(probe, profile.device), shell="/bin/dash",
        run_id=new_run_id("t"), options=RunOptions(),
    )  # fmt: skip
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name, content in plan.files.items():
        if name.endswith(".sh"):
            (run_dir / name).write_text(content)
    sent = {
        "launch.sh": launch_script(plan),
        "probe.sh": probe_script(),
        "control.sh": agent_script("lib.sh") + agent_script("control.sh"),
    }
    sent_dir = tmp_path / "sent"
    sent_dir.mkdir()
    for name, content in sent.items():
        (sent_dir / name).write_text(content)
    assert shellcheck(*sorted(run_dir.glob("*.sh")), cwd=run_dir) == ""
    assert shellcheck(*sorted(sent_dir.glob("*.sh")), cwd=sent_dir) == ""
