"""The mutation suite's pass of scoped kill runs, started in the background as soon as the
session knows its tests (``tests/mutants/conftest.py``), so the runs go on while the
session's other tests run instead of holding up the test processes that wait for them.

Which mutants run is what the session's mutant tests ask for: the ``name`` of each collected
``test_mutant_is_killed``, or every mutant when ``test_every_normative_rule_is_killed_in_two_scenarios``
is collected (it reads every mutant's run). Each runs on its pinned scope (``kill_scope``);
a mutant whose pin is stale runs on its full set, and a test says the pin is stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, wait
from contextlib import ExitStack

from catalog import load
from kill_pool import kill_all, requested
from kill_runner import KillReport, scenario_files
from kill_scope import load_pins, stale

MUTANTS = load()
PER_MUTANT = "test_mutant_is_killed"
EVERY_RULE = "test_every_normative_rule_is_killed_in_two_scenarios"


def scoped_files(name: str) -> tuple[str, ...]:
    """The mutant's pinned scope; its full set while the pin is stale (a test says so)."""
    full = scenario_files(MUTANTS[name].kills)
    return full if stale(name, full) else load_pins()[name].scope_files()


def wanted(items: Sequence[object]) -> list[str]:
    """The mutants the session's collected items ask for (none: no pass to run)."""
    names = requested(items, PER_MUTANT)
    if any(getattr(item, "originalname", "") == EVERY_RULE for item in items):
        names = sorted(MUTANTS)
    return names


class ScopedPass:
    """The pass's futures (one per mutant) and what stops its pool, fork server and zygote."""

    def __init__(self, names: list[str]) -> None:
        self._stack = ExitStack()
        self.futures: dict[str, Future[KillReport]] = self._stack.enter_context(kill_all(names, scoped_files, "scoped"))

    def close(self, *, finish: bool) -> None:
        """Stop the pass; with ``finish``, first let every run end: under xdist another
        worker may be waiting for a report this process hosts (``kill_pool.watch_reports``)."""
        if finish:
            wait(self.futures.values())
        self._stack.close()
