"""Per-scenario sessions of the fake provider and the router that dispatches to them.

Each scenario run gets a session with its own base path ``/s/<token>/v1``; the session
replays its script one turn per accepted request, records every request (accepted or
not) and every rule a request broke. Anything that cannot be served — a wrong method or
path, a missing key, a body the real API would refuse, a request past the end of the
script, an unknown session — gets an immediate error in the provider's envelope and a
recorded violation, never a hang.

Statuses: requests beyond the script get 400, not 500, because ports retry 5xx with
back-off (toolnexus-facts C11), which would only add delay and duplicate records."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from . import anthropic, openai, pairing
from .pairing import Rejection
from .records import ProviderViolation, RecordedRequest, parse_json_body, redact_headers
from .script import Script, ScriptedTurn
from .script_check import check_script
from .server import IncomingRequest, Reply

STYLES = (openai.STYLE, anthropic.STYLE)

# stable codes for what the HTTP layer and the script refuse (pairing.py has the rest)
METHOD_NOT_ALLOWED = "http.method-not-allowed"
UNKNOWN_PATH = "http.unknown-path"
UNKNOWN_SESSION = "http.unknown-session"
MISSING_API_KEY = "auth.missing-api-key"
ANTHROPIC_MISSING_VERSION = "anthropic.missing-version-header"
BEYOND_SCRIPT = "script.beyond-end"

SESSION_PREFIX = "/s/"


@dataclass(eq=False)
class Session:
    """One scenario run's view of the provider. Safe to use from many threads."""

    token: str
    style: str
    script: Script
    origin: str  # http://127.0.0.1:PORT
    requests: list[RecordedRequest] = field(default_factory=list)
    violations: list[ProviderViolation] = field(default_factory=list)
    # the reply each accepted request got, in order (what went on the wire, split included)
    replies: list[Reply] = field(default_factory=list)
    turns_served: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def root_url(self) -> str:
        """The session's base without ``/v1`` (Anthropic clients then add ``/v1/messages``)."""
        return f"{self.origin}{SESSION_PREFIX}{self.token}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def exhausted(self) -> bool:
        return self.turns_served >= len(self.script.turns)

    def bodies(self) -> list[Any]:
        """Parsed bodies of every request, in arrival order."""
        with self._lock:
            return [r.parsed for r in self.requests]

    def handle(self, incoming: IncomingRequest, subpath: str) -> Reply:
        parsed = parse_json_body(incoming.body)
        with self._lock:
            index = len(self.requests)
            record = RecordedRequest(
                index=index,
                method=incoming.method,
                path=incoming.path,
                headers=redact_headers(incoming.headers),
                body=incoming.body,
                parsed=parsed,
            )
            self.requests.append(record)
            rejection = self._check(incoming, subpath, record)
            request_id = f"req_fake_{self.token}_{index}"
            if rejection is not None:
                self.violations.append(
                    ProviderViolation(rejection.code, rejection.message, index, rejection.status)
                )
                reply = error_reply(self.style, rejection, request_id)
            else:
                # _check turned away every body that is not a well-formed JSON request object
                assert isinstance(parsed, dict), "an accepted request has a JSON object body"
                turn_index = self.turns_served
                self.turns_served += 1
                reply = with_request_id(self.style, self._render(turn_index, parsed), request_id)
                self.replies.append(reply)
            record.status = reply.status
        return reply

    def _check(
        self, incoming: IncomingRequest, subpath: str, record: RecordedRequest
    ) -> Rejection | None:
        endpoint = "/v1" + (openai.ENDPOINT if self.style == openai.STYLE else anthropic.ENDPOINT)
        if subpath != endpoint:
            return not_found(self.style, incoming)
        if incoming.method != "POST":
            return Rejection(
                METHOD_NOT_ALLOWED, f"Method Not Allowed: {incoming.method}", status=405
            )
        raw_headers = {name.lower(): value for name, value in incoming.headers}
        header_problem = _header_rejection(self.style, raw_headers)
        if header_problem is not None:
            return header_problem
        if record.parsed is None:
            return pairing.invalid_json(self.style)
        check = pairing.check_openai if self.style == openai.STYLE else pairing.check_anthropic
        found = check(record.parsed)
        if found:
            return found[0]
        if self.exhausted:
            return Rejection(
                BEYOND_SCRIPT,
                f"fake provider: request {record.index} asks for model turn "
                f"{self.turns_served + 1}, but the script has only "
                f"{len(self.script.turns)} turn(s)",
            )
        return None

    def _render(self, turn_index: int, body: dict[str, Any]) -> Reply:
        turn = self.script.turns[turn_index]
        model = body["model"]
        stream = body.get("stream") is True
        if self.style == openai.STYLE:
            response_id = f"chatcmpl-fake-{self.token}-{turn_index}"
            if stream:
                return _split(
                    turn,
                    Reply.sse(openai.completion_events(turn, model, response_id, openai.wants_usage(body))),
                )
            return Reply.json(200, openai.completion(turn, model, response_id))
        message_id = f"msg_fake_{self.token}_{turn_index}"
        if stream:
            return _split(turn, Reply.sse(anthropic.message_events(turn, model, message_id)))
        return Reply.json(200, anthropic.message(turn, model, message_id))


