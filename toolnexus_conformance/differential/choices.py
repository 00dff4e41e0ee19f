"""The differential generator's decisions, read in plain Python from one hypothesis draw.

A scenario is decided by dozens of choices (which tools, which calls, which wire shapes,
which host), and a hypothesis draw costs the same whatever it draws; so
:func:`toolnexus_conformance.differential.search.scenarios` draws one fixed-size byte
string (:data:`SPEC`) and builds the scenario from it here, with no further draw (the
figures: benchmarks/README.md, "Figures behind mechanisms").

**Defaults first.** :meth:`Choices.pick` maps a byte onto its options by scale, so byte 0
is the first option (the plain case) and a lower byte an earlier option: hypothesis shrinks
a byte string towards zeros, hence a find towards the plain scenario, as it did draw by draw.

**Regions.** The bytes are cut into fixed regions (:class:`Region`), one per part of the
scenario (the toolkit, each turn, the hooks, the host...): a region reads its bytes in
order and zeros past its end, so a decision that changes how many bytes one part reads
(fewer calls, no split) leaves every other part's decisions where they were, and a shrink
of one part does not reshuffle the rest.

**Determinism.** The bytes are all there is: the same seed draws the same bytes and so the
same scenarios, whatever ran before.

**Shrinking.** Bytes that decide nothing (past what a region reads) shrink to zeros without
changing the scenario: a search looks a scenario it ran up by its canonical JSON rather
than running it again (differential/ahead.py, :func:`minimal_difference
<toolnexus_conformance.differential.search.minimal_difference>`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from hypothesis import strategies as st

__all__ = ["REGIONS", "SPEC", "SPEC_SIZE", "Choices", "Region"]

T = TypeVar("T")

# Each part's region: its offset is the sum of the sizes before it (sized for the most
# bytes the part can read; reading past a region's end reads zeros, its defaults).
REGIONS: dict[str, int] = {
    "shape": 4,  # style, entry, tool turns
    "toolkit": 16,  # tool names, construction, builtins
    "behaviours": 12,  # each native tool's behaviour, two bytes a tool
    "turn0": 48, "turn1": 48, "final": 24,  # calls, arguments, wire and extra of each turn
    "hooks": 8,
    "host": 40,  # waitFor answers, raise, hold and order; or the resume or rerun
    "delays": 8,
    "store": 4,
    "metadata": 4,  # each native reply's or fail's metadata (capability resultMetadata)
    "question": 8,  # where builtins are on: a call of the builtin question in each tool turn, its answer
}
_OFFSETS: dict[str, int] = {}
_at = 0
for _name, _size in REGIONS.items():
    _OFFSETS[_name] = _at
    _at += _size
SPEC_SIZE = _at
SPEC: st.SearchStrategy[bytes] = st.binary(min_size=SPEC_SIZE, max_size=SPEC_SIZE)


class Region:
    """One part's bytes, read in order; zeros past the end."""

    __slots__ = ("_data", "_at", "_end")

    def __init__(self, data: bytes, start: int, size: int) -> None:
        self._data, self._at, self._end = data, start, start + size

    def byte(self) -> int:
        at = self._at
        if at >= self._end:
            return 0
        self._at = at + 1
        return self._data[at]

    def take(self, size: int) -> Region:
        """The next ``size`` bytes as a region of their own (a fixed slot: what it reads
        moves nothing after it), the cursor past them."""
        start = self._at
        self._at = start + size
        return Region(self._data, start, max(0, min(size, self._end - start)))

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``, each about as likely; the first for a zero byte. More than
        256 options read two bytes."""
        count = len(options)
        if count <= 256:
            return options[self.byte() * count >> 8]
        return options[((self.byte() << 8) | self.byte()) * count >> 16]

    def chance(self, numerator: int, denominator: int) -> bool:
        """True ``numerator`` times in ``denominator`` (False for a zero byte)."""
        return self.byte() * denominator >> 8 >= denominator - numerator

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high], each about as likely; ``low`` for zero bytes."""
        return self.pick(range(low, high + 1))

    def subset(self, options: Sequence[T], low: int, high: int) -> list[T]:
        """Between ``low`` and ``high`` distinct ``options`` (each count as likely), in the
        order picked."""
        left = list(options)
        count = self.integer(low, min(high, len(left)))
        return [left.pop(self.byte() * len(left) >> 8) for _ in range(count)]

    def some(self, options: Sequence[T], low: int, high: int) -> list[T]:
        """Between ``low`` and ``high`` of ``options``, repeats allowed."""
        return [self.pick(options) for _ in range(self.integer(low, high))]


class Choices:
    """The drawn bytes, by region (see the module docstring)."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def region(self, name: str) -> Region:
        return Region(self._data, _OFFSETS[name], REGIONS[name])
