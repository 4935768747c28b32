"""--metrics-listen: where the endpoint may listen, and every bad value as a usage error."""

import socket
import sys

import pytest

from qtop.cli import main
from qtop.errors import UsageError
from qtop.metrics.address import ListenAddress, parse_listen


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:9464", ListenAddress("127.0.0.1", 9464, loopback=True, wildcard=False)),
        ("localhost:0", ListenAddress("localhost", 0, loopback=True, wildcard=False)),
        ("[::1]:9464", ListenAddress("::1", 9464, loopback=True, wildcard=False)),
    ],
)
def test_loopback_addresses(text, expected):
    assert parse_listen(text) == expected
    assert str(parse_listen(text)) == text


@pytest.mark.parametrize("text", ["0.0.0.0:9464", ":9464", "*:9464", "[::]:9464"])
def test_every_interface_needs_its_own_flag(text):
    with pytest.raises(UsageError) as caught:
        parse_listen(text)
    assert "unauthenticated, on every network interface" in caught.value.problem
    assert "--metrics-listen 127.0.0.1:9464" in caught.value.fix
    assert "--metrics-all-interfaces" in caught.value.fix
    allowed = parse_listen(text, all_interfaces=True)
    assert allowed.wildcard and not allowed.loopback
    assert allowed.host in ("0.0.0.0", "::")


@pytest.mark.parametrize(
    ("text", "problem", "fix"),
    [
        ("9464", "not HOST:PORT", "write HOST:PORT, e.g. 127.0.0.1:9464"),
        ("127.0.0.1", "not HOST:PORT", "write HOST:PORT, e.g. 127.0.0.1:9464"),
        ("::1:9464", "not HOST:PORT", "an IPv6 address goes in brackets"),
        ("[::1:9464", "not HOST:PORT", "an IPv6 address goes in brackets"),
        ("127.0.0.1:http", "the port must be a number from 0 to 65535", "0 picks a free port"),
        ("127.0.0.1:65536", "the port must be a number from 0 to 65535", "e.g. --metrics-listen"),
        ("127.0.0.1:-1", "the port must be a number from 0 to 65535", "e.g. --metrics-listen"),
        ("no-such-host.invalid:9464", "cannot resolve 'no-such-host.invalid'", "e.g."),
    ],
)
def test_bad_values_name_the_problem_and_the_fix(text, problem, fix):
    with pytest.raises(UsageError) as caught:
        parse_listen(text)
    assert caught.value.problem.startswith(f"--metrics-listen {text!r}")
    assert problem in caught.value.problem
    assert fix in caught.value.fix


def local_profile(tmp_path):
    path = tmp_path / "local.yaml"
    path.write_text(
        f"name: metricslocal\ndevice: {{spool_dir: '{tmp_path / 'spool'}'}}\n"
        "run: {command: 'true', warmup: 0, iterations: 1}\n"
    )
    return path


def run_cli(tmp_path, monkeypatch, *options):
    monkeypatch.chdir(tmp_path)
    return main(["run", str(local_profile(tmp_path)), "--local", "--headless", *options])


def test_the_command_refuses_every_interface_before_anything_starts(tmp_path, monkeypatch, capsys):
    code = run_cli(tmp_path, monkeypatch, "--metrics-listen", "0.0.0.0:9464")
    err = capsys.readouterr().err
    assert code == 2
    assert "qtop run: error: --metrics-listen '0.0.0.0:9464' would serve the metrics" in err
    assert "fix: use --metrics-listen 127.0.0.1:9464" in err
    assert not (tmp_path / "recordings").exists()
    assert not (tmp_path / "spool").exists()


def test_a_port_in_use_stops_the_command_before_the_device_run(tmp_path, monkeypatch, capsys):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = run_cli(tmp_path, monkeypatch, "--metrics-listen", f"127.0.0.1:{port}")
    captured = capsys.readouterr()
    assert code == 2
    assert f"--metrics-listen 127.0.0.1:{port}: the address is already in use" in captured.err
    assert "fix: choose another port" in captured.err
    assert "started" not in captured.out
    assert not (tmp_path / "recordings").exists()
    assert not (tmp_path / "spool").exists()


def test_without_the_client_library_the_error_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    code = run_cli(tmp_path, monkeypatch, "--metrics-listen", "127.0.0.1:9464")
    err = capsys.readouterr().err
    assert code == 2
    assert "--metrics-listen needs the Prometheus client library (prometheus_client)" in err
    assert "fix: pip install 'qtop[metrics]'" in err


def test_all_interfaces_alone_is_a_usage_error(tmp_path, monkeypatch, capsys):
    code = run_cli(tmp_path, monkeypatch, "--metrics-all-interfaces")
    assert code == 2
    assert "--metrics-all-interfaces without --metrics-listen" in capsys.readouterr().err
