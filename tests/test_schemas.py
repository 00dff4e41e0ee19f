"""Tests of the wire-data schemas (schemas/) and their loader (toolnexus_conformance/helpers/schemas.py).

Every schema is checked against the 2020-12 metaschema, every ``$ref`` is resolved, and
each schema's passing and failing examples (tests/schema_examples/<schema>.json) are run,
asserting the path of the violation a port author would be shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolnexus_conformance.helpers import schemas
from toolnexus_conformance.helpers.schemas import SchemaError, SchemaRegistryError, SchemaViolation

EXAMPLES_DIR = Path(__file__).resolve().parent / "schema_examples"
ID_BASE = "https://toolnexus-conformance.invalid/schemas/"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# Schemas whose examples live elsewhere: every fixtures/scenarios/*.json is a scenario example.
EXAMPLES_ELSEWHERE = {"scenario"}

# The wire-data schemas this module pins in detail (descriptions on every property).
WIRE_SCHEMAS = [
    "answer",
    "anthropic-message",
    "openai-message",
    "relay-answer-data",
    "relay-call",
    "request",
    "run-result",
    "stream-event",
    "tool-event",
    "transcript",
]


def _schema_file(name: str) -> Path:
    return schemas.SCHEMA_DIR / f"{name}{schemas.SCHEMA_SUFFIX}"


def _load_examples(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES_DIR / f"{name}.json").read_text(encoding="utf-8"))


def _example_files() -> list[Path]:
    return sorted(EXAMPLES_DIR.rglob("*.json"))


def _example_name(path: Path) -> str:
    return path.relative_to(EXAMPLES_DIR).as_posix()[: -len(".json")]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def _valid_cases() -> Iterator[Any]:
    for path in _example_files():
        name = _example_name(path)
        for index, instance in enumerate(_load_examples(name)["valid"]):
            yield pytest.param(name, instance, id=f"{name}-valid-{index}")


def _invalid_cases() -> Iterator[Any]:
    for path in _example_files():
        name = _example_name(path)
        for case in _load_examples(name)["invalid"]:
            yield pytest.param(name, case, id=f"{name}-{_slug(case['why'])}")


def _walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _walk_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_refs(item)


def _walk_property_maps(node: Any, where: str = "$") -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    yield where, prop, sub
            yield from _walk_property_maps(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _walk_property_maps(item, f"{where}/{index}")


# --- the schema files ----------------------------------------------------------------------


def test_every_wire_schema_is_present() -> None:
    assert set(WIRE_SCHEMAS) <= set(schemas.schema_names())


@pytest.mark.parametrize("name", schemas.schema_names())
def test_schema_passes_the_metaschema(name: str) -> None:
    Draft202012Validator.check_schema(schemas.schema_contents(name))


@pytest.mark.parametrize("name", schemas.schema_names())
def test_schema_declares_draft_id_title_and_description(name: str) -> None:
    contents = schemas.schema_contents(name)
    assert contents["$schema"] == DRAFT_2020_12
    # $id mirrors the file's place under schemas/, so relative refs mean the same on disk and by $id.
    assert contents["$id"] == f"{ID_BASE}{name}{schemas.SCHEMA_SUFFIX}"
    assert isinstance(contents.get("title"), str) and contents["title"]
    assert isinstance(contents.get("description"), str) and contents["description"]


@pytest.mark.parametrize("name", WIRE_SCHEMAS)
def test_every_property_of_a_wire_schema_is_described(name: str) -> None:
    undocumented = [
        f"{where}/properties/{prop}"
        for where, prop, sub in _walk_property_maps(schemas.schema_contents(name))
        # Inside an if-clause a property only discriminates; its meaning is described elsewhere.
        if "/if" not in where and not (isinstance(sub, dict) and sub.get("description"))
    ]
    assert undocumented == []


def test_every_schema_id_is_unique() -> None:
    ids = [
        json.loads(path.read_text(encoding="utf-8"))["$id"]
        for path in schemas.SCHEMA_DIR.rglob(f"*{schemas.SCHEMA_SUFFIX}")
    ]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", schemas.schema_names())
def test_every_ref_resolves(name: str) -> None:
    contents = schemas.schema_contents(name)
    resolver = schemas.registry().resolver(base_uri=contents["$id"])
    refs = list(_walk_refs(contents))
    for ref in refs:
        resolved = resolver.lookup(ref)
        assert isinstance(resolved.contents, dict), f"{name}: {ref} does not resolve to a schema"


def test_cross_file_refs_are_relative() -> None:
    for name in schemas.schema_names():
        for ref in _walk_refs(schemas.schema_contents(name)):
            assert not ref.startswith(("http:", "https:", "/")), f"{name}: absolute $ref {ref}"


# --- examples ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in schemas.schema_names() if n not in EXAMPLES_ELSEWHERE])
def test_schema_has_passing_and_failing_examples(name: str) -> None:
    path = EXAMPLES_DIR / f"{name}.json"
    assert path.is_file(), f"add {path.relative_to(EXAMPLES_DIR.parent)}"
    examples = _load_examples(name)
    assert set(examples) == {"valid", "invalid"}
    assert examples["valid"] and examples["invalid"]
    for case in examples["invalid"]:
        assert set(case) <= {"why", "instance", "path", "keyword"} and {"why", "instance"} <= set(case)


def test_failing_examples_have_distinct_reasons() -> None:
    # The reason becomes the test id; two alike would collide under strict parametrization ids.
    for path in _example_files():
        slugs = [_slug(case["why"]) for case in _load_examples(_example_name(path))["invalid"]]
        assert len(slugs) == len(set(slugs)), path.name


def test_every_example_file_names_a_schema() -> None:
    known = set(schemas.schema_names())
    assert [_example_name(p) for p in _example_files() if _example_name(p) not in known] == []


@pytest.mark.parametrize(("name", "instance"), list(_valid_cases()))
def test_valid_example_passes(name: str, instance: Any) -> None:
    assert schemas.validate(name, instance) == []


@pytest.mark.parametrize(("name", "case"), list(_invalid_cases()))
def test_invalid_example_fails_at_its_path(name: str, case: dict[str, Any]) -> None:
    violations = schemas.validate(name, case["instance"])
    assert violations, f"expected a violation: {case['why']}"
    if "path" in case:
        at_path = [v for v in violations if v.json_path == case["path"]]
        assert at_path, f"{case['why']}: no violation at {case['path']}, got {violations}"
        if "keyword" in case:
            assert case["keyword"] in {v.keyword for v in at_path}, violations


# --- format checking ------------------------------------------------------------------------


def test_rfc3339_date_time_checking_is_active() -> None:
    checker = Draft202012Validator.FORMAT_CHECKER
    assert checker.conforms("2026-01-01T00:00:00Z", "date-time")
    # Without rfc3339-validator installed jsonschema would silently accept every string here.
    assert not checker.conforms("yesterday", "date-time")
    assert not checker.conforms("2026-01-01T25:00:00Z", "date-time")
    request = {"id": "r1", "kind": "input", "prompt": "p", "expiresAt": "yesterday"}
    assert [(v.json_path, v.keyword) for v in schemas.validate("request", request)] == [
        ("$.expiresAt", "format")
    ]


# --- the validation API ---------------------------------------------------------------------


def test_violations_are_sorted_by_path() -> None:
    request = {"prompt": 1, "kind": "tool_call", "id": "r1", "data": {"calls": [{}, {"x": 1}]}}
    violations = schemas.validate("request", request)
    paths = [v.json_path for v in violations]
    assert paths == [
        "$.data.calls[0].arguments",
        "$.data.calls[0].id",
        "$.data.calls[0].input",
        "$.data.calls[0].name",
        "$.data.calls[1].arguments",
        "$.data.calls[1].id",
        "$.data.calls[1].input",
        "$.data.calls[1].name",
        "$.data.calls[1].x",
        "$.prompt",
    ]
    assert all(isinstance(v, SchemaViolation) for v in violations)


def test_array_indexes_sort_numerically() -> None:
    transcript = [{"role": "user", "content": "hi"}] * 11 + [{"role": "user"}]
    transcript[2] = {"role": "user"}
    paths = [v.json_path for v in schemas.validate("transcript#/$defs/openai", transcript)]
    assert paths == ["$[2].content", "$[11].content"]


def test_snake_cased_key_gets_a_casing_hint() -> None:
    request = {"id": "r1", "kind": "input", "prompt": "p", "expires_at": "2026-01-01T00:00:00Z"}
    (violation,) = schemas.validate("request", request)
    assert violation == SchemaViolation(
        "$.expires_at", "additionalProperties", "unexpected key (did you mean 'expiresAt'?)"
    )


def test_null_instead_of_absent_says_so() -> None:
    (violation,) = schemas.validate("answer", {"id": "a", "ok": True, "reason": None})
    assert violation.json_path == "$.reason"
    assert "never written as null" in violation.message


def test_check_passes_silently_on_a_valid_instance() -> None:
    schemas.check("answer", {"id": "a", "ok": True, "data": {"output": "42"}})


def test_check_lists_every_violation_with_its_path() -> None:
    with pytest.raises(SchemaError) as caught:
        schemas.check("answer", {"ok": "yes", "is_error": True})
    error = caught.value
    assert error.name == "answer"
    assert [v.json_path for v in error.violations] == ["$.id", "$.is_error", "$.ok"]
    lines = str(error).splitlines()
    assert lines[0] == "not a valid answer: 3 schema violations"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["$.id", "$.is_error", "$.ok"]


def test_both_answer_data_shapes_at_once_are_refused_as_ambiguous() -> None:
    violations = schemas.validate("relay-answer-data", {"results": [], "output": "42"})
    assert violations[0].json_path == "$" and violations[0].keyword == "oneOf"
    assert "$.output" in {v.json_path for v in violations}


def test_mixed_transcript_reports_the_closest_style() -> None:
    transcript = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "x", "isError": False},
    ]
    violations = schemas.validate("transcript", transcript)
    assert violations[0].keyword == "anyOf" and "openai transcript" in violations[0].message
    assert [v.json_path for v in violations[1:]] == ["$[2].isError"]


def test_a_fragment_selects_a_definition() -> None:
    anthropic = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                "content": "x", "is_error": False}]}]
    assert schemas.validate("transcript#/$defs/anthropic", anthropic) == []
    assert schemas.validate("transcript#/$defs/openai", anthropic) != []
    relay = {"id": "r", "kind": "tool_call", "prompt": "p",
             "data": {"calls": [{"id": "c", "name": "n", "input": {}, "arguments": "{}"}]}}
    assert schemas.validate("request#/$defs/toolCallRequest", relay) == []
    auth = {"id": "r", "kind": "authorization", "prompt": "p"}
    assert [v.json_path for v in schemas.validate("request#/$defs/toolCallRequest", auth)] == ["$.kind"]


def test_a_file_name_is_accepted_as_a_schema_name() -> None:
    assert schemas.validator_for("request.schema.json").schema == schemas.schema_contents("request")


def test_unknown_schema_name_is_one_clear_error() -> None:
    with pytest.raises(SchemaRegistryError, match=r"unknown schema 'nope' \(known: answer, "):
        schemas.validator_for("nope")


def test_unresolvable_fragment_is_one_clear_error() -> None:
    with pytest.raises(SchemaRegistryError, match="does not resolve"):
        schemas.validator_for("request#/$defs/nope")


# --- the loader on a scratch schema directory ------------------------------------------------


@pytest.fixture
def scratch_schemas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(schemas, "schema_dir", lambda: tmp_path)
    schemas.reload()
    yield tmp_path
    monkeypatch.undo()
    schemas.reload()


def _write_schema(root: Path, name: str, body: dict[str, Any]) -> None:
    path = root / f"{name}{schemas.SCHEMA_SUFFIX}"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"$schema": DRAFT_2020_12, "$id": f"{ID_BASE}{name}{schemas.SCHEMA_SUFFIX}", **body}
    path.write_text(json.dumps(document), encoding="utf-8")


def test_loader_finds_schemas_in_subdirectories(scratch_schemas: Path) -> None:
    _write_schema(scratch_schemas, "common", {"$defs": {"id": {"type": "string", "minLength": 1}}})
    _write_schema(scratch_schemas, "shim/initialize", {
        "type": "object",
        "properties": {"id": {"$ref": "../common.schema.json#/$defs/id"}},
    })
    assert schemas.schema_names() == ["common", "shim/initialize"]
    assert schemas.validate("shim/initialize", {"id": "x"}) == []
    assert [v.json_path for v in schemas.validate("shim/initialize", {"id": ""})] == ["$.id"]


def test_loader_refuses_a_duplicate_id(scratch_schemas: Path) -> None:
    _write_schema(scratch_schemas, "a", {"type": "object"})
    _write_schema(scratch_schemas, "b", {"type": "object"})
    second = scratch_schemas / f"b{schemas.SCHEMA_SUFFIX}"
    second.write_text(second.read_text().replace("b.schema.json", "a.schema.json"))
    with pytest.raises(SchemaRegistryError, match="already used by a"):
        schemas.schema_names()


def test_loader_refuses_an_unreadable_file(scratch_schemas: Path) -> None:
    (scratch_schemas / f"broken{schemas.SCHEMA_SUFFIX}").write_text("{not json")
    with pytest.raises(SchemaRegistryError, match="schema broken: cannot read"):
        schemas.schema_names()


@pytest.mark.parametrize("document", ['{"type": "object"}', '{"$id": "relative.json"}', "[]"])
def test_loader_refuses_a_schema_without_an_absolute_id(scratch_schemas: Path, document: str) -> None:
    (scratch_schemas / f"anon{schemas.SCHEMA_SUFFIX}").write_text(document)
    with pytest.raises(SchemaRegistryError, match="schema anon: missing an absolute \\$id"):
        schemas.schema_names()
