"""The normalization table's rewrite and unordered rows: each forgives its difference, and a
neighbouring real difference still shows. Plus the table's own validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.golden.compare import compare
from toolnexus_conformance.golden.normalize import canonical, normalize
from toolnexus_conformance.golden.normtable import TableError, default_table, load_table

PROMPT = "relay tool call lookup_weather to the caller for execution"


def relay_request(rid: str, *calls: tuple[str, str, str], prompt: str = PROMPT) -> dict[str, Any]:
    return {"id": rid, "kind": "tool_call", "prompt": prompt,
            "data": {"calls": [{"id": c, "name": n, "input": {}, "arguments": a} for c, n, a in calls]}}


def same(a: Any, b: Any, style: str = "openai") -> bool:
    result = compare(normalize(a), normalize(b), style=style)
    return not result.failures


# --- generated-id -------------------------------------------------------------------------

def test_generated_ids_are_replaced_and_keep_their_cross_references() -> None:
    request = relay_request("pnd-mz3k-7", ("call_w1", "lookup_weather", "{}"))
    out = normalize({"phases": [{"result": {"pending": request}, "waitFor": [dict(request)]}]})
    assert out["phases"][0]["result"]["pending"]["id"] == "<generated-id:lookup_weather:1>"
    assert out["phases"][0]["waitFor"][0]["id"] == "<generated-id:lookup_weather:1>"


def test_a_fixed_scenario_id_is_never_normalized_away() -> None:
    tree = {"phases": [{"result": {"pending": {"id": "auth-1", "kind": "authorization", "prompt": "Sign in"}}}]}
    assert normalize(tree) == tree


def test_an_echo_of_another_generated_id_still_differs() -> None:
    golden = {"phases": [{"result": {"pending": relay_request("pnd-a-1", ("c1", "lookup_weather", "{}"))},
                          "waitFor": [relay_request("pnd-a-1", ("c1", "lookup_weather", "{}"))]}]}
    port = {"phases": [{"result": {"pending": relay_request("pnd-b-1", ("c1", "lookup_weather", "{}"))},
                        "waitFor": [relay_request("pnd-b-2", ("c1", "lookup_weather", "{}"))]}]}
    assert not same(golden, port), "a Request re-generated between waitFor and the halt must not compare equal"


def test_numbering_does_not_depend_on_arrival_order() -> None:
    w1, w2 = ("c1", "lookup_weather", "{}"), ("c2", "lookup_weather", "{}")
    a = {"phases": [{"waitFor": [relay_request("pnd-a-2", w2), relay_request("pnd-a-1", w1)]}]}
    b = {"phases": [{"waitFor": [relay_request("pnd-b-5", w1), relay_request("pnd-b-9", w2)]}]}
    assert canonical(normalize(a)) == canonical(normalize(b))


def test_numbering_does_not_depend_on_argument_text() -> None:
    # resume-halt-again: the port re-serializes arguments with sorted keys; the ids of the
    # two halts must keep their numbers.
    def run(args_1: str, args_2: str) -> Any:
        return {"phases": [
            {"result": {"pending": relay_request("pnd-x-1", ("call_w1", "lookup_weather", args_1))}},
            {"result": {"pending": relay_request("pnd-x-2", ("call_w2", "lookup_weather", args_2))}},
        ]}
    golden = normalize(run('{"unit":"C","city":"Oslo"}', '{"unit":"F","city":"Bergen"}'))
    port = normalize(run('{"city":"Oslo","unit":"C"}', '{"city":"Bergen","unit":"F"}'))
    assert [p["result"]["pending"]["id"] for p in golden["phases"]] == [p["result"]["pending"]["id"] for p in port["phases"]]
    assert golden["phases"][0]["result"]["pending"]["id"] == "<generated-id:lookup_weather:1>"


def test_ids_are_numbered_per_relayed_tool() -> None:
    out = normalize({"phases": [{"waitFor": [relay_request("pnd-a-1", ("c1", "search_docs", "{}")),
                                             relay_request("pnd-a-2", ("c2", "lookup_weather", "{}"))]}]})
    assert sorted(r["id"] for r in out["phases"][0]["waitFor"]) == [
        "<generated-id:lookup_weather:1>", "<generated-id:search_docs:1>"]


# --- relay-prompt -------------------------------------------------------------------------

def test_relay_prompt_wording_is_replaced_everywhere_it_is_echoed() -> None:
    tree = {"result": {"pending": relay_request("r", ("c1", "lookup_weather", "{}")), "text": PROMPT,
                       "messages": [{"content": PROMPT}, {"content": "declined/expired: " + PROMPT}]}}
    out = normalize(tree)
    assert out["result"]["pending"]["prompt"] == out["result"]["text"] == "<relay-prompt:lookup_weather>"
    assert out["result"]["messages"][1]["content"] == "declined/expired: <relay-prompt:lookup_weather>"


def test_other_wording_naming_the_relayed_tool_is_forgiven() -> None:
    golden = {"result": {"pending": relay_request("r", ("c1", "lookup_weather", "{}")), "text": PROMPT}}
    other = "please run lookup_weather for me"
    port = {"result": {"pending": relay_request("r", ("c1", "lookup_weather", "{}"), prompt=other), "text": other}}
    assert same(golden, port)


def test_a_prompt_naming_the_wrong_tool_fails() -> None:
    golden = {"result": {"pending": relay_request("r", ("c1", "lookup_weather", "{}")), "text": PROMPT}}
    wrong = PROMPT.replace("lookup_weather", "search_docs")
    port = {"result": {"pending": relay_request("r", ("c1", "lookup_weather", "{}"), prompt=wrong), "text": wrong}}
    result = compare(normalize(golden), normalize(port), style="openai")
    assert "$.result.pending.prompt" in result.render_failures()


def test_a_placeholder_that_differs_from_the_prompt_still_differs() -> None:
    tree = {"result": {"pending": relay_request("r", ("c1", "lookup_weather", "{}")),
                       "messages": [{"content": "something else"}]}}
    out = normalize(tree)
    assert out["result"]["messages"][0]["content"] == "something else"


def test_two_wordings_for_one_tool_do_not_collapse() -> None:
    first = relay_request("r1", ("c1", "lookup_weather", "{}"))
    second = relay_request("r2", ("c2", "lookup_weather", "{}"), prompt="lookup_weather please")
    out = normalize({"phases": [{"waitFor": [first, second]}]})
    assert {r["prompt"] for r in out["phases"][0]["waitFor"]} == {
        "<relay-prompt:lookup_weather>", "<relay-prompt:lookup_weather#2>"}


# --- builtin-declaration ------------------------------------------------------------------

def _tools(description: str, name: str = "bash") -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "description": description, "parameters": {"x": 1}}},
            {"type": "function", "function": {"name": "lookup", "description": "mine", "parameters": {}}}]


def test_builtin_declarations_forgive_description_and_schema_only() -> None:
    golden = {"phases": [{"requests": [{"tools": _tools("the reference's words")}]}]}
    port = {"phases": [{"requests": [{"tools": _tools("the port's words")}]}]}
    assert same(golden, port)
    assert normalize(port)["phases"][0]["requests"][0]["tools"][1]["function"]["description"] == "mine"


def test_a_builtin_declared_under_another_name_fails() -> None:
    golden = {"phases": [{"requests": [{"tools": _tools("x")}]}]}
    port = {"phases": [{"requests": [{"tools": _tools("x", name="shell")}]}]}
    assert not same(golden, port)


def test_anthropic_builtin_declarations_forgive_description_and_input_schema() -> None:
    def decl(d, t="object"):
        return [{"name": "grep", "description": d, "input_schema": {"type": t}}]
    golden = {"phases": [{"requests": [{"tools": decl("a")}]}]}
    assert same(golden, {"phases": [{"requests": [{"tools": decl("b", "array")}]}]}, style="anthropic")
    assert not same(golden, {"phases": [{"requests": [{"tools": decl("a") + decl("a")}]}]}, style="anthropic")


def test_normalizing_leaves_the_tree_it_is_given_unchanged_and_unshared() -> None:
    tree = {"phases": [{"requests": [{"tools": _tools("the port's words")}]}]}
    before = json.dumps(tree)
    out = normalize(tree)
    assert json.dumps(tree) == before
    out["phases"][0]["requests"][0]["tools"][1]["function"]["description"] = "changed"
    assert tree["phases"][0]["requests"][0]["tools"][1]["function"]["description"] == "mine"


def _builtin_table(tmp_path: Path, *rows: dict[str, Any]) -> Any:
    path = tmp_path / "normalization.json"
    path.write_text(json.dumps({"rewrite": [{"rule": "decl.builtins", "kind": "builtin-declaration", "why": "test", **r}
                                            for r in rows]}), encoding="utf-8")
    return load_table(path)


def test_a_builtin_row_reaching_any_depth_rewrites_every_holder(tmp_path: Path) -> None:
    table = _builtin_table(tmp_path, {"path": "**", "where": {"name": "^bash$"}, "fields": ["description"]})
    tree = {"a": {"name": "bash", "description": "x", "b": [{"name": "bash", "description": "y"}, {"name": "ls", "description": "z"}]}}
    out = normalize(tree, table)
    assert out == {"a": {"name": "bash", "description": "<builtin>",
                         "b": [{"name": "bash", "description": "<builtin>"}, {"name": "ls", "description": "z"}]}}


def test_a_holder_inside_a_replaced_field_is_gone_with_it(tmp_path: Path) -> None:
    table = _builtin_table(
        tmp_path,
        {"path": "t.*.function", "where": {"name": "^bash$"}, "fields": ["description"]},
        {"path": "t.*", "where": {"type": "^function$"}, "fields": ["function"]},
    )
    tree = {"t": [{"type": "function", "function": {"name": "bash", "description": "x"}}, {"type": "other"}]}
    assert normalize(tree, table) == {"t": [{"type": "function", "function": "<builtin>"}, {"type": "other"}]}
    assert tree["t"][0]["function"]["description"] == "x"


# --- unordered ----------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["toolEvents", "executions", "hooks", "waitFor", "pendingEvents"])
def test_unordered_lists_forgive_order_but_not_content(field: str) -> None:
    golden = {"phases": [{field: [{"tool": "a"}, {"tool": "b"}]}]}
    assert same(golden, {"phases": [{field: [{"tool": "b"}, {"tool": "a"}]}]})
    assert not same(golden, {"phases": [{field: [{"tool": "b"}, {"tool": "c"}]}]})


def test_ordered_lists_keep_their_order() -> None:
    assert not same({"phases": [{"requests": [1, 2]}]}, {"phases": [{"requests": [2, 1]}]})


# --- the table itself ---------------------------------------------------------------------

def _write(tmp_path: Path, table: dict[str, Any]) -> Path:
    path = tmp_path / "normalization.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


@pytest.mark.parametrize("fields", [["*"], ["messages.content"], [], ["**"]])
def test_a_row_with_a_wildcard_or_empty_field_scope_is_refused(tmp_path: Path, fields: list[str]) -> None:
    row = {"rule": "loop.final-text", "when": "any", "path": "phases.*", "fields": fields, "why": "x"}
    with pytest.raises(TableError, match=r"normalization.json: \$\.advisory\[0\]\.fields"):
        load_table(_write(tmp_path, {"advisory": [row]}))


def test_a_row_without_a_rule_is_refused(tmp_path: Path) -> None:
    row = {"path": "phases.*", "fields": ["result"], "why": "x", "when": "any"}
    with pytest.raises(TableError, match=r"\$\.advisory\[0\]: missing 'rule'"):
        load_table(_write(tmp_path, {"advisory": [row]}))


def test_the_shipped_table_loads() -> None:
    assert default_table().rows
