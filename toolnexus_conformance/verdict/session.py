"""One conformance run's shared state: the selected port, its shim, the fake provider,
the rule registry, expectations and the per-rule tally.

Created in ``pytest_configure`` when ``--port``/``--port-cmd`` is given; the shim and the
provider start lazily on the first item and stop at session end. Holding them here (and
not in fixtures) is what lets scenario files be plain collected items.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import ShimError
from toolnexus_conformance.run.counterparts import CounterpartRuns
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import ResolvedPort
from toolnexus_conformance.shim.session import Handshake, ShimSession
from toolnexus_conformance.verdict.evaluate import Outcome, evaluate
from toolnexus_conformance.verdict.evaluator_process import EvaluatorProcess
from toolnexus_conformance.verdict.expectations import Expectations
from toolnexus_conformance.verdict.judge import Verdict
from toolnexus_conformance.verdict.rules import Check, load_all
from toolnexus_conformance.verdict.run_completeness import RunCoverage
from toolnexus_conformance.verdict.selection import RuleInfo, load_rules

# A shim that has never answered a handshake is given up on after this many tries.
FIRST_HANDSHAKES_TRIED = 2

# How a verdict is counted in the tally (the report's columns).
TALLY_COLUMN = {"pass": "pass", "fail": "fail", "expected-fail": "expected", "gap": "gap", "n/a": "n/a"}


@dataclass
class Tally:
    """Per rule: how many checks actually ran and how they came out, and in which scenarios
    a check ran (not n/a)."""

    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    gaps: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    scenarios: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, rule: str, status: str) -> None:
        self.counts[rule][status] += 1

    def add_verdict(self, scenario: str, verdict: Verdict) -> None:
        for rv in verdict.rules:
            self.add(rv.rule, TALLY_COLUMN[rv.status])
            if rv.status == "expected-fail":
                self.add(rv.rule, f"expected:{rv.outcome.reason}")
            if rv.status != "n/a":
                self.scenarios[rv.rule].add(scenario)
            if rv.status == "gap":
                self.gaps[rv.rule].extend(f"{verdict.node_id}: {m}" for m in rv.outcome.evidence)
            for forgiven in rv.outcome.forgiven:
                self.gaps[forgiven.rule].append(forgiven.text)


@dataclass
class ConformanceSession:
    port: ResolvedPort
    expectations: Expectations
    rule_filters: list[str]
    validate_shim: bool
    artifacts: Path | None
    update_goldens: bool
    rules: dict[str, RuleInfo] = field(default_factory=load_rules)
    checks: dict[str, Check] = field(default_factory=load_all)
    tally: Tally = field(default_factory=Tally)
    observed_failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Per failing key, the check's evidence (the minimal diff), bounded; for the JSON report.
    failure_evidence: dict[str, list[str]] = field(default_factory=dict)
    # Per failed variant (node id), the shim's stderr tail and the rerun command it printed.
    failure_context: dict[str, dict[str, Any]] = field(default_factory=dict)
    stale_entries: list[str] = field(default_factory=list)
    scenarios_run: set[str] = field(default_factory=set)
    golden_variants: dict[str, set[str]] = field(default_factory=dict)
    unused_goldens: list[Path] = field(default_factory=list)
    coverage: RunCoverage = field(default_factory=RunCoverage)
    deleted_goldens: list[Path] = field(default_factory=list)  # orphans --snapshot-update removed
    kept_goldens_reason: str | None = None  # why --snapshot-update judged no orphan
    regenerate_command: str = ""
    worker_handshake: dict[str, Any] | None = None
    # What each selected variant that restarts the shim needs (spares are spawned ahead for
    # those the port's handshake covers; a variant it cannot run restarts nothing).
    restart_needs: list[frozenset[str]] = field(default_factory=list)
    # Checks records in a process of its own while the next variant runs (plain serial
    # runs of many variants only: see verdict/evaluator_process.py and plugin/hooks.py).
    evaluator: EvaluatorProcess | None = None
    # The runs the port-relative relations compare with (toolnexus_conformance.scenario.relations).
    counterparts: CounterpartRuns = field(default_factory=CounterpartRuns)
    handshakes_done: int = 0
    failed_first_handshakes: int = 0
    stops_on_dead_shim: bool = True  # False in an xdist worker
    _shim: ShimSession | None = None
    _provider: FakeProvider | None = None

    def shim(self) -> ShimSession:
        if self._shim is None:
            validator = None
            if self.validate_shim:
                from toolnexus_conformance.shim.validation import validate_message

                validator = validate_message
            self._shim = port_session(self.port, env=self._env(), validator=validator)
        return self._shim

    def start_shim_ahead(self) -> None:
        """Spawn the shim's process before the first variant asks for it (see ShimSession.start_ahead)."""
        self.shim().start_ahead()

    def handshake(self) -> Handshake:
        shim = self.shim()
        try:
            handshake = shim.ensure_alive()
        except ShimError as exc:
            self._abort_if_never_started(exc)
            raise
        self.handshakes_done += 1
        if self.restart_needs:
            offered = set(handshake.capabilities)
            # Once the first shim is up, not before: only then are its capabilities known.
            shim.expect_restarts(sum(needs <= offered for needs in self.restart_needs))
            self.restart_needs = []
        return handshake

    def probe_shim(self) -> None:
        """Start the shim, handshake, stop it: what the xdist controller does before it starts
        its workers, so a shim that cannot start stops the session once (not in each worker)."""
        for _ in range(FIRST_HANDSHAKES_TRIED):
            try:
                self.handshake()
                break
            except ShimError:
                continue  # the last try ends the session (see _abort_if_never_started)
        if self._shim is not None:
            if self._shim.handshake is not None:
                self.worker_handshake = self._shim.handshake.raw
            self._shim.close()
            self._shim = None

    def _abort_if_never_started(self, exc: ShimError) -> None:
        """A shim that fails its first handshakes will fail every variant the same way: stop
        the session once, with its stderr, instead of failing each variant with it (an xdist
        worker leaves that to the controller's ``probe_shim``: it cannot stop the session)."""
        if self.handshakes_done:
            return
        self.failed_first_handshakes += 1
        if self.failed_first_handshakes >= FIRST_HANDSHAKES_TRIED and self.stops_on_dead_shim:
            import pytest

            pytest.exit(
                f"the shim of port {self.port.name} failed its first {FIRST_HANDSHAKES_TRIED} handshakes; "
                f"no variant can run, so the session stops here:\n{exc}",
                returncode=pytest.ExitCode.TESTS_FAILED,
            )

    def known_handshake(self) -> Handshake | None:
        """The last handshake, without starting a shim for it."""
        return self._shim.handshake if self._shim is not None else None

    def provider(self) -> FakeProvider:
        if self._provider is None:
            self._provider = FakeProvider().start()
        return self._provider

    def start_evaluator(self) -> None:
        self.evaluator = EvaluatorProcess(self.checks)

    def submit_for_evaluation(self, record: RunRecord, rules: list[str]) -> int | None:
        """Hand a run's record to the evaluator process, if there is one (see ``evaluator_outcomes``)."""
        return self.evaluator.submit(record, rules) if self.evaluator is not None else None

    def evaluator_outcomes(self, token: int | None, record: RunRecord, rules: list[str]) -> list[Outcome]:
        """Every rule's outcome on ``record``: from the evaluator process when it took the
        record (``token``), else evaluated here."""
        if self.evaluator is not None:
            return self.evaluator.outcomes(token, record, rules)
        return evaluate(record, record.facts, rules, self.checks)

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()
        self.counterparts.close()
        if self._shim is not None:
            if self._shim.handshake is not None:
                self.worker_handshake = self._shim.handshake.raw  # kept for the report
            self._shim.close()
        if self._provider is not None:
            self._provider.stop()

    def _env(self) -> dict[str, str] | None:
        return {**os.environ, **self.port.env} if self.port.env else None

    def selected(self, rule: str) -> bool:
        return not self.rule_filters or any(fnmatchcase(rule, f) for f in self.rule_filters)

    def level(self, rule: str) -> str:
        info = self.rules.get(rule)
        return info.level if info else "normative"

    def listed_reason(self, key: str) -> str | None:
        """The reason the expectations list for ``variant::rule`` (counts the entry as matched)."""
        entry = self.expectations.lookup(key)
        return entry.reason if entry is not None else None

    def listed_flaky(self, key: str) -> bool:
        """The expectations mark ``variant::rule`` flaky (looked up after ``listed_reason``)."""
        entry = self.expectations.first_match(key)
        return entry is not None and entry.flaky

    def record_verdict(self, scenario: str, verdict: Verdict) -> None:
        self.tally.add_verdict(scenario, verdict)
        for rv in verdict.rules:
            if rv.status in {"fail", "expected-fail"}:
                self.observed_failures[verdict.key(rv.rule)] = (rv.outcome.reason, _one_line(rv.outcome.evidence))
                self.failure_evidence[verdict.key(rv.rule)] = _evidence_lines(rv.outcome.evidence)

    def fewest_scenarios(self) -> tuple[int, list[str]] | None:
        """The smallest number of distinct scenarios in which a normative rule's check ran,
        and the rules at that minimum (None when no normative rule was checked)."""
        counts = {
            rule: len(self.tally.scenarios.get(rule, ()))
            for rule in set(self.tally.counts)
            if self.level(rule) == "normative"
        }
        if not counts:
            return None
        low = min(counts.values())
        return low, sorted(rule for rule, n in counts.items() if n == low)

    def export(self) -> dict[str, Any]:
        """What an xdist worker hands the controller (plain JSON-able data)."""
        handshake = self.known_handshake()
        return {
            "counts": {rule: dict(c) for rule, c in self.tally.counts.items()},
            "gaps": dict(self.tally.gaps),
            "ruleScenarios": {rule: sorted(found) for rule, found in self.tally.scenarios.items()},
            "observed": {k: list(v) for k, v in self.observed_failures.items()},
            "evidence": self.failure_evidence,
            "scenarios": sorted(self.scenarios_run),
            "goldenVariants": {k: sorted(v) for k, v in self.golden_variants.items()},
            "matched": {e.key: e.matched for e in self.expectations.entries if e.matched},
            "handshake": handshake.raw if handshake else self.worker_handshake,
            "coverage": self.coverage.export(),
        }

    def merge(self, data: dict[str, Any]) -> None:
        """Fold a worker's export into this (controller) session."""
        for rule, counts in data["counts"].items():
            self.tally.counts[rule].update(counts)
        for rule, gaps in data["gaps"].items():
            self.tally.gaps[rule].extend(gaps)
        for rule, found in data.get("ruleScenarios", {}).items():
            self.tally.scenarios[rule].update(found)
        self.observed_failures.update({k: (v[0], v[1]) for k, v in data["observed"].items()})
        self.failure_evidence.update(data.get("evidence", {}))
        self.scenarios_run.update(data["scenarios"])
        for scenario, variants in data["goldenVariants"].items():
            self.golden_variants.setdefault(scenario, set()).update(variants)
        for entry in self.expectations.entries:
            entry.matched += data["matched"].get(entry.key, 0)
        self.coverage.merge(data["coverage"])
        if data["handshake"] and self.worker_handshake is None:
            self.worker_handshake = data["handshake"]

    def summary_rows(self) -> list[dict[str, Any]]:
        rows = []
        for rule in sorted(set(self.tally.counts) | set(self.tally.gaps)):
            counts = self.tally.counts[rule]
            rows.append(
                {
                    "rule": rule,
                    "level": self.level(rule),
                    "pass": counts["pass"],
                    "fail": counts["fail"],
                    "expected": counts["expected"],
                    "gap": counts["gap"],
                    "notApplicable": counts["n/a"],
                    "scenarios": len(self.tally.scenarios.get(rule, ())),
                    "expectedByReason": {
                        k.split(":", 1)[1]: n for k, n in sorted(counts.items()) if k.startswith("expected:")
                    },
                }
            )
        return rows


EVIDENCE_LINES = 30
EVIDENCE_LINE_WIDTH = 400


def _evidence_lines(messages: tuple[str, ...]) -> list[str]:
    lines = [line for m in messages for line in m.splitlines() if line.strip()]
    kept = [line[:EVIDENCE_LINE_WIDTH] for line in lines[:EVIDENCE_LINES]]
    if len(lines) > EVIDENCE_LINES:
        kept.append(f"... and {len(lines) - EVIDENCE_LINES} more lines")
    return kept


def _one_line(messages: tuple[str, ...]) -> str:
    text = " ".join(m.strip() for m in messages if m.strip())
    return text.replace("\n", " ")[:200]
