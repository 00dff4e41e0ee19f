"""schemas.validate reuses the outcome for an instance it already validated against the same
schema (keyed by canonical JSON) and never lets that reuse change an outcome: a broken
instance fails every time, and data that only looks like JSON it has seen (a tuple for a
list, an int key for a string key) is validated on its own."""

from __future__ import annotations

from typing import Any

import pytest

from toolnexus_conformance.helpers import schemas

GOOD_REQUEST: dict[str, Any] = {"id": "req-1", "kind": "confirm", "prompt": "Proceed?"}


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    schemas.reload()
    yield
    schemas.reload()


def test_the_same_instance_gives_the_same_outcome_whatever_its_key_order() -> None:
    broken = {"prompt": "Proceed?", "kind": "confirm", "id": "req-1", "expires_at": "soon"}
    first = schemas.validate("request", broken)
    assert [v.json_path for v in first] == ["$.expires_at"]
    first.clear()  # the caller owns the list it got
    again = schemas.validate("request", dict(reversed(list(broken.items()))))
    assert [v.json_path for v in again] == ["$.expires_at"]
    assert "did you mean 'expiresAt'" in again[0].message
    assert schemas.validate("request", GOOD_REQUEST) == []


def test_a_broken_copy_of_a_valid_instance_still_fails() -> None:
    assert schemas.validate("request", GOOD_REQUEST) == []
    assert [v.json_path for v in schemas.validate("request", {**GOOD_REQUEST, "kind": 3})] == ["$.kind"]
    assert schemas.validate("request", GOOD_REQUEST) == []


def test_tuples_and_non_string_keys_are_not_served_a_json_lookalike() -> None:
    transcript = [{"role": "user", "content": "hi"}]
    assert schemas.validate("transcript#/$defs/openai", transcript) == []
    as_tuple = schemas.validate("transcript#/$defs/openai", tuple(transcript))
    assert [v.keyword for v in as_tuple] == ["type"]  # a tuple is no JSON array

    assert schemas.validate("request", {**GOOD_REQUEST, "data": {"1": True}}) == []
    int_key = schemas.validate("request", {**GOOD_REQUEST, "data": {1: True}})
    assert int_key == schemas.validate("request", {**GOOD_REQUEST, "data": {1: True}})


def test_an_unknown_schema_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(schemas.SchemaRegistryError, match="unknown schema 'nope'"):
            schemas.validate("nope", GOOD_REQUEST)


def test_the_reuse_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound is read at every insertion: a small one proves it as the shipped 8192 would,
    # without validating 8197 invalid instances through jsonschema.
    monkeypatch.setattr(schemas, "MAX_REUSED_OUTCOMES", 64)
    # Only outcomes the compiled pre-check cannot vouch for are kept: invalid instances.
    for i in range(64 + 5):
        broken = {**GOOD_REQUEST, "id": f"req-{i}", "kind": 3}
        assert [v.json_path for v in schemas.validate("request", broken)] == ["$.kind"]
    assert schemas.reused_outcomes() == 64
    assert [v.json_path for v in schemas.validate("request", {**GOOD_REQUEST, "kind": 3, "id": "req-0"})] == ["$.kind"]
    held = schemas.reused_outcomes()
    huge = {**GOOD_REQUEST, "kind": 3, "prompt": "x" * (schemas.MAX_REUSED_CHARS + 1)}
    assert [v.json_path for v in schemas.validate("request", huge)] == ["$.kind"]
    assert schemas.reused_outcomes() == held, "a huge instance's outcome was held"


def test_data_nested_too_deep_to_walk_is_still_validated() -> None:
    nested: Any = "leaf"
    for _ in range(5000):
        nested = {"n": nested}
    assert schemas.validate("request", {**GOOD_REQUEST, "data": nested}) == []
    assert [v.json_path for v in schemas.validate("request", {**GOOD_REQUEST, "kind": 3, "data": nested})] == ["$.kind"]
