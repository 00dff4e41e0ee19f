"""Which scenarios each mutant runs on in the README's test command: its *scope*, pinned in
``kill_scope.json`` from a run over its full set.

A mutant's full set is every scenario that exercises one of its rules
(``kill_runner.scenario_files``); most of those scenarios only repeat what a few of them
show. The pin records, per mutant, every rule the full-set run fired (for a trusted reason,
only for an untrusted one, or as an advisory gap) and in which scenarios; the scope is the
fewest scenarios that still show each of those rules in two scenarios (or in the one it fired
in), plus one scenario where nothing fired as a control. So a scoped run fires exactly the
rules the full set fires, and every rule stays killed in two distinct scenarios.

Within each scenario of the scope, the pin keeps only the variants that show the rules it
was kept for (``choose_variants``: for every rule that fired there in the full-set run, a
variant where it fired the same way; one variant of the control), so a scoped run is a few
variants per scenario, not all of them.

That claim is checked twice: the scoped run must fire every pinned rule in every scenario of
the scope it was pinned in (the fast check, in every test run), and ``tests/gates/test_mutant_full_sets.py`` runs each mutant over its full
set and fails if a rule fires there in no scenario of the scope, or in none of a scoped scenario's
kept variants (the proof, with the gates).
The pin is stale when the catalogue or a mutant's full set changes; ``python
tests/mutants/pin_kill_scope.py`` rewrites it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from catalog import load
from kill_runner import SCENARIOS, UNTRUSTED_REASONS, KillRun, scenario_files, scenario_of

SCOPE_FILE = Path(__file__).with_name("kill_scope.json")
PIN_COMMAND = "python tests/mutants/pin_kill_scope.py"
SCENARIOS_PER_RULE = 2
SCENARIO_FOLDER = "fixtures/scenarios/"
# Where a need of each kind (``Fired.needs``) shows in a run's variants (``showing_variants``):
# a trusted need only where its reason is trusted, an untrusted one where it fired at all.
SHOWN_AS = {"trusted": "trusted", "untrusted": "any", "gap": "gap"}
# A variant id at the start of a gap's text: "scenario[style-entry]: ...".
VARIANT_AT_START = re.compile(r"^([^\s\[\]:]+\[[^\]\s]+\])")
Shown = dict[tuple[str, str], dict[str, set[str]]]  # (kind, rule) -> scenario id -> variant ids
ALL = "*"  # in a Shown set: every variant of the scenario


@dataclass(frozen=True)
class Fired:
    """What one run fired: rule -> scenario ids, split the way the mutation tests judge."""

    trusted: dict[str, list[str]] = field(default_factory=dict)
    untrusted_only: dict[str, list[str]] = field(default_factory=dict)  # a crash or a capability, nothing else
    gaps: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, run: KillRun) -> Fired:
        trusted: dict[str, list[str]] = {}
        untrusted: dict[str, list[str]] = {}
        for rule, by_scenario in run.fired().items():
            good = sorted(s for s, reasons in by_scenario.items() if reasons - UNTRUSTED_REASONS)
            if good:
                trusted[rule] = good
            else:
                untrusted[rule] = sorted(by_scenario)
        gaps = {rule: sorted(scenarios) for rule, scenarios in run.gapped().items()}
        return cls(dict(sorted(trusted.items())), dict(sorted(untrusted.items())), dict(sorted(gaps.items())))

    def needs(self) -> dict[tuple[str, str], tuple[set[str], int]]:
        """(kind, rule) -> (scenarios showing it, how many of them a scope must keep)."""
        out: dict[tuple[str, str], tuple[set[str], int]] = {}
        for kind, table, wanted in (("trusted", self.trusted, SCENARIOS_PER_RULE), ("gap", self.gaps, SCENARIOS_PER_RULE),
                                    ("untrusted", self.untrusted_only, 1)):  # fmt: skip
            for rule, scenarios in table.items():
                out[kind, rule] = (set(scenarios), min(wanted, len(scenarios)))
        return out

    def rules(self) -> set[str]:
        return set(self.trusted) | set(self.gaps) | set(self.untrusted_only)


@dataclass(frozen=True)
class Pin:
    full: list[str]  # scenario ids of the full set the pin was made from
    scope: list[str]  # scenario ids the README's test command runs
    fired: Fired
    # scenario id -> the variant ids kept of it; a scoped scenario not named runs whole
    variants: dict[str, list[str]] = field(default_factory=dict)

    def scope_files(self) -> tuple[str, ...]:
        """What a scoped run names on pytest's command line: a scenario file, or the node id
        of each variant kept of it."""
        return tuple(
            arg for s in self.scope
            for arg in ([f"{SCENARIO_FOLDER}{s}.json::{v}" for v in self.variants[s]] if s in self.variants
                        else [f"{SCENARIO_FOLDER}{s}.json"])
        )  # fmt: skip


def scoped_files(name: str) -> tuple[str, ...]:
    """Mutant ``name``'s pinned scope; its full set while the pin is stale (a test says so)."""
    full = scenario_files(load()[name].kills)
    return full if stale(name, full) else load_pins()[name].scope_files()


