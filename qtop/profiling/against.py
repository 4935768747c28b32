"""A device's per-op profile set against AI Hub's for the same model (``qtop ops --against``).

AI Hub names layers by their source-framework path (``/features/0/Conv``);
QNN on the device adds ``:OpId_n`` (and ``_token_n`` in LLM splits), so ops
are lined up by ``op_join_key``. Both sides give HTP cycles per op (AI Hub's
``execution_cycles``, the device's median over measured executes); where
either lacks cycles, microseconds are used instead, and never one against
the other.

The two absolute scales differ for reasons that are not the op's fault (the
device's clock under DCVS, thread summing, a different SoC in AI Hub's farm),
so an op is judged against the overall ratio of the ops both sides have: an
op the device spends ``DEPARTURE`` times more (or less) on, relative to that
ratio, is one where the device departs from AI Hub's estimate. Ops are listed
by their excess: what the device spent beyond what AI Hub's figure, scaled by
the overall ratio, predicts. Layers AI Hub fused (0 time, 0 cycles) and
layers it ran on another compute unit (CPU/GPU fallback) are named apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from qtop.profiling.aggregate import Breakdown, OpBreakdown
from qtop.profiling.model import Number, ParsedProfile, op_join_key

# An op whose device/AI Hub ratio is this many times the overall ratio (or its inverse)
# departs from the estimate; below it, the difference is within what DCVS and
# per-execute noise move an op by.
DEPARTURE = 1.5
NPU_UNITS = frozenset({"NPU", "HTP", "DSP"})


@dataclass(frozen=True, slots=True)
class HubLayer:
    """One AI Hub layer (layers of one name added up)."""

    key: str
    name: str
    op_type: str
    compute_unit: str
    time_us: float | None
    cycles: float | None

    @property
    def fused(self) -> bool:
        return not self.time_us and not self.cycles


@dataclass(frozen=True, slots=True)
class DeviceOp:
    """One device op over the measured executes (ops of one join key added up)."""

    key: str
    name: str
    graphs: tuple[str, ...]
    cycles: float | None
    time_us: float | None
    share: float | None


@dataclass(frozen=True, slots=True)
class OpMatch:
    """An op both sides have, in the unit both give (``cycles`` or ``us``)."""

    key: str
    device_name: str
    hub_name: str
    compute_unit: str
    unit: str
    device: float
    hub: float
    device_share: float | None
    hub_share: float | None
    ratio: float | None
    departure: float | None
    excess: float | None
    departs: bool


@dataclass(frozen=True, slots=True)
class OpsAgainstHub:
    """The line-up: matched ops (largest excess first), what only one side has, and totals."""

    unit: str
    overall_ratio: float | None
    matched: tuple[OpMatch, ...]
    device_only: tuple[DeviceOp, ...]
    hub_only: tuple[HubLayer, ...]
    hub_fused: tuple[HubLayer, ...]
    hub_off_npu: tuple[HubLayer, ...]
    device_median_us: float | None
    hub_median_us: float | None
    hub_estimate_us: float | None
    hub_min_us: float | None
    notes: tuple[str, ...]

    @property
    def departing(self) -> tuple[OpMatch, ...]:
        return tuple(match for match in self.matched if match.departs)

    def to_dict(self) -> dict[str, Any]:
        document = dataclasses.asdict(self)
        document["departing"] = [match.key for match in self.departing]
        return document


def _number(value: Number | None) -> float | None:
    return None if value is None else float(value)


def _add(total: float | None, value: float | None) -> float | None:
    if value is None:
        return total
    return value if total is None else total + value


def hub_layers(hub: ParsedProfile) -> dict[str, HubLayer]:
    """AI Hub's layers by join key (every execute of the AI Hub profile is the one layer list)."""
    layers: dict[str, HubLayer] = {}
    for graph in hub.graphs:
        for execute in graph.executes[:1]:
            for op in execute.ops:
                key = op_join_key(op.name)
                seen = layers.get(key)
                time_us, cycles = _number(op.time_us), _number(op.cycles)
                if seen is not None:
                    time_us, cycles = _add(seen.time_us, time_us), _add(seen.cycles, cycles)
                layers[key] = HubLayer(
                    key=key,
                    name=op.name,
                    op_type=op.op_type,
                    compute_unit=op.compute_unit.upper(),
                    time_us=time_us,
                    cycles=cycles,
                )
    return layers


def device_ops(result: Breakdown) -> dict[str, DeviceOp]:
    """The device's ops by join key, over every graph of the file."""
    ops: dict[str, DeviceOp] = {}
    for graph in result.graphs:
        for op in graph.ops:
            key = op_join_key(op.name)
            seen = ops.get(key)
            ops[key] = _merge_device(seen, op, graph.name)
    return ops


