"""The comparison: readable minimal diffs, and every advisory row of the normalization table
tested both ways — it forgives exactly its difference, and a neighbouring real difference
(another field of the same object, another object, another style, an uncited scenario)
still fails. Rows compose: a forgiven field neither hides nor exposes another."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from advisory_cases import (
    CASES,
    MSGS,
    USE,
    Case,
    max_turns,
    not_reexecuted,
    pending_event,
    resumed,
)

from toolnexus_conformance.golden.compare import compare, halted_call, render_path
from toolnexus_conformance.golden.normtable import Row, default_table
from toolnexus_conformance.helpers.paths import fixtures_dir, golden_dir

RULE_IDS = {r["id"] for r in json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]}

# --- plain diffs --------------------------------------------------------------------------


def test_equal_trees_have_no_difference() -> None:
    tree = {"phases": [{"requests": [{"model": "m"}]}]}
    result = compare(tree, tree, style="openai")
    assert not result.failures and not result.gaps


def test_a_missing_extra_or_changed_key_fails_with_its_path() -> None:
    golden = {"phases": [{"result": {"status": "pending", "pending": {"id": "r1", "expiresAt": "x"}}}]}
    port = {"phases": [{"result": {"status": "pending", "pending": {"id": "r1", "expires_at": "x"}}}]}
    rendered = compare(golden, port, style="openai").render_failures()
    assert "$.phases[0].result.pending.expiresAt: golden \"x\", port <absent>" in rendered
    assert "$.phases[0].result.pending.expires_at: golden <absent>, port \"x\"" in rendered


def test_null_instead_of_absent_is_a_failure() -> None:
    result = compare({"pending": {"id": "r"}}, {"pending": {"id": "r", "url": None}}, style="openai")
    assert [d.path for d in result.failures] == ["$.pending.url"]


def test_many_differences_are_capped_in_the_rendering() -> None:
    rendered = compare({"xs": list(range(40))}, {"xs": [x + 1 for x in range(40)]}, style="openai").render_failures()
    assert "… and 28 more" in rendered


# --- every advisory row, both ways --------------------------------------------------------

def _base_key(row: Row) -> str:
    return f"{row.rule}:{row.kind}:{row.style or ''}:{','.join(row.fields)}"


def row_key(row: Row) -> str:
    """The case key of a row: rule, kind, style and fields, with the path (and the items
    condition) when another row shares that much, so every row has a case of its own."""
    rows = default_table().advisory
    if Counter(_base_key(r) for r in rows)[_base_key(row)] == 1:
        return _base_key(row)
    key = f"{_base_key(row)}@{'.'.join(row.path)}"
    if sum(f"{_base_key(r)}@{'.'.join(r.path)}" == key for r in rows) > 1:
        key += "".join(f"[{k}={v}]" for k, v in row.items.conditions)
    return key


def rule_of(case: Case) -> str:
    return case.key.split(":")[0]


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_the_row_forgives_its_difference_as_a_gap(case: Case) -> None:
    result = compare(case.golden(), case.forgiven(), style=case.style, cited=case.cited | {rule_of(case)})
    assert not result.failures, result.render_failures()
    assert list(result.gaps) == [rule_of(case)]


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_a_neighbouring_real_difference_still_fails(case: Case) -> None:
    for real in case.real:
        result = compare(case.golden(), real(), style=case.style, cited=case.cited | {rule_of(case)})
        assert result.failures, f"{case.key}: {json.dumps(real())[:200]} was forgiven"


def test_every_advisory_row_has_a_both_ways_case() -> None:
    keys = {row_key(r) for r in default_table().advisory}
    assert keys == {c.key for c in CASES}


STYLED = [c for c in CASES if c.key.split(":")[2]]


@pytest.mark.parametrize("case", STYLED, ids=[c.key for c in STYLED])
def test_a_style_scoped_row_does_not_reach_the_other_style(case: Case) -> None:
    other = "anthropic" if case.style == "openai" else "openai"
    result = compare(case.golden(), case.forgiven(), style=other, cited=case.cited | {rule_of(case)})
    assert rule_of(case) not in result.gaps


def test_a_cited_only_row_does_not_apply_when_its_rule_is_not_cited() -> None:
    golden, port = max_turns("done", None, "x", MSGS), max_turns("incomplete", "maxTurns", "", MSGS)
    assert compare(golden, port, style="openai").failures


# --- composition --------------------------------------------------------------------------

def test_an_extra_pending_event_and_a_format_gap_in_the_same_item_compose() -> None:
    # relay-first-auth-durable[anthropic-stream] on golang: the surfaced event's arguments
    # differ in format only, and an extra event was emitted.
    golden = {"phases": [{"pendingEvents": [pending_event("c1", '{"a":1,"b":2}')]}]}
    port = {"phases": [{"pendingEvents": [pending_event("c1", '{"b": 2, "a": 1}'), pending_event("c2", "{}")]}]}
    result = compare(golden, port, style="anthropic")
    assert not result.failures, result.render_failures()
    assert set(result.gaps) == {"stream.pending-on-halt", "relay.arguments-anthropic-format"}


def test_an_extra_pending_event_does_not_hide_a_real_difference_in_the_surfaced_one() -> None:
    golden = {"phases": [{"pendingEvents": [pending_event("c1", '{"a":1}')]}]}
    port = {"phases": [{"pendingEvents": [pending_event("c1", '{"a":2}'), pending_event("c2", "{}")]}]}
    result = compare(golden, port, style="anthropic")
    assert [d.path for d in result.failures] == ["$.phases[0].pendingEvents[0].request.data.calls[0].arguments"]
    assert "stream.pending-on-halt" in result.gaps


def test_the_resumed_phase_is_not_forgiven_wholesale() -> None:
    # relay-auth-first-durable: a port not re-executing the halted call that also drops
    # tools, changes the model and the final text must fail on those.
    golden = resumed("openai", "09:00", extra={"requests": [{"model": "m", "tools": [1], "messages": []}],
                                               "result": {"status": "done", "text": "Here"}})
    port = not_reexecuted(resumed("openai", "filled", extra={"requests": [{"model": "x", "messages": []}],
                                                              "result": {"status": "done", "text": "Other"}}))
    paths = {d.path for d in compare(golden, port, style="openai").failures}
    assert {"$.phases[1].requests[0].model", "$.phases[1].requests[0].tools", "$.phases[1].result.text"} <= paths


def test_the_halted_call_is_bound_only_for_a_resumed_non_relay_halt() -> None:
    assert halted_call(resumed("openai", "x")) == {"haltedCall": "call_a1", "haltedTool": "read_calendar"}
    one_phase = {"phases": resumed("openai", "x")["phases"][:1]}
    assert halted_call(one_phase) == {}
    relay = resumed("openai", "x")
    relay["phases"][0]["result"]["pending"]["kind"] = "tool_call"
    assert halted_call(relay) == {}


def test_a_changed_tool_result_under_max_turns_still_fails() -> None:
    tool = {"role": "tool", "tool_call_id": "c1", "content": "42"}
    golden = max_turns("done", None, "x", [*MSGS, tool])
    port = max_turns("incomplete", "maxTurns", "", [*MSGS, {**tool, "content": "41"}])
    result = compare(golden, port, style="openai", cited=frozenset({"loop.max-turns-exhaustion"}))
    assert [d.path for d in result.failures] == [
        "$.phases[0].events[0].result.messages[1].content", "$.phases[0].result.messages[1].content"]


def test_a_dropped_tool_use_and_tool_result_pair_fails_where_thinking_may_be_dropped() -> None:
    # loop-tool-loop: the anthropic subset row reaches assistant blocks other than tool_use.
    result_msg = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x"}]}
    golden = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": [USE]}, result_msg]}]}]}
    port = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": []},
                                                     {"role": "user", "content": []}]}]}]}
    assert compare(golden, port, style="anthropic", cited=frozenset({"loop.assistant-extra-keys"})).failures


# --- the registry -------------------------------------------------------------------------

@pytest.mark.parametrize("row", default_table().rows, ids=lambda r: r.name)
def test_every_row_names_an_existing_rule_and_a_plain_field_scope(row: Row) -> None:
    assert row.rule in RULE_IDS, f"{row.name}: {row.rule!r} is not a rule of fixtures/rules.json"
    assert row.fields and all("*" not in f and "." not in f for f in row.fields), row.name
    if row.path[-1] == "**":
        assert row.where.conditions, f"{row.name}: a path ending in '**' reaches any object; 'where' must say which"


STRUCTURE = {"phases", "requests", "messages", "result", "events", "saves", "waitFor", "pendingEvents", "http"}


@pytest.mark.parametrize("row", default_table().advisory, ids=lambda r: r.name)
def test_no_row_forgives_a_whole_phase_message_or_result(row: Row) -> None:
    """A row reaching a structural key forgives no content there: it may let items change
    places (reordered); in scenarios citing its rule only, it may let a port add items its
    items condition allows, or a whole key where the golden has none (added: nothing to
    compare with). A missing or changed request, message, event or result is never forgiven."""
    if row.kind in {"extra-items", "missing-items", "reordered"}:
        assert row.items.conditions or row.kind == "reordered", f"{row.name}: a list row says which items it may forgive"
    reached = set(row.fields) & (STRUCTURE - {"pendingEvents"})
    if not reached or row.kind == "reordered":
        return
    assert row.kind in {"extra-items", "added"}, f"{row.name}: {row.kind} may not reach {sorted(reached)}"
    assert row.only_when_cited, f"{row.name}: a row adding {sorted(reached)} applies only where its rule is cited"


def test_a_missing_result_is_never_forgiven() -> None:
    golden = {"phases": [{"entry": "run"}, {"entry": "runWithAnswer", "result": {"status": "done"}}]}
    port = {"phases": [{"entry": "run"}, {"entry": "runWithAnswer", "error": {"kind": "resume"}}]}
    cited = frozenset(r.rule for r in default_table().advisory)
    for style in ("openai", "anthropic"):
        paths = {d.path for d in compare(golden, port, style=style, cited=cited).failures}
        assert paths == {"$.phases[1].result", "$.phases[1].error"}


def _values_at(node: Any, row: Row, path: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        if row.holds_at(path, node, {"haltedCall": node.get("tool_call_id") or node.get("tool_use_id") or ""}):
            for name in row.fields:
                if name in node:
                    yield node[name]
        for key, value in node.items():
            yield from _values_at(value, row, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _values_at(value, row, (*path, str(i)))


def test_an_any_row_only_ever_reaches_scalars_in_the_goldens() -> None:
    rows = [r for r in default_table().advisory if r.kind == "any"]
    goldens = sorted(golden_dir().glob("*/*.json"))
    assert goldens, "no goldens"
    for file in goldens:
        tree = json.loads(file.read_text(encoding="utf-8"))["observables"]
        for row in rows:
            for value in _values_at(tree, row):
                assert not isinstance(value, dict | list), f"{row.name} reaches a {type(value).__name__} in {file}"


def test_difference_paths_render_like_schema_violations() -> None:
    # list positions are digit strings in the walk; a key that is no identifier is quoted
    assert render_path(("requests", "0", "headers", "anthropic-version")) == "$.requests[0].headers['anthropic-version']"
    assert render_path(()) == "$"


def test_stripping_the_uncalled_relay_leaves_the_observables_it_was_given_unchanged() -> None:
    # The stripped copy shares what it did not change with the record's observables: a
    # strip that edited them in place would change what every later check reads.
    import copy

    from toolnexus_conformance.scenario.model import UNCALLED_RELAY_TOOL
    from toolnexus_conformance.verdict.rules.golden import strip_uncalled_relay

    relay = {"type": "function", "function": {"name": UNCALLED_RELAY_TOOL["name"], "parameters": {}}}
    other = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    tree = {
        "scenario": "s", "variant": "openai-run-uncalled-relay",
        "phases": [{"requests": [{"model": "m", "tools": [other, relay]}, {"model": "m", "tools": [relay], "tool_choice": "auto"}]}],
    }
    before = copy.deepcopy(tree)
    stripped = strip_uncalled_relay(tree, "openai")
    assert tree == before, "the observables given were changed"
    assert stripped["phases"][0]["requests"] == [{"model": "m", "tools": [other]}, {"model": "m"}]
