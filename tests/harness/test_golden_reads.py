"""read_golden parses each golden once while the file stays unchanged, and reads it again
once it changed: a golden broken (or fixed) after it was read is reported (or trusted) as
it is now, never as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolnexus_conformance.golden import files as golden_files
from toolnexus_conformance.golden.files import GoldenError, read_golden


@pytest.fixture
def golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(golden_files, "golden_dir", lambda: tmp_path)
    path = tmp_path / "scn" / "openai-run.json"
    path.parent.mkdir()
    _write(path, {"provenance": {"reference": "1"}, "observables": {"phases": []}})
    return path


def _write(path: Path, data: object, *, raw: str | None = None, tick: int = 0) -> None:
    path.write_text(raw if raw is not None else json.dumps(data), encoding="utf-8")
    if tick:  # a later mtime even on a file system with coarse timestamps
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + tick * 1_000_000_000))


def test_an_unchanged_golden_is_parsed_once(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = read_golden("scn", "openai-run")
    assert first is not None and first["provenance"] == {"reference": "1"}
    monkeypatch.setattr(golden_files, "_parse_golden", lambda path: pytest.fail(f"{path} parsed again"))
    assert read_golden("scn", "openai-run") is first


def test_a_golden_changed_after_it_was_read_is_read_again(golden: Path) -> None:
    assert read_golden("scn", "openai-run") is not None
    _write(golden, None, raw='{"provenance": {}, "observables": ', tick=1)
    with pytest.raises(GoldenError, match=r"openai-run.json:1:\d+: golden is not valid JSON"):
        read_golden("scn", "openai-run")
    _write(golden, {"provenance": {"reference": "2"}, "observables": {"phases": []}}, tick=2)
    again = read_golden("scn", "openai-run")
    assert again is not None and again["provenance"] == {"reference": "2"}


def test_a_deleted_golden_is_gone(golden: Path) -> None:
    assert read_golden("scn", "openai-run") is not None
    golden.unlink()
    assert read_golden("scn", "openai-run") is None
