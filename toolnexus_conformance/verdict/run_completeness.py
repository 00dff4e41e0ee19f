"""Whether a run saw the whole suite: the condition for judging and deleting orphan goldens.

A golden no variant owns is an orphan only if the run knows every variant: every scenario
file was collected (no file arguments left some out, none failed to load) and every variant
got a verdict (nothing deselected by ``-k``/``-m``/``--rule``, no ``-x``/``--maxfail`` stop,
no Ctrl-C, no crashed xdist worker, not ``--collect-only``). ``--snapshot-update`` deletes
orphans only after such a run; otherwise it deletes nothing and the summary says why. This
module keeps the evidence (what was defined, what was judged) and gives that verdict; it
never touches files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunCoverage:
    """What a run collected and judged, per scenario id; JSON-able for xdist."""

    # scenario id -> every variant name its file defines (before any deselection)
    defined: dict[str, set[str]] = field(default_factory=dict)
    # scenario id -> variant names that reached a verdict (a call report or a setup skip)
    judged: dict[str, set[str]] = field(default_factory=dict)
    collection_errors: int = 0
    crashed_workers: int = 0

    def define(self, scenario_id: str, variants: list[str]) -> None:
        self.defined.setdefault(scenario_id, set()).update(variants)

    def judge(self, scenario_id: str, variant: str) -> None:
        self.judged.setdefault(scenario_id, set()).add(variant)

    def fully_judged(self, scenario_id: str) -> bool:
        return scenario_id in self.defined and self.defined[scenario_id] <= self.judged.get(scenario_id, set())

    def export(self) -> dict[str, Any]:
        return {
            "defined": {k: sorted(v) for k, v in self.defined.items()},
            "judged": {k: sorted(v) for k, v in self.judged.items()},
            "collectionErrors": self.collection_errors,
        }

    def merge(self, data: dict[str, Any]) -> None:
        for scenario_id, variants in data["defined"].items():
            self.define(scenario_id, variants)
        for scenario_id, variants in data["judged"].items():
            self.judged.setdefault(scenario_id, set()).update(variants)
        # Every worker collects the whole selection: the same error counts once per worker.
        self.collection_errors = max(self.collection_errors, data["collectionErrors"])


@dataclass(frozen=True)
class RunShape:
    """How the run was invoked and how it ended (read from pytest at session end)."""

    collect_only: bool
    interrupted: bool  # Ctrl-C, -x/--maxfail, or an xdist stop
    filters: tuple[str, ...]  # the deselecting options in use: -k, -m, --rule
    scenario_files: frozenset[str]  # ids of every scenario file in the scenarios folder


def incomplete_reason(coverage: RunCoverage, shape: RunShape) -> str | None:
    """Why this run cannot judge orphans (one line), or None when it saw everything."""
    if shape.collect_only:
        return "--collect-only runs no variant"
    if shape.interrupted:
        return "the run was interrupted or stopped early (Ctrl-C, -x, --maxfail)"
    if shape.filters:
        return f"the run was filtered ({', '.join(shape.filters)})"
    if coverage.crashed_workers:
        return f"{coverage.crashed_workers} xdist worker(s) crashed"
    if coverage.collection_errors:
        return f"{coverage.collection_errors} file(s) failed to collect"
    missing = sorted(shape.scenario_files - set(coverage.defined))
    if missing:
        listed = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        return f"{len(missing)} scenario file(s) were not collected ({listed})"
    unjudged = sum(len(v - coverage.judged.get(k, set())) for k, v in coverage.defined.items())
    if unjudged:
        return f"{unjudged} variant(s) got no verdict"
    return None
