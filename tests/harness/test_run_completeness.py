"""When a run may judge orphan goldens: only when it saw every scenario and every variant
got a verdict. Each way a run falls short is named."""

from __future__ import annotations

import pytest

from toolnexus_conformance.verdict.run_completeness import RunCoverage, RunShape, incomplete_reason

FILES = frozenset({"a", "b"})


def _coverage(*, judged_b: tuple[str, ...] = ("x", "y")) -> RunCoverage:
    coverage = RunCoverage()
    coverage.define("a", ["x"])
    coverage.define("b", ["x", "y"])
    coverage.judge("a", "x")
    for variant in judged_b:
        coverage.judge("b", variant)
    return coverage


def _shape(**change: object) -> RunShape:
    fields: dict[str, object] = {"collect_only": False, "interrupted": False, "filters": (), "scenario_files": FILES}
    return RunShape(**{**fields, **change})  # type: ignore[arg-type]


def test_a_run_that_judged_every_variant_of_every_file_is_complete() -> None:
    assert incomplete_reason(_coverage(), _shape()) is None


@pytest.mark.parametrize(
    ("coverage", "shape", "reason"),
    [
        (_coverage(), _shape(collect_only=True), "--collect-only runs no variant"),
        (_coverage(), _shape(interrupted=True), "interrupted or stopped early"),
        (_coverage(), _shape(filters=("-k 'openai'",)), "the run was filtered (-k 'openai')"),
        (_coverage(), _shape(scenario_files=FILES | {"c"}), "1 scenario file(s) were not collected (c)"),
        (_coverage(judged_b=("x",)), _shape(), "1 variant(s) got no verdict"),
    ],
    ids=["collect-only", "interrupted", "filtered", "file-left-out", "variant-without-verdict"],
)
def test_each_shortfall_is_named(coverage: RunCoverage, shape: RunShape, reason: str) -> None:
    found = incomplete_reason(coverage, shape)
    assert found is not None and reason in found


def test_collection_errors_and_crashed_workers_make_a_run_incomplete() -> None:
    coverage = _coverage()
    coverage.collection_errors = 1
    assert incomplete_reason(coverage, _shape()) == "1 file(s) failed to collect"
    coverage = _coverage()
    coverage.crashed_workers = 1
    assert incomplete_reason(coverage, _shape()) == "1 xdist worker(s) crashed"


def test_workers_exports_merge_into_one_coverage() -> None:
    """Each xdist worker judges part of the variants; the controller needs them all."""
    first, second = RunCoverage(), RunCoverage()
    for worker in (first, second):
        worker.define("b", ["x", "y"])
    first.judge("b", "x")
    second.judge("b", "y")
    merged = RunCoverage()
    merged.merge(first.export())
    assert not merged.fully_judged("b")
    merged.merge(second.export())
    assert merged.fully_judged("b")
    assert not merged.fully_judged("never-defined")
