"""Runs the conformance suite against one mutant shim and reads which rules it fired.

A run is ``python -m pytest --port-cmd "<python> tests/mutants/mutant_shim.py NAME"
--conformance-report=R.json <scenario files>`` in a process of its own from the repository
root (forked from a warm fork server: ``forked_pytest``),
over scenarios that exercise one of the mutant's rules (all of them, ``scenario_files``, or
the pinned scope of ``kill_scope``), with *every* rule of those scenarios checked (no ``--rule`` filter, no ``-x``): the JSON report then lists each
``variant::rule`` that failed, so a test can assert both recall (the mutant's rules fire)
and precision (no other rule fires).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from toolnexus_conformance.verdict.selection import IMPLICIT_RULES

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "fixtures" / "scenarios"
RUN_TIMEOUT_S = 600
OTHER_WORKER_TIMEOUT_S = RUN_TIMEOUT_S * 2  # how long a worker waits for the host's next report
POLL_S = 0.05  # a file check: cheap, and the reading test waits no longer than it must
# a crash, a missing capability or a check that raised proves nothing
UNTRUSTED_REASONS = {"transport", "capability", "harness-error"}
# A golden comparison sees every observable, so any behaviour change may fire these too.
GOLDEN_COMPANIONS = frozenset({"golden.observables", "absent.byte-identical", "relay.uncalled-inert", "stream.same-observables"})
RELAY_FREE_RULES = frozenset({"absent.byte-identical", "relay.uncalled-inert"})

# Runs ``pytest ARGS`` from the repository root within a time limit: (exit status, output).
Runner = Callable[[list[str], float], tuple[int, str]]


def scenario_of(text: str) -> str:
    """The scenario id a variant id or a report's gap text starts with ("scenario[variant]: ...")."""
    return re.split(r"[\[\s:]", text, maxsplit=1)[0]


@dataclass
class KillRun:
    files: tuple[str, ...]
    returncode: int
    output: str
    seconds: float
    report: dict[str, object] | None

    def failures(self) -> Iterator[tuple[str, str, str]]:
        """(rule, variant id, reason) of each failure of the JSON report ("*": the variant as a whole)."""
        failures = (self.report or {}).get("failures") or {}
        assert isinstance(failures, dict)
        for key, entry in failures.items():
            variant, _, rule = key.partition("::")
            for one in rule.split(",") if rule else ["*"]:
                yield one, variant, str(entry["reason"])

    def gap_texts(self) -> Iterator[tuple[str, str]]:
        """(advisory rule, text) of each spec gap of the JSON report."""
        gaps = (self.report or {}).get("gaps") or {}
        assert isinstance(gaps, dict)
        for rule, texts in gaps.items():
            yield from ((rule, str(text)) for text in texts)

    def fired(self) -> dict[str, dict[str, set[str]]]:
        """rule -> scenario id -> failure reasons, from the JSON report's failures."""
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


def cold_shim(python: str = sys.executable) -> str:
    """The command (before the mutant's name) that starts a mutant shim from scratch."""
    return f"{shlex.quote(python)} tests/mutants/mutant_shim.py"


def pytest_args(mutant: str, files: tuple[str, ...], report: Path, *, shim: str | None = None) -> list[str]:
    """The arguments of ``python -m pytest`` for one kill run; ``shim`` starts a mutant shim
    given the mutant's name (``cold_shim()``, or a warm zygote's client: ``kill_pool``)."""
    command = f"{shim or cold_shim()} {mutant}"
    return ["-q", "--port-cmd", command, "--baseline-cmd", baseline_shim(), "--port-timeout", "20",
            f"--conformance-report={report}", *files]


def baseline_shim(python: str = sys.executable) -> str:
    """The unmutated reference without relay support: every mutant's absent.byte-identical
    baseline, as reference-norelay is the reference's."""
    return f"{shlex.quote(python)} shims/reference/shim.py --no-relay"


def run_once(mutant: str, files: tuple[str, ...], runner: Runner, shim: str | None = None) -> KillRun:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant}-") as folder:
        target = Path(folder) / "report.json"
        returncode, output = runner(pytest_args(mutant, files, target, shim=shim), RUN_TIMEOUT_S)
        report = json.loads(target.read_text(encoding="utf-8")) if target.exists() else None
    return KillRun(files, returncode, output, time.monotonic() - started, report)


def kill(mutant: str, files: tuple[str, ...], runner: Runner, shim: str | None = None) -> KillReport:
    report = KillReport(mutant)
    report.runs.append(run_once(mutant, files, runner, shim))
    return report


def read_shared(mutant: str, shared: Path) -> KillReport | None:
    """The report another process of the run wrote for ``mutant`` to ``shared``; None while
    it has not (it is written whole: ``kill_and_share``)."""
    done = shared / f"{mutant}.json"
    if not done.exists():
        return None
    raw = json.loads(done.read_text(encoding="utf-8"))
    return KillReport(mutant, [KillRun(tuple(r["files"]), r["returncode"], r["output"], r["seconds"], r["report"])
                               for r in raw["runs"]])


def timed_out(mutant: str) -> KillReport:
    return KillReport(mutant, [KillRun((), -1, "timed out waiting for another worker's run", 0.0, None)])


def kill_and_share(
    mutant: str, files: tuple[str, ...], shared: Path | None, runner: Runner, shim: str | None = None
) -> KillReport:
    """``kill``, and its report written whole to ``shared`` (a folder all xdist workers of one
    run agree on), where the workers that do not host the pass read it (``read_shared``)."""
    if shared is None:
        return kill(mutant, files, runner, shim)
    shared.mkdir(parents=True, exist_ok=True)
    done = shared / f"{mutant}.json"
    report = kill(mutant, files, runner, shim)
    partial = done.with_suffix(".partial")
    partial.write_text(json.dumps(asdict(report)), encoding="utf-8")
    partial.replace(done)
    return report
