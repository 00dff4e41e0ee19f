"""Golden comparison: minimal readable diffs, and advisory rows that forgive exactly one
kind of difference each."""

from __future__ import annotations

from harness.golden import compare


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


def test_assistant_content_null_vs_empty_is_an_openai_spec_gap() -> None:
    golden = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": None}]}]}]}
    port = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": ""}]}]}]}
    result = compare(golden, port, style="openai")
    assert not result.failures
    assert list(result.gaps) == ["loop.assistant-content-null"]


def test_content_null_vs_text_is_not_forgiven() -> None:
    golden = {"phases": [{"requests": [{"messages": [{"content": None}]}]}]}
    port = {"phases": [{"requests": [{"messages": [{"content": "thinking"}]}]}]}
    assert compare(golden, port, style="openai").failures


def test_anthropic_system_absent_vs_empty_is_a_gap_only_in_anthropic_style() -> None:
    golden = {"phases": [{"requests": [{"model": "m"}]}]}
    port = {"phases": [{"requests": [{"model": "m", "system": ""}]}]}
    assert list(compare(golden, port, style="anthropic").gaps) == ["loop.anthropic-system-empty"]
    assert compare(golden, port, style="openai").failures


def test_anthropic_arguments_format_is_a_gap_only_when_the_json_is_equal() -> None:
    path = lambda args: {"phases": [{"result": {"pending": {"data": {"calls": [{"arguments": args}]}}}}]}  # noqa: E731
    same = compare(path('{"a":1,"b":2}'), path('{"b": 2, "a": 1}'), style="anthropic")
    assert list(same.gaps) == ["relay.arguments-anthropic-format"] and not same.failures
    different = compare(path('{"a":1}'), path('{"a":2}'), style="anthropic")
    assert different.failures and not different.gaps


def test_many_differences_are_capped_in_the_rendering() -> None:
    golden = {"xs": list(range(40))}
    port = {"xs": [x + 1 for x in range(40)]}
    rendered = compare(golden, port, style="openai").render_failures()
    assert "… and 28 more" in rendered


def test_missing_result_wording_is_a_gap_but_a_missing_filler_is_not() -> None:
    golden = {"content": "no result supplied on resume for lookup"}
    assert list(compare(golden, {"content": "no result supplied on resume for call_1"}, style="openai").gaps) == [
        "resume.missing-result-text"
    ]
    assert compare(golden, {"content": "42"}, style="openai").failures


def test_a_cited_only_row_applies_only_to_scenarios_citing_its_rule() -> None:
    golden = {"phases": [{}, {"executions": [{"tool": "auth", "answered": True}]}]}
    port = {"phases": [{}, {"executions": []}]}
    assert compare(golden, port, style="openai").failures
    cited = compare(golden, port, style="openai", cited=frozenset({"resume.non-relay-reexecutes"}))
    assert not cited.failures and list(cited.gaps) == ["resume.non-relay-reexecutes"]


def test_extra_pending_events_are_a_gap_but_a_missing_one_fails() -> None:
    one = {"phases": [{"pendingEvents": [{"type": "pending", "request": {"id": "a"}}]}]}
    two = {"phases": [{"pendingEvents": [{"type": "pending", "request": {"id": "a"}}, {"type": "pending", "request": {"id": "b"}}]}]}
    extra = compare(one, two, style="openai")
    assert not extra.failures and list(extra.gaps) == ["stream.pending-on-halt"]
    assert compare(two, one, style="openai").failures


def test_dropped_assistant_blocks_are_a_gap_only_where_cited_and_changed_blocks_fail() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "s"}
    use = {"type": "tool_use", "id": "c1", "name": "x", "input": {}}
    golden = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": [thinking, use]}]}]}]}
    dropped = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": [use]}]}]}]}
    changed = {"phases": [{"requests": [{"messages": [{"role": "assistant", "content": [{**use, "id": "c2"}]}]}]}]}
    cited = frozenset({"loop.assistant-extra-keys"})
    gap = compare(golden, dropped, style="anthropic", cited=cited)
    assert not gap.failures and list(gap.gaps) == ["loop.assistant-extra-keys"]
    assert compare(golden, dropped, style="anthropic").failures
    assert compare(golden, changed, style="anthropic", cited=cited).failures
