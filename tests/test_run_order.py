"""How our own suite is shared between xdist workers (tests/run_order.py): every test is
queued exactly once, each worker's first block starts with its share of the longest tests
and ends with its share of the background-pass readers, and the blocks are the sizes work
stealing's first deal sends."""

from __future__ import annotations

import pytest
from run_order import LONGEST_FIRST, READ_A_BACKGROUND_PASS_LAST, deal, lane_sizes

LONG = [f"{prefix}::case" if "::" not in prefix else prefix for prefix in LONGEST_FIRST[3:]]
READERS = [f"{READ_A_BACKGROUND_PASS_LAST[0]}[m{i}]" for i in range(5)]


def _collection(ordinary: int) -> list[str]:
    # As the workers collect: the longest first, the ordinary tests, the readers last.
    return LONG + [f"tests/test_x.py::test_{i}" for i in range(ordinary)] + READERS


@pytest.mark.parametrize("lanes", [1, 2, 3])
@pytest.mark.parametrize("ordinary", [0, 1, 40, 3000])
def test_every_test_is_queued_once_in_blocks_of_the_first_deals_sizes(lanes: int, ordinary: int) -> None:
    nodeids = _collection(ordinary)
    order = deal(nodeids, lanes)
    assert sorted(order) == list(range(len(nodeids)))
    assert sum(lane_sizes(len(nodeids), lanes)) == len(nodeids)


def test_lane_sizes_follow_work_stealing_s_even_shares() -> None:
    assert lane_sizes(3095, 2) == [1547, 1548]
    assert lane_sizes(10, 3) == [3, 3, 4]


def test_each_lane_starts_with_its_long_tests_and_ends_with_its_readers() -> None:
    nodeids = _collection(3000)
    order = [nodeids[i] for i in deal(nodeids, 2)]
    first_size, _ = lane_sizes(len(nodeids), 2)
    first, second = order[:first_size], order[first_size:]
    assert first[: len(LONG[0::2])] == LONG[0::2] and second[: len(LONG[1::2])] == LONG[1::2]
    assert first[-len(READERS[0::2]) :] == READERS[0::2] and second[-len(READERS[1::2]) :] == READERS[1::2]


def test_a_plain_block_split_would_give_one_worker_every_long_test() -> None:
    """What the lanes are for: xdist's ``load`` mode sends consecutive blocks of the
    collection order, and the first block then holds all the long tests."""
    nodeids = _collection(3000)
    block = len(nodeids) // 2 // 4  # load scheduling's first chunk per worker
    assert set(LONG) <= set(nodeids[:block])
    dealt = [nodeids[i] for i in deal(nodeids, 2)]
    assert not set(LONG) <= set(dealt[: lane_sizes(len(nodeids), 2)[0]])
