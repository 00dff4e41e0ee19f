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
        lambda s: "host" in s,  # early in the stream: drawn this far
        lambda s: "host" not in s and s["entries"] == ["stream"] and s["styles"] == ["openai"],  # later: drawn again, further
        lambda s: s["entries"] == ["ask"] and s["styles"] == ["anthropic"],  # between: read from what is drawn
    ]
    expected = [find(scenarios(Features()), w, settings=generated_streams.generate_only(1000)) for w in wanted]
    assert [generated_streams.first(Features(), w) for w in wanted] == expected, "not what find returns"
    monkeypatch.setattr(generated_streams, "_STREAMS", {})  # another worker of the run: reads the file
    assert [generated_streams.first(Features(), w) for w in wanted] == expected, "read from the file: not find's"
    # Whatever the stream holds: each is the stream's first wanted scenario, and the three took
    # the three paths (drawn this far; drawn again further; read from what was drawn).
    stream = generated_streams.every(Features(), 40)
    at = [next(i for i, s in enumerate(stream) if w(s)) for w in wanted]
    assert [stream[i] for i in at] == expected, "first() is not the stream's first wanted scenario"
    assert at[0] < at[1] and at[2] < at[1], f"the wanted scenarios sit at {at}: they no longer take the three paths"
    assert generated_streams.every(Features(), at[1] + 1)[-1] == expected[1]
    with pytest.raises(NoSuchExample):
        generated_streams.first(Features(), lambda s: False, examples=3)
