"""What crossed a shim's pipes: the bounded stderr tail and the JSON-RPC line transcript.

:class:`StderrTail` drains stderr continuously (a shim must never block on a full pipe) and
keeps only the last bytes for error messages. :class:`Transcript` keeps every stdin/stdout
line in order, plus lifecycle notes, so ``--artifacts`` can dump a failing exchange.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO


class StderrTail:
    """Drains a shim's stderr so it can never block on a full pipe; keeps the last bytes."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._eof = threading.Event()

    def drain(self, stream: IO[bytes]) -> None:
        try:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]
                with self._lock:
                    self._buf += chunk
                    if len(self._buf) > self._limit:
                        del self._buf[: len(self._buf) - self._limit]
        except (OSError, ValueError):
            pass
        finally:
            self._eof.set()

    def wait_for_eof(self, timeout: float) -> None:
        self._eof.wait(timeout)

    def text(self) -> str:
        with self._lock:
            return self._buf.decode("utf-8", errors="replace")


class Transcript:
    """Every line that crossed the pipe, in order: ("out"|"in", line) plus ("event", note)."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []

    def record(self, direction: str, line: bytes) -> None:
        self.entries.append((direction, line.decode("utf-8", errors="replace").rstrip("\n")))

    def event(self, note: str) -> None:
        self.entries.append(("event", note))

    def mark(self) -> int:
        """A position to slice from, e.g. at the start of one test."""
        return len(self.entries)

    def since(self, mark: int = 0) -> list[tuple[str, str]]:
        return self.entries[mark:]

    def dump(self, path: str | Path, since: int = 0) -> None:
        """Write the entries as JSON lines ``{"direction": …, "line": …}`` (for ``--artifacts``)."""
        with open(path, "w", encoding="utf-8") as out:
            for direction, line in self.entries[since:]:
                out.write(json.dumps({"direction": direction, "line": line}, ensure_ascii=False) + "\n")