def scenario_id(file: str) -> str:
    return Path(file).name.removesuffix(".json")


def choose_scope(full: list[str], fired: Fired, cost: dict[str, int] | None = None) -> list[str]:
    """The cheapest scenarios (greedy: most needs met per variant run, ``cost`` giving each
    scenario's variant count) meeting every need of ``fired``, plus the cheapest control
    scenario of ``full`` where nothing fired, if there is one."""
    price = {s: max(1, (cost or {}).get(s, 1)) for s in full}
    needs = {key: [scenarios, count] for key, (scenarios, count) in fired.needs().items()}
    chosen: list[str] = []

    def gain(scenario: str) -> int:
        return sum(1 for scenarios, count in needs.values() if count > 0 and scenario in scenarios)

    while any(count > 0 for _, count in needs.values()):
        best = max(sorted(set(full) - set(chosen)), key=lambda s: (gain(s) / price[s], gain(s)))
        if gain(best) == 0:
            raise ValueError(f"needs no scenario of the full set meets: {needs}")
        chosen.append(best)
        for need in needs.values():
            if best in need[0]:
                need[1] = int(need[1]) - 1
    showing = set().union(*(scenarios for scenarios, _ in fired.needs().values())) if fired.needs() else set()
    quiet = sorted((s for s in full if s not in showing), key=lambda s: (price[s], s))
    if quiet:
        chosen.append(quiet[0])
    return sorted(chosen)


def showing_variants(run: KillRun) -> Shown:
    """Where each rule showed in ``run``, variant by variant: as ``trusted`` (a trusted
    reason), as ``any`` (any reason) and as a ``gap``. A gap whose text names no variant
    counts for every variant of its scenario (``ALL``), so no choice can miss it."""
    shown: Shown = {}
    for rule, variant, reason in run.failed_rules():
        for kind in ("any", "trusted") if reason not in UNTRUSTED_REASONS else ("any",):
            shown.setdefault((kind, rule), {}).setdefault(scenario_of(variant), set()).add(variant)
    for rule, text in run.gap_texts():
        found = VARIANT_AT_START.match(text)
        shown.setdefault(("gap", rule), {}).setdefault(scenario_of(text), set()).add(found.group(1) if found else ALL)
    return shown


def choose_variants(scope: list[str], fired: Fired, shown: Shown, variants_of: dict[str, list[str]]) -> dict[str, list[str]]:
    """For each scenario of ``scope``, the fewest of its variants (``variants_of``, in order)
    showing every rule ``fired`` there in the same way (greedy: most rules per variant); one
    variant of a scenario where nothing fired (the control). Scenarios that keep every variant
    are left out: they run whole."""
    kept: dict[str, list[str]] = {}
    for scenario in scope:
        everyone = variants_of[scenario]
        wanted = [shown.get((SHOWN_AS[kind], rule), {}).get(scenario, {ALL})
                  for (kind, rule), (scenarios, _) in fired.needs().items() if scenario in scenarios]
        if any(ALL in showing for showing in wanted):
            continue
        chosen: list[str] = []
        while wanted:
            best = max(everyone, key=lambda v: sum(v in showing for showing in wanted))
            if not any(best in showing for showing in wanted):
                raise ValueError(f"{scenario}: no variant shows {wanted}")
            chosen.append(best)
            wanted = [showing for showing in wanted if best not in showing]
        chosen = sorted(chosen, key=everyone.index) or everyone[:1]
        if len(chosen) < len(everyone):
            kept[scenario] = chosen
    return kept


