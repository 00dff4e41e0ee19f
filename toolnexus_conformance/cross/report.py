"""Rendering a cross-port resume run: the terminal summary section, the ``crossResume``
block of the JSON report, and its markdown.

The block is what ``toolnexus_conformance.reports.parity`` turns into the "Cross-port resume" section of
``docs/parity.md``: the halting and resuming ports, how many variants passed, failed only as
the ports' expectations say, or failed anew, how many were skipped (a capability a port
lacks) or deselected (no durable halt), and every difference — the rule, the phase and the
port it lies in, a one-line reason and the command that reproduces it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolnexus_conformance.reports import run_report as report
from toolnexus_conformance.reports.parity_summary import SOURCE_PLACEHOLDER, reproduce_command

if TYPE_CHECKING:
    from toolnexus_conformance.cross.resume import CrossResume

MAX_LISTED = 40


def reproduce_prefix(cross: CrossResume) -> str:
    """``pytest --port=A --resume-port=B`` with checkouts named by role, never by a machine path."""
    halting = _port_options("--port", cross.halting.name, cross.halting.selector, cross.halting_src)
    resuming = _port_options("--resume-port", cross.resuming.name, cross.resuming_selector, cross.resuming_src)
    return f"pytest {halting} {resuming}"


def _port_options(flag: str, name: str, selector: str, needs_source: bool) -> str:
    if "-cmd=" in selector:  # an ad-hoc shim: its command is the only way to name it
        return selector
    return f"{flag}={name}" + (f" {flag}-src={SOURCE_PLACEHOLDER}" if needs_source else "")


def report_block(cross: CrossResume) -> dict[str, Any]:
    prefix = reproduce_prefix(cross)
    counts = cross.counts
    return {
        "halting": cross.halting.name,
        "resuming": cross.resuming.name,
        "resumingLibrary": _library(cross.resuming_handshake),
        "variants": {
            "passed": counts.passed,
            "expected": counts.expected,
            "failed": counts.failed,
            "skipped": len(counts.skipped),
        },
        "skipped": [{"variant": v, "why": why} for v, why in counts.skipped],
        "deselected": {
            "why": "no durable halt: the scenario never hands a halt over, so a cross-port resume does not apply",
            "scenarios": len(cross.deselected),
            "variants": sum(len(v) for v in cross.deselected.values()),
        },
        "differences": [
            {
                "variant": d.variant,
                "rule": d.rule,
                "level": d.level,
                "reason": d.reason,
                "phase": d.phase,
                "port": d.port,
                "phases": list(d.phases),
                "decidedBy": d.how,
                "known": d.known,
                "observed": d.observed,
                "command": reproduce_command(prefix, d.variant, d.rule),
            }
            for d in cross.differences
        ],
    }


def _library(raw: dict[str, Any] | None) -> str:
    library = (raw or {}).get("library") or {}
    return f"{library.get('name', '?')} {library.get('version', '?')}"


def summary_lines(cross: CrossResume) -> list[tuple[str, str | None]]:
    """(line, colour) pairs for the terminal summary."""
    c = cross.counts
    ran = c.passed + c.expected + c.failed
    lines: list[tuple[str, str | None]] = [
        (
            f"variants with a durable halt: {ran} ran — {c.passed} passed, {c.expected} failed only as the ports' "
            f"expectations say, {c.failed} failed; {len(c.skipped)} skipped",
            "red" if c.failed else None,
        ),
        (
            f"not applicable (deselected): {sum(len(v) for v in cross.deselected.values())} variants of "
            f"{len(cross.deselected)} scenarios without a durable halt",
            None,
        ),
    ]
    for variant, why in c.skipped[:MAX_LISTED]:
        lines.append((f"skipped {variant}: {why}", "yellow"))
    shown = sorted(cross.differences, key=lambda d: (d.known, d.rule, d.variant))[:MAX_LISTED]
    for d in shown:
        status = "known" if d.known else "NEW"
        lines.append(
            (f"{status} [{d.rule}] {d.variant}: {d.phase} phase on {d.port} ({d.reason}): {d.observed[:140]}", None if d.known else "red")
        )
    if len(cross.differences) > len(shown):
        lines.append((f"… and {len(cross.differences) - len(shown)} more differences (see --conformance-report)", None))
    return lines


def markdown(data: dict[str, Any]) -> str:
    """The per-rule matrix of ``report.markdown`` followed by the cross-run differences."""
    block = data["crossResume"]
    lines = [report.markdown(data).rstrip("\n"), "", f"#### Cross-port resume: halt on `{block['halting']}`, resume on `{block['resuming']}`", ""]
    v = block["variants"]
    lines.append(
        f"{v['passed']} passed, {v['expected']} failed only as expected, {v['failed']} failed, {v['skipped']} skipped; "
        f"{block['deselected']['variants']} variants deselected ({block['deselected']['why']})."
    )
    for d in block["differences"]:
        status = "known" if d["known"] else "**new**"
        lines.append(f"- `{d['rule']}` {status}, {d['phase']} phase on `{d['port']}`: {d['observed']} — `{d['command']}`")
    return "\n".join(lines) + "\n"
