"""The order our own suite runs in, and how xdist shares it between workers.

Alone, the suite runs its longest tests first and the tests that read a background pass last
(``run_order``). Under xdist (``-n``), the workers are fed by ``LanesScheduling``: xdist's
work stealing (an idle worker takes half of the queue of the busiest one, so no worker sits
idle while another still has tests queued), with a first deal that gives each worker its own
lane — its share of the longest tests first, then a run of ordinary tests, then its share of
the readers. xdist's default ``load`` scheduling instead sends each worker a block of
consecutive tests and never takes queued tests back: the first block held every long test,
and one worker ran on for a minute after the other had finished.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from xdist.scheduler import WorkStealingScheduling

# Tests that each take minutes (a real port's whole suite, the CI gate's end-to-end runs,
# the mutants over their full sets, whose first test starts the pool that runs them all),
# and in the test command its longest tests (10-40 s each on a loaded machine), go first,
# dealt round-robin to the workers' lanes in the order listed, so every worker starts on
# long tests and the run ends on short ones.
LONGEST_FIRST = (
    "tests/gates/test_real_ports.py::test_port_meets_its_expectations",
    "tests/gates/test_mutant_full_sets.py",
    "tests/gates/test_ci_gate_end_to_end.py",
    "tests/plugin/test_rerun_from_port_repository.py",
    "tests/test_benchmarks.py::test_all_figures_runs_every_step_and_sums_them_up",
    "tests/plugin/test_snapshot_update_safety.py::test_an_update_whose_xdist_worker_crashed_keeps_every_golden",
    "tests/plugin/test_broken_shims.py::test_the_null_shim_fails_every_scenario",
    "tests/cross_resume/test_cross_resume_runs.py::test_reference_to_reference_passes_every_durable_halt",
    # then the tests of 3-10 s each (a python port's venv, a package index, a subprocess
    # pytest or a differential search): at the end of a lane, one of them would be the tail
    "tests/shims/test_register_shims.py::test_shim_registers_through_the_port_after_construction[python]",
    "tests/test_history.py::test_one_real_python_release",
    "tests/test_differential_ahead.py::test_running_ahead_reports_the_one_at_a_time_searchs_scenario",
    "tests/test_differential_known.py::test_store_draws_need_the_store_capability",
    "tests/test_differential_pool.py::test_two_workers_report_what_worker_0_alone_finds",
    "tests/test_hypothesis_isolation.py::test_a_fresh_interpreter_and_a_warm_one_draw_the_same_stream",
    "tests/plugin/test_session_footprint.py",
    "tests/test_differential_known.py::test_a_new_difference_is_shrunk_to_a_scenario_that_fails_the_same_rule_under_pytest",
)
# Tests that only read what another process of the run makes go last, so no worker waits
# for it while it still has other tests to run: the scoped mutants' tests read a pass that
# starts when collection ends (tests/mutants/conftest.py) and goes on beside the other tests;
# the floor, own-suite and differential-throughput tests read the all_figures.py run the first
# of them makes. Within each group the collection order is kept.
READ_A_BACKGROUND_PASS_LAST = (
    "tests/mutants/test_mutants.py::test_mutant_is_killed",
    "tests/mutants/test_mutants.py::test_every_normative_rule_is_killed_in_two_scenarios",
    "tests/test_benchmarks.py::test_suite_floor_runs_every_step",
    "tests/test_benchmarks.py::test_own_suite_prints_wall_cpu_load_and_where_the_time_goes",
    "tests/test_differential_pool.py::test_the_throughput_benchmark_prints_both_figures",
)
LONGEST, ORDINARY, READER = 0, 1, 2


def run_order(nodeid: str) -> tuple[int, int]:
    """(group, place): the longest first in the order listed, then the rest, then the readers."""
    for place, prefix in enumerate(LONGEST_FIRST):
        if nodeid.startswith(prefix):
            return LONGEST, place
    return (READER if nodeid.startswith(READ_A_BACKGROUND_PASS_LAST) else ORDINARY), 0


def lane_sizes(total: int, lanes: int) -> list[int]:
    """How many tests work stealing's first deal sends each idle worker, in worker order:
    an even share of what is left at each step (``WorkStealingScheduling.check_schedule``)."""
    sizes = []
    for index in range(lanes):
        sizes.append(total // (lanes - index))
        total -= sizes[-1]
    return sizes


def deal(nodeids: Sequence[str], lanes: int) -> list[int]:
    """The collection's indexes in the order to queue them, so that the consecutive blocks the
    first deal sends (``lane_sizes``) are one lane per worker: its share of the longest tests
    (round-robin, in the order listed), ordinary tests, then its share of the readers."""
    by_group: dict[int, list[int]] = {LONGEST: [], ORDINARY: [], READER: []}
    for index in sorted(range(len(nodeids)), key=lambda i: run_order(nodeids[i])):
        by_group[run_order(nodeids[index])[0]].append(index)
    heads: list[list[int]] = [by_group[LONGEST][lane::lanes] for lane in range(lanes)]
    tails: list[list[int]] = [by_group[READER][lane::lanes] for lane in range(lanes)]
    ordinary = by_group[ORDINARY]
    order: list[int] = []
    for lane, size in enumerate(lane_sizes(len(nodeids), lanes)):
        take = len(ordinary) if lane == lanes - 1 else max(0, size - len(heads[lane]) - len(tails[lane]))
        order += heads[lane] + ordinary[:take] + tails[lane]
        ordinary = ordinary[take:]
    return order


class LanesScheduling(WorkStealingScheduling):
    """Work stealing whose first deal is ``deal``'s lanes instead of the collection order."""

    def __init__(self, config: pytest.Config, log: object | None = None) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self._dealt = False

    def check_schedule(self) -> None:
        # The first call comes from schedule(), with every test pending and none sent yet.
        if not self._dealt and self.collection:
            self._dealt = True
            self.pending[:] = deal(self.collection, len(self.node2pending))
        super().check_schedule()
