"""The request checks the real providers enforce, as pure functions over a parsed body.

Each check returns ``Rejection``s: a stable rule code (assert on this, never on text),
the provider's own error text (verbatim where public reports quote it; see
ecosystem.md §8) and the status and error fields of its envelope. A real API reports
one error per request; the fake provider answers with the first rejection found and
records it.

OpenAI: the tool messages answering an assistant's ``tool_calls`` must follow it
directly, before any other message; a tool message must answer such a call.
Anthropic: every ``tool_use`` of assistant message k needs its ``tool_result`` in user
message k+1, those results come first in that message, and every ``tool_result`` must
answer a ``tool_use`` of the message before it."""

from __future__ import annotations

from typing import Any

from . import request_rules
from .rejection import Rejection

# stable rule codes
BODY_INVALID_JSON = "request.invalid-json"
BODY_NOT_OBJECT = "request.body-not-object"
MISSING_MODEL = "request.missing-model"
MISSING_MESSAGES = "request.missing-messages"
BAD_MESSAGE = "request.bad-message"
ANTHROPIC_MISSING_MAX_TOKENS = "anthropic.missing-max-tokens"
OPENAI_EMPTY_TOOL_CALLS = "openai.empty-tool-calls"
OPENAI_UNANSWERED_CALLS = "openai.tool-calls-unanswered"
OPENAI_ORPHAN_TOOL_MESSAGE = "openai.orphan-tool-message"
ANTHROPIC_UNANSWERED_TOOL_USE = "anthropic.tool-use-unanswered"
ANTHROPIC_RESULTS_NOT_FIRST = "anthropic.tool-result-not-first"
ANTHROPIC_ORPHAN_TOOL_RESULT = "anthropic.orphan-tool-result"

_OPENAI_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
_ANTHROPIC_ROLES = ("user", "assistant", "system")


def check_openai(body: Any) -> list[Rejection]:
    """Shape first, then the documented parameters (request_rules.py); the pairing rules
    only run on a well-formed request."""
    shape = _openai_shape(body)
    if shape:
        return shape
    documented = request_rules.check_openai_request(body)
    return [documented] if documented is not None else openai_pairing(body["messages"])


def check_anthropic(body: Any) -> list[Rejection]:
    shape = _anthropic_shape(body)
    if shape:
        return shape
    documented = request_rules.check_anthropic_request(body)
    return [documented] if documented is not None else anthropic_pairing(body["messages"])


def invalid_json(style: str) -> Rejection:
    if style == "openai":
        text = "We could not parse the JSON body of your request."
    else:
        text = "Request body is not valid JSON."
    return Rejection(BODY_INVALID_JSON, text)


