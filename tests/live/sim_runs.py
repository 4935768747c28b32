"""Runs of shipped and test profiles against the simulated board, over real SSH or adb.

``sim`` in the helpers is a ``link.links.SimLink`` (or a RunningSim, for SSH):
its ``device_overrides`` point a profile at the board over its transport.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from link.recording import of_kind, record

from qtop.device.plan import RunOptions
from qtop.live.backoff import Backoff
from qtop.live.hooks import ProcessHook
from qtop.live.profiler_hooks import profiler_hook_for
from qtop.live.source import LiveSource
from qtop.profiles import Profile, load_profile, load_profile_text, resolve_profile
from qtop.sim.config import GenieConfig, SimConfig, default_config
from qtop.transport.factory import make_transport

FAST = Backoff(initial_s=0.1, maximum_s=0.5)
# Genie in a hurry: the figures keep their shape, a query takes about 60 ms.
QUICK_GENIE = GenieConfig(
    init_ms=20.0, prefill_tokens_per_s=400.0, decode_tokens_per_s=200.0,
    generated_tokens=4, free_ms=5.0,
)  # fmt: skip
NETRUN = (
    'qnn-net-run --backend libQnnHtp.so --retrieve_context "$QTOP_SIM_ROOT/{context}" '
    '--input_list "$QTOP_SIM_ROOT/{inputs}" --output_dir "$QTOP_SIM_ROOT/tmp/out" '
    "--num_inferences {n} {extra}"
)
PRISMML = ("data/local/tmp/prismml/prismml_w8a8_seq64.bin", "data/local/tmp/prismml/inputs.txt")
CONV_RELU = (
    "models/conv_relu/qnn_model_float_optrace.bin",
    "models/conv_relu/input_list_float_abs.txt",
)
SCHEMATIC = "$QTOP_SIM_ROOT/models/conv_relu/convReluModel_schematic.bin"
GENIE = (
    'genie-t2t-run -c "$QTOP_SIM_ROOT/tmp/optrace-blog/genie_config_run.json" '
    '--prompt_file "$QTOP_SIM_ROOT/tmp/optrace-blog/prompt.txt" '
    '--profile "$QTOP_SIM_ROOT/tmp/genie.json"'
)


def quick_genie_config(variant: str = "evk") -> SimConfig:
    return dataclasses.replace(default_config(variant), genie=QUICK_GENIE)


def netrun(model: tuple[str, str], n: int, extra: str = "") -> str:
    return NETRUN.format(context=model[0], inputs=model[1], n=n, extra=extra).strip()


def shipped(name: str, sim: Any, **run: Any) -> Profile:
    """A shipped profile pointed at ``sim``, with run keys replaced."""
    profile = load_profile(resolve_profile(name)).replace_device(**sim.device_overrides())
    return profile.replace_run(**run) if run else profile


def custom(sim: Any, run_yaml: str) -> Profile:
    overrides = sim.device_overrides().items()
    device = "".join(f"  {k}: {v}\n" for k, v in overrides if v is not None)
    text = f"name: simprofiler\ndevice:\n{device}  sample_interval: 50ms\nrun:\n{run_yaml}"
    return load_profile_text(text, "simprofiler.yaml")


async def run_profile(
    profile: Profile, path: Path, hook: ProcessHook | None = None, observer: Any = None
) -> list[dict[str, Any]]:
    source = LiveSource(
        profile,
        make_transport(profile),
        source_kind="sim",
        backoff=FAST,
        hook=hook or profiler_hook_for(profile),
        run_options=RunOptions(calibrations=3),
    )
    return await record(source, path, observer)


def truth(sim: Any, tool: str) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in sim.ground_truth_path.read_text().splitlines()]
    return [r for r in records if r["tool"] == tool and "--version" not in r["argv"]]


def iterations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return of_kind(events, "iteration")


def notes(events: list[dict[str, Any]], level: str | None = None) -> list[str]:
    return [
        e["text"]
        for e in of_kind(events, "log")
        if e["stream"] == "qtop" and (level is None or e["level"] == level)
    ]
