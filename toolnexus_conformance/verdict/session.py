"""One conformance run's shared state: the selected port, its shim, the fake provider,
the rule registry, expectations and the results stream (the per-rule tally, the failures
and the xdist export are read from it), kept in the pytest stash under ``SESSION_KEY``.

Created in ``pytest_configure`` when ``--port``/``--port-cmd`` is given; the shim and the
provider start lazily on the first item and stop at session end. Holding them here (and
not in fixtures) is what lets scenario files be plain collected items.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import HarnessError, OutgoingMessageTooLarge, ShimError
from toolnexus_conformance.run.counterparts import CounterpartRuns
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import ResolvedPort
from toolnexus_conformance.shim.session import Handshake, ShimSession
from toolnexus_conformance.verdict.evaluate import unevaluated
from toolnexus_conformance.verdict.expectations import Expectations
from toolnexus_conformance.verdict.pipeline import (
    Ran,
    Relate,
    Result,
    Results,
    Settle,
    Tally,
    judge_variant,
    variant_facts,
)
from toolnexus_conformance.verdict.rules import Check, load_all
from toolnexus_conformance.verdict.run_completeness import RunCoverage
from toolnexus_conformance.verdict.selection import RuleInfo, judged_rules, load_rules, selected

__all__ = ["SESSION_KEY", "ConformanceSession"]

# A shim that has never answered a handshake is given up on after this many tries.
FIRST_HANDSHAKES_TRIED = 2


@dataclass
class ConformanceSession:
    port: ResolvedPort
    expectations: Expectations
    rule_filters: list[str]
    validate_shim: bool
    artifacts: Path | None
    update_goldens: bool
    # --update-expectations: a failure is recorded in the file, not reported as a failed test.
    update_expectations: bool = False
    rules: dict[str, RuleInfo] = field(default_factory=load_rules)
    checks: dict[str, Check] = field(default_factory=load_all)
    # Every variant's result, in the order judged (a controller's: its workers' too).
    results: Results = field(default_factory=Results)
    stale_entries: list[str] = field(default_factory=list)
    expectations_error: str | None = None  # the expectations file judged the run impossible to judge
    unused_goldens: list[Path] = field(default_factory=list)
    coverage: RunCoverage = field(default_factory=RunCoverage)
    deleted_goldens: list[Path] = field(default_factory=list)  # orphans --snapshot-update removed
    kept_goldens_reason: str | None = None  # why --snapshot-update judged no orphan
    regenerate_command: str = ""
    worker_handshake: dict[str, Any] | None = None
    # What each selected variant that restarts the shim needs (spares are spawned ahead for
    # those the port's handshake covers; a variant it cannot run restarts nothing).
    restart_needs: list[frozenset[str]] = field(default_factory=list)
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

    def judge(
        self,
        variant: Variant,
        rules: list[str] | None = None,
        *,
        run: Callable[[Facts, list[str]], Ran] | None = None,
        settle: Settle | None = None,
    ) -> Result:
        """``variant``'s verdict on this session's port: the one pipeline every caller goes
        through (:func:`judge_variant` with this session's checks, expectations, levels and,
        unless ``settle`` places the outcomes itself, its relations). ``rules`` defaults to
        what the session's filters select; ``run`` to :meth:`run` (a caller that keeps what a
        run gave, or runs it elsewhere, passes its own)."""
        chosen = judged_rules(variant, self.rule_filters) if rules is None else rules

        def run_here(facts: Facts, judged: list[str]) -> Ran:
            return self.run(variant, facts, judged)

        return judge_variant(
            variant_facts(variant),
            run or run_here,
            chosen,
            self.checks,
            self.expectations,
            self.level,
            relate=None if settle is not None else self.relations(variant),
            settle=settle,
        )

    def run(self, variant: Variant, facts: Facts, rules: list[str]) -> Ran:
        """Run ``variant`` through the port's shim: the pipeline's run step. A shim that does
        not answer fails every rule as transport; a variant needing a capability the port
        does not declare, as capability; scenario data too large to send, as scenario."""
        try:
            handshake = self.handshake()
        except ShimError as exc:
            return Ran(None, tuple(unevaluated(rules, "transport", str(exc))), exc.stderr_tail)
        missing = sorted(variant.requires - set(handshake.capabilities))
        if missing:
            why = f"the port does not declare the capabilities {missing} this variant needs"
            return Ran(None, tuple(unevaluated(rules, "capability", why)))
        shim = self.shim()
        mark = shim.process.transcript.mark()
        try:
            record = run_variant(variant, shim, self.provider(), timeout=self.port.timeout, facts=facts)
        except OutgoingMessageTooLarge as exc:  # the scenario's data, not the shim: no stderr to blame
            why = f"scenario file {variant.scenario.path.name}: {exc}"
            return Ran(None, tuple(unevaluated(rules, "scenario", why)))
        except HarnessError as exc:
            # The exception holds the crashed process's stderr; the shim may have a new one by now.
            stderr = getattr(exc, "stderr_tail", "") or shim.process.stderr_tail()
            transcript = tuple(shim.process.transcript.since(mark))
            return Ran(None, tuple(unevaluated(rules, "transport", str(exc))), stderr, transcript=transcript)
        return Ran(record, (), shim.process.stderr_tail(), transcript=tuple(shim.process.transcript.since(mark)))

    def relations(self, variant: Variant) -> Relate:
        """The pipeline's relate stage for ``variant``: its counterparts, run on this port
        (or on its baseline build, beside the port's own run)."""

        def relate(rules: list[str]) -> Callable[[RunRecord | None], None]:
            handshake = self.known_handshake()
            if handshake is None:  # no shim has answered yet: the run step starts it, relate after
                return lambda record: relate_after(rules, record)
            if not variant.requires <= set(handshake.capabilities):
                return _nothing  # the run step reports the capability
            return self.counterparts.relate(variant, rules, handshake, self.shim(), self.provider(), self.port.timeout)

        def relate_after(rules: list[str], record: RunRecord | None) -> None:
            handshake = self.known_handshake()
            if record is not None and handshake is not None:
                self.counterparts.relate(variant, rules, handshake, self.shim(), self.provider(), self.port.timeout)(record)

        return relate

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

    def close(self) -> None:
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
        return selected(rule, self.rule_filters)

    def level(self, rule: str) -> str:
        info = self.rules.get(rule)
        return info.level if info else "normative"

    def add_result(self, result: Result) -> None:
        """Append a variant's result to the run's results stream."""
        self.results.append(result)

    def tally(self) -> Tally:
        return self.results.tally()

    def observed_failures(self) -> dict[str, tuple[str, str]]:
        """Per failing or expected-failing key: its reason class and its evidence on one line."""
        return {key: (rv.outcome.reason, _one_line(rv.outcome.evidence)) for key, rv in self.results.failures()}

    def failure_evidence(self) -> dict[str, list[str]]:
        """Per failing key, the check's evidence (the minimal diff), bounded; for the JSON report."""
        return {key: _evidence_lines(rv.outcome.evidence) for key, rv in self.results.failures()}

    def failure_context(self) -> dict[str, dict[str, Any]]:
        """Per failed variant (node id), the shim's stderr tail and the rerun command its
        failure printed (none under --update-expectations, where no variant fails)."""
        if self.update_expectations:
            return {}
        context: dict[str, dict[str, Any]] = {}
        for result in self.results.failed():
            found: dict[str, Any] = {"stderr": result.stderr_lines()} if result.stderr_tail.strip() else {}
            context[result.node_id] = {**found, "rerun": result.rerun}
        return context

    def count_matches(self) -> None:
        """Count the expectations entries the results were judged against (after the run,
        on the controller of an xdist run once its workers' results are in)."""
        self.expectations.count_matches(self.results.listed_entries())

    def fewest_scenarios(self) -> tuple[int, list[str]] | None:
        """The smallest number of distinct scenarios in which a normative rule's check ran,
        and the rules at that minimum (None when no normative rule was checked)."""
        tally = self.tally()
        counts = {
            rule: len(tally.scenarios.get(rule, ()))
            for rule in set(tally.counts)
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
            "results": self.results.export(),
            "handshake": handshake.raw if handshake else self.worker_handshake,
            "coverage": self.coverage.export(),
        }

    def merge(self, data: dict[str, Any]) -> None:
        """Fold a worker's export into this (controller) session."""
        self.results.extend(Results.from_export(data["results"]))
        self.coverage.merge(data["coverage"])
        if data["handshake"] and self.worker_handshake is None:
            self.worker_handshake = data["handshake"]

    def summary_rows(self) -> list[dict[str, Any]]:
        tally = self.tally()
        rows = []
        for rule in sorted(set(tally.counts) | set(tally.gaps)):
            counts = tally.counts[rule]
            rows.append(
                {
                    "rule": rule,
                    "level": self.level(rule),
                    "pass": counts["pass"],
                    "fail": counts["fail"],
                    "expected": counts["expected"],
                    "gap": counts["gap"],
                    "notApplicable": counts["n/a"],
                    "scenarios": len(tally.scenarios.get(rule, ())),
                    "expectedByReason": {
                        k.split(":", 1)[1]: n for k, n in sorted(counts.items()) if k.startswith("expected:")
                    },
                }
            )
        return rows


EVIDENCE_LINES = 30
EVIDENCE_LINE_WIDTH = 400


def _nothing(record: RunRecord | None) -> None:
    """No counterparts to fill."""


def _evidence_lines(messages: tuple[str, ...]) -> list[str]:
    lines = [line for m in messages for line in m.splitlines() if line.strip()]
    kept = [line[:EVIDENCE_LINE_WIDTH] for line in lines[:EVIDENCE_LINES]]
    if len(lines) > EVIDENCE_LINES:
        kept.append(f"... and {len(lines) - EVIDENCE_LINES} more lines")
    return kept


def _one_line(messages: tuple[str, ...]) -> str:
    text = " ".join(m.strip() for m in messages if m.strip())
    return text.replace("\n", " ")[:200]


SESSION_KEY = pytest.StashKey[ConformanceSession]()
