"""The simulated ``qnn-profiling-data_0.log``: what qnn-net-run measured, in an opaque file.

Real logs are binary and only ``qnn-profile-viewer`` reads them; pulling one
with ``cat`` over a shell corrupts it. The simulated log keeps that property:
a magic header and zlib-compressed JSON, read only by the simulated viewer.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MAGIC = b"QNNSIMPROF\x00\x01"
_LENGTH = struct.Struct("<I")
SDK_VERSION = "v2.45.0.260326154327"


class BadProfilingLog(ValueError):
    """The file is not a log the simulated viewer can read."""


@dataclass(frozen=True, slots=True)
class OpStat:
    """One op of one execute: cycles, and the linting fields (zero when not linting)."""

    name: str
    cycles: int
    wait_cycles: int = 0
    overlap_cycles: int = 0
    overlap_wait_cycles: int = 0
    resources: tuple[str, ...] = ()
    overlap_ops: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ExecuteStat:
    """One execute of one graph, as the backend reports it (times in µs)."""

    graph_index: int
    netrun_us: int
    rpc_us: int
    qnn_accel_us: int
    accel_us: int
    accel_excl_wait_us: int
    qnn_us: int
    accel_cycles: int
    vtcm_acquire: int
    power_on: int
    hvx_threads: int = 4
    yield_count: int = 0
    ops: tuple[OpStat, ...] = ()


@dataclass(frozen=True, slots=True)
class StageStat:
    """Init or de-init: NetRun plus the backend's four nested times (µs)."""

    netrun_us: int
    rpc_us: int
    qnn_accel_us: int
    accel_us: int
    qnn_us: int


@dataclass(frozen=True, slots=True)
class ProfilingLog:
    """Everything one qnn-net-run process recorded."""

    created_epoch_us: int
    steady_clock_us: int
    level: str  # basic, detailed or linting
    optrace: bool
    graphs: tuple[str, ...]
    init: StageStat
    deinit: StageStat
    executes: tuple[ExecuteStat, ...] = ()
    compose_us: int = 0
    ips: float = 0.0
    sdk_version: str = SDK_VERSION
    extra: dict[str, Any] = field(default_factory=dict)


def encode(log: ProfilingLog) -> bytes:
    payload = zlib.compress(json.dumps(asdict(log), separators=(",", ":")).encode(), 6)
    return MAGIC + _LENGTH.pack(len(payload)) + payload


def decode(data: bytes) -> ProfilingLog:
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _LENGTH.size:
        raise BadProfilingLog("not a QNN profiling log")
    (length,) = _LENGTH.unpack_from(data, len(MAGIC))
    body = data[len(MAGIC) + _LENGTH.size :]
    if len(body) != length:
        raise BadProfilingLog("truncated QNN profiling log")
    try:
        raw = json.loads(zlib.decompress(body))
    except (zlib.error, ValueError) as exc:
        raise BadProfilingLog(f"corrupt QNN profiling log ({exc})") from None
    executes = tuple(
        ExecuteStat(
            **{k: v for k, v in item.items() if k != "ops"},
            ops=tuple(
                OpStat(
                    **{k: v for k, v in op.items() if k not in ("resources", "overlap_ops")},
                    resources=tuple(op["resources"]),
                    overlap_ops=tuple(op["overlap_ops"]),
                )
                for op in item["ops"]
            ),
        )
        for item in raw.pop("executes")
    )
    return ProfilingLog(
        **{k: v for k, v in raw.items() if k not in ("init", "deinit", "graphs")},
        graphs=tuple(raw["graphs"]),
        init=StageStat(**raw["init"]),
        deinit=StageStat(**raw["deinit"]),
        executes=executes,
    )


def read_log(path: Path) -> ProfilingLog:
    return decode(path.read_bytes())
