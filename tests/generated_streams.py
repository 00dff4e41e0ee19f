"""The differential generator's derandomized streams, drawn once per test process and read by
every test that looks for the first scenario of some kind (or scans a stream's first N).

``first(features, wanted, examples=N)`` returns exactly what
``hypothesis.find(scenarios(features), wanted, settings=generate_only(N))`` returns: with only
the generate phase, no database and a derandomized seed (find's seed does not depend on the
condition), the stream hypothesis draws depends on the strategy and the settings alone while
the condition answers "no"; the condition only decides where the stream stops (the first
scenarios of a search stopped early equal the first ones of a longer search).
So a test that searches a stream another test has already drawn further reads the answer
instead of drawing up to it again. ``examples`` is part of the
key, as the settings are (on hypothesis's default backend the early examples' size depends
on it). Scenarios are copied in and out: what one test does to its scenario reaches no other.

The xdist workers of one test run share what they drew through files in the run's folder
(``share_in``): a worker that needs a stream another worker drew as far reads it. Writes are
atomic and a stream file is only ever replaced by a longer draw of the same stream, so a
reader sees a prefix of the stream or nothing; with no lock, two workers may draw the same
part at once, as they did before, and no worker waits for another.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import Phase, find, settings
from hypothesis.errors import NoSuchExample

from toolnexus_conformance.differential.search import Features, scenarios, search_settings
from toolnexus_conformance.helpers.json_copy import copy_json

Scenario = dict[str, Any]


def generate_only(examples: int) -> settings:
    """A derandomized search of ``examples`` generated scenarios, unshrunk: the search's own
    settings (its backend included), so a test reads the stream a search draws."""
    return settings(search_settings(examples), phases=[Phase.generate])


@dataclass
class _Stream:
    drawn: list[Scenario] = field(default_factory=list)  # in draw order, copies
    complete: bool = False  # the whole budget is drawn: a miss is a miss


_STREAMS: dict[tuple[Features, int], _Stream] = {}
_shared: list[Path] = []  # the run's folder for stream files, once share_in named it
_read: dict[Path, tuple[int, int]] = {}  # (mtime, size) of each file as last read or written here


def share_in(folder: Path) -> None:
    """Read and write stream files in ``folder`` (one per run, shared by its xdist workers)."""
    folder.mkdir(parents=True, exist_ok=True)
    _shared[:] = [folder]


def _file(key: tuple[Features, int]) -> Path | None:
    if not _shared:
        return None
    features, examples = key
    flags = "".join(str(int(getattr(features, name))) for name in ("relay", "resume", "hooks", "store"))
    return _shared[0] / f"stream-{flags}-{examples}.json"


def _known(key: tuple[Features, int]) -> _Stream:
    """What this process drew of the stream, or another worker's longer draw of it."""
    stream = _STREAMS.get(key, _Stream())
    path = _file(key)
    if stream.complete or path is None or not path.exists() or _read.get(path) == _stamp(path):
        return stream  # nothing, or nothing new since this process read or wrote it (not parsed again)
    _read[path] = _stamp(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved["complete"] or len(saved["drawn"]) > len(stream.drawn):
        _STREAMS[key] = stream = _Stream(saved["drawn"], saved["complete"])
    return stream


def _keep(key: tuple[Features, int], stream: _Stream) -> _Stream:
    _STREAMS[key] = stream
    path = _file(key)
    if path is not None and _known_elsewhere(path) < (stream.complete, len(stream.drawn)):
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"complete": stream.complete, "drawn": stream.drawn}, out, ensure_ascii=False)
        os.replace(temporary, path)
        _read[path] = _stamp(path)
    return stream


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_mtime_ns, status.st_size


def _known_elsewhere(path: Path) -> tuple[bool, int]:
    """How far the stream's file goes: (complete, scenarios drawn)."""
    if not path.exists():
        return False, 0
    saved = json.loads(path.read_text(encoding="utf-8"))
    return bool(saved["complete"]), len(saved["drawn"])


def _draw(features: Features, examples: int, wanted: Callable[[Scenario], bool] | None) -> _Stream:
    """The stream drawn from its start up to the first ``wanted`` one (all of it if None)."""
    drawn: list[Scenario] = []
    hit: list[bool] = []

    def condition(scenario: Scenario) -> bool:
        if hit:  # find calls the condition once more on the example it returns: no new draw
            return True
        drawn.append(copy_json(scenario))
        if wanted is not None and wanted(scenario):
            hit.append(True)
        return bool(hit)

    try:
        find(scenarios(features), condition, settings=generate_only(examples))
    except NoSuchExample:
        return _Stream(drawn, complete=True)
    return _Stream(drawn)


def first(features: Features, wanted: Callable[[Scenario], bool], *, examples: int = 1000) -> Scenario:
    """The first scenario of the stream that is ``wanted``; NoSuchExample when none of its
    ``examples`` is, as find says."""
    stream = _known((features, examples))
    for scenario in stream.drawn:
        if wanted(copy_json(scenario)):
            return copy_json(scenario)
    if stream.complete:
        raise NoSuchExample(f"none of the first {examples} scenarios is wanted")
    # Not in the part drawn so far: draw from the start again, on to the first wanted one.
    stream = _keep((features, examples), _draw(features, examples, wanted))
    if stream.complete:
        raise NoSuchExample(f"none of the first {examples} scenarios is wanted")
    return copy_json(stream.drawn[-1])


def every(features: Features, count: int, *, examples: int = 1000) -> list[Scenario]:
    """The stream's first ``count`` scenarios (all it has, if fewer)."""
    stream = _known((features, examples))
    if len(stream.drawn) < count and not stream.complete:
        drawn = 0

        def counted(_: Scenario) -> bool:
            nonlocal drawn
            drawn += 1
            return drawn >= count

        stream = _keep((features, examples), _draw(features, examples, None if count >= examples else counted))
    return copy_json(stream.drawn[:count])
