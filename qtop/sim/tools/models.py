"""Simulated context binaries: which graphs a model has, its ops and its latency.

A real context binary is opaque; the simulated one is a magic prefix plus
JSON describing each graph: its median execute latency on a cool NPU, the
share of the accelerator time spent waiting, and its ops (cycles on a cool
NPU, scheduler wait, resources). The simulated tools read it to decide what
to sleep and what to report, so different "models" behave differently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CONTEXT_MAGIC = b"QNNSIMCTX\x00"
SCHEMATIC_MAGIC = b"QNNSIMSCHEMATIC\x00"


class BadContextBinary(ValueError):
    """Not a context binary the simulated HTP can load."""


@dataclass(frozen=True, slots=True)
class OpSpec:
    name: str
    cycles: int
    wait_cycles: int
    resources: tuple[str, ...]
    htp_op: str


@dataclass(frozen=True, slots=True)
class GraphSpec:
    name: str
    median_us: float
    accel_share: float  # Accelerator (execute) time / NetRun per execute
    wait_share: float  # of Accelerator (execute) time, on a cool NPU
    ops: tuple[OpSpec, ...]


@dataclass(frozen=True, slots=True)
class ContextSpec:
    graphs: tuple[GraphSpec, ...]
    weights_bytes: int

    def graph(self, name: str) -> GraphSpec | None:
        return next((g for g in self.graphs if g.name == name), None)


def _op(name: str, cycles: int, wait: int, resources: str, htp_op: str) -> OpSpec:
    return OpSpec(name, cycles, wait, tuple(r for r in resources.split(",") if r), htp_op)


# Seed 000: the decode graph of split 1 of 6 exposes three top-level ops.
QWEN_DECODE = GraphSpec(
    "token_ar1_cl4096_1_of_6",
    2271.0,
    0.61,
    0.885,
    (
        _op("Input OpId_2", 0, 0, "", "q::*InputSlice"),
        _op("/Gather:OpId_21", 7411, 420, "DMA", "q::Gather"),
        _op("Output OpId_3", 4958, 86, "DMA", "q::*OutputSlice"),
    ),
)
QWEN_PREFILL = GraphSpec(
    "prompt_ar128_cl4096_1_of_6",
    11800.0,
    0.74,
    0.42,
    (
        _op("Input OpId_2", 1920, 0, "DMA", "q::*InputSlice"),
        _op("/Gather:OpId_21", 48211, 2210, "DMA", "q::Gather"),
        _op("Output OpId_3", 39650, 640, "DMA", "q::*OutputSlice"),
    ),
)


def prismml_graph(median_us: float) -> GraphSpec:
    scale = median_us / 4200.0
    ops = (
        ("Input OpId_2", 2504, 0, "DMA", "q::*InputSlice"),
        ("/embed/Gather:OpId_18", 9120, 310, "DMA", "q::Gather"),
        ("/layers.0/attn/MatMul:OpId_25", 39578, 820, "HMX,DMA", "q::ConvLayer.opt"),
        ("/layers.0/attn/Softmax:OpId_31", 12044, 1460, "HVX", "q::Softmax"),
        ("/layers.0/mlp/MatMul:OpId_40", 27762, 610, "HMX,DMA", "q::ConvLayer.opt"),
        ("/layers.0/mlp/Gelu:OpId_44", 8730, 990, "HVX", "q::Gelu"),
        ("/lm_head/MatMul:OpId_52", 31214, 1240, "HMX,DMA", "q::ConvLayer.opt"),
        ("Output OpId_3", 47682, 380, "DMA", "q::*OutputSlice"),
    )
    return GraphSpec(
        "prismml_seq64",
        median_us,
        0.84,
        0.30,
        tuple(_op(n, round(c * scale), round(w * scale), r, h) for n, c, w, r, h in ops),
    )


CONV_RELU = GraphSpec(
    "convReluModel",
    410.0,
    0.86,
    0.12,
    (
        _op("Input OpId_2", 2504, 0, "DMA", "q::*InputSlice"),
        _op("Conv2d_0:OpId_16", 18714, 120, "HVX", "q::ConvLayer.opt.inconv"),
        _op("Relu_0:OpId_21", 9852, 60, "HVX", "q::Relu"),
        _op("MatMul_0:OpId_25", 39578, 210, "HMX", "q::ConvLayer.opt"),
        _op("Output OpId_3", 56166, 300, "DMA", "q::*OutputSlice"),
    ),
)


def write_context(path: Path, spec: ContextSpec) -> None:
    body = {
        "weights_bytes": spec.weights_bytes,
        "graphs": [
            {
                "name": g.name,
                "median_us": g.median_us,
                "accel_share": g.accel_share,
                "wait_share": g.wait_share,
                "ops": [
                    [o.name, o.cycles, o.wait_cycles, list(o.resources), o.htp_op] for o in g.ops
                ],
            }
            for g in spec.graphs
        ],
    }
    path.write_bytes(CONTEXT_MAGIC + json.dumps(body).encode())


def read_context(path: Path) -> ContextSpec:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadContextBinary(f"cannot read {path}: {exc.strerror}") from None
    if not data.startswith(CONTEXT_MAGIC):
        raise BadContextBinary(f"{path} is not a context binary")
    try:
        body = json.loads(data[len(CONTEXT_MAGIC) :])
        graphs = tuple(
            GraphSpec(
                g["name"],
                float(g["median_us"]),
                float(g["accel_share"]),
                float(g["wait_share"]),
                tuple(OpSpec(n, int(c), int(w), tuple(r), h) for n, c, w, r, h in g["ops"]),
            )
            for g in body["graphs"]
        )
        return ContextSpec(graphs=graphs, weights_bytes=int(body["weights_bytes"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise BadContextBinary(f"{path} is a corrupt context binary ({exc})") from None


def write_schematic(path: Path, graph: str) -> None:
    path.write_bytes(SCHEMATIC_MAGIC + graph.encode())


def schematic_graph(path: Path) -> str | None:
    """The graph a schematic describes, or None when the file is not a schematic."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(SCHEMATIC_MAGIC):
        return None
    return data[len(SCHEMATIC_MAGIC) :].decode(errors="replace")
