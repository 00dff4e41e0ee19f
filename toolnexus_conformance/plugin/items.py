"""Scenario files as pytest collectors, and one test item per variant.

An item only orchestrates: it hands the verdict pipeline (``verdict/pipeline.py``) the
variant's facts, a way to run it through the port's shim, the rules selected for it at
collection and the port's expectations; appends the result to the session's results
stream; and renders a failure from that result: the rule, the scenario file, a minimal
diff, the shim's stderr tail and a rerun command.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.golden.files import write_golden
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.plugin.rerun import rerun_command
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.scenario.model import ScenarioError, Variant, load_scenario
from toolnexus_conformance.verdict.judge import Verdict, rule_problem
from toolnexus_conformance.verdict.pipeline import Ran, Result
from toolnexus_conformance.verdict.rules.golden import golden_payload
from toolnexus_conformance.verdict.selection import golden_owner_of, judged_rules
from toolnexus_conformance.verdict.session import SESSION_KEY, ConformanceSession

__all__ = ["ConformanceFailure", "Evidence", "ScenarioFile", "VariantItem", "render_tail", "restarts_shim", "run_scenario_variant"]

REFERENCE_PORTS = {"reference"}


class ConformanceFailure(Exception):
    """A variant's outcomes did not match the port's expectations (rendered, no traceback)."""


@dataclass
class Evidence:
    """What ``--artifacts`` keeps of a failing variant: the run (absent when the shim failed
    mid-run), every JSON-RPC line of it, and the shim's stderr as far as it is kept."""

    record: RunRecord | None
    jsonrpc: list[tuple[str, str]]
    stderr: str


class ScenarioFile(pytest.File):
    def collect(self) -> Any:
        conformance: ConformanceSession = self.config.stash[SESSION_KEY]
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for variant in scenario.variants():
            # Implicit rules (golden.*, keys.*, absent.*) count too, so --rule=keys.* selects.
            rules = judged_rules(variant, conformance.rule_filters)
            if not rules:
                continue
            yield VariantItem.from_parent(
                self, name=variant.node_id, variant=variant, rules=rules, callobj=run_scenario_variant
            )


def run_scenario_variant() -> None:
    """syrupy locates goldens through an item's function object; this is it."""


class VariantItem(pytest.Item):
    def __init__(self, *, variant: Variant, rules: list[str], callobj: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = variant
        self.rules = rules  # the rules this run judges the variant on (selection, at collection)
        self.obj = callobj
        self._evidence: Evidence | None = None
        for rule in variant.scenario.rules:
            self.add_marker(_rule_mark(rule))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.variant.node_id}"

    def runtest(self) -> None:
        conformance: ConformanceSession = self.config.stash[SESSION_KEY]
        result = conformance.judge(self.variant, self.rules, run=lambda facts, rules: self._run(conformance, facts, rules))
        if result.failed:
            result = replace(result, rerun=rerun_command(self, conformance.port.selector, conformance.expectations.path))
        conformance.add_result(result)
        if result.failed:
            if self._evidence is not None:
                self._save_artifacts(conformance, self._evidence)
            raise ConformanceFailure(self._render(conformance, self._problems(conformance, result.verdict), result))

    def _run(self, conformance: ConformanceSession, facts: Facts, rules: list[str]) -> Ran:
        """The session's run step, keeping what --artifacts saves of a failure; on the
        reference with --snapshot-update, the golden is written instead of compared."""
        ran = conformance.run(self.variant, facts, rules)
        if ran.record is not None or ran.transcript:
            self._evidence = Evidence(ran.record, list(ran.transcript), ran.stderr_tail)
        if ran.record is not None and self._writes_golden(conformance, ran.record, facts):
            ran = replace(ran, not_checked=frozenset({golden_owner_of(self.variant)}))
        return ran

    def _writes_golden(self, conformance: ConformanceSession, record: RunRecord, facts: Facts) -> bool:
        """--snapshot-update on the reference writes this variant's golden (through
        syrupy's extension) instead of comparing with it. The comparison itself is the
        golden rule's check."""
        if self.variant.uncalled_relay:
            return False
        if conformance.update_goldens and conformance.port.name in REFERENCE_PORTS:
            write_golden(self, golden_payload(record, facts))
            return True
        return False

    def _problems(self, conformance: ConformanceSession, verdict: Verdict) -> list[str]:
        problems: list[str] = []
        # A transport or capability failure hits every rule alike: say it once, name the rules.
        shared: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for rv in verdict.rules:
            if rv.unexpected_pass:
                problems.append(
                    f"[{rv.rule}] passes now but is listed as an expected failure ({verdict.key(rv.rule)}); "
                    f"update the file: {conformance.regenerate_command}"
                )
            if rv.status != "fail":
                continue
            reason = rv.outcome.reason
            if rv.listed_reason is None and reason in {"transport", "capability", "scenario"}:
                shared.setdefault((reason, rv.outcome.evidence), []).append(rv.rule)
                continue
            problems.append(rule_problem(rv))
        for (reason, messages), rules in shared.items():
            named = " ".join(f"[{rule}] (normative, {reason})" for rule in rules)
            problems.insert(0, "\n".join([named, *messages]))
        return problems

    def _render(self, conformance: ConformanceSession, problems: list[str], result: Result) -> str:
        lines = [f"scenario {self.variant.node_id} ({self.path.name}) on port {conformance.port.name}:", ""]
        lines += [p + "\n" for p in problems]
        lines += render_tail(result)
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
                {"entry": p.entry, "params": p.params, "requests": p.requests, "reply": p.raw_reply, "error": p.error,
                 "waitFor": p.host.wait_for, "saves": p.host.saves,
                 "hostAnswers": [{"request": e.request, "answer": e.answer} for e in p.host.exchanges]}
                for p in phases
            ],
            "jsonrpc": [{"direction": direction, "line": line} for direction, line in evidence.jsonrpc],
            "stderr": evidence.stderr.splitlines(),
        }
        (conformance.artifacts / f"{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def render_tail(result: Result) -> list[str]:
    """The end of a failure's text: the shim's stderr tail, then the rerun command."""
    lines = []
    if result.stderr_tail.strip():
        lines.append("shim stderr (tail):")
        lines += [f"  | {line}" for line in result.stderr_lines()]
    lines.append(f"rerun: {result.rerun}")
    return lines


def restarts_shim(item: pytest.Item) -> bool:
    """The item is a variant that resumes in a restarted shim (a hint for spawning ahead)."""
    variant = getattr(item, "variant", None)
    if not isinstance(variant, Variant) or variant.resume_entry is None:
        return False
    return bool((variant.scenario.data.get("resume") or {}).get("restartShim"))


@cache
def _rule_mark(rule: str) -> pytest.MarkDecorator:
    """The ``rule`` marker of one rule id: built once and shared by every variant citing it
    (a MarkDecorator is immutable; building ~7000 of them was a tenth of collection)."""
    return pytest.mark.rule(rule)
