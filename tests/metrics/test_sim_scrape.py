"""A scrape during a run on the simulated board over SSH matches the model it was taken from.

The run goes through ``LiveRun`` as ``qtop run --metrics-listen`` drives it, and
is recorded. ``qtop_events_total`` says how many events the served copy of the
model had seen; the recording holds those events in the order the model saw
them, so folding its first N events gives the model of that very moment. Its
percentiles, last temperatures and iteration counts must be the scrape's, to
the bit.
"""

import asyncio
import io

from live.sim_runs import shipped
from metrics.helpers import OPENMETRICS, Scrape, scrape_url

from qtop.events import Keyframe
from qtop.live.profiler_hooks import profiler_hook_for
from qtop.live.runner import LiveOptions, LiveRun
from qtop.live.source import LiveSource
from qtop.metrics.address import parse_listen
from qtop.metrics.families import LATENCY_QUANTILES
from qtop.record.reader import open_recording
from qtop.sim import start_sim
from qtop.stats.model import SessionModel
from qtop.transport.ssh import SSHTarget, SSHTransport

MEASURED = 300
SCRAPE_AFTER = 60  # measured iterations: well inside the run, whatever the machine's speed
HANG_GUARD_S = 180


def model_after(recording, count: int) -> SessionModel:
    """The model after the first ``count`` events of the recording (keyframes aside)."""
    model = SessionModel()
    for event in open_recording(recording).events():
        if model.event_count == count:
            break
        if not isinstance(event, Keyframe):
            model.apply(event)
    assert model.event_count == count
    return model


async def scrape_mid_run(live: LiveRun, run: asyncio.Task) -> Scrape:
    """Scrape until the served model is measuring and has SCRAPE_AFTER iterations."""
    while live.metrics is None:
        assert not run.done(), run
        await asyncio.sleep(0.02)
    while True:
        assert not run.done(), "the run ended before a scrape saw it measuring"
        scrape = Scrape(await asyncio.to_thread(scrape_url, live.metrics.url, OPENMETRICS), True)
        measuring = scrape.has("qtop_phase", qtop_phase="measure")
        if measuring and scrape.value("qtop_phase", qtop_phase="measure") == 1:
            done = scrape.all("qtop_iterations_total", phase="measure", outcome="ok")
            if done and sum(done.values()) >= SCRAPE_AFTER:
                return scrape
        await asyncio.sleep(0.02)


async def test_a_scrape_during_a_simulated_run_is_the_model_of_that_moment(tmp_path):
    recording = tmp_path / "run.jsonl"
    async with start_sim(tmp_path / "sim", variant="evk", time_scale=20, seed=3) as sim:
        profile = shipped("sim-evk", sim, warmup=2, iterations=MEASURED)
        source = LiveSource(
            profile,
            SSHTransport(SSHTarget.from_profile(profile.device)),
            source_kind="sim",
            hook=profiler_hook_for(profile),
        )
        options = LiveOptions(
            profile_ref="sim-evk",
            record=str(recording),
            metrics_listen=parse_listen("127.0.0.1:0"),
        )
        out = io.StringIO()
        live = LiveRun(source, options, out=out, interactive=False)
        run = asyncio.create_task(live.run())
        scrape = await asyncio.wait_for(scrape_mid_run(live, run), HANG_GUARD_S)
        assert await asyncio.wait_for(run, HANG_GUARD_S) == 0, out.getvalue()
    assert f"metrics for Prometheus on {live.metrics.url}\n" in out.getvalue()
    assert scrape.value("qtop_session_up") == 1

    model = model_after(recording, int(scrape.value("qtop_events_total")))
    assert model.end is None  # taken during the run
    measured = model.latency_stats("measure", "")
    assert SCRAPE_AFTER <= measured.count < MEASURED
    labels = {"phase": "measure", "variant": ""}
    for q in LATENCY_QUANTILES:
        scraped = scrape.value("qtop_latency_seconds", quantile=f"{q:g}", **labels)
        assert scraped == measured.quantile(q), q
    assert scrape.value("qtop_latency_seconds_count", **labels) == measured.count
    assert scrape.value("qtop_iterations_total", outcome="ok", **labels) == model.done("measure")
    assert scrape.value("qtop_iterations_total", phase="warmup", outcome="ok") == model.done(
        "warmup", ""
    )
    zones = model.channels_of_kind("temperature")
    assert len(zones) >= 10
    for zone in zones:
        scraped = scrape.value("qtop_temperature_celsius", zone=zone.id.removeprefix("thermal/"))
        assert scraped == model.last_value(zone.id), zone.id
    for device in model.channels_of_kind("cooling"):
        scraped = scrape.value("qtop_cooling_state", cooling_device=device.id.split("/", 1)[1])
        assert scraped == model.last_value(device.id), device.id
    assert scrape.value("qtop_samples_total") == model.sample_count
