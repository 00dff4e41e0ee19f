"""``FakeProvider``: the fake LLM provider as one object a test or the harness holds —
an HTTP server on 127.0.0.1 plus its registry of per-scenario sessions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from .records import ProviderViolation, RecordedRequest
from .script import Script
from .server import LoopbackHttpServer
from .sessions import Session, SessionRegistry


class FakeProvider:
    """Use as a context manager (or call start/stop). ``nodelay=False`` only exists for
    the latency benchmark; see server.py."""

    def __init__(self, nodelay: bool = True) -> None:
        self._registry = SessionRegistry(origin=lambda: self.base_url)
        self._http = LoopbackHttpServer(self._registry.route, nodelay=nodelay)

    def start(self) -> FakeProvider:
        self._http.start()
        return self

    def stop(self) -> None:
        self._http.stop()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def host(self) -> str:
        return self._http.host

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def base_url(self) -> str:
        """The server's origin, ``http://127.0.0.1:PORT``; sessions live under it."""
        return f"http://{self.host}:{self.port}"

    def session(
        self, script: Script | Sequence[Mapping[str, Any]], style: str
    ) -> Session:
        """A new session replaying ``script`` (a Script or the neutral list of turns) in
        ``style`` ("openai" or "anthropic"). Raises ScriptError for a bad script."""
        if not isinstance(script, Script):
            script = Script.from_neutral(script)
        return self._registry.create(script, style)

    def end_session(self, session: Session) -> None:
        self._registry.end(session)

    @property
    def live_sessions(self) -> int:
        """Sessions started and not ended: each keeps its requests and replies."""
        return self._registry.live

    @property
    def unrouted_requests(self) -> list[RecordedRequest]:
        """Requests that matched no session (each also has a violation below)."""
        return self._registry.unrouted

    @property
    def violations(self) -> list[ProviderViolation]:
        """Violations of requests that matched no session."""
        return self._registry.violations

    @property
    def internal_errors(self) -> list[str]:
        """Fake-provider bugs (the client got a 500); a harness run should assert none."""
        return self._http.internal_errors
