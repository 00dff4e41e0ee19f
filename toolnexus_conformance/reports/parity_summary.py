"""The one-minute parity summary: for each port, how many normative rules pass, fail, or
cannot be tested here (and which missing capability stops them), which advisory rules show
spec gaps, and each failing rule with a one-line reason and the command that reproduces its
smallest failing scenario.

It reads the JSON reports ``--conformance-report`` writes (the same ones ``docs/parity.md``
is built from) plus the scenario files, which say how big each failing scenario is and which
rules a capability-blocked variant would have checked. ``toolnexus_conformance.reports.parity`` puts it at the top
of ``docs/parity.md``; ``toolnexus_conformance.ci_gate`` writes it to a CI job summary.

*Smallest* failing scenario: the failing variant whose scenario scripts the fewest model
turns (first phase plus resume), then has no resume phase, then declares the fewest tools;
among a scenario's variants, ``run`` before ``stream`` before ``ask``, OpenAI style first,
and the uncalled-relay variant last.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.scenario.model import Scenario, load_scenario
from toolnexus_conformance.verdict.selection import rules_of

__all__ = [
    "SMALLEST",
    "SOURCE_PLACEHOLDER",
    "WHY_WIDTH",
    "FailingRule",
    "PortSummary",
    "ScenarioLoader",
    "failure_size",
    "load_rules",
    "render_summary",
    "reproduce_command",
    "rerun_prefix",
    "scenario_from_suite",
    "source_ports",
    "summarize",
]

CAPABILITY_LIST = re.compile(r"capabilities \[([^\]]*)\]")
NODE_ID = re.compile(r"^(?P<scenario>[^\[]+)\[(?P<variant>[^\]]+)\]$")
ENTRY_ORDER = {"run": 0, "stream": 1, "ask": 2}
STYLE_ORDER = {"openai": 0, "anthropic": 1}
WHY_WIDTH = 160
SMALLEST = (
    "A rule counts as failing when any variant fails it, known (in the port's expectations file) or new. "
    "Smallest failing scenario: fewest scripted model turns, then no resume phase, then fewest tools; "
    "the `run` entry point and OpenAI style first."
)
# How the reproduce command names a port's source checkout: never a machine path.
SOURCE_PLACEHOLDER = "PATH/TO/toolnexus"


@dataclass(frozen=True)
class FailingRule:
    rule: str
    reason: str  # the reason class of the smallest failing variant: divergence, golden, ...
    known: bool  # every failure of it is listed in the port's expectations
    variant: str  # node id of the smallest failing variant, e.g. "relay-declined-durable[openai-run]"
    why: str  # one line
    command: str
    failing_variants: int


@dataclass
class PortSummary:
    port: str
    library: str
    normative: int = 0
    passing: list[str] = field(default_factory=list)
    partly: dict[str, tuple[str, ...]] = field(default_factory=dict)  # passing, but some variants blocked
    failing: list[FailingRule] = field(default_factory=list)
    untestable: dict[str, tuple[str, ...]] = field(default_factory=dict)  # rule -> missing capabilities
    unexercised: list[str] = field(default_factory=list)
    gaps: dict[str, int] = field(default_factory=dict)  # advisory rule -> gap count
    stale: list[str] = field(default_factory=list)


ScenarioLoader = Callable[[str], Scenario | None]


def summarize(
    report: dict[str, Any],
    rules: list[dict[str, Any]],
    *,
    load: ScenarioLoader | None = None,
    needs_source: bool = False,
    rerun: str | None = None,
) -> PortSummary:
    """Classify every rule of the registry for one port's report. ``rerun`` is the command
    the reproduce lines start with (default: ``pytest --port=<port>``, with ``--port-src``
    when the port needs a checkout); each adds ``-k <variant> --rule=<rule>``."""
    load = load or scenario_from_suite
    port = report["port"]
    rows = {row["rule"]: row for row in report.get("rules", [])}
    failures: dict[str, dict[str, Any]] = report.get("failures", {})
    blocked = _blocked_by_capability(failures, load)
    broken: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for key, failure in failures.items():
        node, _, rule = key.partition("::")
        if failure.get("reason") != "capability" and rule != "*":
            broken.setdefault(rule, []).append((node, failure))
    summary = PortSummary(port=port, library=str(report.get("library", "?")), stale=list(report.get("staleExpectations", [])))
    fallback = _missing_capabilities(failures)
    for info in rules:
        rule, row = info["id"], rows.get(info["id"])
        if info["level"] != "normative":
            if row is not None and row.get("gap"):
                summary.gaps[rule] = int(row["gap"])
            continue
        summary.normative += 1
        passed = int(row["pass"]) if row else 0
        capability_count = int((row or {}).get("expectedByReason", {}).get("capability", 0))
        if rule in broken:
            prefix = rerun or rerun_prefix(port, needs_source=needs_source)
            summary.failing.append(_failing(prefix, rule, row, broken[rule], load))
        elif passed:
            summary.passing.append(rule)
            if rule in blocked:
                summary.partly[rule] = blocked[rule]
        elif rule in blocked or capability_count:
            summary.untestable[rule] = blocked.get(rule, fallback)
        else:
            summary.unexercised.append(rule)
    return summary


def _failing(
    prefix: str, rule: str, row: dict[str, Any] | None, cases: list[tuple[str, dict[str, Any]]], load: ScenarioLoader
) -> FailingRule:
    node, failure = min(cases, key=lambda case: failure_size(case[0], load))
    why = " ".join(str(failure.get("observed", "")).replace("`", "'").split())
    if len(why) > WHY_WIDTH:
        why = why[: WHY_WIDTH - 1] + "…"
    return FailingRule(
        rule=rule,
        reason=str(failure.get("reason", "?")),
        known=not (row or {}).get("fail"),
        variant=node,
        why=why,
        command=reproduce_command(prefix, node, rule),
        failing_variants=len(cases),
    )


def rerun_prefix(port: str, *, needs_source: bool) -> str:
    source = f" --port-src={SOURCE_PLACEHOLDER}" if needs_source else ""
    return f"pytest --port={port}{source}"


def reproduce_command(prefix: str, node: str, rule: str) -> str:
    """A command that reruns one variant checking one rule, from any folder: ``--port`` alone
    collects the installed suite, ``-k`` picks the variant (its id in brackets is unique)."""
    return f"{prefix} -k {shlex.quote(node)} --rule={rule}"


def failure_size(node: str, load: ScenarioLoader) -> tuple[int, int, int, int, int, int, str]:
    """How big a failing variant (``scenario[variant]``) is, as a sort key: the smallest
    sorts first (see the module's docstring); an unknown scenario sorts last."""
    match = NODE_ID.match(node)
    scenario = load(match["scenario"]) if match else None
    if match is None or scenario is None:
        return (10**6, 1, 10**6, 9, 9, 1, node)
    data = scenario.data
    resume = data.get("resume") or {}
    turns = len(data.get("turns", [])) + len(resume.get("turns", []))
    style, _, rest = match["variant"].partition("-")
    entry = rest.removesuffix("-uncalled-relay")
    return (
        turns,
        1 if resume else 0,
        len(data.get("toolkit", {}).get("tools", [])),
        ENTRY_ORDER.get(entry, 9),
        STYLE_ORDER.get(style, 9),
        1 if rest.endswith("-uncalled-relay") else 0,
        node,
    )


def _blocked_by_capability(failures: dict[str, dict[str, Any]], load: ScenarioLoader) -> dict[str, tuple[str, ...]]:
    """Rule -> the capabilities whose absence kept some variant from checking it. A report
    folds a variant blocked on every rule into one ``variant::*`` key; the scenario file says
    which rules that variant checks (as the plugin selects them, so the two never disagree)."""
    blocked: dict[str, set[str]] = {}
    for key, failure in failures.items():
        if failure.get("reason") != "capability":
            continue
        node, _, rule = key.partition("::")
        missing = _capabilities_named(str(failure.get("observed", "")))
        if rule != "*":
            blocked.setdefault(rule, set()).update(missing)
            continue
        variant = _variant(node, load)
        for checked in rules_of(variant) if variant is not None else ():
            blocked.setdefault(checked, set()).update(missing)
    return {rule: tuple(sorted(caps)) for rule, caps in blocked.items()}


def _variant(node: str, load: ScenarioLoader) -> Any:
    match = NODE_ID.match(node)
    scenario = load(match["scenario"]) if match else None
    if match is None or scenario is None:
        return None
    return next((v for v in scenario.variants() if v.name == match["variant"]), None)


def _capabilities_named(observed: str) -> set[str]:
    found = CAPABILITY_LIST.search(observed)
    return {part.strip().strip("'\"") for part in found[1].split(",") if part.strip()} if found else set()


def _missing_capabilities(failures: dict[str, dict[str, Any]]) -> tuple[str, ...]:
    caps: set[str] = set()
    for failure in failures.values():
        if failure.get("reason") == "capability":
            caps |= _capabilities_named(str(failure.get("observed", "")))
    return tuple(sorted(caps))


def scenario_from_suite(scenario_id: str) -> Scenario | None:
    """The installed suite's scenario of that id; None when it has none or cannot load it."""
    path = scenarios_dir() / f"{scenario_id}.json"
    try:
        return load_scenario(path) if path.is_file() else None
    except HarnessError:
        return None


def render_summary(summaries: list[PortSummary]) -> list[str]:
    """Markdown: one line per port, then each port's failing rules, one line each."""
    lines = [_port_line(s) for s in summaries]
    for s in summaries:
        if not s.failing:
            continue
        lines += ["", f"**Failing on {s.port}** (each with the command that reproduces its smallest failing scenario):", ""]
        for f in s.failing:
            status = "known, in the port's expectations" if f.known else "**new**"
            count = f"{f.failing_variants} variant{'s' if f.failing_variants != 1 else ''}"
            lines.append(f"- `{f.rule}` ({f.reason}; {status}; {count}): {f.why} — `{f.command}`")
    return lines


def _port_line(s: PortSummary) -> str:
    parts = [f"{len(s.passing)} pass"]
    if s.partly:
        parts[0] += f" ({len(s.partly)} of them only partly tested: other variants need {_caps(s.partly)})"
    parts.append(f"**{len(s.failing)} fail**" if s.failing else "0 fail")
    if s.untestable:
        parts.append(f"{len(s.untestable)} not testable ({_needs(s.untestable)})")
    else:
        parts.append("0 not testable")
    if s.unexercised:
        parts.append(f"{len(s.unexercised)} not exercised")
    line = f"- **{s.port}** ({s.library}): {s.normative} normative rules: " + ", ".join(parts)
    if s.gaps:
        named = ", ".join(f"`{rule}` {count}" for rule, count in sorted(s.gaps.items()))
        line += f"; spec gaps in {len(s.gaps)} advisory rule{'s' if len(s.gaps) != 1 else ''}: {named}"
    else:
        line += "; no spec gaps"
    if s.stale:
        line += f"; **{len(s.stale)} stale expectation{'s' if len(s.stale) != 1 else ''}**"
    return line + "."


def _caps(rules: dict[str, tuple[str, ...]]) -> str:
    return " / ".join(f"`{c}`" for c in sorted({c for caps in rules.values() for c in caps})) or "an undeclared capability"


def _needs(untestable: dict[str, tuple[str, ...]]) -> str:
    by_caps: dict[tuple[str, ...], int] = {}
    for caps in untestable.values():
        by_caps[caps] = by_caps.get(caps, 0) + 1
    named = [
        f"{count} need {' + '.join(f'`{c}`' for c in caps) if caps else 'an undeclared capability'}"
        for caps, count in sorted(by_caps.items(), key=lambda item: (-item[1], item[0]))
    ]
    return "the port does not declare the capability: " + "; ".join(named)


def source_ports() -> frozenset[str]:
    """Ports whose reproduce command needs ``--port-src`` (ports.toml ``needs_source``)."""
    from toolnexus_conformance.shim.ports import load_registry

    return frozenset(name for name, port in load_registry().items() if port.needs_source)


def load_rules(fixtures: Path) -> list[dict[str, Any]]:
    import json

    return list(json.loads((fixtures / "rules.json").read_text(encoding="utf-8"))["rules"])
