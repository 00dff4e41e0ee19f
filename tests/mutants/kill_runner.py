"""Judges the conformance suite's scenarios on one mutant shim and reads which rules fired.

A kill run is a :class:`ConformanceSession` of the product on a port whose shim is the mutant
(``tests/mutants/mutant_shim.py NAME``, forked from the mutants' zygote while one serves:
``warm_shims``) with the unmutated reference without relay as its baseline, judging every
variant of the given scenarios through the session's one pipeline (``ConformanceSession.judge``)
with *every* rule of each variant checked (no filter, no expectations): the results then
list each ``variant::rule`` that failed, so a test can assert both recall (the mutant's
rules fire) and precision (no other rule fires). What a run fired is read from those results
(``KillRun.of``), in the shape of the JSON conformance report.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from toolnexus_conformance.scenario.model import Variant, load_scenario
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.ports import FORKED, PLAIN, ResolvedPort, resolve
from toolnexus_conformance.verdict.expectations import collapse_capability
from toolnexus_conformance.verdict.expectations import load as no_expectations
from toolnexus_conformance.verdict.pipeline import Result, Results
from toolnexus_conformance.verdict.selection import IMPLICIT_RULES
from toolnexus_conformance.verdict.session import ConformanceSession

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "fixtures" / "scenarios"
MUTANT_SHIM = Path(__file__).resolve().with_name("mutant_shim.py")
SHIM_TIMEOUT_S = 20.0  # per shim call: a mutant that hangs is a failure, not a stuck test
# a crash, a missing capability or a check that raised proves nothing
UNTRUSTED_REASONS = {"transport", "capability", "harness-error"}
# A golden comparison sees every observable, so any behaviour change may fire these too.
GOLDEN_COMPANIONS = frozenset({"golden.observables", "absent.byte-identical", "relay.uncalled-inert", "stream.same-observables"})
RELAY_FREE_RULES = frozenset({"absent.byte-identical", "relay.uncalled-inert"})
STDERR_SHOWN = 15  # lines of a failed variant's shim stderr in a run's output


def scenario_of(text: str) -> str:
    """The scenario id a variant id or a report's gap text starts with ("scenario[variant]: ...")."""
    return re.split(r"[\[\s:]", text, maxsplit=1)[0]


@dataclass
class KillRun:
    files: tuple[str, ...]
    returncode: int  # 1: some variant failed, 0: none did
    output: str  # each failed variant as its failure reads: rules, reasons, evidence, shim stderr
    seconds: float
    report: dict[str, object] | None  # {"failures": {variant::rule: {"reason"}}, "gaps": {rule: [text]}}

    @classmethod
    def of(cls, files: tuple[str, ...], results: Results, seconds: float) -> KillRun:
        """A run's record from the session's results stream."""
        # Capability failures are one line per variant ("variant::*"), as in the JSON report.
        observed = collapse_capability({key: (rv.outcome.reason, "") for key, rv in results.failures()})
        failures = {key: {"reason": reason} for key, (reason, _) in observed.items()}
        gaps = {rule: texts for rule, texts in sorted(results.tally().gaps.items())}
        failed = list(results.failed())
        return cls(files, 1 if failed else 0, "\n".join(_failure_lines(failed)), seconds,
                   {"failures": dict(sorted(failures.items())), "gaps": gaps})

    def failures(self) -> Iterator[tuple[str, str, str]]:
        """(rule, variant id, reason) of each failure of the report ("*": the variant as a whole)."""
        failures = (self.report or {}).get("failures") or {}
        assert isinstance(failures, dict)
        for key, entry in failures.items():
            variant, _, rule = key.partition("::")
            yield rule, variant, str(entry["reason"])

    def gap_texts(self) -> Iterator[tuple[str, str]]:
        """(advisory rule, text) of each spec gap of the report."""
        gaps = (self.report or {}).get("gaps") or {}
        assert isinstance(gaps, dict)
        for rule, texts in gaps.items():
            yield from ((rule, str(text)) for text in texts)

    def fired(self) -> dict[str, dict[str, set[str]]]:
        """rule -> scenario id -> failure reasons, from the report's failures."""
        found: dict[str, dict[str, set[str]]] = {}
        for rule, variant, reason in self.failures():
            found.setdefault(rule, {}).setdefault(scenario_of(variant), set()).add(reason)
        return found

    def gapped(self) -> dict[str, set[str]]:
        """advisory rule -> scenario ids where its check reported a spec gap."""
        found: dict[str, set[str]] = {}
        for rule, text in self.gap_texts():
            found.setdefault(rule, set()).add(scenario_of(text))
        return found


