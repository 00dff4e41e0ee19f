"""Every rule in the registry is bound to exactly one check, so a scenario citing it proves
something; and the checks name only rules that exist."""

from __future__ import annotations

import json

from harness.paths import fixtures_dir
from harness.rules import load_all

# Judged by items.py itself: the golden comparison and the absent-relay comparison.
BUILT_IN = {"golden.observables", "absent.byte-identical"}


def _registry() -> dict[str, dict]:
    raw = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))
    return {rule["id"]: rule for rule in raw["rules"]}


def test_every_rule_has_a_check() -> None:
    checks = load_all()
    missing = sorted(set(_registry()) - set(checks) - BUILT_IN)
    assert not missing, "rules with no check bound (add one under harness/rules/): " + ", ".join(missing)


def test_every_check_names_a_registered_rule() -> None:
    unknown = sorted(set(load_all()) - set(_registry()))
    assert not unknown, "checks bound to rule ids the registry does not know: " + ", ".join(unknown)
