"""The transport's guards, one ShimProcess at a time: a shim that stops reading
its stdin, a shim that exits while something it started holds its pipes, messages the
harness must not send, host methods the protocol does not have, and the API key."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from transportkit import CALL_TIMEOUT, assert_reaped, faux_command

from toolnexus_conformance.helpers.errors import (
    OutgoingMessageTooLarge,
    ShimCrashed,
    ShimProtocolError,
    ShimTimeout,
)
from toolnexus_conformance.helpers.jsonrpc import MessageTooLarge, encode_line
from toolnexus_conformance.run.host import Host, HostLog, Store
from toolnexus_conformance.shim import process_tree
from toolnexus_conformance.shim.process import ShimProcess

INIT = {"protocolVersion": 1}
SMALL_LIMIT = 4096


def test_a_shim_that_stops_reading_fails_the_call_within_its_deadline(shim: ShimProcess, tmp_path: Path) -> None:
    shim.start(faux_command("deaf", tmp_path / "once"))
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)  # the last line it reads
    began = time.monotonic()
    # 1 MiB does not fit a pipe: a blocking write() would park the caller for good.
    with pytest.raises(ShimTimeout) as info:
        shim.call("client.run", {"echo": "x" * (1 << 20)}, timeout=1.0)
    assert time.monotonic() - began < 1.0 + 3.0, "the deadline did not cover the write"
    assert "shim stopped reading its stdin" in str(info.value)
    assert "its stdin pipe is full" in str(info.value)
    assert shim.pid is not None
    assert_reaped(shim.pid)
    shim.restart()  # --once: the restarted shim reads again
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    assert shim.call("client.run", {"echo": "x" * (1 << 20)}, timeout=CALL_TIMEOUT)["echo"] == "x" * (1 << 20)


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs the setsid program (util-linux)")
def test_an_exit_is_noticed_at_once_while_a_setsid_grandchild_holds_stdout(shim: ShimProcess) -> None:
    # The grandchild leaves the group and keeps stdout open: EOF would come only when it ends.
    shim.start(["sh", "-c", "setsid sleep 120 & echo started >&2; sleep 0.2; exit 3"])
    began = time.monotonic()
    with pytest.raises(ShimCrashed, match="exited with code 3") as info:
        shim.call("initialize", INIT, timeout=30.0)
    assert time.monotonic() - began < 5.0, "the exit was noticed only at the call timeout"
    assert "started" in str(info.value)
    assert process_tree.descendants(None, shim.instance_token) == set(), "the setsid grandchild survived the shim"


def test_a_message_over_the_line_limit_is_not_sent_and_the_shim_stays_usable() -> None:
    shim = ShimProcess(max_line_bytes=SMALL_LIMIT)
    try:
        shim.start(faux_command("ok"))
        shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
        sent = len(shim.transcript.entries)
        with pytest.raises(OutgoingMessageTooLarge) as info:
            shim.call("client.run", {"echo": "x" * SMALL_LIMIT}, timeout=CALL_TIMEOUT)
        assert f"over the {SMALL_LIMIT} byte line limit" in str(info.value)
        assert "the shim was not involved" in str(info.value) and "scenario" in str(info.value)
        assert shim.transcript.entries[sent:] == [], "nothing may reach the shim"
        assert shim.usable
        assert shim.call("client.run", {"echo": 1}, timeout=CALL_TIMEOUT)["echo"] == 1
    finally:
        shim.close()


def test_a_host_answer_over_the_line_limit_is_replaced_by_an_error_and_fails_the_call() -> None:
    shim = ShimProcess(max_line_bytes=SMALL_LIMIT)
    try:
        shim.start(faux_command("ok"))
        shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
        with pytest.raises(OutgoingMessageTooLarge):
            shim.call("client.run", {"waitFor": 1}, timeout=CALL_TIMEOUT, handler=lambda m, p: {"blob": "x" * SMALL_LIMIT})
        answers = [json.loads(line) for d, line in shim.transcript.entries if d == "out" and '"error"' in line]
        assert answers and "could not send its answer" in answers[-1]["error"]["message"], "the shim got no answer"
        assert shim.usable
    finally:
        shim.close()


def test_an_unknown_host_method_is_answered_and_fails_the_call(shim: ShimProcess) -> None:
    shim.start(faux_command("ok"))
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    host = Host(None, (), Store(), HostLog())
    calls = [{"method": "host.nosuch", "params": {"x": 1}}]
    with pytest.raises(ShimProtocolError, match="unknown host method 'host.nosuch'"):
        shim.call("client.run", {"hostCalls": calls}, timeout=CALL_TIMEOUT, handler=host.handle)
    answer = next(json.loads(line) for d, line in shim.transcript.entries
                  if d == "out" and "host.nosuch" in line and '"error"' in line)
    assert answer["error"]["code"] == -32601, "the shim must get an answer, or it waits forever"


def test_a_known_host_method_still_passes(shim: ShimProcess) -> None:
    shim.start(faux_command("ok"))
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    host = Host(None, (), Store(), HostLog())
    calls = [{"method": "host.store.get", "params": {"id": "c1"}}]
    result = shim.call("client.run", {"hostCalls": calls}, timeout=CALL_TIMEOUT, handler=host.handle)
    assert result["answers"] == [{"result": {"messages": None}}]


def test_the_api_key_is_redacted_from_the_transcript_and_error_text(shim: ShimProcess, tmp_path: Path) -> None:
    key = "sk-transport-secret-0042"
    shim.start(faux_command("ok"))
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    result = shim.call("client.run", {"apiKey": key, "echo": f"echoed {key}"}, timeout=CALL_TIMEOUT)
    assert result["echo"] == f"echoed {key}", "the caller's own data is not altered"
    shim.transcript.dump(tmp_path / "t.jsonl")
    dumped = (tmp_path / "t.jsonl").read_text()
    lines = [json.loads(entry)["line"] for entry in dumped.splitlines()]
    assert key not in dumped
    assert any('"apiKey":"<redacted>"' in line for line in lines) and any("echoed <redacted>" in line for line in lines)


def test_the_instance_token_reaches_the_shim(shim: ShimProcess) -> None:
    shim.start(["sh", "-c", f'echo "token=${process_tree.TOKEN_VAR}" >&2; exit 0'])
    with pytest.raises(ShimCrashed):
        shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    assert f"token={os.getpid()}-" in shim.stderr_tail()


def test_encode_line_refuses_over_the_limit_and_accepts_exactly_it() -> None:
    obj: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"s": ""}}
    base = len(encode_line(obj)) - 1
    obj["params"]["s"] = "y" * (100 - base)
    assert len(encode_line(obj, 100)) == 101  # newline excluded from the limit
    obj["params"]["s"] += "y"
    with pytest.raises(MessageTooLarge) as just_over:
        encode_line(obj, 100)
    assert just_over.value.size == 101
    obj["params"]["s"] = "y" * 10_000
    with pytest.raises(MessageTooLarge) as far_over:
        encode_line(obj, 100)
    assert far_over.value.size == base + 10_000
    assert str(far_over.value) == f"the encoded line would be {base + 10_000} bytes, over the 100 byte line limit"


class _Recording:
    """A handler answering host.hook at once and anything else after a pause, recording the
    thread each answer came from."""

    answers_at_once = frozenset({"host.hook"})

    def __init__(self) -> None:
        self.threads: dict[str, str] = {}

    def __call__(self, method: str, params: Any) -> Any:
        self.threads[method] = threading.current_thread().name
        if method not in self.answers_at_once:
            time.sleep(0.05)
        return {}


def test_what_a_handler_answers_at_once_is_answered_on_the_reader_and_the_rest_on_the_pool(shim: ShimProcess) -> None:
    shim.start(faux_command("ok"))
    shim.call("initialize", INIT, timeout=CALL_TIMEOUT)
    handler = _Recording()
    calls = [{"method": "host.store.get", "params": {"id": "c1"}}, {"method": "host.hook", "params": {"name": "afterTool"}}]
    result = shim.call("client.run", {"hostCalls": calls}, timeout=CALL_TIMEOUT, handler=handler)
    assert result["answers"] == [{"result": {}}, {"result": {}}]
    assert handler.threads["host.hook"] == "shim-stdout", "a hand-off for an answer that never waits"
    assert handler.threads["host.store.get"] != "shim-stdout", "a handler that may wait held up the reader"