def openai_pairing(messages: list[dict[str, Any]]) -> list[Rejection]:
    found: list[Rejection] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "assistant" and "tool_calls" in msg:
            calls = msg["tool_calls"]
            if not isinstance(calls, list) or not calls:
                found.append(
                    Rejection(
                        OPENAI_EMPTY_TOOL_CALLS,
                        f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array "
                        "with minimum length 1, but got an empty array instead.",
                        param=f"messages[{i}].tool_calls",
                        error_code="empty_array",
                    )
                )
                continue
            after = i + 1
            answered: set[Any] = set()
            while after < len(messages) and messages[after].get("role") == "tool":
                answered.add(messages[after].get("tool_call_id"))
                after += 1
            missing = [_call_id(c) for c in calls if _call_id(c) not in answered]
            if missing:
                # param names the message where a tool message was still expected
                where = after if after < len(messages) else i
                found.append(
                    Rejection(
                        OPENAI_UNANSWERED_CALLS,
                        "An assistant message with 'tool_calls' must be followed by tool "
                        "messages responding to each 'tool_call_id'. The following "
                        f"tool_call_ids did not have response messages: {', '.join(map(str, missing))}",
                        param=f"messages.[{where}].role",
                    )
                )
        elif role == "tool" and msg.get("tool_call_id") not in _open_call_ids(messages, i):
            found.append(
                Rejection(
                    OPENAI_ORPHAN_TOOL_MESSAGE,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            )
    return found


def anthropic_pairing(messages: list[dict[str, Any]]) -> list[Rejection]:
    found: list[Rejection] = []
    for k, msg in enumerate(messages):
        if msg.get("role") == "user":
            found.extend(_orphan_results(messages, k))
        uses = _tool_use_ids(msg)
        if not uses:
            continue
        following = messages[k + 1] if k + 1 < len(messages) else {}
        blocks = _blocks(following) if following.get("role") == "user" else []
        result_ids = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        missing = [u for u in uses if u not in result_ids]
        if missing:
            found.append(
                Rejection(
                    ANTHROPIC_UNANSWERED_TOOL_USE,
                    f"messages.{k + 1}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(map(str, missing))}. Each "
                    "`tool_use` block must have a corresponding `tool_result` block in "
                    "the next message.",
                )
            )
            continue
        leading = 0
        while leading < len(blocks) and blocks[leading].get("type") == "tool_result":
            leading += 1
        if leading < len(uses):
            found.append(
                Rejection(
                    ANTHROPIC_RESULTS_NOT_FIRST,
                    f"messages.{k + 1}: Did not find {len(uses)} tool_result block(s) at the "
                    "beginning of this message. Messages following tool_use blocks must "
                    "begin with a matching number of tool_result blocks.",
                )
            )
    return found


def _orphan_results(messages: list[dict[str, Any]], k: int) -> list[Rejection]:
    previous = messages[k - 1] if k > 0 else {}
    known = set(_tool_use_ids(previous)) if previous.get("role") == "assistant" else set()
    found: list[Rejection] = []
    for j, block in enumerate(_blocks(messages[k])):
        if block.get("type") == "tool_result" and block.get("tool_use_id") not in known:
            found.append(
                Rejection(
                    ANTHROPIC_ORPHAN_TOOL_RESULT,
                    f"messages.{k}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                    "block must have a corresponding `tool_use` block in the previous "
                    "message.",
                )
            )
    return found


def _open_call_ids(messages: list[dict[str, Any]], i: int) -> set[Any]:
    """The call ids a tool message at i may answer: those of the assistant message just
    before the run of tool messages that i belongs to."""
    k = i - 1
    while k >= 0 and messages[k].get("role") == "tool":
        k -= 1
    if k < 0 or messages[k].get("role") != "assistant":
        return set()
    calls = messages[k].get("tool_calls")
    return {_call_id(c) for c in calls} if isinstance(calls, list) else set()


def _call_id(call: Any) -> Any:
    return call.get("id") if isinstance(call, dict) else None


def _blocks(msg: dict[str, Any]) -> list[dict[str, Any]]:
    content = msg.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def _tool_use_ids(msg: dict[str, Any]) -> list[Any]:
    if msg.get("role") != "assistant":
        return []
    return [b.get("id") for b in _blocks(msg) if b.get("type") == "tool_use"]


def _openai_shape(body: Any) -> list[Rejection]:
    if not isinstance(body, dict):
        return [Rejection(BODY_NOT_OBJECT, "The request body must be a JSON object.")]
    if not isinstance(body.get("model"), str) or not body["model"]:
        return [Rejection(MISSING_MODEL, "you must provide a model parameter")]
    messages = body.get("messages")
    if not isinstance(messages, list):
        return [
            Rejection(
                MISSING_MESSAGES,
                "Missing required parameter: 'messages'.",
                param="messages",
                error_code="missing_required_parameter",
            )
        ]
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in _OPENAI_ROLES:
            role = msg.get("role") if isinstance(msg, dict) else None
            supported = ", ".join(f"'{r}'" for r in _OPENAI_ROLES)
            return [
                Rejection(
                    BAD_MESSAGE,
                    f"Invalid value: '{role}'. Supported values are: {supported}.",
                    param=f"messages[{i}].role",
                    error_code="invalid_value",
                )
            ]
    return []


def _anthropic_shape(body: Any) -> list[Rejection]:
    if not isinstance(body, dict):
        return [Rejection(BODY_NOT_OBJECT, "Input should be a valid dictionary")]
    missing = [
        (key, code)
        for key, code, ok in (
            ("model", MISSING_MODEL, isinstance(body.get("model"), str) and body["model"]),
            ("messages", MISSING_MESSAGES, isinstance(body.get("messages"), list)),
            (
                "max_tokens",
                ANTHROPIC_MISSING_MAX_TOKENS,
                isinstance(body.get("max_tokens"), int)
                and not isinstance(body.get("max_tokens"), bool),
            ),
        )
        if not ok
    ]
    if missing:
        key, code = missing[0]
        return [Rejection(code, f"{key}: Field required")]
    for i, msg in enumerate(body["messages"]):
        # Source: anthropic.types.MessageParam, a user, assistant or system message.
        if not isinstance(msg, dict) or msg.get("role") not in _ANTHROPIC_ROLES:
            return [Rejection(BAD_MESSAGE, f"messages.{i}.role: Input should be 'user', 'assistant' or 'system'")]
    return []
