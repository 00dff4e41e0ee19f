"""A "ports-agree" grounding must survive the parity data.

A normative rule grounded ``ports-agree`` (SPEC.md §1, "Grounding") claims that every real
port does the same thing, so a real port failing it — as an unexpected failure or as a known
one other than a missing capability — contradicts its own grounding: the rule then needs
another source, another level, or an owner decision. This test reads the parity reports
(``docs/parity/<port>.json``, written from real runs) and says which rules and ports
disagree. ``test_broken_*`` feeds it a report that contradicts a grounding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REAL_PORTS = ("golang", "java", "js", "python")


def _registry() -> list[dict[str, Any]]:
    return json.loads((ROOT / "fixtures" / "rules.json").read_text(encoding="utf-8"))["rules"]


def _reports() -> dict[str, dict[str, Any]]:
    found = {}
    for port in REAL_PORTS:
        path = ROOT / "docs" / "parity" / f"{port}.json"
        if path.exists():
            found[port] = json.loads(path.read_text(encoding="utf-8"))
    return found


def contradicted_groundings(rules: list[dict[str, Any]], reports: dict[str, dict[str, Any]]) -> list[str]:
    """``rule: port (how many)`` for each normative ports-agree rule a real port fails."""
    agreed = {r["id"] for r in rules if r["level"] == "normative" and r["grounding"]["source"] == "ports-agree"}
    problems = []
    for port, report in sorted(reports.items()):
        for row in report.get("rules", []):
            if row["rule"] not in agreed:
                continue
            by_reason = row.get("expectedByReason", {})
            failing = row.get("fail", 0) + sum(n for reason, n in by_reason.items() if reason != "capability")
            if failing:
                problems.append(f"{row['rule']}: {port} fails it in {failing} variant(s)")
    return problems


def test_ports_agree_groundings_hold_on_real_ports() -> None:
    reports = _reports()
    assert reports, "no parity report under docs/parity/: regenerate them from real runs"
    problems = contradicted_groundings(_registry(), reports)
    assert not problems, (
        "normative rules grounded 'ports-agree' that a real port fails (give each another source, "
        "level or an owner decision in SPEC.md §1):\n  " + "\n  ".join(problems)
    )


def test_broken_report_contradicting_a_grounding_is_named() -> None:
    rules = [{"id": "loop.x", "level": "normative", "grounding": {"source": "ports-agree"}},
             {"id": "loop.y", "level": "advisory", "grounding": {"source": "ports-agree"}}]
    reports = {"java": {"rules": [
        {"rule": "loop.x", "fail": 0, "expectedByReason": {"divergence": 2, "capability": 5}},
        {"rule": "loop.y", "fail": 3, "expectedByReason": {}},
    ]}}
    assert contradicted_groundings(rules, reports) == ["loop.x: java fails it in 2 variant(s)"]


def test_capability_markers_do_not_contradict_a_grounding() -> None:
    rules = [{"id": "loop.x", "level": "normative", "grounding": {"source": "ports-agree"}}]
    reports = {"js": {"rules": [{"rule": "loop.x", "fail": 0, "expectedByReason": {"capability": 7}}]}}
    assert contradicted_groundings(rules, reports) == []
