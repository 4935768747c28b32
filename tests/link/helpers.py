"""Shared by the link tests: a fake sysfs tree, a local run of the agent, sshd on loopback."""

from __future__ import annotations

import contextlib
import getpass
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from qtop.device.control import probe_script
from qtop.device.plan import RunOptions, agent_script, build_run_plan, launch_script, new_run_id
from qtop.device.probe import ProbeResult, parse_probe
from qtop.device.protocol import Line, parse_line, split_fields
from qtop.device.sensors import SensorPlan, plan_sensors
from qtop.profiles import Profile, load_profile_text

SSHD = "/usr/sbin/sshd"
SHELLS = ("/bin/dash", "/bin/bash")


def _busybox_sh() -> str | None:
    """busybox's ash as a file named ``sh`` (busybox picks the applet from its name)."""
    busybox = shutil.which("busybox")
    if busybox is None:
        return None
    directory = Path(tempfile.gettempdir()) / f"qtop-tests-{os.getuid()}" / "busybox"
    directory.mkdir(parents=True, exist_ok=True)
    link = directory / "sh"
    if not link.is_symlink():
        with contextlib.suppress(FileExistsError):
            link.symlink_to(busybox)
    return str(link)


# Every shell the agent must work in that this machine has: dash, bash, mksh (Android's
# sh) and busybox ash.
AGENT_SHELLS = tuple(
    shell for shell in ("/bin/dash", "/bin/bash", "/bin/mksh", _busybox_sh()) if shell
)


def shell_id(shell: str) -> str:
    return "busybox" if "busybox" in shell else Path(shell).name


# What the agent reports running in on the simulated glasses (no bash): their sh, mksh
# where this machine has it (as Android's /system/bin/sh is).
GLASSES_SHELL = "mksh" if shutil.which("mksh") else "sh"


def make_sysfs(root: Path, nsp_mc: int = 52000) -> Path:
    def write(relative: str, text: str) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")

    zones = [("cpu-0-0-0-thermal", 45000), ("nsp-0-0-0-thermal", nsp_mc), ("camera-0", -273000)]
    for index, (name, temp) in enumerate(zones):
        write(f"class/thermal/thermal_zone{index}/type", name)
        write(f"class/thermal/thermal_zone{index}/temp", str(temp))
        write(f"class/thermal/thermal_zone{index}/trip_point_0_type", "passive")
        write(f"class/thermal/thermal_zone{index}/trip_point_0_temp", "105000")
        write(f"class/thermal/thermal_zone{index}/trip_point_0_hyst", "5000")
    write("class/thermal/cooling_device0/type", "cdsp")
    write("class/thermal/cooling_device0/max_state", "12")
    write("class/thermal/cooling_device0/cur_state", "0")
    write("class/power_supply/battery/type", "Battery")
    write("class/power_supply/battery/status", "Discharging")
    write("class/power_supply/battery/current_now", "-420000")
    write("class/power_supply/battery/voltage_now", "3900000")
    write("devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "1171200")
    return root


def profile_for(sysfs: Path, spool: Path, run: str, device: str = "") -> Profile:
    # A key given twice is an error: the caller's sample_interval replaces the default one.
    interval = "" if "sample_interval" in device else ", sample_interval: 50ms"
    text = (
        "name: linktest\n"
        f"device: {{sysfs_root: '{sysfs}', spool_dir: '{spool}'{interval}"
        f"{', ' + device if device else ''}}}\n"
        f"run: {run}\n"
    )
    return load_profile_text(text, "linktest.yaml")


def shadow_command(monkeypatch, directory: Path, name: str, script: str) -> Path:
    """An executable ``name`` running ``script``, first on the PATH for this test."""
    directory.mkdir(parents=True, exist_ok=True)
    command = directory / name
    command.write_text(script)
    command.chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}:{os.environ['PATH']}")
    return command


