"""Which rules a variant is judged on, and what each rule is.

The rule registry (``fixtures/rules.json``: id, title, level), the rules every variant is
checked against whether or not its scenario cites them, and a variant's judged rules: the
cited and implicit rules, minus the golden rules its comparison does not prove. The plugin's
items, cross-port resume, the differential and the parity summary all ask here, so they
never disagree on what a variant was judged on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.scenario.model import Variant
from toolnexus_conformance.verdict.rules.golden import GOLDEN_RULES, golden_owner

__all__ = ["IMPLICIT_RULES", "RuleInfo", "golden_owner_of", "judged_rules", "load_rules", "rules_of", "selected"]

# Rules every variant is checked against, whether or not its scenario cites them.
# Beside the golden comparison and the key checks, the rules that judge one piece of wire data
# wherever it appears (raw relay arguments, results kept across a resume): a difference they name is
# theirs, not golden.observables's, in every scenario.
IMPLICIT_RULES = (
    "golden.observables", "keys.run-result", "keys.transcript", "keys.tool-event", "keys.stream-events",
    "relay.arguments-raw-openai", "resume.keeps-prior-results",
)


@dataclass(frozen=True)
class RuleInfo:
    id: str
    title: str
    level: str


def load_rules() -> dict[str, RuleInfo]:
    raw = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))
    return {r["id"]: RuleInfo(r["id"], r["title"], r["level"]) for r in raw["rules"]}


def golden_owner_of(variant: Variant) -> str:
    """The golden rule this variant's golden comparison proves."""
    return golden_owner(uncalled_relay=variant.uncalled_relay)


def rules_of(variant: Variant) -> list[str]:
    """Cited + implicit rules, minus the golden rules this variant's comparison does not prove."""
    owner = golden_owner_of(variant)
    cited = [*variant.scenario.rules, *_implicit(variant)]
    return [r for r in dict.fromkeys(cited) if r not in GOLDEN_RULES or r == owner or r == "relay.uncalled-inert"]


def _implicit(variant: Variant) -> tuple[str, ...]:
    """Rules every variant of this kind is checked against, cited or not."""
    extra: tuple[str, ...] = ()
    if variant.uncalled_relay:
        extra = ("relay.uncalled-inert",)
    elif variant.scenario.relay_free:
        extra = ("absent.byte-identical",)
    return tuple(r for r in (*IMPLICIT_RULES, *extra) if r not in variant.scenario.rules)


def selected(rule: str, filters: Sequence[str]) -> bool:
    """Whether ``--rule`` globs (none: every rule) select ``rule``."""
    return not filters or any(fnmatchcase(rule, f) for f in filters)


def judged_rules(variant: Variant, filters: Sequence[str]) -> list[str]:
    """The rules a variant is judged on in this run: its rules (:func:`rules_of`) that the
    ``--rule`` globs select. Computed once per variant, at collection; empty means the
    variant is not collected."""
    return [rule for rule in rules_of(variant) if selected(rule, filters)]
