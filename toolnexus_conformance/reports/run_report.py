"""Reporting a conformance run: the terminal summary per rule, and the JSON + markdown
reports (``--conformance-report``) a CI step summary can show.

``--conformance-report=PATH`` writes JSON to PATH and the markdown matrix to PATH's ``.md``
sibling; a PATH ending in ``.md`` is refused, since the two would land on one file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.verdict.expectations import collapse_capability
from toolnexus_conformance.verdict.expectations import load as expectations_load

if TYPE_CHECKING:
    from toolnexus_conformance.verdict.session import ConformanceSession

MAX_GAPS_SHOWN = 5


def terminal_summary(terminal: Any, conformance: ConformanceSession) -> None:
    port = conformance.port.name
    terminal.write_sep("=", f"conformance summary: port {port}")
    rows = conformance.summary_rows()
    width = max((len(r["rule"]) for r in rows), default=10)
    terminal.write_line(f"{'rule'.ljust(width)}  level       pass  fail  expected  gap  n/a  scenarios")
    for r in rows:
        terminal.write_line(
            f"{r['rule'].ljust(width)}  {r['level']:<10} {r['pass']:>5} {r['fail']:>5} {r['expected']:>9} {r['gap']:>4} {r['notApplicable']:>4} {r['scenarios']:>10}"
        )
    for text in conformance.port.build_notes:
        terminal.write_line(f"port build: {text}", yellow=True)
    fewest = conformance.fewest_scenarios()
    if fewest is not None:
        low, at = fewest
        shown = ", ".join(at[:8]) + (f" and {len(at) - 8} more" if len(at) > 8 else "")
        terminal.write_line(f"fewest scenarios checking a normative rule: {low} ({shown})")
    never = sorted(rid for rid, info in conformance.rules.items() if rid not in {r["rule"] for r in rows})
    if never and rows:  # with no row at all (nothing ran), listing every rule says nothing
        terminal.write_line(f"rules not exercised by any selected scenario ({len(never)}): {', '.join(never)}")
    tally = conformance.tally()
    for rule, gaps in sorted(tally.gaps.items()):
        terminal.write_line(f"spec gap [{rule}] ({len(gaps)}):")
        for gap in gaps[:MAX_GAPS_SHOWN]:
            terminal.write_line(f"    {gap}")
    if conformance.expectations_error is not None:
        terminal.write_line(f"ERROR {conformance.expectations_error}", red=True)
    for path in conformance.deleted_goldens:
        terminal.write_line(f"deleted orphan golden (no variant owns it): {path}")
    if conformance.kept_goldens_reason is not None:
        terminal.write_line(
            f"--snapshot-update deleted no golden: orphans are judged only after a complete run, "
            f"and {conformance.kept_goldens_reason}",
            yellow=True,
        )
    for path in conformance.unused_goldens:
        terminal.write_line(f"ERROR unused golden (no variant owns it; delete it or restore its scenario): {path}", red=True)
    for key in conformance.stale_entries:
        terminal.write_line(f"ERROR expectation matched nothing (remove it): {key}", red=True)


def build_report(conformance: ConformanceSession) -> dict[str, Any]:
    handshake = conformance.known_handshake()
    raw = handshake.raw if handshake else conformance.worker_handshake or {}
    library = raw.get("library") or {}
    evidence = conformance.failure_evidence()
    context = conformance.failure_context()
    return {
        "port": conformance.port.name,
        "library": f"{library.get('name', '?')} {library.get('version', '?')}",
        "capabilities": list(raw.get("capabilities", [])),
        "rules": conformance.summary_rows(),
        "gaps": {rule: gaps for rule, gaps in sorted(conformance.tally().gaps.items())},
        # Capability failures are one line per variant, as in expectations files.
        "failures": {
            key: {"reason": r, "observed": o}
            for key, (r, o) in sorted(collapse_capability(conformance.observed_failures()).items())
        },
        "staleExpectations": conformance.stale_entries,
        # For the HTML report (parity_html): each failing key's evidence (its minimal diff),
        # each failed variant's shim stderr tail and rerun command, and the options that
        # select this port again (a variant's rerun: these plus -k <variant>).
        "evidence": {key: evidence[key] for key in sorted(evidence)},
        "variants": {node: context[node] for node in sorted(context)},
        "selector": conformance.port.selector,
        "expectations": str(conformance.expectations.path) if conformance.expectations.path else None,
    }


class ReportPathError(HarnessError):
    """--conformance-report names a path the JSON and markdown reports cannot both have."""


def markdown_path(target: Path) -> Path:
    return target.with_suffix(".md")


def check_target(target: str | None) -> None:
    """Refuse a report path whose markdown sibling is the path itself (it ends in .md)."""
    if target is not None and Path(target).suffix.lower() == ".md":
        raise ReportPathError(
            f"--conformance-report={target}: the report is JSON and its markdown matrix goes to the .md sibling; "
            f"name the JSON file (e.g. --conformance-report={Path(target).with_suffix('.json')})"
        )


def root_causes(path: Path | None) -> list[dict[str, Any]]:
    """The port's known failures as root causes, as its expectations file lists them now
    (after an ``--update-expectations`` run, what that run wrote)."""
    if path is None or not path.exists():
        return []
    causes = []
    for entry in expectations_load(path).entries:
        variants = entry.variants or (entry.key.split("::", 1)[0],)
        item = {"rule": entry.rule or entry.key.split("::", 1)[1], "reason": entry.reason, "variants": len(variants)}
        item.update({k: v for k, v in (("cause", entry.cause), ("source", entry.source), ("note", entry.note)) if v})
        if entry.flaky:
            item["flaky"] = True
        causes.append(item)
    return causes


def write_reports(conformance: ConformanceSession, target: Path) -> None:
    check_target(str(target))
    data = build_report(conformance)
    data["rootCauses"] = root_causes(conformance.expectations.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    markdown_path(target).write_text(markdown(data), encoding="utf-8")


def markdown(data: dict[str, Any]) -> str:
    lines = [f"### Conformance: port `{data['port']}`", "", "| rule | level | pass | fail | expected | gap | n/a |", "|---|---|---|---|---|---|---|"]
    for r in data["rules"]:
        lines.append(f"| `{r['rule']}` | {r['level']} | {r['pass']} | {r['fail']} | {r['expected']} | {r['gap']} | {r['notApplicable']} |")
    return "\n".join(lines) + "\n"
