"""The "Cross-port resume" section of docs/parity.md (toolnexus_conformance/reports/parity_cross.py): a matrix of
halting x resuming port from the cross reports, one line per difference with its phase, port
and reproduce command; cross reports never become port columns."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.reports.parity import render
from toolnexus_conformance.reports.parity_cross import render_cross


def _single(port: str, capabilities: list[str]) -> dict[str, Any]:
    return {"port": port, "library": f"{port} 1", "capabilities": capabilities, "rules": [], "failures": {}}


def _cross(a: str, b: str, passed: int, expected: int, failed: int, differences: list[dict[str, Any]]) -> dict[str, Any]:
    report = _single(a, ["resume"])
    report["crossResume"] = {
        "halting": a,
        "resuming": b,
        "variants": {"passed": passed, "expected": expected, "failed": failed, "skipped": 0},
        "deselected": {"why": "no durable halt", "scenarios": 62, "variants": 511},
        "differences": differences,
    }
    return report


def _difference(rule: str, phase: str, port: str, known: bool, variant: str) -> dict[str, Any]:
    return {
        "variant": variant, "rule": rule, "level": "normative", "reason": "divergence", "phase": phase,
        "port": port, "phases": [phase], "decidedBy": "x", "known": known, "observed": "the `result` changed",
        "command": f"pytest --port=a --resume-port=b -k '{variant}' --rule={rule}",
    }


def test_matrix_counts_and_one_line_per_difference() -> None:
    crosses = [
        _cross("golang", "reference", 95, 57, 0, [_difference("golden.observables", "halting", "golang", True, "s[openai-run]")]),
        _cross("reference", "golang", 20, 128, 4, [
            _difference("keys.run-result", "resume", "golang", True, "relay-single-durable[openai-run]"),
            _difference("resume.keeps-prior-results", "resume", "golang", False, "relay-alongside-real-durable[openai-ask]"),
            _difference("resume.keeps-prior-results", "resume", "golang", False, "relay-alongside-real-durable[openai-run]"),
        ]),
    ]
    lines = render_cross(crosses, [_single("reference", ["resume"]), _single("java", ["relay"])])
    text = "\n".join(lines)
    assert "## Cross-port resume" in text
    assert "| golang | — | pass 95, xfail 57 |" in text
    assert "| reference | pass 20, xfail 128, **FAIL 4** | — |" in text
    assert "Not applicable: 511 variants of 62 scenarios without a durable halt (deselected)." in text
    assert "Not in the matrix: java (no `resume` capability declared)." in text
    new = [line for line in lines if "resume.keeps-prior-results" in line]
    assert len(new) == 1 and "reference → golang" in new[0] and "resume phase on golang" in new[0]
    assert "**2 new**; 2 variants" in new[0] and "-k 'relay-alongside-real-durable[openai-run]'" in new[0]
    assert "'result'" in new[0]  # backticks in the reason cannot break the markdown
    known = next(i for i, line in enumerate(lines) if "keys.run-result" in line)
    assert lines.index(new[0]) < known and "(divergence; known; 1 variant)" in lines[known]  # a pair's new ones first


def test_no_cross_report_no_section_and_cross_reports_are_not_port_columns() -> None:
    assert render_cross([], [_single("reference", ["resume"])]) == []
    page = render([_single("reference", ["resume"]), _cross("reference", "reference", 152, 0, 0, [])])
    assert "| rule | level | reference |" in page  # one port column, not two
    assert "- none: every cross-run variant passed." in page
