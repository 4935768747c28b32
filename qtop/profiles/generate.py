"""The schema's other forms: a JSON Schema for editors, and the key tables of the docs.

``python -m qtop.profiles.generate`` rewrites ``profiles/profile.schema.json``
(shipped next to the profiles, so their ``$schema=profile.schema.json`` header
works in a checkout and in the installed package alike) and the tables in
``docs/profiles.md`` (between their BEGIN/END markers, leaving the prose
around them alone); ``--check`` only says whether they are current.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from qtop.profiles.discovery import builtin_profile_dir
from qtop.profiles.model import (
    Cooldown,
    DeviceProfile,
    MeterChannel,
    Profile,
    ProfilerOutput,
    PushItem,
    RunProfile,
    Variant,
)
from qtop.profiles.rules import json_schema_for
from qtop.profiles.schema import JsonContext, SchemaField, schema_fields
from qtop.profiles.sections import Section

SCHEMA_FILE = builtin_profile_dir() / "profile.schema.json"
DOCS_FILE = Path(__file__).resolve().parent.parent.parent / "docs" / "profiles.md"
# The tables of docs/profiles.md: marker name -> the section it documents.
DOC_TABLES: dict[str, type] = {
    "top": Profile,
    "device": DeviceProfile,
    "device.power_meter": MeterChannel,
    "run": RunProfile,
    "run.cooldown": Cooldown,
    "run.profiler": ProfilerOutput,
    "run.variants": Variant,
    "run.push": PushItem,
}
_GENERATED = "generated from qtop/profiles/model.py by python -m qtop.profiles.generate"


def json_schema() -> dict[str, Any]:
    """The profile format as JSON Schema (draft-07, what YAML language servers read)."""
    body = Section(Profile).json_schema(JsonContext(json_schema_for))
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "qtop profile",
        "description": "A device (how to reach it, what to sample) and a run (what to "
        "execute, how long, how to measure latency). See docs/profiles.md.",
        **body,
    }


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(field: SchemaField) -> str:
    if field.key.required:
        return "(required)"
    if field.key.default_text is not None:
        return field.key.default_text
    if field.default is None:
        return "—"
    return field.key.kind.show(field.default)


def key_table(cls: type) -> str:
    """The markdown table of one section's keys."""
    rows = ["| key | default | accepts | meaning |", "|---|---|---|---|"]
    for field in schema_fields(cls):
        cells = (f"`{field.name}`", _default(field), field.key.kind.accepts(), field.key.doc)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


def _block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- BEGIN keys: {re.escape(name)} .*?-->\n).*?(<!-- END keys: {re.escape(name)} -->)",
        re.DOTALL,
    )


def docs_with_tables(text: str) -> str:
    """``docs/profiles.md`` with every generated table replaced by the current one."""
    for name, cls in DOC_TABLES.items():
        found = _block(name).search(text)
        if found is None:
            raise ValueError(f"docs/profiles.md has no table for {name!r}")
        table = f"{found[1]}{key_table(cls)}\n{found[2]}"
        text = text[: found.start()] + table + text[found.end() :]
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qtop.profiles.generate")
    parser.add_argument("--check", action="store_true", help="only report what is stale")
    args = parser.parse_args(argv)
    wanted = {
        SCHEMA_FILE: json_schema_text(),
        DOCS_FILE: docs_with_tables(DOCS_FILE.read_text(encoding="utf-8")),
    }
    stale = [
        path
        for path, text in wanted.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    for path in stale:
        if args.check:
            sys.stdout.write(f"{path}: out of date\n")
        else:
            path.write_text(wanted[path], encoding="utf-8")
            sys.stdout.write(f"{path}: updated\n")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
