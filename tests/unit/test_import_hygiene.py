"""The headless core must never import Textual (design principle 2)."""

import pkgutil
import subprocess
import sys

import qtop

ALL_MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(qtop.__path__, "qtop.")
    if not info.name.endswith("__main__")
)
HEADLESS_MODULES = [name for name in ALL_MODULES if not name.startswith("qtop.ui")]

PROBE = """
import importlib, sys
failures = []
for name in sys.argv[1:]:
    importlib.import_module(name)
    leaked = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
    if leaked:
        failures.append(f"{name} imports {leaked[0]}")
        break
print("\\n".join(failures))
"""


def test_there_are_headless_modules_to_check():
    assert "qtop.stats.model" in HEADLESS_MODULES
    assert "qtop.cli" in HEADLESS_MODULES


def test_no_module_outside_qtop_ui_imports_textual():
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *HEADLESS_MODULES], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_headless_commands_run_without_textual(fixtures_dir):
    script = (
        "import sys\n"
        "from qtop.cli import main\n"
        f"code = main(['report', {str(fixtures_dir / 'recordings' / 'simple.jsonl')!r}])\n"
        "assert not any(m.startswith('textual') for m in sys.modules), 'textual imported'\n"
        "raise SystemExit(code)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_importing_qtop_prints_no_warning_of_a_dependency():
    # Default warning filters, as a user's shell has them: cryptography 51 warns about
    # DSA once per name asyncssh imports, which would open every command's output.
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    result = subprocess.run(
        [sys.executable, "-c", script, *ALL_MODULES], capture_output=True, text=True, check=True
    )
    assert result.stderr == ""