def _merge_device(seen: DeviceOp | None, op: OpBreakdown, graph: str) -> DeviceOp:
    if seen is None:
        return DeviceOp(
            key=op_join_key(op.name),
            name=op.name,
            graphs=(graph,),
            cycles=op.cycles_median,
            time_us=op.time_us_median,
            share=op.share_median,
        )
    return DeviceOp(
        key=seen.key,
        name=seen.name,
        graphs=seen.graphs if graph in seen.graphs else (*seen.graphs, graph),
        cycles=_add(seen.cycles, op.cycles_median),
        time_us=_add(seen.time_us, op.time_us_median),
        share=_add(seen.share, op.share_median),
    )


def _common_unit(pairs: Iterable[tuple[DeviceOp, HubLayer]]) -> str | None:
    """Cycles when every pair with a figure has cycles on both sides, else microseconds."""
    pairs = list(pairs)
    with_cycles = sum(1 for d, h in pairs if d.cycles is not None and h.cycles is not None)
    with_time = sum(1 for d, h in pairs if d.time_us is not None and h.time_us is not None)
    if with_cycles == 0 and with_time == 0:
        return None
    return "cycles" if with_cycles >= with_time else "us"


def _value(side: DeviceOp | HubLayer, unit: str) -> float | None:
    return side.cycles if unit == "cycles" else side.time_us


def compare_ops(device: Breakdown, hub_profile: ParsedProfile, hub: Breakdown) -> OpsAgainstHub:
    """Line the device's ops up with AI Hub's layers and find where they part."""
    layers = hub_layers(hub_profile)
    ops = device_ops(device)
    fused = tuple(layer for layer in layers.values() if layer.fused)
    off_npu = tuple(
        layer
        for layer in layers.values()
        if layer.compute_unit and layer.compute_unit not in NPU_UNITS and not layer.fused
    )
    comparable = {
        key: (op, layers[key])
        for key, op in ops.items()
        if key in layers and not layers[key].fused and layers[key] not in off_npu
    }
    unit = _common_unit(comparable.values()) or "cycles"
    valued = {
        key: (op, layer, _value(op, unit), _value(layer, unit))
        for key, (op, layer) in comparable.items()
    }
    valued = {k: v for k, v in valued.items() if v[2] is not None and v[3] is not None}
    device_total = sum(v[2] for v in valued.values())  # type: ignore[misc]
    hub_total = sum(v[3] for v in valued.values())  # type: ignore[misc]
    overall = device_total / hub_total if hub_total > 0 and device_total > 0 else None
    matched = [
        _match(key, op, layer, dev, ref, unit, device_total, hub_total, overall)  # type: ignore[arg-type]
        for key, (op, layer, dev, ref) in valued.items()
    ]
    matched.sort(key=lambda m: -(m.excess if m.excess is not None else float("-inf")))
    notes = []
    unvalued = sorted(set(comparable) - set(valued))
    if unvalued:
        notes.append(
            f"{len(unvalued)} op(s) on both sides lack {unit} on one of them and are not "
            f"compared: {', '.join(unvalued[:5])}{' ...' if len(unvalued) > 5 else ''}"
        )
    hub_summary = hub.ai_hub
    return OpsAgainstHub(
        unit=unit,
        overall_ratio=overall,
        matched=tuple(matched),
        device_only=tuple(op for key, op in ops.items() if key not in layers),
        hub_only=tuple(
            layer
            for key, layer in layers.items()
            if key not in ops and not layer.fused and layer not in off_npu
        ),
        hub_fused=fused,
        hub_off_npu=off_npu,
        device_median_us=_device_median_us(device),
        hub_median_us=hub_summary.median_us if hub_summary else None,
        hub_estimate_us=hub_summary.estimated_us if hub_summary else None,
        hub_min_us=hub_summary.min_us if hub_summary else None,
        notes=tuple(notes),
    )


def _match(
    key: str,
    op: DeviceOp,
    layer: HubLayer,
    device: float,
    hub: float,
    unit: str,
    device_total: float,
    hub_total: float,
    overall: float | None,
) -> OpMatch:
    ratio = device / hub if hub > 0 else None
    departure = ratio / overall if ratio is not None and overall else None
    excess = device - hub * overall if overall is not None else None
    departs = departure is not None and (departure >= DEPARTURE or departure <= 1 / DEPARTURE)
    if hub == 0 and device > 0:
        departs = True
    return OpMatch(
        key=key,
        device_name=op.name,
        hub_name=layer.name,
        compute_unit=layer.compute_unit,
        unit=unit,
        device=device,
        hub=hub,
        device_share=device / device_total if device_total > 0 else None,
        hub_share=hub / hub_total if hub_total > 0 else None,
        ratio=ratio,
        departure=departure,
        excess=excess,
        departs=departs,
    )


def _device_median_us(result: Breakdown) -> float | None:
    """The sum over graphs of each graph's median accelerator time (one inference's worth)."""
    medians = [g.accelerator_us_median for g in result.graphs if g.accelerator_us_median]
    return sum(medians) if medians else None
