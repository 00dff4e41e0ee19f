"""An instructable fake shim for the transport tests: ``python faux_shim.py MODE [--once FILE]``.

It speaks just enough of shim protocol v1 (``initialize``, ``client.run``, ``shutdown``,
``$/cancel``) to be driven by :class:`toolnexus_conformance.shim.process.ShimProcess`, and misbehaves in
the way MODE names. With ``--once FILE`` it misbehaves only while FILE does not exist
(creating it), so a test can prove that the restarted shim works.

``client.run`` params (all optional):
  ``waitFor``: N        -> send N ``host.waitFor`` requests, then return their answers
  ``hostCalls``: [...]  -> send these ``{method, params}`` requests, then return the answers
  ``portError``: {kind, message} -> answer with a -32001 port error
  ``echo``: value       -> copied into the result
  ``noWait``: true      -> return at once, leaving the host requests unanswered
Host requests are all sent before any answer is awaited, except in ``sequential-waitfor``.
``deaf`` stops reading stdin for good once it answered ``initialize`` (its pipe then fills).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

MODES = {
    "ok", "crash-at-start", "crash-mid-run", "killed-mid-run", "hang", "non-json", "wrong-id",
    "oversized", "version-mismatch", "version-refused", "bad-handshake", "stderr-noise",
    "concurrent-waitfor", "sequential-waitfor", "exit-after-initialize", "deaf",
}
OVERSIZED_BYTES = 9 * 1024 * 1024

_write_lock = threading.Lock()
_answers: dict[str, dict[str, Any]] = {}
_answer_events: dict[str, threading.Event] = {}
_answers_lock = threading.Lock()
_host_ids = iter(range(1, 1 << 30))


def log(text: str) -> None:
    sys.stderr.write(f"faux: {text}\n")
    sys.stderr.flush()


def write_line(raw: bytes) -> None:
    with _write_lock:
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()


def send(obj: dict[str, Any]) -> None:
    write_line(json.dumps(obj, separators=(",", ":")).encode() + b"\n")


def host_request(method: str, params: Any) -> tuple[str, threading.Event]:
    with _answers_lock:
        host_id = f"h{next(_host_ids)}"
        event = _answer_events[host_id] = threading.Event()
    send({"jsonrpc": "2.0", "id": host_id, "method": method, "params": params})
    return host_id, event


def await_answer(host_id: str, event: threading.Event) -> dict[str, Any]:
    if not event.wait(30):
        log(f"no answer to {host_id}")
        os._exit(9)
    with _answers_lock:
        return _answers.pop(host_id)


def run_client(mode: str, msg_id: Any, params: dict[str, Any]) -> None:
    if mode == "crash-mid-run":
        log("panic: lost the port mid-run")
        os._exit(7)
    if mode == "killed-mid-run":
        log("about to be killed by a signal")
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        log("client.run: hanging now")
        time.sleep(3600)
    if mode == "non-json":
        log("writing garbage to stdout")
        write_line(b"this is not json {\n")
        return
    if mode == "wrong-id":
        log("answering with the wrong id")
        send({"jsonrpc": "2.0", "id": msg_id + 1000, "result": {}})
        return
    if mode == "oversized":
        log("writing a 9 MiB line")
        filler = "x" * OVERSIZED_BYTES
        write_line(b'{"jsonrpc":"2.0","id":%d,"result":"' % msg_id + filler.encode() + b'"}\n')
        return
    if mode == "stderr-noise":
        for n in range(2000):
            sys.stderr.write(f"faux: noise line {n:05d} " + "." * 80 + "\n")
        log("noise done")
    port_error = params.get("portError")
    if port_error:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {
            "code": -32001, "message": port_error.get("message", "port refused"), "data": {"kind": port_error["kind"]}}})
        return
    calls = list(params.get("hostCalls", []))
    count = params.get("waitFor", 3 if mode in ("concurrent-waitfor", "sequential-waitfor") else 0)
    calls += [{"method": "host.waitFor", "params": {"request": {"id": f"req-{n}", "kind": "tool_call"}}}
              for n in range(count)]
    answers = []
    if params.get("noWait"):  # answer the outer call while the host requests are still open
        for call in calls:
            host_request(call["method"], call.get("params"))
    elif mode == "sequential-waitfor":
        for call in calls:
            answers.append(await_answer(*host_request(call["method"], call.get("params"))))
    else:
        sent = [host_request(call["method"], call.get("params")) for call in calls]
        answers = [await_answer(*pair) for pair in sent]
    result: dict[str, Any] = {"answers": answers}
    if "echo" in params:
        result["echo"] = params["echo"]
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def initialize_result(mode: str) -> dict[str, Any]:
    if mode == "bad-handshake":
        return {"port": "faux", "language": "python", "protocolVersion": 1, "capabilities": "relay"}
    return {
        "port": "faux", "language": "python", "library": {"name": "faux-shim", "version": "0.0.1"},
        "protocolVersion": 99 if mode == "version-mismatch" else 1, "capabilities": ["relay", "stream"],
    }


def handle(mode: str, message: dict[str, Any]) -> None:
    method, msg_id = message.get("method"), message.get("id")
    if method is None:  # an answer to one of our host requests
        with _answers_lock:
            event = _answer_events.pop(str(msg_id), None)
            if event is None:
                log(f"answer with unknown id {msg_id!r}")
                return
            _answers[str(msg_id)] = {k: v for k, v in message.items() if k in ("result", "error")}
        event.set()
        return
    if method == "$/cancel":
        log(f"cancel received for id {message['params']['id']}")
        return
    if method == "initialize":
        if mode == "version-refused":
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32003, "message": "this shim speaks version 2"}})
            return
        send({"jsonrpc": "2.0", "id": msg_id, "result": initialize_result(mode)})
        if mode == "deaf":
            log("initialized; not reading stdin any more")
            threading.Event().wait()
        if mode == "exit-after-initialize":
            log("exiting right after initialize")
            time.sleep(0.05)
            os._exit(5)
        return
    if method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        log("shutting down")
        os._exit(0)
    if method == "client.run":
        threading.Thread(target=run_client, args=(mode, msg_id, message.get("params") or {}), daemon=True).start()
        return
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"method not found: {method}"}})


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "ok"
    if mode not in MODES:
        log(f"unknown mode {mode!r}")
        return 2
    if len(argv) > 3 and argv[2] == "--once":
        if os.path.exists(argv[3]):
            mode = "ok"
        else:
            open(argv[3], "w").close()
    log(f"started in mode {mode}")
    if mode == "crash-at-start":
        log("fatal: cannot load the port library")
        return 3
    for raw in sys.stdin.buffer:
        handle(mode, json.loads(raw))
    log("stdin closed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
