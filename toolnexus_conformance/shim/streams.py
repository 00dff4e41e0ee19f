"""What crossed a shim's pipes: the bounded stderr tail and the JSON-RPC line transcript.

:class:`StderrTail` drains stderr continuously (a shim must never block on a full pipe) and
keeps only the last bytes for error messages. :class:`Transcript` keeps every stdin/stdout
line in order, plus lifecycle notes, so ``--artifacts`` can dump a failing exchange.
Both pass through one :class:`Redactor`, so the API key the harness hands the shim never
reaches an error message, a report or an artifact, whoever echoes it back.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

# Members of the shim protocol that carry a credential (SPEC §6: client.run's apiKey).
SECRET_MEMBERS = frozenset({"apiKey"})
REDACTED = "<redacted>"
MIN_SECRET_CHARS = 8  # shorter values would redact ordinary words


class Redactor:
    """Learns the secrets in outgoing messages and blanks them out of any text kept."""

    def __init__(self) -> None:
        self._secrets: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def learn(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if not isinstance(params, dict):
            return
        found = {v for k, v in params.items() if k in SECRET_MEMBERS and isinstance(v, str) and len(v) >= MIN_SECRET_CHARS}
        if found - self._secrets:
            with self._lock:
                self._secrets = self._secrets | found

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def scrub_json(self, value: Any) -> Any:
        """``value`` with every secret blanked out of every string in it."""
        if not self._secrets or value is None:
            return value
        return json.loads(self.scrub(json.dumps(value, ensure_ascii=False)))


class StderrTail:
    """Drains a shim's stderr so it can never block on a full pipe; keeps the last bytes."""

    def __init__(self, limit: int, redactor: Redactor | None = None) -> None:
        self._limit = limit
        self._redactor = redactor or Redactor()
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
            text = self._buf.decode("utf-8", errors="replace")
        return self._redactor.scrub(text)


class Transcript:
    """Every line that crossed the pipe, in order: ("out"|"in", line) plus ("event", note).

    ``keep=False`` keeps nothing, for a caller that never shows it: a differential search's
    sessions serve thousands of runs, and keeping every line would grow with each of them
    until the search ended."""

    def __init__(self, redactor: Redactor | None = None, *, keep: bool = True) -> None:
        self.entries: list[tuple[str, str]] = []
        self.redactor = redactor or Redactor()
        self.keep = keep

    def record(self, direction: str, line: bytes) -> None:
        if self.keep:
            text = line.decode("utf-8", errors="replace").rstrip("\n")
            self.entries.append((direction, self.redactor.scrub(text)))

    def event(self, note: str) -> None:
        if self.keep:
            self.entries.append(("event", self.redactor.scrub(note)))

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
