"""Golden files on disk: where they live, reading them, writing them, and which are orphans.

One JSON file per variant under ``fixtures/golden/<scenario>/<variant>.json``, shared by
every port. Writing goes through syrupy's public extension API (:class:`GoldenExtension`,
a ``JSONSnapshotExtension`` with a folder per scenario), so the file format is syrupy's
JSON serialization byte for byte. Reading does not need syrupy: a golden that is not valid
UTF-8 JSON raises :class:`GoldenError` naming the file and line:col. Whether a run may
judge or delete orphans is ``run_completeness``'s business, not this module's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.paths import golden_dir


class GoldenError(HarnessError):
    """A golden file cannot be read (not UTF-8, not JSON, not an object)."""


class GoldenExtension(JSONSnapshotExtension):
    """fixtures/golden/<scenario id>/<variant>.json: the item's path names the scenario,
    its ``variant`` the file."""

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


def write_golden(item: pytest.Item, payload: dict[str, Any]) -> Path:
    """Write ``payload`` as the golden of ``item`` (a variant item with ``variant`` and
    ``obj``), serialized by syrupy's JSON extension."""
    extension = GoldenExtension()
    location = PyTestLocation(item)
    target = extension.get_location(test_location=location, index=0)
    extension.write_snapshot(snapshot_location=target, snapshots=[(extension.serialize(payload), location, 0)])
    return Path(target)


def golden_path(scenario_id: str, variant_name: str) -> Path:
    return golden_dir() / scenario_id / f"{variant_name}.json"


# Parsed goldens by path, each with the stamp (inode, size, mtime, ctime) of the file it was
# read from: several checks and variants read the same golden (an uncalled-relay variant
# its base variant's), and a golden rewritten meanwhile (--snapshot-update, or replaced by
# a rename) has another stamp, so it is read again.
_parsed: dict[Path, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}


def read_golden(scenario_id: str, variant_name: str) -> dict[str, Any] | None:
    """The golden of a variant, None when there is none; :class:`GoldenError` when the file
    is there but unreadable. Each file is parsed once while it stays unchanged: the data
    returned is shared, so callers read it and never modify it."""
    path = golden_path(scenario_id, variant_name)
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GoldenError(f"{path}: cannot read golden: {exc.strerror or exc}") from None
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    known = _parsed.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    data = _parse_golden(path)
    if data is not None:
        _parsed[path] = (stamp, data)
    return data


def read_goldens(scenario_id: str, variant_names: Iterable[str]) -> tuple[dict[str, dict[str, Any] | None], dict[str, Exception]]:
    """The goldens of these variants of one scenario, by name, and by name the
    :class:`GoldenError` of each that could not be read."""
    found: dict[str, dict[str, Any] | None] = {}
    errors: dict[str, Exception] = {}
    for name in dict.fromkeys(variant_names):
        try:
            found[name] = read_golden(scenario_id, name)
        except GoldenError as exc:
            errors[name] = exc
    return found, errors


def _parse_golden(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise GoldenError(f"{path}: golden is not UTF-8 (byte {exc.start}); {REGENERATE}") from None
    except OSError as exc:
        raise GoldenError(f"{path}: cannot read golden: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{path}:{exc.lineno}:{exc.colno}: golden is not valid JSON: {exc.msg}; {REGENERATE}") from None
    if not isinstance(data, dict) or not isinstance(data.get("observables"), dict):
        raise GoldenError(f"{path}: golden must be an object with 'provenance' and 'observables'; {REGENERATE}")
    return data


def orphan_goldens(defined: dict[str, set[str]], *, whole_suite: bool) -> list[Path]:
    """Golden files that no defined variant owns: in the folder of each scenario in
    ``defined`` (scenario id -> golden-owning variant names), and, with ``whole_suite``
    (every scenario file was loaded), the folders of scenarios that no longer exist."""
    orphans: list[Path] = []
    for scenario_id, variants in sorted(defined.items()):
        folder = golden_dir() / scenario_id
        orphans += [p for p in sorted(folder.glob("*.json")) if p.stem not in variants]
    if whole_suite and golden_dir().is_dir():
        orphans += [p for p in sorted(golden_dir().iterdir()) if p.is_dir() and p.name not in defined]
    return orphans


def delete_goldens(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir():
            for child in path.glob("*.json"):
                child.unlink()
            if not any(path.iterdir()):  # a folder holding anything else is not ours to drop
                path.rmdir()
        else:
            path.unlink()


REGENERATE = "regenerate with: pytest --port=reference --snapshot-update"
