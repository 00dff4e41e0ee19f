"""The normalization table: what it forgives and, as important, what it never forgives."""

from __future__ import annotations

from harness.normalize import canonical, normalize

RELAY_PROMPT = "relay tool call lookup to the caller for execution"


def test_generated_ids_are_replaced_and_keep_their_cross_references() -> None:
    tree = {
        "phases": [
            {
                "result": {"pending": {"id": "pnd-mz3k-7", "prompt": RELAY_PROMPT}},
                "waitFor": [{"id": "pnd-mz3k-7"}],
            }
        ]
    }
    out = normalize(tree)
    assert out["phases"][0]["result"]["pending"]["id"] == "<generated-id:1>"
    assert out["phases"][0]["waitFor"][0]["id"] == "<generated-id:1>"


def test_a_fixed_scenario_id_is_never_normalized_away() -> None:
    tree = {"phases": [{"result": {"pending": {"id": "auth-1", "prompt": "Sign in"}}}]}
    assert normalize(tree) == tree


def test_relay_prompt_wording_is_replaced_everywhere_it_is_echoed() -> None:
    tree = {"result": {"pending": {"prompt": RELAY_PROMPT}, "text": RELAY_PROMPT, "messages": [{"content": RELAY_PROMPT}]}}
    out = normalize(tree)
    assert {out["result"]["pending"]["prompt"], out["result"]["text"], out["result"]["messages"][0]["content"]} == {
        "<relay-prompt:1>"
    }


def test_a_placeholder_that_differs_from_the_prompt_still_differs() -> None:
    tree = {"result": {"pending": {"prompt": RELAY_PROMPT}, "messages": [{"content": RELAY_PROMPT + "\nhttps://x"}]}}
    out = normalize(tree)
    assert out["result"]["messages"][0]["content"] != out["result"]["pending"]["prompt"]


def test_numbering_does_not_depend_on_arrival_order() -> None:
    a = {"phases": [{"waitFor": [{"id": "pnd-a-2", "data": {"calls": [{"id": "c2"}]}}, {"id": "pnd-a-1", "data": {"calls": [{"id": "c1"}]}}]}]}
    b = {"phases": [{"waitFor": [{"id": "pnd-b-5", "data": {"calls": [{"id": "c1"}]}}, {"id": "pnd-b-9", "data": {"calls": [{"id": "c2"}]}}]}]}
    assert canonical(normalize(a)) == canonical(normalize(b))


def test_durations_become_a_placeholder_but_only_numbers() -> None:
    out = normalize({"phases": [{"toolEvents": [{"ms": 12.5, "tool": "x"}]}], "ms": "not-a-duration"})
    assert out["phases"][0]["toolEvents"][0]["ms"] == "<duration>"
    assert out["ms"] == "not-a-duration"


def test_unordered_lists_compare_as_sets_and_ordered_ones_do_not() -> None:
    first = normalize({"phases": [{"toolEvents": [{"tool": "a"}, {"tool": "b"}], "requests": [1, 2]}]})
    second = normalize({"phases": [{"toolEvents": [{"tool": "b"}, {"tool": "a"}], "requests": [2, 1]}]})
    assert first["phases"][0]["toolEvents"] == second["phases"][0]["toolEvents"]
    assert first["phases"][0]["requests"] != second["phases"][0]["requests"]


def test_builtin_declarations_compare_by_name_only_and_other_tools_in_full() -> None:
    tools = [
        {"type": "function", "function": {"name": "bash", "description": "port-specific", "parameters": {"x": 1}}},
        {"type": "function", "function": {"name": "lookup", "description": "mine", "parameters": {}}},
    ]
    out = normalize({"phases": [{"requests": [{"tools": tools}]}]})
    assert out["phases"][0]["requests"][0]["tools"] == [{"builtin": "bash"}, tools[1]]
