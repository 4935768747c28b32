"""Shared fixtures: small deterministic sessions and recordings."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from adb_support import needs_adb
from fixtures.sessions import simple_session_events

FIXTURES = Path(__file__).parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    # Runs started from the tests inherit this process's SIGINT. Started from a script's
    # background job or nohup, pytest has SIGINT ignored, and every run would then
    # (rightly) time out with SIGTERM and warn that SIGINT is ignored: the tests start
    # their runs as from a terminal, and those that mean the other case say so.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def simple_events() -> list:
    return simple_session_events()


@pytest.fixture(autouse=True)
def private_ssh_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test reads this machine's ~/.ssh, /etc/ssh or ssh-agent: HOME is a fresh
    directory with an empty ~/.ssh, and the system-wide ssh files are absent."""
    home = tmp_path_factory.mktemp("home")
    (home / ".ssh").mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    system = home / "system-ssh"
    monkeypatch.setattr("qtop.transport.ssh_config.SYSTEM_CONFIG", str(system / "ssh_config"))
    monkeypatch.setattr(
        "qtop.transport.ssh_config.SYSTEM_KNOWN_HOSTS", (str(system / "ssh_known_hosts"),)
    )
    return home


@pytest.fixture(params=["ssh", pytest.param("adb", marks=needs_adb)])
def transport_kind(request: pytest.FixtureRequest) -> str:
    """A live test that takes this runs over SSH and again over adb (the real adb client)."""
    return request.param