def _split(turn: ScriptedTurn, reply: Reply) -> Reply:
    """The stream cut where the turn's ``wire.split`` says, pausing between pieces."""
    split = turn.wire.split
    if split is None or reply.events is None:
        return reply
    return replace(reply, events=split.pieces(reply.events), pause_s=split.pause_ms / 1000)


@dataclass(eq=False)
class SessionRegistry:
    """Creates sessions and routes each HTTP request to its session (the server's router).
    Requests that match no session are kept in ``unrouted`` with their ``violations``."""

    origin: Callable[[], str]
    unrouted: list[RecordedRequest] = field(default_factory=list)
    violations: list[ProviderViolation] = field(default_factory=list)
    _sessions: dict[str, Session] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def create(self, script: Script, style: str) -> Session:
        if style not in STYLES:
            raise ValueError(f"unknown provider style {style!r}; expected one of {STYLES}")
        check_script(script, style)  # everything the session would fail on mid-run
        with self._lock:
            token = secrets.token_hex(6)
            while token in self._sessions:
                token = secrets.token_hex(6)
            session = Session(token=token, style=style, script=script, origin=self.origin())
            self._sessions[token] = session
        return session

    def end(self, session: Session) -> None:
        """Forget a session; later requests to it are unknown-session violations."""
        with self._lock:
            self._sessions.pop(session.token, None)

    @property
    def live(self) -> int:
        with self._lock:
            return len(self._sessions)

    def route(self, incoming: IncomingRequest) -> Reply:
        token, subpath = _split_session_path(incoming.path)
        with self._lock:
            session = self._sessions.get(token) if token else None
        if session is not None:
            return session.handle(incoming, subpath)
        return self._unrouted(incoming)

    def _unrouted(self, incoming: IncomingRequest) -> Reply:
        # no session means no style: guess it from the path so the client can parse the error
        style = anthropic.STYLE if incoming.path.endswith(anthropic.ENDPOINT) else openai.STYLE
        with self._lock:
            index = len(self.unrouted)
            self.unrouted.append(
                RecordedRequest(
                    index=index,
                    method=incoming.method,
                    path=incoming.path,
                    headers=redact_headers(incoming.headers),
                    body=incoming.body,
                    parsed=parse_json_body(incoming.body),
                    status=404,
                )
            )
            rejection = not_found(style, incoming, code=UNKNOWN_SESSION)
            self.violations.append(
                ProviderViolation(rejection.code, rejection.message, index, rejection.status)
            )
        return error_reply(style, rejection, f"req_fake_unrouted_{index}")


def not_found(style: str, incoming: IncomingRequest, code: str = UNKNOWN_PATH) -> Rejection:
    if style == openai.STYLE:
        return Rejection(code, f"Invalid URL ({incoming.method} {incoming.path})", status=404)
    return Rejection(code, "Not Found", status=404, error_type="not_found_error")


def error_reply(style: str, rejection: Rejection, request_id: str) -> Reply:
    if style == openai.STYLE:
        envelope = openai.error_envelope(
            rejection.message, rejection.error_type, rejection.param, rejection.error_code
        )
    else:
        envelope = anthropic.error_envelope(rejection.message, rejection.error_type, request_id)
    return with_request_id(style, Reply.json(rejection.status, envelope), request_id)


def with_request_id(style: str, reply: Reply, request_id: str) -> Reply:
    """The reply with the request-id header its provider sends on every response (OpenAI
    ``x-request-id``, Anthropic ``request-id``; the SDKs expose it as ``_request_id``)."""
    name = openai.REQUEST_ID_HEADER if style == openai.STYLE else anthropic.REQUEST_ID_HEADER
    return replace(reply, headers=(*reply.headers, (name, request_id)))


def _header_rejection(style: str, headers: dict[str, str]) -> Rejection | None:
    if style == openai.STYLE:
        scheme, _, key = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            return Rejection(
                MISSING_API_KEY,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                status=401,
            )
        return None
    # The Messages API takes the key as x-api-key (the API reference's header) or as
    # Authorization: Bearer (what anthropic 2.x sends by default).
    scheme, _, bearer = headers.get("authorization", "").partition(" ")
    if not headers.get("x-api-key", "").strip() and not (scheme.lower() == "bearer" and bearer.strip()):
        return Rejection(
            MISSING_API_KEY,
            "x-api-key header is required",
            status=401,
            error_type="authentication_error",
        )
    if not headers.get("anthropic-version"):
        return Rejection(ANTHROPIC_MISSING_VERSION, "anthropic-version: header is required")
    return None


def _split_session_path(path: str) -> tuple[str | None, str]:
    """``/s/<token>/rest`` -> (token, "/rest"); anything else -> (None, path)."""
    if not path.startswith(SESSION_PREFIX):
        return None, path
    token, slash, rest = path[len(SESSION_PREFIX) :].partition("/")
    return (token or None), slash + rest
