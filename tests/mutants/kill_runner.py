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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from toolnexus_conformance.scenario.model import Variant, load_scenario
from toolnexus_conformance.shim.ports import FORKED, PLAIN, ResolvedPort, resolve
from toolnexus_conformance.verdict.expectations import collapse_capability
from toolnexus_conformance.verdict.expectations import load as no_expectations
from toolnexus_conformance.verdict.judge import rule_problem
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


def scenario_of(text: str) -> str:
    """The scenario id a variant id or a report's gap text starts with ("scenario[variant]: ...")."""
    return re.split(r"[\[\s:]", text, maxsplit=1)[0]


@dataclass
class KillRun:
    files: tuple[str, ...]
    output: str  # each failed variant as its failure reads: its rules' problems, the shim's stderr
    seconds: float
    failures: dict[str, str]  # "variant::rule" (rule "*": the variant as a whole) -> reason class
    gaps: dict[str, list[str]] = field(default_factory=dict)  # advisory rule -> its spec gaps' texts

    @classmethod
    def of(cls, files: tuple[str, ...], results: Results, seconds: float) -> KillRun:
        """A run's record from the session's results stream."""
        # Capability failures are one line per variant ("variant::*"), as in the JSON report.
        observed = collapse_capability({key: (rv.outcome.reason, "") for key, rv in results.failures()})
        return cls(files, "\n".join(_failure_lines(results.failed())), seconds,
                   {key: reason for key, (reason, _) in sorted(observed.items())}, dict(sorted(results.tally().gaps.items())))

    @property
    def failed(self) -> bool:
        """Some variant failed (an advisory rule's gap fails none)."""
        return bool(self.failures)

    def failed_rules(self) -> Iterator[tuple[str, str, str]]:
        """(rule, variant id, reason) of each failure."""
        for key, reason in self.failures.items():
            variant, _, rule = key.partition("::")
            yield rule, variant, reason

    def gap_texts(self) -> Iterator[tuple[str, str]]:
        """(advisory rule, text) of each spec gap."""
        for rule, texts in self.gaps.items():
            yield from ((rule, text) for text in texts)

    def fired(self) -> dict[str, dict[str, set[str]]]:
        """rule -> scenario id -> failure reasons."""
        found: dict[str, dict[str, set[str]]] = {}
        for rule, variant, reason in self.failed_rules():
            found.setdefault(rule, {}).setdefault(scenario_of(variant), set()).add(reason)
        return found

    def gapped(self) -> dict[str, set[str]]:
        """advisory rule -> scenario ids where its check reported a spec gap."""
        found: dict[str, set[str]] = {}
        for rule, text in self.gap_texts():
            found.setdefault(rule, set()).add(scenario_of(text))
        return found


def _failure_lines(failed: Iterable[Result]) -> Iterator[str]:
    """Each failed variant as the plugin's failure names its problems (``rule_problem``),
    then its shim's stderr tail, each line marked ``|``."""
    for result in failed:
        yield f"FAILED {result.node_id}"
        for rv in result.verdict.rules:
            if rv.is_problem:
                yield from (f"  {line}" for line in rule_problem(rv).splitlines())
        yield from (f"  | {line}" for line in result.stderr_lines())


@dataclass(frozen=True)
class KillReport:
    mutant: str
    run: KillRun

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
        return ResolvedPort(f"mutant {mutant}", [sys.executable, str(MUTANT_SHIM), mutant], SHIM_TIMEOUT_S, {},
                            launch=FORKED if self.zygote_socket else PLAIN, fork_server=self.zygote_socket)


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
    try:
        for variant in variants_of(files):
            session.add_result(session.judge(variant))
    finally:
        session.close()
    return KillReport(mutant, KillRun.of(files, session.results, time.monotonic() - started))


