"""Every wire and extra variation is named provider or gateway (toolnexus_conformance/fake_provider/wire.py
``SHAPES``, and the same marks as ``x-origin`` in the scenario schema), and a scenario that
puts a gateway shape on the wire cites a normative rule only where SPEC.md §1's owner
decisions table holds a normative row naming that shape."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import gateway_shapes
from toolnexus_conformance.fake_provider.wire import GATEWAY, PROVIDER, SHAPES, turn_shapes
from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.scenario.model import load_scenario

ROOT = Path(__file__).resolve().parents[2]
DECISION_ROW = re.compile(r"^\| (?P<id>D\d+) \| (?P<decision>.+) \| (?P<level>normative|advisory) \|$")
# Checks every variant runs besides the ones its scenario cites, all normative: the golden
# comparison and the key checks (toolnexus_conformance/plugin/items.py, SPEC.md §3).
IMPLICIT_NORMATIVE = ("golden.observables", "keys.run-result")


def _owner_decisions() -> dict[str, tuple[str, str]]:
    text = (ROOT / "SPEC.md").read_text(encoding="utf-8")
    return {m["id"]: (m["decision"], m["level"]) for m in map(DECISION_ROW.match, text.splitlines()) if m}


def _levels() -> dict[str, str]:
    registry = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))
    return {rule["id"]: rule["level"] for rule in registry["rules"]}


def _decided(shape: str) -> list[str]:
    return [d for d, (text, level) in _owner_decisions().items() if level == "normative" and f"`{shape}`" in text]


def test_gateway_shapes_back_normative_rules_only_through_an_owner_decision() -> None:
    levels = _levels()
    problems = []
    for path in sorted((fixtures_dir() / "scenarios").glob("*.json")):
        scenario = load_scenario(path)
        normative = [r for r in scenario.rules if levels.get(r) == "normative"] + list(IMPLICIT_NORMATIVE)
        for shape in gateway_shapes(scenario):
            if not _decided(shape):
                problems.append(f"{scenario.id}: gateway shape {shape} backs normative {', '.join(normative)} "
                                "with no owner decision in SPEC.md §1 naming it (cite advisory rules, or record one)")
    assert problems == []


def test_the_scenarios_do_meet_gateway_shapes() -> None:
    """The check above is not vacuous: the suite scripts gateway shapes, and D21 covers them."""
    met = {s for p in (fixtures_dir() / "scenarios").glob("*.json") for s in gateway_shapes(load_scenario(p))}
    assert {"wire.toolCallIndexes=gaps", "wire.omitToolCallIndex", "wire.usage=absent"} <= met
    assert all(_decided(shape) == ["D21"] for shape in met)


def test_every_gateway_shape_is_named_by_a_decision_or_by_no_normative_scenario() -> None:
    undecided = [name for name, shape in SHAPES.items() if GATEWAY in shape.origin.values() and not _decided(name)]
    assert undecided == [], "a gateway shape no owner decision names may back advisory rules only"


def _schema_marks() -> dict[tuple[str, str], str]:
    """(shape name, style) -> origin, as the scenario schema's x-origin marks say."""
    schema = json.loads((ROOT / "schemas" / "scenario.schema.json").read_text(encoding="utf-8"))
    marks: dict[tuple[str, str], str] = {}
    extra = schema["$defs"]["turn"]["properties"]["extra"]["properties"]
    for group, properties in (("wire", schema["$defs"]["wire"]["properties"]), ("extra", extra)):
        for key, spec in properties.items():
            mark: Any = spec.get("x-origin")
            assert mark is not None, f"schema {group}.{key} has no x-origin"
            names = {f"{group}.{key}=gaps" if key == "toolCallIndexes" else f"{group}.{key}": mark}
            if "enum" in spec:
                names = {f"{group}.{key}={value}": origin for value, origin in mark.items()}
            for name, origin in names.items():
                for style in SHAPES[name].origin:
                    marks[(name, style)] = origin if isinstance(origin, str) else origin[style]
    return marks


def test_the_schema_marks_every_shape_as_wire_py_does() -> None:
    table = {(name, style): origin for name, shape in SHAPES.items() for style, origin in shape.origin.items()}
    assert _schema_marks() == table
    assert set(table.values()) == {PROVIDER, GATEWAY}


@pytest.mark.parametrize(
    ("turn", "names"),
    [
        ({"text": "x"}, []),
        ({"wire": {"usage": "full", "toolCallOrder": "sequential", "toolCallIndexes": [0, 1]}}, []),
        ({"wire": {"toolCallIndexes": [1, 4], "content": "absent"}}, ["wire.content=absent", "wire.toolCallIndexes=gaps"]),
        ({"wire": {"split": {"every": 3}}, "extra": {"extraEvents": [{}], "extraBlocks": []}}, ["wire.split", "extra.extraEvents"]),
    ],
)
def test_turn_shapes_names_what_a_turn_uses(turn: dict[str, Any], names: list[str]) -> None:
    assert sorted(turn_shapes(turn)) == sorted(names)


def test_gateway_shapes_per_variant() -> None:
    scenario = {
        "styles": ["openai", "anthropic"],
        "turns": [{"wire": {"usage": "no-total", "omitToolCallIndex": True}, "extra": {"extraEvents": [{"type": "x"}]}}],
        "resume": {"turns": [{"wire": {"usage": "absent"}}]},
    }
    assert gateway_shapes(scenario) == [
        "extra.extraEvents", "wire.omitToolCallIndex", "wire.usage=absent", "wire.usage=no-total"
    ]
    # Anthropic sends no total and no tool-call deltas, and an unknown event is its own shape there
    assert gateway_shapes(scenario, "anthropic") == ["wire.usage=absent"]
    # a JSON response carries no deltas and no extra events
    assert gateway_shapes(scenario, "openai", streamed=False) == ["wire.usage=absent", "wire.usage=no-total"]
    assert gateway_shapes(scenario["turns"], "openai") == ["extra.extraEvents", "wire.omitToolCallIndex", "wire.usage=no-total"]
