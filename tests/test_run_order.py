"""The order our own suite runs in (tests/run_order.py): every test once, the late ones last,
and the slow ones spread so that each contiguous share of the run holds its part of them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from run_order import ordered


@dataclass(eq=False)
class Item:
    name: str
    marker: str | None = None

    def get_closest_marker(self, name: str) -> object | None:
        return name if name == self.marker else None


def _collection(ordinary: int, slow: int, late: int) -> list[Item]:
    # slow and late tests wherever collection puts them: here all at the start
    return ([Item(f"slow{i}", "slow") for i in range(slow)] + [Item(f"late{i}", "late") for i in range(late)]
            + [Item(f"test{i}") for i in range(ordinary)])


@pytest.mark.parametrize(("ordinary", "slow", "late"), [(0, 0, 0), (0, 3, 2), (1, 0, 0), (40, 16, 5), (3300, 16, 80)])
def test_every_test_runs_once_and_the_late_ones_last(ordinary: int, slow: int, late: int) -> None:
    items = _collection(ordinary, slow, late)
    order = ordered(items)
    assert sorted(i.name for i in order) == sorted(i.name for i in items)
    assert [i.marker for i in order[len(order) - late:]] == ["late"] * late
    assert [i.name for i in order if i.marker is None] == [f"test{i}" for i in range(ordinary)], "others keep their order"


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_each_worker_s_share_holds_its_part_of_the_slow_tests(workers: int) -> None:
    order = ordered(_collection(3300, 16, 80))
    share = len(order) // workers
    for start in range(0, share * workers, share):
        slow = sum(item.marker == "slow" for item in order[start:start + share])
        assert abs(slow - 16 / workers) <= 1, (workers, start, slow)
    assert order[0].marker == "slow", "the first share starts on a slow test"
