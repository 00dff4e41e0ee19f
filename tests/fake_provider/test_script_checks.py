"""A script the fake provider could not serve is refused up front — when the session is
created, and when a scenario file is loaded (naming the file and the field) — never mid-run
as an HTTP 500, a status ports retry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import FakeProvider, ScriptError
from toolnexus_conformance.fake_provider.wire import MAX_PIECES
from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.scenario.model import ScenarioError, load_scenario

CALLS = [
    {"id": "call_a", "name": "alpha", "arguments": '{"a": 1}'},
    {"id": "call_b", "name": "beta", "arguments": '{"b": 2}'},
]

BAD_SCRIPTS: list[tuple[str, str, list[dict[str, Any]], str]] = [
    ("index omitted on several calls", "openai", [{"toolCalls": CALLS, "wire": {"omitToolCallIndex": True}}],
     "turn[0].wire.omitToolCallIndex: only for a turn with one tool call"),
    ("split over the limit", "openai", [{"text": "x" * (MAX_PIECES + 10), "wire": {"split": {"every": 1, "pauseMs": 0}}}],
     "turn[0].wire.split: cuts this turn's openai stream into"),
    ("split over the limit", "anthropic",
     [{"text": "ok"}, {"text": "y" * MAX_PIECES, "wire": {"split": {"every": 1, "pauseMs": 0}}}],
     "turn[1].wire.split: cuts this turn's anthropic stream into"),
    ("arguments that are no object", "anthropic", [{"toolCalls": [{"id": "c", "name": "n", "arguments": "[1]"}]}],
     "turn[0].toolCalls[0].arguments"),
    ("event type that is no word", "anthropic", [{"text": "ok", "extra": {"extraEvents": [{"type": "née\nx"}]}}],
     "turn[0].extra.extraEvents[0].type"),
    ("indexes one short", "openai", [{"toolCalls": CALLS, "wire": {"toolCallIndexes": [3]}}],
     "turn[0].wire.toolCallIndexes"),
]


@pytest.mark.parametrize(("case", "style", "script", "names"), BAD_SCRIPTS, ids=[f"{b[0]} ({b[1]})" for b in BAD_SCRIPTS])
def test_session_creation_refuses_what_would_fail_mid_run(
    provider: FakeProvider, case: str, style: str, script: list[dict[str, Any]], names: str
) -> None:
    before = provider.live_sessions
    with pytest.raises(ScriptError) as refused:
        provider.session(script, style)
    assert names in str(refused.value), case
    assert provider.live_sessions == before, "no session is left behind"


def test_what_a_style_ignores_is_no_problem_there(provider: FakeProvider) -> None:
    # OpenAI sends arguments as raw text and names no event: neither check applies there
    script = [{"toolCalls": [{"id": "c", "name": "n", "arguments": "[1"}], "extra": {"extraEvents": [{"type": "née"}]}}]
    provider.end_session(provider.session(script, "openai"))


def test_a_split_under_the_limit_is_accepted(provider: FakeProvider) -> None:
    session = provider.session([{"text": "z" * (MAX_PIECES // 4), "wire": {"split": {"every": 1, "pauseMs": 0}}}], "openai")
    provider.end_session(session)


def _write(tmp_path: Path, name: str, change: Any) -> Path:
    data = json.loads((fixtures_dir() / "scenarios" / "loop-sse-openai-index-gaps.json").read_text(encoding="utf-8"))
    data["id"] = name
    change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_loading_a_scenario_names_the_file_and_the_field(tmp_path: Path) -> None:
    def long_split(data: dict[str, Any]) -> None:
        data["turns"][1]["text"] = "x" * 3000
        data["turns"][1]["wire"] = {"split": {"every": 1, "pauseMs": 0}}

    path = _write(tmp_path, "too-many-pieces", long_split)
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(path) in str(refused.value) and "turns[1].wire.split" in str(refused.value)

    def short_indexes(data: dict[str, Any]) -> None:
        data["turns"][0]["wire"] = {"toolCallIndexes": [1]}

    path = _write(tmp_path, "short-indexes", short_indexes)
    with pytest.raises(ScenarioError, match=r"turns\[0\]\.wire\.toolCallIndexes"):
        load_scenario(path)


def test_the_schema_refuses_an_omitted_index_on_several_calls(tmp_path: Path) -> None:
    def omit(data: dict[str, Any]) -> None:
        data["turns"][0]["wire"] = {"omitToolCallIndex": True}

    path = _write(tmp_path, "omit-two", omit)
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(path) in str(refused.value) and "$.turns[0].toolCalls" in str(refused.value)


def test_every_shipped_scenario_passes_the_checks() -> None:
    for path in sorted((fixtures_dir() / "scenarios").glob("*.json")):
        load_scenario(path)
