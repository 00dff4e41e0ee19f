"""Every bad input file is one clear error naming the file (and line:col or JSON path),
never a traceback; the run ends, and no golden is lost.

In-process (pytester) on a private fixtures tree: a broken golden, a scenario that is not
UTF-8, a scenario that is a symlink to itself, a directory symlink loop under scenarios/,
and a host answer the strict scenario schema refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from inprocess import private_suite, run
from plugin_runner import snapshot_tree

pytest_plugins = ["pytester"]

SCENARIO_ID = "relay-single-durable"


def _failure_sections(output: str) -> str:
    return output.split("= FAILURES =", 1)[-1].split("conformance summary", 1)[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"provenance": {}, "observables": {,}}', "openai-run.json:1:36: golden is not valid JSON: Expecting property name"),
        (b'{"observables": "\xff"}', "openai-run.json: golden is not UTF-8 (byte 17)"),
        (b"[]", "openai-run.json: golden must be an object with 'provenance' and 'observables'"),
    ],
    ids=["syntax", "encoding", "shape"],
)
def test_a_broken_golden_is_one_error_naming_the_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, content: bytes, message: str
) -> None:
    fixtures = private_suite(pytester, monkeypatch, SCENARIO_ID)
    golden = fixtures / "golden" / SCENARIO_ID / "openai-run.json"
    golden.write_bytes(content)
    before = snapshot_tree(fixtures)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference")
    output = result.stdout.str()
    result.assert_outcomes(passed=5, failed=1)
    assert f"{golden.parent}/{message}" in output
    assert "regenerate with: pytest --port=reference --snapshot-update" in output
    failures = _failure_sections(output)
    assert "Traceback" not in failures and len(failures.splitlines()) < 10, failures
    assert snapshot_tree(fixtures) == before


def test_a_scenario_that_is_not_utf8_is_a_collection_error_with_line_and_column(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = private_suite(pytester, monkeypatch, SCENARIO_ID)
    bad = fixtures / "scenarios" / "latin1.json"
    bad.write_bytes(b'{\n  "id": "latin1",\n  "title": "caf\xe9"\n}\n')
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # pytest stops on a collection error
    result.stdout.fnmatch_lines([f"{bad}:3:16: cannot read scenario: not UTF-8 (byte 0xe9)"])
    assert "UnicodeDecodeError" not in result.stdout.str() and "Traceback" not in result.stdout.str()


def test_a_scenario_that_is_a_symlink_to_itself_is_named_and_its_goldens_kept(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = private_suite(pytester, monkeypatch, SCENARIO_ID)
    loop = fixtures / "scenarios" / "self-loop.json"
    os.symlink(loop.name, loop)
    kept = fixtures / "golden" / "self-loop"
    kept.mkdir()
    (kept / "openai-run.json").write_text("{}", encoding="utf-8")
    before = snapshot_tree(fixtures / "golden")
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference", "--snapshot-update", "--continue-on-collection-errors")
    output = result.stdout.str()
    result.stdout.fnmatch_lines([f"{loop}: cannot read scenario: a symlink loop", "*deleted no golden*1 file(s) failed to collect"])
    assert "RuntimeError" not in output and "Traceback" not in output
    result.assert_outcomes(passed=6, errors=1)
    assert snapshot_tree(fixtures / "golden") == before


def test_a_directory_symlink_loop_under_scenarios_collects_each_file_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = private_suite(pytester, monkeypatch, SCENARIO_ID)
    os.symlink(".", fixtures / "scenarios" / "again")
    os.symlink("..", fixtures / "scenarios" / "up")
    for target in (fixtures / "scenarios", fixtures):
        result = run(pytester, str(target), "--port=reference", "--collect-only", "-q")
        assert result.ret == 0, result.stdout.str()
        assert "6 tests collected" in result.stdout.str()
        assert all("again" not in line and "/up/" not in line for line in result.stdout.lines)


def _with_answer(fixtures: Path, scenario_id: str, edit: object) -> Path:
    path = fixtures / "scenarios" / f"{scenario_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("scenario_id", "edit", "json_path"),
    [
        (
            "relay-caller-failure-inprocess",
            lambda d: d["host"]["waitFor"]["answers"]["call:call_w1"]["data"].update(isError="no"),
            "$.host.waitFor.answers['call:call_w1'].data.isError: expected boolean, got string",
        ),
        (
            "relay-single-durable",
            lambda d: d["resume"]["answer"]["data"]["results"][0].update(isError="no"),
            "$.resume.answer.data.results[0].isError: expected boolean, got string",
        ),
        (
            "relay-single-durable",
            lambda d: d["resume"]["answer"].update(ok="yes"),
            "$.resume.answer.ok: expected boolean, got string",
        ),
    ],
    ids=["waitFor-isError", "resume-isError", "resume-ok"],
)
def test_a_host_answer_off_the_answer_schema_is_a_collection_error_naming_file_and_path(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, scenario_id: str, edit: object, json_path: str
) -> None:
    fixtures = private_suite(pytester, monkeypatch, scenario_id)
    path = _with_answer(fixtures, scenario_id, edit)
    result = run(pytester, str(fixtures / "scenarios"), "--port=reference")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    output = result.stdout.str()
    assert f"{path}: not a valid scenario:\n" in output and f"  {json_path}\n" in output, output
    assert "Traceback" not in output
