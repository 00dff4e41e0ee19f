"""Scenario files as pytest collectors, and one test item per variant.

An item runs its variant through the port's shim, builds the observables, compares them
with the golden, runs the check of every rule the scenario cites (plus the implicit ones),
and then judges the outcomes against the port's expectations. Its failure text names the
rule, the scenario file, a minimal diff, the shim's stderr tail and a rerun command.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .compare import compare_variant
from .errors import HarnessError, OutgoingMessageTooLarge, ShimError
from .golden_files import read_golden, write_golden
from .normalize import normalize
from .observables import observables
from .rerun import rerun_command
from .rules import NotApplicable
from .runner import RunRecord, run_variant
from .scenario import UNCALLED_RELAY_TOOL, ScenarioError, Variant, load_scenario

if TYPE_CHECKING:
    from .session import ConformanceSession

REFERENCE_PORTS = {"reference"}


def reference_version() -> str:
    import reference_py

    return reference_py.__version__


class ConformanceFailure(Exception):
    """A variant's outcomes did not match the port's expectations (rendered, no traceback)."""


@dataclass
class Evidence:
    """What ``--artifacts`` keeps of a failing variant: the run (absent when the shim failed
    mid-run), every JSON-RPC line of it, and the shim's stderr as far as it is kept."""

    record: RunRecord | None
    jsonrpc: list[tuple[str, str]]
    stderr: str


@dataclass
class Outcome:
    rule: str
    status: str  # pass | fail | n/a | gap
    reason: str = ""
    messages: list[str] = field(default_factory=list)


class ScenarioFile(pytest.File):
    def collect(self) -> Any:
        conformance: ConformanceSession = self.config.stash[SESSION_KEY]
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for variant in scenario.variants():
            # Implicit rules (golden.*, keys.*, absent.*) count too, so --rule=keys.* selects.
            if not any(conformance.selected(rule) for rule in _rules_of(variant)):
                continue
            yield VariantItem.from_parent(self, name=variant.node_id, variant=variant, callobj=run_scenario_variant)


def run_scenario_variant() -> None:
    """syrupy locates goldens through an item's function object; this is it."""


