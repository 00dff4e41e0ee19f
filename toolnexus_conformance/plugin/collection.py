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

from toolnexus_conformance.helpers.paths import scenarios_dir


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


# The node id of the scenarios folder when its own path would make a long one: a wheel's
# data inside the rootdir (``.venv/lib/python3.11/site-packages/toolnexus_conformance_data/
# fixtures/scenarios/...``) or a folder outside it (``../../...``). ``expand_short_arguments``
# turns such an id given back on the command line into the file's path.
SHORT_PREFIX = "scenarios"


def short_node_ids(rootpath: Path) -> bool:
    """Whether the scenarios folder is named ``scenarios/`` in node ids: unless it is the
    rootdir's own ``fixtures/scenarios`` (this harness's checkout)."""
    return real_path(scenarios_dir()) != real_path(rootpath / "fixtures" / "scenarios")


def expand_short_arguments(args: list[str]) -> list[str]:
    """``scenarios/<file>.json[::item]`` arguments naming no file here, as the suite's file."""
    expanded = []
    for argument in args:
        path, sep, rest = argument.partition("::")
        name = path.removeprefix(f"{SHORT_PREFIX}/")
        if name != path and "/" not in name and not Path(path).exists() and (scenarios_dir() / name).is_file():
            argument = f"{scenarios_dir() / name}{sep}{rest}"
        expanded.append(argument)
    return expanded


def scenario_file(parent: pytest.Collector, path: Path) -> pytest.File:
    """A scenario file's collector, named ``scenarios/<file>`` when it lies in the scenarios
    folder and short ids apply."""
    from toolnexus_conformance.plugin.items import ScenarioFile

    inside = real_path(path.parent) == real_path(scenarios_dir())
    if inside and short_node_ids(parent.config.rootpath):
        return ScenarioFile.from_parent(parent, path=path, nodeid=f"{SHORT_PREFIX}/{path.name}")
    return ScenarioFile.from_parent(parent, path=path)


def scenarios_folder(parent: pytest.Collector, path: Path) -> ScenariosFolder:
    if short_node_ids(parent.config.rootpath):
        return ScenariosFolder.from_parent(parent, path=path, nodeid=SHORT_PREFIX)
    return ScenariosFolder.from_parent(parent, path=path)


class ScenariosFolder(pytest.Directory):
    """fixtures/scenarios/: one ScenarioFile per ``*.json`` entry, no subfolders."""

    def collect(self) -> Iterator[pytest.Collector]:
        named = _named_entries(self.config, self.path)
        for path in scenario_entries(self.path):
            if named is not None and path.absolute() not in named and real_path(path) not in named:
                continue
            if not self.session.isinitpath(path) and self.ihook.pytest_ignore_collect(
                collection_path=path, config=self.config
            ):
                continue
            yield scenario_file(self, path)


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