def probe_locally(shell: str, profile: Profile) -> ProbeResult:
    device = profile.device
    result = subprocess.run(
        [shell, "-s", "--", device.sysfs_root, device.spool_dir],
        input=probe_script(),
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_probe(result.stdout)


@dataclass
class LocalRun:
    run_dir: Path
    pgid: int
    sensors: SensorPlan

    def state(self) -> str:
        return (self.run_dir / "state").read_text().strip()

    def lines(self, name: str) -> list[Line]:
        text = (self.run_dir / name).read_text()
        return [parse_line(line) for line in text.splitlines()]

    def wait(self, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while self.state() == "running":
            if time.monotonic() > deadline:
                raise AssertionError(f"the run in {self.run_dir} did not finish in {timeout} s")
            time.sleep(0.02)
        # The X line is written just after the state file.
        while (self.run_dir / "events").read_text().rstrip("\n").split("\n")[-1][:1] != "X":
            time.sleep(0.01)
        return self.state()

    def control(self, *args: str) -> str:
        script = agent_script("lib.sh") + agent_script("control.sh")
        return subprocess.run(
            ["/bin/sh", "-s", "--", *args], input=script, capture_output=True, text=True
        ).stdout


def launch_locally(
    shell: str,
    profile: Profile,
    options: RunOptions | None = None,
    sigint: signal.Handlers = signal.SIG_DFL,
) -> LocalRun:
    """Launch a run as qtop does, from a process with SIGINT set to ``sigint``.

    The launch inherits this process's SIGINT, which depends on how the tests were
    started (a background job of a script ignores it); the tests say which they mean.
    """
    probe = probe_locally(shell, profile)
    sensors = plan_sensors(probe, profile.device)
    plan = build_run_plan(
        profile, probe, sensors, shell=shell, run_id=new_run_id("t"), options=options
    )
    out = subprocess.run(
        [shell, "-s"],
        input=launch_script(plan),
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
    ).stdout
    kind, run_dir, pgid, _how = split_fields(out.strip())
    assert kind == "launched", out
    return LocalRun(Path(run_dir), int(pgid), sensors)


def group_alive(pgid: int) -> bool:
    """A live (not zombie) process in the group: what the agent's own check looks at."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


def group_ends(pgid: int, timeout: float = 20.0) -> bool:
    """Whether the group has no live process within ``timeout`` s: the runner writes its
    last line and then exits, and what a run leaves behind dies of its signal, a moment
    later on a busy machine."""
    deadline = time.monotonic() + timeout
    while group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Sshd:
    """OpenSSH's sshd on loopback with generated keys and a private config."""

    host: str
    port: int
    user: str
    client_key: Path
    known_hosts: Path
    host_key_line: str
    directory: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_sshd(
    directory: Path,
    set_env: dict[str, str] | None = None,
    tcp_forwarding: bool = True,
    log_level: str = "ERROR",
) -> Sshd:
    """sshd on a free loopback port. ``tcp_forwarding`` is what a jump host needs;
    ``log_level`` DEBUG1 makes ``sshd.log`` show each forwarded connection's target."""
    directory.mkdir(parents=True, exist_ok=True)
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    client_key = asyncssh.generate_private_key("ssh-ed25519")
    host_key.write_private_key(directory / "host_ed25519")
    client_key.write_private_key(directory / "client_ed25519")
    os.chmod(directory / "host_ed25519", 0o600)
    os.chmod(directory / "client_ed25519", 0o600)
    (directory / "authorized_keys").write_bytes(client_key.export_public_key())
    port = free_port()
    lines = [
        f"Port {port}",
        "ListenAddress 127.0.0.1",
        f"HostKey {directory / 'host_ed25519'}",
        f"PidFile {directory / 'sshd.pid'}",
        f"AuthorizedKeysFile {directory / 'authorized_keys'}",
        "StrictModes no",
        "UsePAM no",
        "PermitRootLogin yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        f"AllowTcpForwarding {'yes' if tcp_forwarding else 'no'}",
        f"LogLevel {log_level}",
    ]
    if set_env:
        lines.append("SetEnv " + " ".join(f'{k}="{v}"' for k, v in set_env.items()))
    (directory / "sshd_config").write_text("\n".join(lines) + "\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    with open(directory / "sshd.log", "wb") as log:
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(directory / "sshd_config")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    deadline = time.monotonic() + 10
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            break
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"sshd did not start: {(directory / 'sshd.log').read_text()}")
        time.sleep(0.05)
    algorithm, data = host_key.export_public_key("openssh").decode().split()[:2]
    line = f"[127.0.0.1]:{port} {algorithm} {data}"
    (directory / "known_hosts").write_text(line + "\n")
    return Sshd(
        "127.0.0.1",
        port,
        getpass.getuser(),
        directory / "client_ed25519",
        directory / "known_hosts",
        line,
        directory,
        process,
    )


SSH = "/usr/bin/ssh"


def home_ssh_dir() -> Path:
    """``~/.ssh`` of the test's private HOME (see the ``private_ssh_home`` fixture)."""
    return Path(os.environ["HOME"]) / ".ssh"


def write_ssh_config(text: str, name: str = "config") -> Path:
    """Write ``~/.ssh/config`` (or a file beside it) as a user keeps it: mode 600."""
    path = home_ssh_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def config_line(path: Path, text: str) -> str:
    """``~/.ssh/config line N`` for the first line of ``path`` holding ``text``."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            home = os.environ["HOME"]
            return f"{str(path).replace(home, '~', 1)} line {number}"
    raise AssertionError(f"{text!r} is not in {path}")


def ssh_dash_g(alias: str, *args: str) -> dict[str, str]:
    """What OpenSSH's own ``ssh -G`` resolves ``alias`` to, reading only ``~/.ssh/config``.

    ssh expands ``~`` and ``%d`` with the passwd entry's home, not ``$HOME``; that prefix
    is mapped back onto the test's HOME so the two can be compared.
    """
    home = os.environ["HOME"]
    real_home = pwd.getpwuid(os.getuid()).pw_dir.rstrip("/")
    result = subprocess.run(
        [SSH, "-G", "-F", str(home_ssh_dir() / "config"), *args, alias],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=True,
    )
    values: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(" ")
        value = " ".join(_home_mapped(word, real_home, home) for word in value.split(" "))
        values[key] = f"{values[key]} {value}" if key in values else value
    return values


def _home_mapped(word: str, real_home: str, home: str) -> str:
    if word.startswith("~/"):
        return home + word[1:]
    if real_home and word.startswith(real_home + "/"):
        return home + word[len(real_home) :]
    return word
