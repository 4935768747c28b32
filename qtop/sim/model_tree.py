"""The files a real board would have: SDK libraries, models, configs, input lists.

Created under ``$QTOP_SIM_ROOT`` so the simulated profiles can mirror the
real ones (seed 000's /tmp/optrace-blog workspace, seed 004's
/data/local/tmp/prismml) with every path resolving.
"""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path

from qtop.sim.tools.models import (
    CONV_RELU,
    QWEN_DECODE,
    QWEN_PREFILL,
    ContextSpec,
    prismml_graph,
    write_context,
    write_schematic,
)

LIBRARIES = (
    "libQnnHtp.so",
    "libQnnHtpNetRunExtensions.so",
    "libQnnHtpProfilingReader.so",
    "libQnnChrometraceProfilingReader.so",
    "libQnnHtpOptraceProfilingReader.so",
    "libQnnJsonProfilingReader.so",
    "libGenie.so",
)
QWEN_DIR = Path("opt/qc-ai/models/qwen2.5-7b-local-6split")
OPTRACE_BLOG = Path("tmp/optrace-blog")
PRISMML_DIR = Path("data/local/tmp/prismml")
CONV_RELU_DIR = Path("models/conv_relu")
PRISMML_MEDIANS_US = {"w8a8": 4200.0, "w8a16": 5600.0, "w4a16": 4800.0}


def build_model_tree(root: Path) -> None:
    """Create (or refresh) the simulated SDK, models and workspaces under ``root``."""
    lib = root / "usr/lib"
    (lib / "rfsa/adsp").mkdir(parents=True, exist_ok=True)
    for name in LIBRARIES:
        (lib / name).write_bytes(b"\x7fELF simulated by qtop\n")
    _qwen(root)
    _prismml(root)
    _conv_relu(root)


def _qwen(root: Path) -> None:
    models = root / QWEN_DIR
    models.mkdir(parents=True, exist_ok=True)
    bins = []
    for part in range(1, 7):
        suffix = f"{part}_of_6"
        graphs = tuple(
            replace(graph, name=graph.name.replace("1_of_6", suffix))
            for graph in (QWEN_PREFILL, QWEN_DECODE)
        )
        path = models / f"qwen2_5_7b_instruct_part_{suffix}.bin"
        write_context(path, ContextSpec(graphs=graphs, weights_bytes=704643072))
        bins.append(str(path))
    (models / "tokenizer.json").write_text('{"model": {"type": "BPE"}}\n')
    (models / "htp_backend_ext_config.json").write_text(
        json.dumps({"devices": [{"soc_model": 77, "cores": [{"perf_profile": "burst"}]}]})
    )
    genie_config = {
        "dialog": {
            "version": 1,
            "type": "basic",
            "context": {"version": 1, "size": 4096, "n-vocab": 152064},
            "tokenizer": {"version": 1, "path": str(models / "tokenizer.json")},
            "engine": {
                "version": 1,
                "n-threads": 3,
                "backend": {
                    "version": 1,
                    "type": "QnnHtp",
                    "extensions": str(models / "htp_backend_ext_config.json"),
                },
                "model": {"version": 1, "type": "binary", "binary": {"ctx-bins": bins}},
            },
        }
    }
    (models / "genie_config.json").write_text(json.dumps(genie_config, indent=2))

    workspace = root / OPTRACE_BLOG
    netrun = workspace / "netrun"
    netrun.mkdir(parents=True, exist_ok=True)
    (workspace / "genie_config_run.json").write_text(json.dumps(genie_config, indent=2))
    (workspace / "prompt.txt").write_text("Reply with exactly one word: ready")
    htp_config = workspace / "htp_config.json"
    htp_config.write_text(json.dumps({"devices": [{"profiling_level": "linting"}]}))
    (workspace / "backend_extension_config.json").write_text(
        json.dumps(
            {
                "backend_extensions": {
                    "shared_library_path": str(root / "usr/lib/libQnnHtpNetRunExtensions.so"),
                    "config_file_path": str(htp_config),
                }
            }
        )
    )
    token = netrun / "input_decode.raw"
    token.write_bytes(struct.pack("<1i", 151643))
    input_list = netrun / "decode_input_list.txt"
    input_list.write_text(f"{token}\n")
    (workspace / "ctx_list.yaml").write_text(
        "version: 1\n"
        "contexts:\n"
        "  - name: qwen_decode\n"
        f"    binaryFilePath: {models / 'qwen2_5_7b_instruct_part_1_of_6.bin'}\n"
        "    contextConfig:\n"
        "      context_priority: normal\n"
        '      enable_graphs: ["token_ar1_cl4096_1_of_6"]\n'
        "    inputFilePath:\n"
        "      - graphName: token_ar1_cl4096_1_of_6\n"
        f"        inputFilePath: {input_list}\n"
    )


def _prismml(root: Path) -> None:
    workdir = root / PRISMML_DIR
    (workdir / "out").mkdir(parents=True, exist_ok=True)
    for quantisation, median_us in PRISMML_MEDIANS_US.items():
        spec = ContextSpec(graphs=(prismml_graph(median_us),), weights_bytes=183500800)
        write_context(workdir / f"prismml_{quantisation}_seq64.bin", spec)
    ids, mask = workdir / "input_ids.raw", workdir / "attention_mask.raw"
    ids.write_bytes(struct.pack("<64i", *range(64)))
    mask.write_bytes(struct.pack("<64i", *([1] * 64)))
    (workdir / "inputs.txt").write_text(f"input_ids:={ids} attention_mask:={mask}\n")


def _conv_relu(root: Path) -> None:
    workdir = root / CONV_RELU_DIR
    workdir.mkdir(parents=True, exist_ok=True)
    write_context(
        workdir / "qnn_model_float_optrace.bin",
        ContextSpec(graphs=(CONV_RELU,), weights_bytes=53248),
    )
    write_schematic(workdir / f"{CONV_RELU.name}_schematic.bin", CONV_RELU.name)
    raw = workdir / "input.raw"
    raw.write_bytes(bytes(4 * 299 * 299 * 3 // 64))
    (workdir / "input_list_float_abs.txt").write_text(f"{raw}\n")
