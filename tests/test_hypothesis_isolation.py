"""The differential's derandomized stream of scenarios depends on the seed alone, not on which
local modules happen to be imported (hypothesis would otherwise draw their literals)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import Phase, find, settings

from harness import hypothesis_isolation
from harness.differential import Features, scenarios


def _first_twenty() -> list[str]:
    seen: list[str] = []

    def twentieth(scenario: dict[str, Any]) -> bool:
        seen.append(json.dumps(scenario, sort_keys=True))
        return len(seen) >= 20

    find(scenarios(Features(relay=True, hooks=True)), twentieth,
         settings=settings(max_examples=40, derandomize=True, database=None, phases=[Phase.generate]))
    return seen


def test_importing_a_module_full_of_literals_changes_no_generated_scenario(tmp_path: Path) -> None:
    assert hypothesis_isolation.ISOLATED, "hypothesis no longer has the hook this module switches off"
    before = _first_twenty()
    source = tmp_path / "literal_heavy.py"
    source.write_text("VALUES = [" + ", ".join(str(n) for n in range(200)) + "]\n"
                      "WORDS = [" + ", ".join(repr(f"w{n}") for n in range(200)) + "]\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("literal_heavy", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["literal_heavy"] = module
    try:
        spec.loader.exec_module(module)
        assert _first_twenty() == before
    finally:
        del sys.modules["literal_heavy"]
