"""Which mutants the background pass runs: what the session's collected mutant tests ask for."""

from __future__ import annotations

from dataclasses import dataclass, field

from scoped_pool import EVERY_RULE, MUTANTS, PER_MUTANT, wanted


@dataclass
class CallSpec:
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class Item:
    originalname: str
    callspec: CallSpec = field(default_factory=CallSpec)


def test_the_pass_runs_the_mutants_the_per_mutant_tests_name() -> None:
    items = [Item(PER_MUTANT, CallSpec({"name": "retry-twice"})), Item("test_other")]
    assert wanted(items) == ["retry-twice"]


def test_the_every_rule_test_asks_for_every_mutant() -> None:
    assert wanted([Item(PER_MUTANT, CallSpec({"name": "retry-twice"})), Item(EVERY_RULE)]) == sorted(MUTANTS)


def test_a_session_without_mutant_tests_runs_no_pass() -> None:
    assert wanted([Item("test_other"), Item("test_mutant_shim_refuses_unknown_names")]) == []
