"""The golden provenance names reference_py's version without importing reference_py into
pytest's process (rules/golden.py ``reference_version``)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import reference_py
from toolnexus_conformance.verdict.rules import golden


def test_the_version_read_is_the_packages_own_and_nothing_is_imported() -> None:
    code = ("import sys; from toolnexus_conformance.verdict.rules.golden import reference_version; "
            "print(reference_version(), 'reference_py' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [reference_py.__version__, "False"]


def _read_from(init_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """reference_version() with the package found at an ``__init__.py`` holding ``init_text``."""
    init = tmp_path / "__init__.py"
    init.write_text(init_text, encoding="utf-8")
    spec = importlib.machinery.ModuleSpec("reference_py", None, origin=str(init))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    golden.reference_version.cache_clear()
    try:
        return golden.reference_version()
    finally:
        golden.reference_version.cache_clear()


def test_a_version_that_is_no_plain_literal_is_asked_of_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _read_from("from ._v import VERSION as __version__\n", tmp_path, monkeypatch) == reference_py.__version__


def test_a_wrong_literal_would_be_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader really reads the file it finds (the first test is not passing by import)."""
    assert _read_from('"""doc"""\n__version__ = "9.9.9"\n', tmp_path, monkeypatch) == "9.9.9"