def hidden_variants(pin: Pin, run: KillRun) -> list[str]:
    """Each rule a full-set ``run`` shows in a scoped scenario, but in none of the variants
    the pin keeps of it: what the kept variants would hide."""
    shown = showing_variants(run)
    problems = []
    for (kind, rule), (scenarios, _) in sorted(Fired.of(run).needs().items()):
        for scenario in sorted(scenarios & set(pin.variants)):
            showing = shown.get((SHOWN_AS[kind], rule), {}).get(scenario, {ALL})
            if ALL not in showing and not showing & set(pin.variants[scenario]):
                problems.append(f"{rule} ({kind}) fired in {scenario} only in {sorted(showing)} "
                                f"but the scope keeps {pin.variants[scenario]}")
    return problems


def missing_now(pin: Pin, run: KillRun) -> list[str]:
    """Each rule the pinned full-set run fired in a scenario of the scope that the scoped
    ``run`` did not fire there the same way (for a trusted reason, at all, or as a gap): the
    pin no longer describes the mutant, so its scope may hide what the full set fires."""
    now = Fired.of(run)
    fired_at_all = {rule: set(by_scenario) for rule, by_scenario in run.fired().items()}
    problems = []
    for kind, pinned, found in (("trusted", pin.fired.trusted, now.trusted), ("gap", pin.fired.gaps, now.gaps),
                                ("untrusted", pin.fired.untrusted_only, fired_at_all)):  # fmt: skip
        for rule, scenarios in sorted(pinned.items()):
            lost = sorted((set(scenarios) & set(pin.scope)) - set(found.get(rule, ())))
            if lost:
                problems.append(f"{rule} ({kind}): fired in {lost} on the full set when pinned, "
                                f"not in the scope now (re-pin: {PIN_COMMAND})")
    return problems


def hidden_by(scope: list[str], fired: Fired) -> list[str]:
    """Each need of ``fired`` (a full-set run) the scope does not meet: what it would hide."""
    problems = []
    for (kind, rule), (scenarios, count) in sorted(fired.needs().items()):
        kept = sorted(scenarios & set(scope))
        if len(kept) < count:
            problems.append(f"{rule} ({kind}) fired in {sorted(scenarios)} but the scope keeps {kept or 'none of them'}")
    return problems


@lru_cache(maxsize=1)
def load_pins() -> dict[str, Pin]:
    if not SCOPE_FILE.exists():
        return {}
    raw = json.loads(SCOPE_FILE.read_text(encoding="utf-8"))
    return {name: Pin(entry["full"], entry["scope"], Fired(**entry["fired"]), entry.get("variants", {}))
            for name, entry in raw["mutants"].items()}


@lru_cache(maxsize=1)
def variants_now() -> dict[str, list[str]]:
    """scenario id -> its variant ids, in collection order, as the scenarios are now."""
    from toolnexus_conformance.scenario.model import load_scenario, scenario_files

    return {path.stem: [v.node_id for v in load_scenario(path).variants()] for path in scenario_files(SCENARIOS)}


def stale(name: str, full_files: tuple[str, ...]) -> str | None:
    """Why mutant ``name`` has no usable pin (None when it has one)."""
    pin = load_pins().get(name)
    if pin is None:
        return "not pinned"
    if pin.full != [scenario_id(f) for f in full_files]:
        return "its full set of scenarios changed since it was pinned"
    if pin.variants:
        gone = sorted(v for s, kept in pin.variants.items() for v in kept if v not in variants_now().get(s, ()))
        if gone:
            return f"variants it keeps no longer exist: {gone}"
    return None


def write_pins(pins: dict[str, Pin]) -> None:
    body = {
        "about": f"Generated by `{PIN_COMMAND}` (tests/mutants/kill_scope.py says what it holds); do not edit.",
        "mutants": {name: asdict(pin) for name, pin in sorted(pins.items())},
    }
    text = json.dumps(body, indent=1)
    # One line per list of scenario ids keeps the file short and its diffs readable.
    strings = r'"(?:[^"\\]|\\.)*"(?:,\n\s+"(?:[^"\\]|\\.)*")*'
    text = re.sub(rf"\[\n\s+({strings})\n\s+\]", lambda m: "[" + re.sub(r",\n\s+", ", ", m.group(1)) + "]", text)
    SCOPE_FILE.write_text(text + "\n", encoding="utf-8")
    load_pins.cache_clear()
