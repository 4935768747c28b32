"""docs/metrics.md lists exactly what the endpoint serves; the dashboard asks only for that."""

import json
import re
from pathlib import Path

import pytest
from fixtures.make_ui_recordings import glasses_events, sustained_events
from fixtures.sessions import simple_session_events
from metrics.helpers import Scrape, fold, paced_events
from prometheus_client import CollectorRegistry
from prometheus_client.openmetrics.exposition import generate_latest

from qtop.events import Iteration, PhaseChange
from qtop.metrics.capture import Capture, copy_model
from qtop.metrics.server import SessionCollector

DOCS = Path(__file__).resolve().parents[2] / "docs"


def documented() -> dict[str, tuple[str, str, set[str]]]:
    """The tables of "Every metric": name -> (type, unit, labels)."""
    text = (DOCS / "metrics.md").read_text().split("## Every metric", 1)[1]
    rows = [
        [cell.strip() for cell in line.split("|")[1:5]]
        for line in text.splitlines()
        if line.startswith("| `qtop_")
    ]
    table = {
        name.strip("`"): (kind, unit, set(re.findall(r"`(\w+)`", labels)))
        for name, kind, unit, labels in rows
    }
    assert len(table) == len(rows), "a metric is documented twice"
    return table


def served_name(family) -> str:
    suffix = {"counter": "_total", "info": "_info"}.get(family.type, "")
    return family.name + suffix


def planning_events():
    """A session stopped mid-measurement with Genie figures: the plan and metrics show."""
    events = [e for e in simple_session_events("v1") if not isinstance(e, PhaseChange)][:80]
    events.insert(2, PhaseChange(t=1000.0, phase="measure", variant="v1", planned_duration_s=60))
    events.append(
        Iteration(t=1100.0, seq=999, phase="measure", variant="v1", start=1099.9, end=1100.0,
                  latency_s=0.1, metrics={"decode_tok_s": 12.5, "ttft_s": 0.25})
    )  # fmt: skip
    return events


@pytest.fixture(scope="module")
def scrapes() -> list[Scrape]:
    out = []
    for events in (sustained_events(), glasses_events(), simple_session_events(),
                   simple_session_events()[:100], planning_events(), paced_events()):  # fmt: skip
        model = fold(events)
        collector = SessionCollector()

        class Tap:
            def capture(self, model=model):
                return Capture(copy_model(model), 0.001)

        collector.tap = Tap()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        out.append(Scrape(generate_latest(registry).decode(), openmetrics=True))
    return out


def test_every_family_served_is_documented_with_its_type_unit_and_labels(scrapes):
    table = documented()
    served = {}
    for scrape in scrapes:
        for family in scrape.families.values():
            labels = {name for sample in family.samples for name in sample.labels}
            kind, unit, seen = served.get(served_name(family), (family.type, family.unit, set()))
            served[served_name(family)] = (kind, unit, seen | labels)
    assert sorted(served) == sorted(table)
    for name, (kind, unit, labels) in served.items():
        doc_kind, doc_unit, doc_labels = table[name]
        assert (kind, unit) == (doc_kind, doc_unit), name
        assert labels - {"device", "profile"} == doc_labels, name
        if name not in (
            "qtop_session_up",
            "qtop_metrics_failed_scrapes_total",
            "qtop_metrics_capture_seconds",
            "qtop_metrics_series_dropped",
        ):
            assert {"device", "profile"} <= labels, name  # fmt: skip


def test_the_dashboard_is_importable_and_queries_only_served_metrics():
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    names = set(documented())
    queryable = names | {f"{n}_count" for n in names} | {f"{n}_sum" for n in names}
    panels = dashboard["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    assert dashboard["uid"] and dashboard["title"] and dashboard["id"] is None
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert variables == {"datasource", "device", "profile", "variant"}
    exprs = [v["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    titles = []
    for panel in panels:
        if panel["type"] == "row":
            continue
        titles.append(panel["title"])
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        exprs += [target["expr"] for target in panel["targets"]]
    for expr in exprs:
        used = set(re.findall(r"\bqtop_[a-z_]+", expr))
        assert used and used <= queryable, expr
    wanted = {"qtop_latency_seconds", "qtop_power_watts", "qtop_energy_per_inference_joules",
              "qtop_temperature_celsius", "qtop_cooling_state", "qtop_link_up"}  # fmt: skip
    assert wanted <= {name for expr in exprs for name in re.findall(r"qtop_[a-z_]+", expr)}
    # Panels are laid out on Grafana's 24-column grid without overlapping.
    cells = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in cells, panel["title"]
                cells.add((x, y))
