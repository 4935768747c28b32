"""The metrics endpoint: prometheus_client's HTTP server and a collector over the live model.

The server is bound before anything starts on the device, so a port in use
is a usage error, not a run left behind; it serves ``qtop_session_up 0``
until the session's model is handed to it (``watch``), then the families of
``qtop.metrics.families`` on every scrape. Nothing is updated per event: the
collector copies the model when Prometheus asks (``qtop.metrics.capture``).
"""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from qtop.errors import UsageError
from qtop.metrics.address import ListenAddress, join_host_port
from qtop.metrics.capture import Capture, CaptureFailed, ModelTap
from qtop.stats.model import SessionModel

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client.core import Metric

INSTALL_FIX = "pip install 'qtop[metrics]' (or pip install prometheus_client)"
ERRORS_KEPT = 10


def require_client() -> None:
    """Fail now, with the fix, when the Prometheus client library is not installed."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise UsageError(
            "--metrics-listen needs the Prometheus client library (prometheus_client), "
            "which is not installed",
            INSTALL_FIX,
        ) from None


class SessionCollector:
    """A prometheus_client collector: a copy of the live model per scrape, and its families."""

    def __init__(self) -> None:
        self.tap: ModelTap | None = None
        self.last_capture: Capture | None = None
        self.failed_scrapes = 0
        self.errors: list[str] = []
        # Scrapes are served on a thread each, and may overlap.
        self._lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        # prometheus_client's server logs an exception from here to stderr, where it would
        # tear through the UI; a scrape that cannot be answered says so in the exposition.
        families, capture = self._families()
        yield from self._exporter(capture)
        yield from families

    def _families(self) -> tuple[list[Metric], Capture | None]:
        from qtop.metrics.families import model_families

        tap = self.tap
        if tap is None:
            return [], None
        try:
            capture = tap.capture()
            families, budget = model_families(capture.model)
        except CaptureFailed as exc:
            self._failed(str(exc))
            return [], None
        except Exception as exc:
            self._failed(f"internal error: {type(exc).__name__}: {exc}")
            return [], None
        self.last_capture = capture
        return [*families, *_dropped(budget.dropped())], capture

    def _failed(self, reason: str) -> None:
        with self._lock:
            self.failed_scrapes += 1
            if len(self.errors) < ERRORS_KEPT:
                self.errors.append(reason)

    def _exporter(self, capture: Capture | None) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        yield GaugeMetricFamily(
            "qtop_session_up",
            "1 when this scrape's figures are of the live session, 0 when none could be had",
            value=0 if capture is None else 1,
        )
        yield CounterMetricFamily(
            "qtop_metrics_failed_scrapes",
            "Scrapes answered without figures: the session loop did not answer, or an error",
            value=self.failed_scrapes,
        )
        if capture is not None:
            yield GaugeMetricFamily(
                "qtop_metrics_capture",
                "Time the session loop spent copying the model for this scrape",
                value=capture.copy_s,
                unit="seconds",
            )


def _dropped(dropped: dict[str, int]) -> Iterator[Metric]:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(
        "qtop_metrics_series_dropped",
        "Label values left out by the cardinality caps (docs/metrics.md)",
        labels=["what"],
    )
    for what, count in dropped.items():
        family.add_metric([what], count)
    yield family


def _bind_error(address: ListenAddress, exc: OSError) -> UsageError:
    where = str(address)
    if exc.errno == errno.EADDRINUSE:
        return UsageError(
            f"--metrics-listen {where}: the address is already in use",
            f"choose another port (e.g. --metrics-listen "
            f"{join_host_port(address.host, address.port + 1)}), or stop what listens there "
            f"(ss -ltnp 'sport = :{address.port}' shows it)",
        )
    if exc.errno == errno.EACCES:
        return UsageError(
            f"--metrics-listen {where}: permission denied (ports below 1024 need privileges)",
            f"choose a port above 1023, e.g. --metrics-listen {join_host_port(address.host, 9464)}",
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return UsageError(
            f"--metrics-listen {where}: {address.host} is not an address of this machine",
            "use one of this machine's addresses ('ip -brief address' lists them) or 127.0.0.1",
        )
    reason = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror):
        reason = f"cannot resolve {address.host!r}: {reason}"
    return UsageError(
        f"--metrics-listen {where}: cannot listen there: {reason}",
        "give an address of this machine and a free port, e.g. --metrics-listen 127.0.0.1:9464",
    )


class MetricsServer:
    """The endpoint from ``start`` to ``close``; ``watch`` gives it the session's model."""

    def __init__(self, address: ListenAddress, httpd: WSGIServer, thread: threading.Thread) -> None:
        self.address = address
        self.collector = SessionCollector()
        self._httpd = httpd
        self._thread = thread

    @classmethod
    def start(cls, address: ListenAddress) -> MetricsServer:
        require_client()
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry(auto_describe=False)
        try:
            httpd, thread = start_http_server(address.port, address.host, registry)
        except OSError as exc:
            raise _bind_error(address, exc) from None
        server = cls(address, httpd, thread)
        registry.register(server.collector)
        return server

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{join_host_port(self.address.host, self.port)}/metrics"

    def describe(self) -> str:
        """One line for the terminal: where to scrape, and who else can."""
        line = f"metrics for Prometheus on {self.url}"
        if not self.address.loopback:
            line += " (plain HTTP, no authentication: anyone who can reach it can read it)"
        return line

    def watch(self, model: SessionModel) -> None:
        """Serve ``model``'s figures from now on; call on the loop that applies its events."""
        self.collector.tap = ModelTap(model, asyncio.get_running_loop())

    async def close(self) -> None:
        """Stop serving and free the port; a scrape from now on finds no model."""
        self.collector.tap = None
        # shutdown() waits for the serving thread's next poll (up to half a second): not on
        # the loop, which a scrape in flight may be waiting on.
        await asyncio.to_thread(self._httpd.shutdown)
        self._httpd.server_close()
        await asyncio.to_thread(self._thread.join, 5.0)

    def problem(self) -> str | None:
        """Why scrapes went without figures, if any did (for the end of the session)."""
        collector = self.collector
        if not collector.failed_scrapes:
            return None
        reasons = "; ".join(dict.fromkeys(collector.errors))
        return f"{collector.failed_scrapes} metrics scrape(s) had no figures: {reasons}"
