"""The schema's other forms stay true: the JSON Schema editors use, and the docs tables."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from qtop.cli import main
from qtop.profiles import builtin_profile_dir, check_profile_text
from qtop.profiles.generate import DOCS_FILE, SCHEMA_FILE, docs_with_tables, json_schema

from .profile_cases import CASES, case_ids, profile_with

SHIPPED = sorted(builtin_profile_dir().glob("*.yaml"))
GOOD = [(case.key, value) for case in CASES for value in case.good]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_the_shipped_json_schema_is_the_one_the_schema_generates():
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == json_schema()


def test_qtop_profiles_schema_prints_it(capsys):
    assert main(["profiles", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema()


def test_the_docs_tables_are_the_ones_the_schema_generates():
    text = DOCS_FILE.read_text(encoding="utf-8")
    assert docs_with_tables(text) == text, "run: python -m qtop.profiles.generate"


def test_a_key_missing_from_the_docs_would_be_noticed():
    text = DOCS_FILE.read_text(encoding="utf-8")
    assert "| `sample_interval` |" in text
    stale = text.replace("| `sample_interval` |", "| `sample_period` |")
    assert docs_with_tables(stale) != stale


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_every_shipped_profile_is_valid_by_the_json_schema(validator, path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=profile.schema.json\n")
    errors = list(validator.iter_errors(yaml.safe_load(text)))
    assert errors == []


@pytest.mark.parametrize(("key", "value"), GOOD, ids=[f"{k}={v}" for k, v in GOOD])
def test_the_json_schema_takes_every_good_value(validator, key, value):
    assert list(validator.iter_errors(yaml.safe_load(profile_with(key, value)))) == []


@pytest.mark.parametrize(
    ("key", "value", "bad"), case_ids(), ids=[f"{k}={v}" for k, v, _ in case_ids()]
)
def test_the_json_schema_rejects_each_bad_fixture_it_can_express(validator, key, value, bad):
    document = yaml.safe_load(profile_with(key, value))
    rejected = not validator.is_valid(document)
    # What JSON Schema cannot say is named in the table, and checked to stay so: if the
    # schema learns to say it, the table should too.
    assert rejected == (not bad.json_blind), bad.json_blind or "JSON Schema accepted it"


def test_the_docs_complete_example_is_a_valid_profile():
    text = DOCS_FILE.read_text(encoding="utf-8")
    example = text.split("## A complete example\n\n```yaml\n", 1)[1].split("```", 1)[0]
    checked = check_profile_text(example, "docs/profiles.md")
    assert checked.issues == ()
    assert checked.profile is not None and checked.profile.name == "glasses-prismml"