class VariantItem(pytest.Item):
    def __init__(self, *, variant: Variant, callobj: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = variant
        self.obj = callobj
        self._evidence: Evidence | None = None
        for rule in variant.scenario.rules:
            self.add_marker(pytest.mark.rule(rule))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.variant.node_id}"

    def runtest(self) -> None:
        conformance: ConformanceSession = self.config.stash[SESSION_KEY]
        conformance.scenarios_run.add(self.variant.scenario.id)
        if not self.variant.uncalled_relay:
            conformance.golden_variants.setdefault(self.variant.scenario.id, set()).add(self.variant.name)
        outcomes, stderr_tail = self._evaluate(conformance)
        self._judge(conformance, outcomes, stderr_tail)

    def _evaluate(self, conformance: ConformanceSession) -> tuple[list[Outcome], str]:
        rules = [r for r in _rules_of(self.variant) if conformance.selected(r)]
        try:
            handshake = conformance.handshake()
        except ShimError as exc:
            return _all_fail(conformance, rules, "transport", str(exc)), exc.stderr_tail
        missing = sorted(self.variant.requires - set(handshake.capabilities))
        if missing:
            why = f"the port does not declare the capabilities {missing} this variant needs"
            return _all_fail(conformance, rules, "capability", why), ""
        shim = conformance.shim()
        mark = shim.process.transcript.mark()
        try:
            record = run_variant(self.variant, shim, conformance.provider(), timeout=conformance.port.timeout)
        except OutgoingMessageTooLarge as exc:  # the scenario's data, not the shim: no stderr to blame
            return _all_fail(conformance, rules, "scenario", f"scenario file {self.path.name}: {exc}"), ""
        except HarnessError as exc:
            # The exception holds the crashed process's stderr; the shim may have a new one by now.
            stderr = getattr(exc, "stderr_tail", "") or shim.process.stderr_tail()
            self._evidence = Evidence(None, shim.process.transcript.since(mark), stderr)
            return _all_fail(conformance, rules, "transport", str(exc)), stderr
        self._evidence = Evidence(record, shim.process.transcript.since(mark), shim.process.stderr_tail())
        outcomes = self._golden_outcomes(conformance, record, rules)
        outcomes += [self._check(conformance, r, record) for r in rules if r != _golden_owner(self.variant)]
        return outcomes, self._evidence.stderr

    def _check(self, conformance: ConformanceSession, rule: str, record: RunRecord) -> Outcome:
        check = conformance.checks.get(rule)
        if check is None:
            return Outcome(rule, "fail", "divergence", [f"rule {rule} has no check bound to it (harness bug)"])
        try:
            messages = check.run(record)
        except NotApplicable as exc:
            return Outcome(rule, "n/a", messages=[str(exc)])
        if not messages:
            return Outcome(rule, "pass")
        if conformance.level(rule) == "advisory":
            return Outcome(rule, "gap", messages=messages)
        return Outcome(rule, "fail", _reason(record), messages)

    def _payload(self, record: RunRecord) -> dict[str, Any]:
        return {
            "provenance": {"reference": reference_version(), "scenario": self.variant.scenario.digest},
            "observables": normalize(observables(record)),
        }

    def _golden_outcomes(self, conformance: ConformanceSession, record: RunRecord, rules: list[str]) -> list[Outcome]:
        """The golden comparison, reported under the rule it proves for this variant:
        golden.observables; absent.byte-identical for a relay-free scenario (its golden is the
        pre-relay golden); relay.uncalled-inert for the uncalled-relay variant (compared with
        the base golden minus the extra declaration)."""
        owner = _golden_owner(self.variant)
        if owner not in rules:
            return []
        problems = self._compare_with_golden(conformance, record)
        if owner == "relay.uncalled-inert":
            placement = self._check(conformance, owner, record)
            problems = (placement.messages if placement.status in {"fail", "gap"} else []) + problems
        return [Outcome(owner, "fail", "golden", problems) if problems else Outcome(owner, "pass")]

    def _compare_with_golden(self, conformance: ConformanceSession, record: RunRecord) -> list[str]:
        base = self.variant.name.removesuffix("-uncalled-relay")
        if self.variant.uncalled_relay:
            golden = read_golden(self.variant.scenario.id, base)
            got = normalize(_strip_uncalled_relay(observables(record), self.variant.style))
            got["variant"] = base
            what = "an uncalled relay tool changed more than its declaration:"
        else:
            payload = self._payload(record)
            if conformance.update_goldens and conformance.port.name in REFERENCE_PORTS:
                write_golden(self, payload)
                return []
            golden = read_golden(self.variant.scenario.id, base)
            if golden is not None and golden.get("provenance") != payload["provenance"]:
                return [f"the golden is stale (provenance {golden.get('provenance')} vs {payload['provenance']}); {REGEN}"]
            got = payload["observables"]
            what = "observables differ from the golden:"
        if golden is None:
            return [f"no golden for {self.variant.scenario.id}[{base}]; {REGEN}"]
        comparison = compare_variant(golden["observables"], got, self.variant)
        for rule, diffs in comparison.gaps.items():
            conformance.tally.gaps[rule].extend(f"{self.variant.node_id}: {d.render().strip()}" for d in diffs)
        return [what, comparison.render_failures()] if comparison.failures else []

    def _judge(self, conformance: ConformanceSession, outcomes: list[Outcome], stderr_tail: str) -> None:
        problems: list[str] = []
        # A transport or capability failure hits every rule alike: say it once, name the rules.
        shared: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for outcome in outcomes:
            key = f"{self.variant.node_id}::{outcome.rule}"
            entry = conformance.expectations.lookup(key)
            if outcome.status == "fail":
                conformance.observed_failures[key] = (outcome.reason, _one_line(outcome.messages))
                if entry is not None and entry.reason == outcome.reason:
                    conformance.tally.add(outcome.rule, "expected")
                    conformance.tally.add(outcome.rule, f"expected:{outcome.reason}")
                    continue
                conformance.tally.add(outcome.rule, "fail")
                if entry is None and outcome.reason in {"transport", "capability", "scenario"}:
                    shared.setdefault((outcome.reason, tuple(outcome.messages)), []).append(outcome.rule)
                    continue
                head = f"[{outcome.rule}] ({conformance.level(outcome.rule)}, {outcome.reason})"
                if entry is not None:
                    head += f" — expected to fail as {entry.reason!r}, failed as {outcome.reason!r}"
                problems.append("\n".join([head, *outcome.messages]))
            else:
                conformance.tally.add(outcome.rule, outcome.status)
                if entry is not None and outcome.status == "pass":
                    problems.append(
                        f"[{outcome.rule}] passes now but is listed as an expected failure ({key}); "
                        f"update the file: {conformance.regenerate_command}"
                    )
            if outcome.status == "gap":
                conformance.tally.gaps[outcome.rule].extend(f"{self.variant.node_id}: {m}" for m in outcome.messages)
        for (reason, messages), rules in shared.items():
            named = " ".join(f"[{rule}] (normative, {reason})" for rule in rules)
            problems.insert(0, "\n".join([named, *messages]))
        if problems:
            if self._evidence is not None:
                self._save_artifacts(conformance, self._evidence)
            raise ConformanceFailure(self._render(conformance, problems, stderr_tail))

    def _render(self, conformance: ConformanceSession, problems: list[str], stderr_tail: str) -> str:
        lines = [f"scenario {self.variant.node_id} ({self.path.name}) on port {conformance.port.name}:", ""]
        lines += [p + "\n" for p in problems]
        if stderr_tail.strip():
            lines.append("shim stderr (tail):")
            lines += [f"  | {line}" for line in stderr_tail.strip().splitlines()[-15:]]
        lines.append(f"rerun: {rerun_command(self, conformance.port.selector, conformance.expectations.path)}")
        return "\n".join(lines)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure | HarnessError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def _save_artifacts(self, conformance: ConformanceSession, evidence: Evidence) -> None:
        if conformance.artifacts is None:
            return
        conformance.artifacts.mkdir(parents=True, exist_ok=True)
        name = self.variant.node_id.replace("[", "__").replace("]", "")
        phases = evidence.record.phases if evidence.record is not None else []
        data = {
            "variant": self.variant.node_id,
            "phases": [
                {"entry": p.entry, "params": p.params, "requests": p.requests, "result": p.result, "error": p.error,
                 "events": p.events, "waitFor": p.host.wait_for, "saves": p.host.saves}
                for p in phases
            ],
            "jsonrpc": [{"direction": direction, "line": line} for direction, line in evidence.jsonrpc],
            "stderr": evidence.stderr.splitlines(),
        }
        (conformance.artifacts / f"{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


REGEN = "regenerate with: pytest --port=reference --snapshot-update"


GOLDEN_RULES = ("golden.observables", "absent.byte-identical", "relay.uncalled-inert")


def _golden_owner(variant: Variant) -> str:
    """Which rule the golden comparison proves for this variant."""
    if variant.uncalled_relay:
        return "relay.uncalled-inert"
    return "absent.byte-identical" if variant.scenario.relay_free else "golden.observables"


def _rules_of(variant: Variant) -> list[str]:
    """Cited + implicit rules, minus the golden rules this variant's comparison does not prove."""
    owner = _golden_owner(variant)
    cited = [*variant.scenario.rules, *_implicit(variant)]
    return [r for r in dict.fromkeys(cited) if r not in GOLDEN_RULES or r == owner or r == "relay.uncalled-inert"]


def _implicit(variant: Variant) -> tuple[str, ...]:
    """Rules every variant of this kind is checked against, cited or not."""
    from .session import IMPLICIT_RULES

    extra: tuple[str, ...] = ()
    if variant.uncalled_relay:
        extra = ("relay.uncalled-inert",)
    elif variant.scenario.relay_free:
        extra = ("absent.byte-identical",)
    return tuple(r for r in (*IMPLICIT_RULES, *extra) if r not in variant.scenario.rules)


def _all_fail(conformance: ConformanceSession, rules: list[str], reason: str, why: str) -> list[Outcome]:
    """Nothing could be checked: normative rules fail for that reason, advisory ones say why."""
    return [
        Outcome(r, "n/a", messages=[why]) if conformance.level(r) == "advisory" else Outcome(r, "fail", reason, [why])
        for r in rules
    ]


def _reason(record: RunRecord) -> str:
    errors = [p.error for p in record.phases if p.error is not None]
    expected = (record.variant.scenario.data.get("expect") or {}).get("error") or (
        "resume" if (record.variant.scenario.data.get("resume") or {}).get("expectError") else None
    )
    if errors and not expected:
        return "port-error"
    return "divergence"


def _strip_uncalled_relay(tree: dict[str, Any], style: str) -> dict[str, Any]:
    tree = copy.deepcopy(tree)
    name = UNCALLED_RELAY_TOOL["name"]
    for phase in tree["phases"]:
        for body in phase["requests"]:
            if not isinstance(body, dict) or "tools" not in body:
                continue
            body["tools"] = [
                t for t in body["tools"] if ((t.get("function") or {}).get("name") if style == "openai" else t.get("name")) != name
            ]
            if not body["tools"]:
                del body["tools"]
                body.pop("tool_choice", None)
    return tree


def _one_line(messages: list[str]) -> str:
    text = " ".join(m.strip() for m in messages if m.strip())
    return text.replace("\n", " ")[:200]


SESSION_KEY = pytest.StashKey["ConformanceSession"]()
