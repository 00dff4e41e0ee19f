"""The reference shim with one transport fault injected into one variant's ``client.run``.

``python tests/faults/fault_shim.py FAULT TARGET [--pidfile FILE]``

It is ``tests/plugin/broken_shim.py`` (the reference shim, its targeting, its modes) plus
transport faults. TARGET is ``scenario[variant]``; every other call is
served by the reference shim. Faults that start a helper process write its pid to FILE, so
a test can check that the helper was ended with the shim.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any


def _load_broken_shim() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "plugin" / "broken_shim.py"
    spec = importlib.util.spec_from_file_location("broken_shim", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


broken = _load_broken_shim()

# fault -> broken_shim mode it reuses
REUSED = {"crash": "crash-mid-run", "wrong-id": "wrong-id", "non-json": "non-json"}
NEW = (
    "exit", "half-line", "late-answer", "invalid-utf8", "callbacks-10000", "stop-reading",
    "exit-grandchild-holds-stdout", "setsid-grandchild", "unknown-host-method", "api-key-leak",
)
FAULTS = (*REUSED, *NEW)
CALLBACKS = 10_000
FLOOD = 3_000  # host answers of ~60 bytes each: three times a 64 KiB pipe
LATE_S = 3.0

# A helper that leaves the shim's session and process group, like a daemon would, and
# sleeps far longer than any test; it writes its pid where the test can find it.
DAEMON = """
import os, sys, time
os.setsid()
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(300)
"""
# The same, but double-forked first, so its parent (and not only the shim) is gone too.
ORPHAN = """
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(300)
"""

_deaf = threading.Event()


class _DeafStdin:
    """stdin that stops being read (for good) once ``_deaf`` is set: the pipe then fills."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __iter__(self) -> Iterator[str]:
        for line in self._real:
            yield line
            if _deaf.is_set():
                threading.Event().wait()


def _spawn(code: str, pidfile: str, *, holds_stdout: bool) -> None:
    out = None if holds_stdout else subprocess.DEVNULL
    subprocess.Popen([sys.executable, "-c", code, pidfile], stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    deadline = time.monotonic() + 10
    while not (os.path.exists(pidfile) and os.path.getsize(pidfile)) and time.monotonic() < deadline:
        time.sleep(0.01)


def _raw(line: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


async def inject(shim: ModuleType, instance: Any, fault: str, message: dict[str, Any], pidfile: str) -> bool:
    """Misbehave for this ``client.run``; True when it is handled (nothing else to send)."""
    rid, params = message.get("id"), message.get("params") or {}
    broken.log(f"fault {fault} during client.run of {params.get('scenario')}[{params.get('variant')}]")
    if fault in REUSED:
        return bool(broken.misbehave(shim, REUSED[fault], message))
    if fault == "exit":
        os._exit(0)
    if fault == "half-line":
        _raw(b'{"jsonrpc":"2.0","id":')
        os._exit(0)
    if fault == "invalid-utf8":
        _raw(b'{"jsonrpc":"2.0","id":%d,"result":"\xff\xfe"}\n' % rid)
        return True
    if fault == "late-answer":
        await asyncio.sleep(LATE_S)
        return False
    if fault == "callbacks-10000":
        store = [instance.channel.request("host.store.get", {"id": "fault-probe"}) for _ in range(CALLBACKS)]
        answers = await asyncio.gather(*store)
        broken.log(f"{len(answers)} callbacks answered")
        return False
    if fault == "stop-reading":
        _deaf.set()
        for n in range(FLOOD):
            instance.channel.send({"jsonrpc": "2.0", "id": f"flood-{n}", "method": "host.store.get", "params": {"id": "x"}})
        await asyncio.Event().wait()  # never answers, never reads again
    if fault == "exit-grandchild-holds-stdout":
        _spawn(DAEMON, pidfile, holds_stdout=True)
        broken.log("exiting; my grandchild keeps my stdout open")
        os._exit(7)
    if fault == "setsid-grandchild":
        _spawn(ORPHAN, pidfile, holds_stdout=False)
        return False  # serve the run normally: the orphan must still end with the shim
    if fault == "unknown-host-method":
        try:
            await instance.channel.request("host.nosuch", {"probe": True})
        except shim.HostError as exc:
            broken.log(f"host.nosuch was refused: {exc}")
        return False
    if fault == "api-key-leak":
        key = params.get("apiKey")
        broken.log(f"connecting with api key {key}")
        await asyncio.sleep(0.5)  # the harness drains stderr on a thread: let the line arrive before the answer
        # A port error is data (recorded, compared, kept in --artifacts): the key must not ride along.
        error = {"code": -32001, "message": f"key {key} rejected", "data": {"kind": "provider", "key": key}}
        instance.channel.send({"jsonrpc": "2.0", "id": rid, "error": error})
        return True
    raise AssertionError(fault)


def install(shim: ModuleType, fault: str, target: str, pidfile: str) -> None:
    original = shim._dispatch

    async def dispatch(instance: Any, handlers: dict[str, Any], message: dict[str, Any]) -> None:
        shim.channel_send = instance.channel.send
        hit = message.get("method") == "client.run" and broken.targeted(target, message.get("params") or {})
        if hit and await inject(shim, instance, fault, message, pidfile):
            return
        await original(instance, handlers, message)

    shim._dispatch = dispatch


def main(argv: list[str]) -> int:
    args = argv[1:]
    pidfile = os.devnull
    if "--pidfile" in args:
        at = args.index("--pidfile")
        pidfile, args = args[at + 1], args[:at] + args[at + 2 :]
    if len(args) != 2 or args[0] not in FAULTS:
        broken.log(f"usage: fault_shim.py FAULT SCENARIO[VARIANT] [--pidfile FILE]; faults: {', '.join(FAULTS)}")
        return 2
    fault, target = args
    shim = broken.load_reference_shim()
    if fault == "stop-reading":
        sys.stdin = _DeafStdin(sys.stdin)  # type: ignore[assignment]
    install(shim, fault, target, pidfile)
    asyncio.run(shim.serve(relay=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
