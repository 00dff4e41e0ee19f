"""tests/generated_streams.py hands the differential tests scenarios from a stream drawn once
per test run (in this process, or read from another xdist worker's file) as find's: what it
hands out must be what find returns, whichever test drew the stream how far before.

A module of its own: test_hypothesis_isolation.py is imported by a fresh interpreter, which
should not pay for pytest's import."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import generated_streams
import pytest
from hypothesis import find
from hypothesis.errors import NoSuchExample

from toolnexus_conformance.differential.search import Features, scenarios


def test_a_shared_stream_hands_out_what_find_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generated_streams, "_STREAMS", {})
    monkeypatch.setattr(generated_streams, "_shared", [])
    generated_streams.share_in(tmp_path)
    wanted: list[Callable[[dict[str, Any]], bool]] = [
        lambda s: "host" in s,  # the 2nd scenario: drawn this far
        lambda s: "host" not in s and s["entries"] == ["stream"] and s["styles"] == ["openai"],  # the 6th: drawn again from the start, further
        lambda s: s["entries"] == ["ask"] and s["styles"] == ["anthropic"],  # the 3rd: read from what is drawn
    ]
    expected = [find(scenarios(Features()), w, settings=generated_streams.generate_only(1000)) for w in wanted]
    assert [generated_streams.first(Features(), w) for w in wanted] == expected, "not what find returns"
    monkeypatch.setattr(generated_streams, "_STREAMS", {})  # another worker of the run: reads the file
    assert [generated_streams.first(Features(), w) for w in wanted] == expected, "read from the file: not find's"
    assert generated_streams.every(Features(), 6)[-1] == expected[1]
    assert [generated_streams.every(Features(), 6).index(e) for e in expected] == [1, 5, 2], "the stream moved: choose others"
    with pytest.raises(NoSuchExample):
        generated_streams.first(Features(), lambda s: False, examples=3)
