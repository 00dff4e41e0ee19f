"""Where the harness finds its data: schemas, scenarios, goldens, the rule registry.

One place, so packaging can move the data without touching the modules that read it. In
a checkout the data sits at the repository root beside ``harness/``.
"""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def repo_root() -> Path:
    return _ROOT


def fixtures_dir() -> Path:
    return _ROOT / "fixtures"


def schemas_dir() -> Path:
    return _ROOT / "schemas"


def scenarios_dir() -> Path:
    return fixtures_dir() / "scenarios"


def golden_dir() -> Path:
    return fixtures_dir() / "golden"


def shims_dir() -> Path:
    return _ROOT / "shims"
