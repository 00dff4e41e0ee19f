"""A headless Chromium driven over the DevTools protocol, for the tests that open a page the
harness writes (tests/test_parity_html.py).

Chromium speaks the protocol over a pair of pipes (``--remote-debugging-pipe``: it reads
NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4), so no websocket
client and no port are needed. The browser runs with a fresh profile, no network features
and no sandbox (tests run as root in containers). Closing asks it to quit, then kills its
whole process group: Chromium's helpers (renderer, crashpad) outlive a killed parent and keep
writing to the profile, so the profile is removed only once none of them is left.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
)
REPLY_TIMEOUT_S = 30.0


def chromium() -> str | None:
    """The Chromium program, if one is installed (Debian: apt-get install chromium)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(Exception):
    pass


class Browser:
    """One Chromium process and one page in it; ``events`` keeps every event seen."""

    def __init__(self, program: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="cdp-profile-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_pipes() -> None:  # in the child: fd 3 commands in, fd 4 replies out
            commands, replies = os.dup(to_child_r), os.dup(from_child_w)  # neither may be 3 or 4 now
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self._process = subprocess.Popen(
            [program, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire_pipes,  # noqa: PLW1509 - only dup2 before exec
            close_fds=False,  # fds 3 and 4 exist only in the child, made by wire_pipes
            start_new_session=True,  # its helpers share its process group, so close() reaches them
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self.send("Browser.close", page=False)
                self._process.wait(timeout=10)
            except (BrowserError, OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self._process.pid, signal.SIGKILL)  # helpers left behind by the browser
        except ProcessLookupError:
            pass
        self._process.wait(timeout=30)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._process.stderr is not None:
            self._process.stderr.close()
        self._remove_profile()

    def _remove_profile(self) -> None:
        """The profile gone; a helper still exiting may write a last file, so try again briefly."""
        deadline = time.monotonic() + 10
        while True:
            try:
                shutil.rmtree(self._profile)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def send(self, method: str, params: dict[str, Any] | None = None, *, page: bool = True) -> dict[str, Any]:
        """A command and its result (to the page's session unless ``page`` is false)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if page and self.session is not None:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def open(self, url: str) -> None:
        """A new page, attached, with its exceptions and console recorded, then ``url`` loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, page=False)
        attached = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, page=False)
        self.session = attached["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Log.enable")
        self.send("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Uncaught exceptions, console errors and error log entries the page produced."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(str(params["entry"].get("text")))
        return found

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or self._process.poll() is not None:
                raise BrowserError(f"no reply from Chromium (exit code {self._process.poll()})")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 16)
                if not chunk:
                    raise BrowserError("Chromium closed its DevTools pipe")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(line))


def file_url(path: Path) -> str:
    return path.resolve().as_uri()
