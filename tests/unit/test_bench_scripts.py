"""The bench scripts import what qtop still has.

A bench imports most of what it measures inside the function that runs it, so a
renamed constant shows only when someone runs that bench, maybe a release later
(``bench/client_cpu.py`` once failed so before its simulator started).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def qtop_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) of every ``from qtop... import name`` in the file, at any depth."""
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
            continue
        if node.module == "qtop" or node.module.startswith("qtop."):
            found.extend((node.lineno, node.module, alias.name) for alias in node.names)
    return found


def missing(module_name: str, name: str) -> bool:
    module = importlib.import_module(module_name)
    if hasattr(module, name):
        return False
    try:
        importlib.import_module(f"{module_name}.{name}")
    except ImportError:
        return True
    return False


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda path: path.name)
def test_every_name_a_bench_imports_from_qtop_exists(script):
    imports = qtop_imports(script)
    gone = [f"line {line}: from {module} import {name}" for line, module, name in imports
            if missing(module, name)]  # fmt: skip
    assert not gone, f"{script.name} imports what qtop no longer has: {gone}"


def test_the_check_finds_a_name_that_is_gone(tmp_path):
    script = tmp_path / "stale.py"
    script.write_text("def serve():\n    from qtop.commands.demo import BOARDS, DEMO_TIME_SCALE\n")
    imports = qtop_imports(script)
    assert imports == [
        (2, "qtop.commands.demo", "BOARDS"),
        (2, "qtop.commands.demo", "DEMO_TIME_SCALE"),
    ]
    assert [missing(module, name) for _, module, name in imports] == [False, True]