def _failure_lines(failed: list[Result]) -> Iterator[str]:
    for result in failed:
        verdict = result.verdict
        yield f"FAILED {verdict.node_id}"
        for rv in verdict.rules:
            if rv.is_problem:
                yield f"  [{rv.rule}] {rv.outcome.reason}"
                yield from (f"    {line}" for message in rv.outcome.evidence for line in message.splitlines())
        yield from (f"  | {line}" for line in result.stderr_lines()[-STDERR_SHOWN:])


@dataclass
class KillReport:
    mutant: str
    runs: list[KillRun] = field(default_factory=list)

    @property
    def run(self) -> KillRun:
        return self.runs[-1]

    def reasons(self, rule: str) -> set[str]:
        return set().union(*self.run.fired().get(rule, {}).values())

    def killed_by(self, rule: str) -> bool:
        """The rule fired for a trusted reason; an advisory rule fires as a spec gap (it never
        fails a run, so only its gap proves its check saw the broken behaviour)."""
        return bool(self.reasons(rule) - UNTRUSTED_REASONS) or rule in self.run.gapped()

    def trusted(self) -> dict[str, set[str]]:
        """rule -> scenarios where it fired for a reason other than a crash or a capability."""
        out: dict[str, set[str]] = {}
        for rule, by_scenario in self.run.fired().items():
            scenarios = {s for s, reasons in by_scenario.items() if reasons - UNTRUSTED_REASONS}
            if scenarios:
                out[rule] = scenarios
        return out


@lru_cache(maxsize=1)
def _cited() -> dict[str, tuple[frozenset[str], bool]]:
    """scenario file name -> (cited rules, relay-free)."""
    out = {}
    for path in sorted(SCENARIOS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        relay_free = not any(t.get("relay") for t in data["toolkit"]["tools"])
        out[path.name] = (frozenset(data["rules"]), relay_free)
    return out


def scenario_files(rules: tuple[str, ...]) -> tuple[str, ...]:
    """Every scenario file that exercises one of ``rules`` (cited, or implicit for it)."""
    if any(r in IMPLICIT_RULES for r in rules):
        return tuple(f"fixtures/scenarios/{name}" for name in _cited())
    chosen = []
    for name, (cited, relay_free) in _cited().items():
        if set(rules) & cited or (relay_free and set(rules) & RELAY_FREE_RULES):
            chosen.append(f"fixtures/scenarios/{name}")
    return tuple(chosen)


@dataclass(frozen=True)
class MutantShims:
    """How a kill run starts its shims: the mutants' zygote socket ("" while none serves:
    each mutant shim starts cold) and the unmutated reference without relay, every
    mutant's absent.byte-identical baseline (as reference-norelay is the reference's)."""

    zygote_socket: str
    baseline: ResolvedPort

    def port(self, mutant: str) -> ResolvedPort:
        argv = [sys.executable, str(MUTANT_SHIM), mutant]
        if self.zygote_socket:
            return ResolvedPort(f"mutant {mutant}", argv, SHIM_TIMEOUT_S, {}, launch=FORKED, fork_server=self.zygote_socket)
        return ResolvedPort(f"mutant {mutant}", argv, SHIM_TIMEOUT_S, {}, launch=PLAIN)


def cold_baseline() -> ResolvedPort:
    """The registry's reference-norelay at the kill runs' timeout (its own zygote per session)."""
    return resolve("reference-norelay", None, None, SHIM_TIMEOUT_S)


def variants_of(files: tuple[str, ...]) -> Iterator[Variant]:
    """The variants ``files`` name, in order: a scenario file's every variant, or
    ``FILE::VARIANT`` one of them (as on pytest's command line)."""
    for one in files:
        path, _, node = one.partition("::")
        for variant in load_scenario(ROOT / path).variants():
            if not node or variant.node_id == node:
                yield variant


def kill(mutant: str, files: tuple[str, ...], shims: MutantShims) -> KillReport:
    """Judge every variant of ``files`` on mutant ``mutant``, in this process."""
    started = time.monotonic()
    session = ConformanceSession(port=shims.port(mutant), expectations=no_expectations(None), rule_filters=[],
                                 validate_shim=False, artifacts=None, update_goldens=False)
    session.stops_on_dead_shim = False  # a mutant that never starts fails its variants as transport
    session.counterparts.baseline = shims.baseline
    session.counterparts.start = lambda port: port_session(port)
    try:
        for variant in variants_of(files):
            session.add_result(session.judge(variant))
    finally:
        session.close()
    return KillReport(mutant, [KillRun.of(files, session.results, time.monotonic() - started)])


