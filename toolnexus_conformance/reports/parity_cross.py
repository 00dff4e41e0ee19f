"""The "Cross-port resume" section of ``docs/parity.md``: halting port x resuming port.

Built from the reports a cross run writes (``pytest --port=A --resume-port=B
--conformance-report=docs/parity/cross-A-B.json``; their ``crossResume`` block). A cell counts
the variants with a durable halt: passed, failed only as the ports' expectations say, failed
anew. Below the matrix, one line per difference found — a rule failing in one phase on one
port of one pair — with its variants, a one-line reason and the command that reproduces the
smallest failing variant. Ports whose single-port report lacks the ``resume`` capability are
named as not applicable.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolnexus_conformance.reports.parity_summary import WHY_WIDTH, failure_size, scenario_from_suite

HEADER = (
    "Each variant with a durable halt runs its halting phase on the row's port and its resume phase",
    "on the column's port, which gets what a durable host keeps (the pending Request and the transcript,",
    "or the stored conversation) and is judged by the same checks, goldens and normalization rows as a",
    "single-port run. A failure is placed in the phase it lies in (when both phases differ, against the",
    "reference's resume of the same halt) and is known when the expectations of the port(s) answering for",
    "it list it. Variants without a durable halt are not applicable.",
)


def render_cross(crosses: list[dict[str, Any]], singles: Iterable[dict[str, Any]]) -> list[str]:
    """Markdown lines of the section (empty when no cross report is given)."""
    if not crosses:
        return []
    blocks = [r["crossResume"] for r in crosses]
    halting = sorted({b["halting"] for b in blocks})
    resuming = sorted({b["resuming"] for b in blocks})
    by_pair = {(b["halting"], b["resuming"]): b for b in blocks}
    lines = ["", "## Cross-port resume", "", *HEADER, ""]
    lines += ["| halting ↓ / resuming → | " + " | ".join(resuming) + " |", "|---|" + "---|" * len(resuming)]
    for a in halting:
        lines.append(f"| {a} | " + " | ".join(_cell(by_pair.get((a, b))) for b in resuming) + " |")
    deselected = sorted({(b["deselected"]["scenarios"], b["deselected"]["variants"]) for b in blocks})
    for scenarios, variants in deselected:
        lines += ["", f"Not applicable: {variants} variants of {scenarios} scenarios without a durable halt (deselected)."]
    without = sorted(r["port"] for r in singles if "resume" not in r.get("capabilities", []))
    if without:
        lines.append(f"Not in the matrix: {', '.join(without)} (no `resume` capability declared).")
    lines += ["", "Differences found (one line per pair, rule and phase; the command reproduces the smallest variant):", ""]
    found = [line for a in halting for b in resuming if (a, b) in by_pair for line in _differences(by_pair[(a, b)])]
    lines += found or ["- none: every cross-run variant passed."]
    return lines


def _cell(block: dict[str, Any] | None) -> str:
    if block is None:
        return "—"
    v = block["variants"]
    parts = [f"pass {v['passed']}"]
    if v["expected"]:
        parts.append(f"xfail {v['expected']}")
    if v["failed"]:
        parts.append(f"**FAIL {v['failed']}**")
    if v["skipped"]:
        parts.append(f"skipped {v['skipped']}")
    return ", ".join(parts)


def _differences(block: dict[str, Any]) -> list[str]:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for d in block["differences"]:
        groups.setdefault((d["rule"], d["phase"], d["port"]), []).append(d)
    lines = []
    for (rule, phase, port), found in sorted(groups.items(), key=lambda g: (all(d["known"] for d in g[1]), g[0])):
        smallest = min(found, key=lambda d: failure_size(d["variant"], scenario_from_suite))
        new = sum(1 for d in found if not d["known"])
        status = f"**{new} new**" + (f", {len(found) - new} known" if new < len(found) else "") if new else "known"
        why = " ".join(str(smallest["observed"]).replace("`", "'").split())
        if len(why) > WHY_WIDTH:
            why = why[: WHY_WIDTH - 1] + "…"
        count = f"{len(found)} variant{'s' if len(found) != 1 else ''}"
        ports = " and ".join(dict.fromkeys(port.split(" and ")))  # golang → golang: one name
        phases = f"{phase} phases" if " and " in phase else f"{phase} phase"
        lines.append(
            f"- {block['halting']} → {block['resuming']}: `{rule}` in the {phases} on {ports} "
            f"({smallest['reason']}; {status}; {count}): {why} — `{smallest['command']}`"
        )
    return lines
