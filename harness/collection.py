"""Which files a conformance run collects: the scenarios folder, and scenario files named
on the command line.

The scenarios folder is flat: its collector yields one scenario per ``*.json`` entry and
never descends into subfolders, so a directory symlink loop under it cannot collect the
suite again and again. Every entry is collected, including one that cannot be read (a
symlink to itself, a dangling link): the scenario loader then reports it as one
collection error naming the file, instead of pytest passing over it in silence (which
would also make its goldens look orphaned).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .paths import scenarios_dir


def real_path(path: Path) -> Path | None:
    """``path`` with symlinks resolved; None when that is impossible (a loop)."""
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError):
        return None


def is_scenarios_folder(path: Path) -> bool:
    real = real_path(path)
    return real is not None and real == real_path(scenarios_dir())


def scenario_entries(folder: Path) -> list[Path]:
    """Every ``*.json`` entry of the folder that is not a directory, sorted by name."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [p for p in entries if p.name.endswith(".json") and not _is_dir(p)]


def scenario_ids(folder: Path) -> frozenset[str]:
    return frozenset(p.stem for p in scenario_entries(folder))


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


class ScenariosFolder(pytest.Directory):
    """fixtures/scenarios/: one ScenarioFile per ``*.json`` entry, no subfolders."""

    def collect(self) -> Iterator[pytest.Collector]:
        from .items import ScenarioFile

        named = _named_entries(self.config, self.path)
        for path in scenario_entries(self.path):
            if named is not None and path.absolute() not in named and real_path(path) not in named:
                continue
            if not self.session.isinitpath(path) and self.ihook.pytest_ignore_collect(
                collection_path=path, config=self.config
            ):
                continue
            yield ScenarioFile.from_parent(self, path=path)


def _named_entries(config: pytest.Config, folder: Path) -> set[Path | None] | None:
    """The folder's entries named on the command line, or None when the folder itself (or a
    folder above it) is named and every entry is wanted. pytest collects the folder once
    for each file named in it: yielding only the named ones keeps ``pytest a.json b.json``
    from building the whole folder's collectors for each of them."""
    folder_real = real_path(folder)
    named: set[Path | None] = set()
    for arg in config.args:
        given = Path(arg.split("::")[0])
        wanted = real_path(given)
        if wanted is not None and (wanted == folder_real or (folder_real is not None and wanted in folder_real.parents)):
            return None
        # Both spellings: a link that cannot be resolved (a loop) is still named by its path.
        named.update({given.absolute(), wanted} - {None})
    return named


def is_explicit_argument(config: pytest.Config, file_path: Path) -> bool:
    """The file was named on the command line (a scenario outside the scenarios folder)."""
    wanted = real_path(file_path)
    return wanted is not None and any(real_path(Path(a.split("::")[0])) == wanted for a in config.args)
