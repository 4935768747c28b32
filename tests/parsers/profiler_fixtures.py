"""The profiler fixtures (tests/fixtures/profiler) and the kind each one is written in."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "profiler"

KIND_OF: dict[str, str] = {
    "seed_linting_excerpt.txt": "qnn-viewer-text",
    "viewer_basic_2_13.txt": "qnn-viewer-text",
    "viewer_detailed_2_45.txt": "qnn-viewer-text",
    "viewer_linting_multigraph.txt": "qnn-viewer-text",
    "snpe_diagview_linting.txt": "qnn-viewer-text",
    "viewer_detailed.csv": "qnn-viewer-csv",
    "viewer_tutorial_rows.csv": "qnn-viewer-csv",
    "viewer_standardized.json": "qnn-viewer-json",
    "optrace_chrometrace.json": "optrace",
    "runtrace.json": "runtrace",
    "qhas_summary.json": "qhas",
    "genie_profile.json": "genie-profile",
    "genie_profile_seed.json": "genie-profile",
    "genie_stdout_kpis.txt": "genie-stdout",
    "genie_stdout_new.txt": "genie-stdout",
    "ai_hub_profile.json": "ai-hub",
}
REFUSED = ("onnxruntime_qnn_ep.csv",)


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def path(name: str) -> Path:
    return FIXTURES / name
