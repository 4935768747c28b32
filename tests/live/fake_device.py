"""A stand-in for the device a profiler hook talks to: files and a viewer, no link."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from qtop.live.hooks import DeviceAccess
from qtop.live.translate import ProcessExit, ProfilerFile
from qtop.transport.base import CommandResult, LinkDown

GOLDEN = Path(__file__).parent.parent / "sim" / "golden"
RUN_DIR = "/spool/run"
Viewer = Callable[[str], CommandResult]


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def ok(text: str) -> CommandResult:
    return CommandResult(0, text.encode(), b"")


def failed(stderr: str, stdout: str = "", status: int = 1) -> CommandResult:
    return CommandResult(status, stdout.encode(), stderr.encode())


class FakeDevice(DeviceAccess):
    """Answers ``cat`` from ``files``, the viewer with ``viewer(script)`` (its optrace render
    from ``optrace``, written to ``--output``), and drops the link ``drop_next`` times."""

    def __init__(
        self,
        files: dict[str, str] | None = None,
        viewer: Viewer | None = None,
        optrace: str | None = None,
    ) -> None:
        self.run_dir = RUN_DIR
        self.files = files or {}
        self.viewer = viewer or (lambda script: ok(golden("linting.txt")))
        self.optrace = optrace
        self.scripts: list[str] = []
        self.drop_next = 0

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:  # type: ignore[override]
        script = argv[-1]
        self.scripts.append(script)
        if self.drop_next:
            self.drop_next -= 1
            raise LinkDown("the fake link dropped")
        if "--schematic" in script:
            if self.optrace is None:
                return failed("Error printing stats.", "No Valid Input Schematics\n")
            output = re.search(r"--output (\S+)", script)
            assert output is not None
            self.files[output.group(1)] = self.optrace
            return ok("Complete!\n")
        if "--input_log" in script:
            return self.viewer(script)
        cat = re.search(r"exec cat -- (\S+)", script)
        if cat:
            text = self.files.get(cat.group(1).strip("'"))
            return ok(text) if text is not None else CommandResult(66, b"", b"")
        return ok("")


def process(
    number: int,
    start: float,
    end: float,
    outputs: int = 1,
    status: int = 0,
    timed_out: bool = False,
    variant: str = "",
    stderr: tuple[str, ...] = (),
    name: str = "qnn-profiling-data_0.log",
    phase_start: float | None = None,
) -> ProcessExit:
    files = tuple(
        ProfilerFile(f"{RUN_DIR}/prof/{number}.{k}", f"/out/{name}") for k in range(outputs)
    )
    return ProcessExit(
        RUN_DIR, number, "measure", variant, 1, number, start, end, end - start,
        status, timed_out, stderr, files, phase_start,
    )  # fmt: skip
