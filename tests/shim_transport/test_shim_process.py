"""ShimProcess against the faux shim: every failure mode, reaping, host callbacks, recording."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from transportkit import CALL_TIMEOUT, FAUX_SHIM, assert_reaped, faux_command

from toolnexus_conformance.helpers.errors import (
    HarnessError,
    HostHandlerFailed,
    HostRequestError,
    ShimCallError,
    ShimCrashed,
    ShimNotRunning,
    ShimProtocolError,
    ShimStartError,
    ShimTimeout,
)
from toolnexus_conformance.helpers.jsonrpc import ErrorCode
from toolnexus_conformance.shim.process import CANCEL_METHOD, ShimProcess

INIT = {"protocolVersion": 1}


def started(shim: ShimProcess, mode: str, once: Path | None = None) -> ShimProcess:
    shim.start(faux_command(mode, once))
    return shim


def initialized(shim: ShimProcess, mode: str, once: Path | None = None) -> ShimProcess:
    started(shim, mode, once).call("initialize", INIT, timeout=CALL_TIMEOUT)
    return shim


def assert_user_facing(error: HarnessError, *, stderr_says: str) -> None:
    text = str(error)
    assert "shim command: " in text and str(FAUX_SHIM) in text
    assert "stderr tail" in text and stderr_says in text
    assert "Traceback" not in text


def test_ok_call_returns_the_result(shim: ShimProcess) -> None:
    result = initialized(shim, "ok").call("client.run", {"echo": {"x": 1}}, timeout=CALL_TIMEOUT)
    assert result == {"answers": [], "echo": {"x": 1}}
    assert shim.usable


def test_crash_at_start(shim: ShimProcess) -> None:
    started(shim, "crash-at-start")
    pid = shim.pid
    with pytest.raises(ShimCrashed) as info:
        shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    assert info.value.returncode == 3
    assert "exited with code 3" in str(info.value)
    assert_user_facing(info.value, stderr_says="fatal: cannot load the port library")
    assert pid is not None
    assert_reaped(pid)


def test_crash_mid_run(shim: ShimProcess) -> None:
    initialized(shim, "crash-mid-run")
    with pytest.raises(ShimCrashed) as info:
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    assert info.value.returncode == 7
    assert "exited with code 7 (during client.run)" in str(info.value)
    assert_user_facing(info.value, stderr_says="panic: lost the port mid-run")
    assert shim.pid is not None
    assert_reaped(shim.pid)


def test_killed_by_a_signal_names_the_signal(shim: ShimProcess) -> None:
    initialized(shim, "killed-mid-run")
    with pytest.raises(ShimCrashed) as info:
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    assert "killed by signal 9 (SIGKILL)" in str(info.value)
    assert_user_facing(info.value, stderr_says="about to be killed")


def test_hang_times_out_sends_cancel_and_kills(shim: ShimProcess) -> None:
    initialized(shim, "hang")
    began = time.monotonic()
    with pytest.raises(ShimTimeout) as info:
        shim.call("client.run", {}, timeout=1.0)
    assert time.monotonic() - began < 1.0 + 3.0
    assert info.value.timeout == 1.0
    assert "did not answer client.run within 1 s" in str(info.value)
    assert_user_facing(info.value, stderr_says="client.run: hanging now")
    cancels = [json.loads(line) for d, line in shim.transcript.entries if d == "out" and CANCEL_METHOD in line]
    assert cancels == [{"jsonrpc": "2.0", "method": "$/cancel", "params": {"id": 2}}]
    assert not shim.usable
    assert shim.pid is not None
    assert_reaped(shim.pid)
    with pytest.raises(ShimNotRunning, match="unusable .*did not answer client.run"):
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)


def test_non_json_line_is_a_protocol_error(shim: ShimProcess) -> None:
    initialized(shim, "non-json")
    with pytest.raises(ShimProtocolError) as info:
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    assert "line is not JSON" in str(info.value) and "'this is not json {'" in str(info.value)
    assert_user_facing(info.value, stderr_says="writing garbage to stdout")
    assert shim.pid is not None
    assert_reaped(shim.pid)


def test_wrong_id_is_a_protocol_error(shim: ShimProcess) -> None:
    initialized(shim, "wrong-id")
    with pytest.raises(ShimProtocolError, match="unknown id 1002") as info:
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    assert_user_facing(info.value, stderr_says="answering with the wrong id")


def test_oversized_line_is_refused_without_buffering_it(shim: ShimProcess) -> None:
    initialized(shim, "oversized")
    began = time.monotonic()
    with pytest.raises(ShimProtocolError, match="longer than the 8388608 byte limit") as info:
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    assert time.monotonic() - began < CALL_TIMEOUT
    assert_user_facing(info.value, stderr_says="writing a 9 MiB line")
    assert max(len(line) for _, line in shim.transcript.entries) < 1000
    assert shim.pid is not None
    assert_reaped(shim.pid)


def test_restart_after_a_failure_gives_a_working_shim(shim: ShimProcess, tmp_path: Path) -> None:
    initialized(shim, "crash-mid-run", once=tmp_path / "once")
    first_pid = shim.pid
    with pytest.raises(ShimCrashed):
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    shim.restart()
    assert shim.pid != first_pid
    assert shim.call("initialize", INIT, timeout=CALL_TIMEOUT)["port"] == "faux"
    assert shim.call("client.run", {"echo": 1}, timeout=CALL_TIMEOUT)["echo"] == 1
    assert first_pid is not None
    assert_reaped(first_pid)


def test_a_crash_between_calls_is_reported_by_the_next_call(shim: ShimProcess) -> None:
    initialized(shim, "exit-after-initialize")
    deadline = time.monotonic() + CALL_TIMEOUT
    while ("event", "shim exited with code 5") not in shim.transcript.entries and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not shim.usable
    with pytest.raises(ShimCrashed, match=r"exited with code 5 \(during idle; noticed when calling client.run\)"):
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)
    with pytest.raises(ShimNotRunning):
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)


def test_port_error_response_keeps_the_shim_usable(shim: ShimProcess) -> None:
    initialized(shim, "ok")
    with pytest.raises(ShimCallError) as info:
        shim.call("client.run", {"portError": {"kind": "resume", "message": "wrong answer id"}}, timeout=CALL_TIMEOUT)
    assert info.value.is_port_error
    assert (info.value.code, info.value.message, info.value.data) == (-32001, "wrong answer id", {"kind": "resume"})
    assert "-32001 port error" in str(info.value)
    assert shim.call("client.run", {"echo": 2}, timeout=CALL_TIMEOUT)["echo"] == 2


def test_unknown_method_is_a_call_error_not_a_port_error(shim: ShimProcess) -> None:
    initialized(shim, "ok")
    with pytest.raises(ShimCallError) as info:
        shim.call("toolkit.describe", {}, timeout=CALL_TIMEOUT)
    assert info.value.code == ErrorCode.METHOD_NOT_FOUND and not info.value.is_port_error


def test_concurrent_host_callbacks_are_all_outstanding_at_once(shim: ShimProcess) -> None:
    initialized(shim, "concurrent-waitfor")
    barrier = threading.Barrier(3, timeout=CALL_TIMEOUT)

    def handler(method: str, params: Any) -> Any:
        assert method == "host.waitFor"
        barrier.wait()  # parks until all three requests are outstanding
        return {"id": params["request"]["id"], "ok": True}

    result = shim.call("client.run", {}, timeout=CALL_TIMEOUT * 2, handler=handler)
    assert result["answers"] == [{"result": {"id": f"req-{n}", "ok": True}} for n in range(3)]


def test_a_port_that_calls_back_one_at_a_time_times_out(shim: ShimProcess) -> None:
    initialized(shim, "sequential-waitfor")
    barrier = threading.Barrier(3, timeout=30)

    def handler(method: str, params: Any) -> Any:
        barrier.wait()
        return {"ok": True}

    try:
        with pytest.raises(ShimTimeout, match="client.run"):
            shim.call("client.run", {}, timeout=1.0, handler=handler)
    finally:
        barrier.abort()  # release the parked handler thread


def test_final_response_may_arrive_while_host_requests_are_open(shim: ShimProcess) -> None:
    initialized(shim, "ok")
    release, answered = threading.Event(), threading.Event()

    def handler(method: str, params: Any) -> Any:
        release.wait(CALL_TIMEOUT)
        answered.set()
        return {"late": True}

    result = shim.call("client.run", {"waitFor": 2, "noWait": True}, timeout=CALL_TIMEOUT, handler=handler)
    assert result == {"answers": []}
    release.set()
    assert answered.wait(CALL_TIMEOUT)
    assert shim.call("client.run", {"echo": 3}, timeout=CALL_TIMEOUT)["echo"] == 3


def test_host_request_error_is_sent_back_as_a_jsonrpc_error(shim: ShimProcess) -> None:
    initialized(shim, "ok")

    def handler(method: str, params: Any) -> Any:
        raise HostRequestError(-32001, "declined", {"kind": "waitFor"})

    result = shim.call("client.run", {"waitFor": 1}, timeout=CALL_TIMEOUT, handler=handler)
    assert result["answers"] == [{"error": {"code": -32001, "message": "declined", "data": {"kind": "waitFor"}}}]


def test_host_store_calls_reach_the_handler(shim: ShimProcess) -> None:
    initialized(shim, "ok")
    store: dict[str, Any] = {}

    def handler(method: str, params: Any) -> Any:
        if method == "host.store.save":
            store[params["conversationId"]] = params["messages"]
            return None
        return {"messages": store.get(params["conversationId"])}

    calls = [{"method": "host.store.save", "params": {"conversationId": "c1", "messages": [1]}}]
    shim.call("client.run", {"hostCalls": calls}, timeout=CALL_TIMEOUT, handler=handler)
    calls = [{"method": "host.store.get", "params": {"conversationId": "c1"}}]
    result = shim.call("client.run", {"hostCalls": calls}, timeout=CALL_TIMEOUT, handler=handler)
    assert result["answers"] == [{"result": {"messages": [1]}}]


def test_a_crashing_handler_is_a_harness_error_not_a_silent_answer(shim: ShimProcess) -> None:
    initialized(shim, "ok")

    def handler(method: str, params: Any) -> Any:
        raise KeyError("oops")

    with pytest.raises(HostHandlerFailed, match="KeyError"):
        shim.call("client.run", {"waitFor": 1}, timeout=CALL_TIMEOUT, handler=handler)
    assert shim.usable


def test_host_request_without_a_handler_gets_method_not_found(shim: ShimProcess) -> None:
    initialized(shim, "ok")
    result = shim.call("client.run", {"waitFor": 1}, timeout=CALL_TIMEOUT)
    assert result["answers"][0]["error"]["code"] == ErrorCode.METHOD_NOT_FOUND


def test_stderr_is_drained_and_only_its_tail_kept(shim: ShimProcess) -> None:
    initialized(shim, "stderr-noise")
    for _ in range(3):  # ~600 KiB of stderr in total: an undrained pipe would block the shim
        assert shim.call("client.run", {}, timeout=CALL_TIMEOUT) == {"answers": []}
    deadline = time.monotonic() + CALL_TIMEOUT  # stderr is drained asynchronously to stdout
    while not shim.stderr_tail().rstrip().endswith("faux: noise done") and time.monotonic() < deadline:
        time.sleep(0.02)
    tail = shim.stderr_tail()
    assert len(tail.encode()) <= 64 * 1024
    assert tail.rstrip().endswith("faux: noise done")


def test_validator_sees_every_message_both_ways(shim: ShimProcess) -> None:
    seen: list[tuple[str, str, str]] = []
    shim.validator = lambda direction, method, message: seen.append((direction, method, sorted(message)[0]))
    initialized(shim, "ok").call("client.run", {"waitFor": 1}, timeout=CALL_TIMEOUT, handler=lambda m, p: {})
    assert [(d, m) for d, m, _ in seen] == [
        ("out", "initialize"), ("in", "initialize"),
        ("out", "client.run"), ("in", "host.waitFor"), ("out", "host.waitFor"), ("in", "client.run"),
    ]


def test_validator_rejecting_a_shim_message_is_a_protocol_error(shim: ShimProcess) -> None:
    def validator(direction: str, method: str, message: dict[str, Any]) -> None:
        if direction == "in" and method == "client.run":
            raise ValueError("result.answers: extra key")

    shim.validator = validator
    initialized(shim, "ok")
    with pytest.raises(ShimProtocolError, match="failed validation: result.answers: extra key"):
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)


def test_transcript_records_both_directions_and_dumps(shim: ShimProcess, tmp_path: Path) -> None:
    initialized(shim, "ok")
    mark = shim.transcript.mark()
    shim.call("client.run", {"waitFor": 1}, timeout=CALL_TIMEOUT, handler=lambda m, p: {"ok": True})
    lines = shim.transcript.since(mark)
    assert [d for d, _ in lines] == ["out", "in", "out", "in"]
    assert json.loads(lines[0][1]) == {"jsonrpc": "2.0", "id": 2, "method": "client.run", "params": {"waitFor": 1}}
    assert json.loads(lines[2][1])["result"] == {"ok": True}
    shim.transcript.dump(tmp_path / "exchange.jsonl", since=mark)
    dumped = [json.loads(line) for line in (tmp_path / "exchange.jsonl").read_text().splitlines()]
    assert [entry["direction"] for entry in dumped] == ["out", "in", "out", "in"]


def test_close_sends_shutdown_and_reaps(shim: ShimProcess) -> None:
    initialized(shim, "ok")
    pid = shim.pid
    shim.close()
    assert '"method":"shutdown"' in shim.transcript.entries[-3][1]
    assert pid is not None
    assert_reaped(pid)
    shim.close()  # idempotent
    with pytest.raises(ShimNotRunning, match="not started"):
        shim.call("client.run", {}, timeout=CALL_TIMEOUT)


def test_timeout_kills_the_whole_process_group_of_a_wrapper(shim: ShimProcess) -> None:
    # `sh -c "...; true"` forks python as a child instead of exec'ing it; killing only sh
    # would leave python holding the pipes open.
    shim.start(["sh", "-c", f"'{sys.executable}' '{FAUX_SHIM}' hang; true"])
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    began = time.monotonic()
    with pytest.raises(ShimTimeout):
        shim.call("client.run", {}, timeout=0.5)
    shim.close()
    assert time.monotonic() - began < 4.0


def test_a_missing_program_is_a_start_error(shim: ShimProcess) -> None:
    with pytest.raises(ShimStartError) as info:
        shim.start(["definitely-not-a-shim-binary", "--flag"])
    assert "could not start the shim" in str(info.value)
    assert "shim command: definitely-not-a-shim-binary --flag" in str(info.value)
