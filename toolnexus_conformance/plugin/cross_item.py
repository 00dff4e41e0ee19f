"""One cross-port resume variant as a test item: the halt on port A, the resume on port B.

It goes through the same verdict pipeline as a single-port item (``verdict/pipeline.py``):
its run step runs the variant through the same runner (``resume_shim`` is B's shim), the
same rules are evaluated with the same checks and goldens, and its settle step places each
failure in its phase (``cross_phases``; ``cross_oracle`` when both phases fail it) and names
the ledger the placed failure is judged against: the expectations of the port(s) answering
for it. The failure names the rule, the phase and
its port, and the command that reruns the cross variant.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from toolnexus_conformance.cross.oracle import judge_apart, oracle_run
from toolnexus_conformance.cross.phases import HALTING, RESUMING, Attribution, attribute, halting_only
from toolnexus_conformance.cross.resume import CROSS_KEY, CrossResume, Difference
from toolnexus_conformance.helpers.errors import HarnessError, OutgoingMessageTooLarge, ShimError
from toolnexus_conformance.plugin.items import ConformanceFailure, Evidence, VariantItem, render_tail
from toolnexus_conformance.plugin.rerun import rerun_command
from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord, run_variant
from toolnexus_conformance.verdict.evaluate import (
    CATCH_ALL,
    FAIL,
    NOT_APPLICABLE,
    UNEVALUATED,
    Outcome,
    failure_reason,
    unevaluated,
)
from toolnexus_conformance.verdict.judge import Ledger, Listing, Verdict, rule_problem
from toolnexus_conformance.verdict.pipeline import Ran, Result
from toolnexus_conformance.verdict.session import SESSION_KEY, ConformanceSession

__all__ = ["CrossVariantItem"]

REASON_BY_ERROR = {"divergence", "port-error"}  # the classes failure_reason picks between


class _Resumer:
    """B's shim as the runner's resume shim, noting whether the resume phase was reached
    (a transport failure is then the resuming port's)."""

    def __init__(self, cross: CrossResume) -> None:
        self._cross = cross
        self.reached = False
        self.broke: str | None = None  # the phase whose shim broke the run

    def port_of(self, phase: str) -> str:
        return self._cross.port_of(phase)

    def stderr_tail(self) -> str:
        return self._cross.shim().process.stderr_tail()

    def call(self, method: str, params: dict[str, Any], *, timeout: float, handler: Any = None) -> Any:
        self.reached = True
        return self._cross.shim().call(method, params, timeout=timeout, handler=handler)

    def restart(self) -> Any:
        self.reached = True
        return self._cross.shim().restart()

    def prepare_restart(self) -> None:
        # Not the resume yet: a spare of B's shim starts while A runs the halting phase.
        self._cross.shim().prepare_restart()


class _PlacedLedger:
    """The expectations a placed failure is judged against: every port answering for its
    phase(s) must list it, with one reason. A pass is never an "unexpected pass" here (no
    ratchet across ports), so a rule not placed is listed nowhere."""

    def __init__(self, cross: CrossResume, places: dict[str, Attribution]) -> None:
        self._cross = cross
        self._places = places

    def listing(self, key: str) -> Listing | None:
        place = self._places.get(key.rsplit("::", 1)[-1])
        if place is None:
            return None
        reasons = set()
        for phase in place.owners:
            found = self._cross.expectations_of(phase).entry_for(key)
            reasons.add(found[1].reason if found is not None else None)
        reason = reasons.pop() if len(reasons) == 1 else None
        return Listing(reason) if reason is not None else None

    def crashed(self, node_id: str, stderr: str) -> tuple[str, str] | None:
        return None  # a cross-port run's death is placed in its phase, never forgiven


class CrossVariantItem(VariantItem):
    def runtest(self) -> None:
        conformance: ConformanceSession = self.config.stash[SESSION_KEY]
        cross = self.config.stash[CROSS_KEY]
        missing = self._missing(conformance, cross)
        if missing:
            cross.counts.skipped.append((self.variant.node_id, missing))
            conformance.add_result(Result(self.variant.scenario.id, self.variant.name, Verdict(self.variant.node_id, ()), skipped=missing))
            pytest.skip(missing)
        places: dict[str, Attribution] = {}
        resumer = _Resumer(cross)
        timeout = max(cross.halting.timeout, cross.resuming.timeout)

        def settle(outcomes: list[Outcome], record: RunRecord | None, facts: Facts) -> tuple[list[Outcome], Ledger]:
            placed, where = self._settled(conformance, cross, resumer, outcomes, record, facts, timeout)
            places.update(where)
            return placed, _PlacedLedger(cross, where)

        result = conformance.judge(
            self.variant, self.rules, run=lambda facts, rules: self._run_cross(conformance, resumer, facts, rules, timeout),
            settle=settle,
        )
        if result.failed:
            rerun = rerun_command(self, cross.selector(), None) + _expectation_options(cross)
            result = replace(result, rerun=rerun)
        conformance.add_result(result)
        self._count(cross, conformance, result.verdict, places)
        if result.failed:
            if self._evidence is not None:
                self._save_artifacts(conformance, self._evidence)
                self._name_phase_ports(conformance, cross)
            raise ConformanceFailure(self._render_cross(cross, result, places))

    def _name_phase_ports(self, conformance: ConformanceSession, cross: CrossResume) -> None:
        """The artifact says which port ran which phase (phase 1 the halt, the rest the resume)."""
        if conformance.artifacts is None:
            return
        path = conformance.artifacts / (self.variant.node_id.replace("[", "__").replace("]", "") + ".json")
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            data["crossResume"] = {"haltingPort": cross.halting.name, "resumingPort": cross.resuming.name}
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")

    def _missing(self, conformance: ConformanceSession, cross: CrossResume) -> str:
        """Why this variant cannot run across these ports (empty when it can)."""
        try:
            halting, resuming = conformance.handshake(), cross.handshake()
        except ShimError:
            return ""  # the run itself reports the transport failure
        # The resume entry points are not streaming: B needs stream only if the scenario does.
        resume_needs = set(self.variant.requires) - ({"stream"} - set(self.variant.scenario.requires))
        lacks = [
            f"port {port!r} (the {role} port) does not declare {sorted(need - set(h.capabilities))}"
            for port, role, h, need in (
                (cross.halting.name, "halting", halting, set(self.variant.requires)),
                (cross.resuming.name, "resuming", resuming, resume_needs),
            )
            if need - set(h.capabilities)
        ]
        return "; ".join(lacks) + (" — this variant needs them for a cross-port resume" if lacks else "")

    def _run_cross(
        self, conformance: ConformanceSession, resumer: _Resumer, facts: Facts, rules: list[str], timeout: float
    ) -> Ran:
        """The halt on A's shim, the resume on B's (the pipeline's run step)."""
        shim = conformance.shim()
        mark = shim.process.transcript.mark()
        try:
            shim.ensure_alive()
            record = run_variant(
                self.variant, shim, conformance.provider(), timeout=timeout, facts=facts, resume_shim=resumer
            )
        except OutgoingMessageTooLarge as exc:
            return Ran(None, tuple(unevaluated(rules, "scenario", f"scenario file {self.path.name}: {exc}")))
        except HarnessError as exc:
            phase = RESUMING if resumer.reached else HALTING
            stderr = getattr(exc, "stderr_tail", "") or ""
            self._evidence = Evidence(None, shim.process.transcript.since(mark), stderr)
            why = f"the {phase} phase on port {resumer.port_of(phase)!r} broke: {exc}"
            resumer.broke = phase
            return Ran(None, tuple(unevaluated(rules, "transport", why)), stderr)
        stderr = shim.process.stderr_tail() + (resumer.stderr_tail() if resumer.reached else "")
        self._evidence = Evidence(record, shim.process.transcript.since(mark), stderr)
        return Ran(record, (), stderr)

    def _settled(
        self,
        conformance: ConformanceSession,
        cross: CrossResume,
        resumer: _Resumer,
        outcomes: list[Outcome],
        record: RunRecord | None,
        facts: Facts,
        timeout: float,
    ) -> tuple[list[Outcome], dict[str, Attribution]]:
        """Every failure placed in its phase, one cause per phase, the halting phase's
        failures classed by that phase alone (the pipeline's settle step)."""
        if record is None:
            if resumer.broke is None:
                return outcomes, {}
            return outcomes, {o.rule: Attribution((resumer.broke,), "the shim that broke") for o in outcomes}
        # A failure not judged because another rule failed may be judged again (verdict/judge.py):
        # it is placed too.
        failing = [o.superseded or o for o in outcomes]
        places = {
            o.rule: attribute(o, record, facts, conformance.checks) for o in failing if o.status in {FAIL, UNEVALUATED}
        }
        places = self._judged_apart(conformance, cross, outcomes, places, record, facts, timeout)
        outcomes = _one_cause_per_phase(outcomes, places)
        return [_halting_reason(o, places, record, facts) for o in outcomes], places

    def _judged_apart(
        self,
        conformance: ConformanceSession,
        cross: CrossResume,
        outcomes: list[Outcome],
        places: dict[str, Attribution],
        record: RunRecord,
        facts: Facts,
        timeout: float,
    ) -> dict[str, Attribution]:
        """Failures in both phases, decided against the reference's resume of the same halt."""
        undecided = [o for o in outcomes if o.status == FAIL and places[o.rule].needs_oracle]
        if not undecided:
            return places
        if cross.resumes_on_reference:
            why = "the resuming port is the reference: its resume of this halt is the oracle"
            return {**places, **{o.rule: Attribution((HALTING,), why) for o in undecided}}
        oracle = oracle_run(record, facts, conformance.shim(), cross.reference_shim(), conformance.provider(), timeout)
        decided = {o.rule: judge_apart(o, places[o.rule], record, facts, oracle, conformance.checks) for o in undecided}
        return {**places, **decided}

    def _count(self, cross: CrossResume, conformance: ConformanceSession, verdict: Verdict, places: dict[str, Attribution]) -> None:
        statuses = {rv.status for rv in verdict.rules}
        if "fail" in statuses:
            cross.counts.failed += 1
        elif "expected-fail" in statuses:
            cross.counts.expected += 1
        else:
            cross.counts.passed += 1
        for rv in verdict.rules:
            if rv.status not in {"fail", "expected-fail"}:
                continue
            place = places[rv.rule]
            cross.differences.append(
                Difference(
                    variant=verdict.node_id,
                    rule=rv.rule,
                    level=rv.level,
                    reason=rv.outcome.reason,
                    phase=" and ".join(place.owners),
                    port=" and ".join(dict.fromkeys(cross.port_of(p) for p in place.owners)),
                    phases=place.phases,
                    how=place.how,
                    known=rv.status == "expected-fail",
                    observed=" ".join(" ".join(rv.outcome.evidence).split())[:200],
                )
            )

    def _render_cross(self, cross: CrossResume, result: Result, places: dict[str, Attribution]) -> str:
        lines = [
            f"scenario {self.variant.node_id} ({self.path.name}), cross-port resume: "
            f"halting phase on port {cross.halting.name}, resume phase on port {cross.resuming.name}:",
            "",
        ]
        for rv in result.verdict.rules:
            if rv.status != "fail":
                continue
            place = places[rv.rule]
            where = " and ".join(f"in the {p} phase, on port {cross.port_of(p)}" for p in place.owners)
            where = f"fails {where}"
            lines += [f"{rule_problem(rv)}\n  -> {where} [{place.how}]", ""]
        lines += render_tail(result)
        return "\n".join(lines)


def _halting_reason(outcome: Outcome, places: dict[str, Attribution], record: RunRecord, facts: Facts) -> Outcome:
    """A failure of the halting phase is classed by that phase alone: the resuming port
    refusing the resume must not turn the halting port's divergence into a port error."""
    place = places.get(outcome.rule)
    if place is None or place.owners != (HALTING,) or outcome.reason not in REASON_BY_ERROR:
        return outcome
    return replace(outcome, reason=failure_reason(halting_only(record), facts))


def _expectation_options(cross: CrossResume) -> str:
    parts = []
    if cross.halting_expectations.path is not None:
        parts.append(f" --expectations={cross.halting_expectations.path.absolute()}")
    if cross.resuming_expectations.path is not None:
        parts.append(f" --resume-expectations={cross.resuming_expectations.path.absolute()}")
    return "".join(parts)


def _one_cause_per_phase(outcomes: list[Outcome], places: dict[str, Attribution]) -> list[Outcome]:
    """A catch-all comparison's failure is not judged when, in every phase it lies in, a more
    specific rule failed there too (SPEC.md §6, "reported once"); a difference in a phase no
    specific failure covers — another port's — stands."""
    failed = {o.rule for o in outcomes if o.status == FAIL}
    out = []
    for outcome in outcomes:
        yields_to = CATCH_ALL.get(outcome.rule)
        if outcome.status == FAIL and yields_to is not None and outcome.rule in places:
            others = sorted(r for r in failed - yields_to if r in places)
            covered = {phase for rule in others for phase in places[rule].owners}
            if others and set(places[outcome.rule].owners) <= covered:
                why = f"not judged: depends on {', '.join(others)}, which failed in the same phase (reported there)"
                outcome = Outcome(outcome.rule, NOT_APPLICABLE, evidence=(why,), depends_on=tuple(others), superseded=outcome)
        out.append(outcome)
    return out
