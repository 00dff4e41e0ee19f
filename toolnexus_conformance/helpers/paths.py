"""Where the harness finds its data: schemas, scenarios, goldens, the rule registry.

One place, so packaging can move the data without touching the modules that read it. In
a checkout the data sits at the repository root beside ``toolnexus_conformance/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType


def _package_dir(package: ModuleType) -> Path:
    """The folder of a data-only package (a plain package, so its path has one entry)."""
    return Path(next(iter(package.__path__)))


def _data_root() -> tuple[Path, Path, Path]:
    """(fixtures, schemas, shims): beside toolnexus_conformance/ in a checkout or an editable install;
    otherwise the data package a wheel installs."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "fixtures" / "rules.json").exists():
        return checkout / "fixtures", checkout / "schemas", checkout / "shims"
    import toolnexus_conformance_data.fixtures as fixtures
    import toolnexus_conformance_data.schemas as schemas
    import toolnexus_conformance_data.shims as shims

    return _package_dir(fixtures), _package_dir(schemas), _package_dir(shims)


_FIXTURES, _SCHEMAS, _SHIMS = _data_root()
# A test (or a port repository) may point the harness at another fixtures tree.
_FIXTURES = Path(os.environ.get("TOOLNEXUS_CONFORMANCE_FIXTURES", _FIXTURES))


def repo_root() -> Path:
    """The folder that holds ``shims/`` (the repository in a checkout)."""
    return _SHIMS.parent


def fixtures_dir() -> Path:
    return _FIXTURES


def schemas_dir() -> Path:
    return _SCHEMAS


def scenarios_dir() -> Path:
    return fixtures_dir() / "scenarios"


def golden_dir() -> Path:
    # A differential find carries its own goldens beside it (toolnexus_conformance/differential/known.py),
    # so it can be judged without entering fixtures/golden/, where it would be an orphan.
    override = os.environ.get("TOOLNEXUS_CONFORMANCE_GOLDEN")
    return Path(override) if override else fixtures_dir() / "golden"


def shims_dir() -> Path:
    return _SHIMS
