"""The compiled pre-check (toolnexus_conformance/helpers/schema_fast.py) never calls valid what jsonschema rejects.

Every schema example (valid and invalid), every scenario file and a set of edge cases where
two engines are known to part ways (date-time corner cases, a pattern against a final
newline, bools and floats for integers, huge numbers) are judged by both engines; the
pre-check may be stricter, never laxer. A pre-check that waves everything through is
caught, and without the compiled engine every instance takes the slow path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.helpers import schema_fast, schemas
from toolnexus_conformance.helpers.paths import scenarios_dir

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "schema_examples"

GOOD_REQUEST: dict[str, Any] = {"id": "req-1", "kind": "input", "prompt": "p"}

EDGE_CASES: list[tuple[str, Any]] = [
    ("request", {**GOOD_REQUEST, "expiresAt": stamp})
    for stamp in [
        "2026-01-01T00:00:00Z",
        "2026-01-01t00:00:00z",
        "2026-01-01T23:59:60Z",
        "2026-02-30T00:00:00Z",
        "2026-01-01T00:00:00",
        "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00.123456789+05:30",
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:00Z\n",
        "",
    ]
] + [
    ("request", {**GOOD_REQUEST, "kind": "tool_call\n"}),
    ("request", {**GOOD_REQUEST, "id": 1}),
    ("request", {**GOOD_REQUEST, "id": True}),
    ("request", {**GOOD_REQUEST, "data": {"n": 10**40}}),
    ("request", {**GOOD_REQUEST, "data": {"n": float("inf")}}),
    ("tool-event", {"kind": "tool", "callId": "c", "tool": "t", "turn": 1.0}),
    ("tool-event", {"kind": "tool", "callId": "c", "tool": "t", "turn": True}),
]


def _slow_valid(name: str, instance: Any) -> bool:
    return not list(schemas.validator_for(name).iter_errors(instance))


def _fast_valid(name: str, instance: Any) -> bool:
    return schema_fast.known_valid(
        name,
        instance,
        uri=schemas.schema_id(name),
        resources=schemas.schema_resources,
        date_time=schemas.is_date_time,
    )


def _cases() -> Iterator[Any]:
    for path in sorted(EXAMPLES_DIR.rglob("*.json")):
        name = path.relative_to(EXAMPLES_DIR).as_posix()[: -len(".json")]
        examples = json.loads(path.read_text(encoding="utf-8"))
        for index, instance in enumerate(examples["valid"]):
            yield pytest.param(name, instance, id=f"{name}-valid-{index}")
        for index, case in enumerate(examples["invalid"]):
            yield pytest.param(name, case["instance"], id=f"{name}-invalid-{index}")
    for path in sorted(scenarios_dir().glob("*.json")):
        yield pytest.param("scenario", json.loads(path.read_text(encoding="utf-8")), id=path.stem)
    for index, (name, instance) in enumerate(EDGE_CASES):
        yield pytest.param(name, instance, id=f"edge-{index}")


@pytest.mark.parametrize(("name", "instance"), list(_cases()))
def test_the_pre_check_is_never_laxer_than_jsonschema(name: str, instance: Any) -> None:
    if _fast_valid(name, instance):
        assert _slow_valid(name, instance), f"the pre-check passed an instance jsonschema rejects: {instance!r}"


def test_the_pre_check_does_pass_valid_data() -> None:
    # Guards the guard: a pre-check that answers "don't know" for everything would pass the
    # test above while saving nothing.
    assert _fast_valid("request", GOOD_REQUEST)
    assert _fast_valid("request", {**GOOD_REQUEST, "expiresAt": "2026-01-01T00:00:00Z"})
    assert not _fast_valid("request", {**GOOD_REQUEST, "expiresAt": "soon"})


def test_a_lax_pre_check_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_fast, "known_valid", lambda *args, **kwargs: True)
    with pytest.raises(AssertionError, match="the pre-check passed an instance jsonschema rejects"):
        test_the_pre_check_is_never_laxer_than_jsonschema("request", {**GOOD_REQUEST, "expiresAt": "soon"})


def test_violations_still_come_from_jsonschema() -> None:
    violations = schemas.validate("request", {**GOOD_REQUEST, "expires_at": "soon"})
    assert [v.json_path for v in violations] == ["$.expires_at"]
    assert "did you mean 'expiresAt'" in violations[0].message


def test_without_the_compiled_engine_every_instance_takes_the_slow_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema_fast.forget()
    monkeypatch.setattr(schema_fast, "jsonschema_rs", None)
    try:
        assert not _fast_valid("request", GOOD_REQUEST)
        assert schemas.validate("request", GOOD_REQUEST) == []
        assert [v.json_path for v in schemas.validate("request", {**GOOD_REQUEST, "kind": 3})] == ["$.kind"]
    finally:
        schema_fast.forget()
