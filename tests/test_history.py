"""Release history (toolnexus_conformance/reports/history.py, toolnexus_conformance/reports/history_table.py): the table builder as a
pure function and release selection (one real release of the python port from the index is a
gate: tests/gates/test_history_release.py)."""

from __future__ import annotations

import pytest

from toolnexus_conformance.reports.history import HistoryError, scrub, select
from toolnexus_conformance.reports.history_table import ReleaseResult, changes, render, rule_states, spans
from toolnexus_conformance.reports.parity_summary import FailingRule, PortSummary

RULES = [
    {"id": "loop.final-text", "level": "normative"},
    {"id": "relay.declined", "level": "normative"},
    {"id": "decl.order", "level": "normative"},
    {"id": "loop.assistant-content-null", "level": "advisory"},
]


def _failing(rule: str) -> FailingRule:
    return FailingRule(rule, "divergence", False, "s[openai-run]", "why", "cmd", 1)


def _ok(release: str, *, passing: list[str], failing: list[str] = (), untestable: dict | None = None, gaps: dict | None = None) -> ReleaseResult:
    summary = PortSummary(port="python", library=f"toolnexus {release}", normative=3, passing=list(passing),
                          failing=[_failing(r) for r in failing], untestable=untestable or {}, gaps=gaps or {})  # fmt: skip
    return ReleaseResult(release, "ok", library=f"toolnexus {release}", capabilities=["openai"], summary=summary)


HISTORY = [
    ReleaseResult("0.1.1", "cannot run", "the shim cannot start with it: ImportError: cannot import name 'x'"),
    _ok("0.9.0", passing=["loop.final-text"], untestable={"relay.declined": ("relay",)}, gaps={"loop.assistant-content-null": 2}),
    ReleaseResult("0.10.0", "cannot build", "No matching distribution found for toolnexus==0.10.0"),
    _ok("0.12.0", passing=["relay.declined"], failing=["loop.final-text"]),
]
RELEASES = [r.release for r in HISTORY]


def test_spans_compress_consecutive_releases() -> None:
    assert spans(["a", "b", "c", "d", "e"], {"a", "b", "d"}) == "a–b, d"
    assert spans(["a", "b"], set()) == "—"


def test_rule_states_per_release() -> None:
    assert rule_states(HISTORY[0], RULES) == {}
    assert rule_states(HISTORY[1], RULES) == {
        "loop.final-text": "pass",
        "relay.declined": "not testable",
        "decl.order": "not exercised",
        "loop.assistant-content-null": "gap",
    }


def test_changes_skip_releases_that_did_not_run() -> None:
    """0.10.0 did not build: it is no evidence, so the change is dated 0.12.0, not 0.10.0."""
    states = {r.release: rule_states(r, RULES) for r in HISTORY}
    assert changes(RELEASES, states, "loop.final-text") == ["0.12.0: pass → FAIL"]
    assert changes(RELEASES, states, "relay.declined") == ["0.12.0: not testable → pass"]
    assert changes(RELEASES, states, "decl.order") == []


def test_table_says_why_a_release_did_not_run_and_where_each_rule_changed() -> None:
    table = render("python", HISTORY, RULES, command="python -m toolnexus_conformance.reports.history --port=python --releases=0.1.1..0.12.0")
    lines = table.splitlines()
    assert "| 0.1.1 | **cannot run**: the shim cannot start with it: ImportError: cannot import name 'x' | — | — | — |" in lines
    assert "| 0.10.0 | **cannot build**: No matching distribution found for toolnexus==0.10.0 | — | — | — |" in lines
    assert "| 0.9.0 | yes | toolnexus 0.9.0 | openai | 1 / 0 / 1 (lacks relay) |" in lines
    assert "| `loop.final-text` | normative | 0.9.0 | 0.12.0 | — | 0.12.0: pass → FAIL |" in lines
    assert "| `relay.declined` | normative | 0.12.0 | — | 0.9.0 | 0.12.0: not testable → pass |" in lines
    assert "| `loop.assistant-content-null` | advisory | — | 0.9.0 | — | 0.12.0: gap → not exercised |" in lines
    assert "Rules whose state changed between releases that ran (2 of 4): `loop.final-text`, `relay.declined`, `loop.assistant-content-null`." in lines
    # A rule no release that ran exercised has no row rather than a row of dashes.
    assert not any("`decl.order`" in line for line in lines)


def test_select_orders_versions_numerically_and_keeps_the_tag_prefix() -> None:
    tags = ["golang/v0.12.0", "v0.12.0", "v0.9.5", "v0.16.0", "v0.13.0", "v0.1.2", "js/v0.16.0"]
    assert select(tags, "v0.9.5..v0.16.0") == ["v0.9.5", "v0.12.0", "v0.13.0", "v0.16.0"]
    assert select(tags, "golang/v0.12.0..golang/v0.16.0") == ["golang/v0.12.0"]
    assert select(["0.1.1", "0.21.0", "0.3.0"], "0.1.1..0.21.0") == ["0.1.1", "0.3.0", "0.21.0"]
    with pytest.raises(HistoryError, match="not available: 0.11.0"):
        select(["0.1.1", "0.12.0"], "0.1.1,0.11.0")
    with pytest.raises(HistoryError, match="no release matches"):
        select(["0.1.1"], "0.5.0..0.6.0")


def test_scrub_leaves_no_machine_path() -> None:
    text = "ImportError: cannot import name 'x' from 'mcp' (/opt/u/.cache/venv/lib/python3.11/site-packages/mcp/http.py)"
    assert scrub(text) == "ImportError: cannot import name 'x' from 'mcp' (http.py)"


def test_a_release_whose_shim_never_works_names_the_first_failure_not_the_restart_budget() -> None:
    from toolnexus_conformance.reports.history import transport_reason

    report = {"failures": {
        "a[openai-run]::*": {"reason": "capability", "observed": "the port does not declare the capabilities ['relay']"},
        "b[openai-run]::loop.final-text": {"reason": "transport", "observed": "shim broke again after 20 restarts (budget 20) shim command: /x/y"},
        "c[openai-run]::loop.final-text": {"reason": "transport", "observed": "shim did not answer toolkit.describe within 10 s shim command: /opt/u/venv/bin/python /opt/u/shim.py"},
    }}  # fmt: skip
    assert transport_reason(report) == "shim did not answer toolkit.describe within 10 s"
