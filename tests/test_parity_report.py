"""docs/parity.md is generated from the per-port reports in docs/parity/; it must be current,
and the reports must speak only of rules the registry knows."""

from __future__ import annotations

import json
from pathlib import Path

from harness.parity import render
from harness.paths import fixtures_dir

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGEN = "python -m harness.parity docs/parity/*.json -o docs/parity.md"


def _reports() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((DOCS / "parity").glob("*.json"))]


def test_parity_matrix_is_current() -> None:
    assert (DOCS / "parity.md").read_text(encoding="utf-8") == render(_reports()), f"docs/parity.md is stale; run: {REGEN}"


def test_reports_cover_the_five_driven_ports_and_known_rules() -> None:
    reports = _reports()
    assert {r["port"] for r in reports} == {"reference", "python", "golang", "java", "js"}
    known = {r["id"] for r in json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]}
    for report in reports:
        unknown = {row["rule"] for row in report["rules"]} - known
        assert not unknown, f"{report['port']}: report names unknown rules {sorted(unknown)}; regenerate it"
