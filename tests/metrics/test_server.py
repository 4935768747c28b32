"""The endpoint over real HTTP: before, during and after a session, and when it cannot answer."""

import asyncio
import socket
import threading

import pytest
from fixtures.sessions import simple_session_events
from metrics.helpers import OPENMETRICS, Scrape, scrape_url

from qtop.errors import UsageError
from qtop.metrics.address import parse_listen
from qtop.metrics.capture import CaptureFailed, ModelTap
from qtop.metrics.server import MetricsServer, SessionCollector
from qtop.stats.model import SessionModel

LOOPBACK = parse_listen("127.0.0.1:0")


async def scrape(server, accept=None):
    text = await asyncio.to_thread(scrape_url, server.url, accept)
    return Scrape(text, openmetrics=accept is not None)


async def test_the_endpoint_serves_the_model_it_watches_and_nothing_before():
    server = MetricsServer.start(LOOPBACK)
    try:
        assert server.url == f"http://127.0.0.1:{server.port}/metrics"
        assert server.describe() == f"metrics for Prometheus on {server.url}"
        empty = await scrape(server)
        assert empty.value("qtop_session_up") == 0
        assert not empty.has("qtop_latency_seconds_count")
        model = SessionModel()
        events = simple_session_events()
        for event in events[:40]:
            model.apply(event)
        server.watch(model)
        first = await scrape(server)
        assert first.value("qtop_session_up") == 1
        assert first.value("qtop_events_total") == 40
        for event in events[40:]:
            model.apply(event)
        second = await scrape(server, OPENMETRICS)
        assert second.value("qtop_events_total") == len(events)
        assert second.value("qtop_latency_seconds_count", phase="measure") == 100
        assert second.value("qtop_metrics_capture_seconds") >= 0
    finally:
        await server.close()


async def test_closing_frees_the_port():
    server = MetricsServer.start(LOOPBACK)
    port = server.port
    await server.close()
    again = MetricsServer.start(parse_listen(f"127.0.0.1:{port}"))
    await again.close()


async def test_a_port_in_use_is_a_usage_error_with_the_fix():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(UsageError) as caught:
            MetricsServer.start(parse_listen(f"127.0.0.1:{port}"))
    assert str(caught.value) == (
        f"--metrics-listen 127.0.0.1:{port}: the address is already in use\n"
        f"  fix: choose another port (e.g. --metrics-listen 127.0.0.1:{port + 1}), or stop "
        f"what listens there (ss -ltnp 'sport = :{port}' shows it)"
    )


def test_an_address_of_another_machine_is_a_usage_error():
    with pytest.raises(UsageError) as caught:
        MetricsServer.start(parse_listen("192.0.2.1:9464"))  # TEST-NET-1: never local
    assert "192.0.2.1 is not an address of this machine" in caught.value.problem
    assert "127.0.0.1" in caught.value.fix


def test_a_loop_that_does_not_answer_gives_a_scrape_that_says_so():
    loop = asyncio.new_event_loop()  # never run: the copy is never made
    server = MetricsServer.start(LOOPBACK)
    try:
        assert server.problem() is None
        server.collector.tap = ModelTap(SessionModel(), loop, timeout_s=0.2)
        scrape = Scrape(scrape_url(server.url))
        assert scrape.value("qtop_session_up") == 0
        assert scrape.value("qtop_metrics_failed_scrapes_total") == 1
        assert not scrape.has("qtop_events_total")
        assert server.problem() == (
            "1 metrics scrape(s) had no figures: "
            "the session's event loop did not answer within 0.2 s"
        )
    finally:
        asyncio.run(server.close())
        loop.close()
    with pytest.raises(CaptureFailed, match="event loop is closed"):
        ModelTap(SessionModel(), loop).capture()


@pytest.mark.parametrize("where", ["qtop.metrics.families.model_families",
                                   "qtop.metrics.capture.copy_model"])  # fmt: skip
def test_a_bug_leaves_a_whole_exposition_and_nothing_on_the_terminal(where, monkeypatch, capfd):
    def broken(model):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(where, broken)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        collector = SessionCollector()
        collector.tap = ModelTap(SessionModel(), loop)
        scrape = Scrape(render(collector))
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
    assert scrape.value("qtop_session_up") == 0
    assert collector.errors == ["internal error: ZeroDivisionError: division by zero"]
    assert capfd.readouterr().err == ""


def render(collector) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry).decode()
