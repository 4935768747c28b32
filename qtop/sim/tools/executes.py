"""Pure arithmetic of one simulated execute: its latency and what the backend reports.

The latency is drawn from the configured distribution around the graph's
median, multiplied by the thermal multiplier (cdsp state) and the perf
profile, plus power-on time on the first executes of a process. The
breakdown keeps the real nesting NetRun > RPC > QNN accelerator >
Accelerator >= Accelerator excluding wait, and the scheduler wait grows with
the cdsp state so a heated run's per-op view differs from a cool one.
"""

from __future__ import annotations

import math
import random

from qtop.sim.config import LatencyConfig
from qtop.sim.tools.models import GraphSpec
from qtop.sim.tools.profiling_log import ExecuteStat, OpStat

# Latency factor per HTP performance mode, relative to the model's median (which is
# what a run without --perf_profile gets).
PERF_PROFILES = {
    "burst": 0.93,
    "high_performance": 0.97,
    "default": 1.0,
    "sustained_high_performance": 1.08,
    "balanced": 1.25,
    "low_balanced": 1.45,
    "high_power_saver": 1.6,
    "power_saver": 1.9,
    "low_power_saver": 2.3,
    "extreme_power_saver": 3.0,
}
_VTCM_ACQUIRE = (517, 192, 78)
_POWER_ON = (5936, 10, 10)
_QNN_BELOW_NETRUN_US = 3


def sample_latency_us(
    graph: GraphSpec,
    config: LatencyConfig,
    rng: random.Random,
    multiplier: float,
    perf_factor: float,
    index_in_process: int,
) -> int:
    """One execute's NetRun latency in whole microseconds."""
    median = graph.median_us * config.median_scale
    if config.distribution == "lognormal":
        base = median * math.exp(rng.gauss(0.0, config.sigma))
    elif config.distribution == "normal":
        base = max(0.5 * median, median * (1.0 + rng.gauss(0.0, config.sigma)))
    else:
        base = median
    extra = (
        config.warmup_extra_us[index_in_process]
        if index_in_process < len(config.warmup_extra_us)
        else 0.0
    )
    return max(1, round(base * multiplier * perf_factor + extra))


def wait_share(graph: GraphSpec, cdsp_state: int, growth: float) -> float:
    """Share of the accelerator time spent waiting: the cool value, rising with throttling."""
    return 1.0 - (1.0 - graph.wait_share) / (1.0 + growth * cdsp_state)


def execute_stat(
    graph: GraphSpec,
    graph_index: int,
    latency_us: int,
    cdsp_state: int,
    multiplier: float,
    config: LatencyConfig,
    rng: random.Random,
    index_in_process: int,
) -> ExecuteStat:
    """What the backend records for one execute of ``latency_us`` NetRun microseconds."""
    accel_us = round(latency_us * graph.accel_share)
    wait = wait_share(graph, cdsp_state, config.wait_growth_per_state)
    growth = 1.0 + config.wait_growth_per_state * cdsp_state
    ops: list[OpStat] = []
    names = [op.name for op in graph.ops]
    for position, op in enumerate(graph.ops):
        jitter = max(0.8, rng.gauss(1.0, 0.02))
        cycles = round(op.cycles * multiplier * jitter)
        wait_cycles = round(op.wait_cycles * growth * jitter)
        background = ("HVX" in op.resources) or ("HMX" in op.resources)
        overlap = round(cycles * 0.4) if background else 0
        overlap_ops = tuple(n for n in names[position + 1 : position + 3]) if overlap else ()
        ops.append(
            OpStat(
                name=op.name,
                cycles=cycles,
                wait_cycles=wait_cycles,
                overlap_cycles=overlap,
                overlap_wait_cycles=round(wait_cycles * 0.2),
                resources=op.resources,
                overlap_ops=overlap_ops,
            )
        )
    slot = min(index_in_process, len(_VTCM_ACQUIRE) - 1)
    return ExecuteStat(
        graph_index=graph_index,
        netrun_us=latency_us,
        rpc_us=round(latency_us * 0.989),
        qnn_accel_us=round(latency_us * min(0.98, graph.accel_share + 0.036)),
        accel_us=accel_us,
        accel_excl_wait_us=round(accel_us * (1.0 - wait)),
        qnn_us=max(1, latency_us - _QNN_BELOW_NETRUN_US),
        accel_cycles=sum(op.cycles for op in ops) + sum(op.wait_cycles for op in ops),
        vtcm_acquire=_VTCM_ACQUIRE[slot],
        power_on=_POWER_ON[slot],
        ops=tuple(ops),
    )
