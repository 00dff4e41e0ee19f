"""Goldens: one syrupy JSON file per variant under ``fixtures/golden/<scenario>/``.

syrupy owns storage, ``--snapshot-update`` and unused-golden detection; this module owns
where the files live. A golden carries provenance (the reference version and the scenario
file's hash), so a golden older than its scenario fails with a regenerate hint instead of a
confusing diff. How a difference from a golden is judged lives in ``compare``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation

from .paths import golden_dir


class GoldenExtension(JSONSnapshotExtension):
    """fixtures/golden/<scenario id>/<variant>.json, shared by every port."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(golden_dir() / test_location.basename)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        return str(test_location.item.variant.name)  # type: ignore[attr-defined]

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation, snapshot_location: str) -> bool:
        return Path(snapshot_location).parent.name == test_location.basename


def unused_goldens(variants_by_scenario: dict[str, set[str]], whole_suite: bool) -> list[Path]:
    """Golden files no variant of a fully-run scenario owns; with ``whole_suite``, also the
    folders of scenarios that no longer exist."""
    unused = []
    for scenario_id, variants in sorted(variants_by_scenario.items()):
        folder = golden_dir() / scenario_id
        unused += [p for p in sorted(folder.glob("*.json")) if p.stem not in variants]
    if whole_suite and golden_dir().exists():
        unused += [p for p in sorted(golden_dir().iterdir()) if p.is_dir() and p.name not in variants_by_scenario]
    return unused


def golden_path(scenario_id: str, variant_name: str) -> Path:
    return golden_dir() / scenario_id / f"{variant_name}.json"


def read_golden(scenario_id: str, variant_name: str) -> dict[str, Any] | None:
    path = golden_path(scenario_id, variant_name)
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))
