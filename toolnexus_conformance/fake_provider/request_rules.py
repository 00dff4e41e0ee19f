"""What the real APIs refuse in a request body besides tool pairing (pairing.py): parameters
neither API documents, required keys that are missing, lists that must hold at least one
item, values out of their documented range, and keys that only make sense beside another.

Every refusal says where it comes from. The sources are the providers' API references
(OpenAI "Create chat completion", Anthropic "Messages") and the official SDKs' typed request
parameters, which are generated from the providers' published request schemas:
``openai.types.chat.completion_create_params`` and its message param types (openai 3.60),
``anthropic.types.message_create_params`` and its block and tool param types (anthropic
2.16). ``tests/fake_provider/test_sdk_request_types.py`` checks the tables below against
those types, so a new SDK release that documents another parameter shows up there.

Each check returns the first ``Rejection`` found, or None. The error texts are the
providers' own where public reports quote them; the rule codes are this harness's.
"""

from __future__ import annotations

from typing import Any

from .rejection import Rejection

# stable rule codes
UNKNOWN_PARAMETER = "request.unknown-parameter"
EMPTY_MESSAGES = "request.empty-messages"
MISSING_CONTENT = "request.missing-content"
EMPTY_TOOLS = "openai.empty-tools"
TOOL_MISSING_FIELD = "request.tool-missing-field"
TOOL_CHOICE_WITHOUT_TOOLS = "request.tool-choice-without-tools"
STREAM_OPTIONS_WITHOUT_STREAM = "openai.stream-options-without-stream"
OUT_OF_RANGE = "request.out-of-range"
MISSING_TOOL_CALL_ID = "openai.missing-tool-call-id"
EMPTY_CONTENT = "anthropic.empty-content"
UNKNOWN_BLOCK_TYPE = "anthropic.unknown-block-type"

# Source: openai.types.chat.completion_create_params.CompletionCreateParamsStreaming /
# NonStreaming (the request body of POST /chat/completions), every key.
OPENAI_PARAMETERS = frozenset({
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "messages", "metadata", "modalities", "model",
    "moderation", "n", "parallel_tool_calls", "prediction", "presence_penalty",
    "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning_effort",
    "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
    "verbosity", "web_search_options",
})

# Source: anthropic.types.message_create_params.MessageCreateParamsStreaming / NonStreaming
# (the request body of POST /v1/messages), every key. anthropic 2.16 documents no
# temperature, top_k or top_p.
ANTHROPIC_PARAMETERS = frozenset({
    "cache_control", "container", "diagnostics", "inference_geo", "max_tokens", "messages",
    "metadata", "model", "output_config", "service_tier", "speed", "stop_sequences", "stream",
    "system", "thinking", "tool_choice", "tools", "user_profile_id", "workspace_id",
})

# Source: the `type` tags of anthropic.types.ContentBlockParam, the blocks a message's
# content list may hold.
ANTHROPIC_BLOCK_TYPES = (
    "text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use",
    "tool_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload",
)

# Source: the openai message param types; `content` is Required in the user, system,
# developer and tool ones, optional only for an assistant message (which may carry
# tool_calls instead) and absent from the deprecated function message's requirements.
_OPENAI_CONTENT_REQUIRED = frozenset({"system", "developer", "user", "tool"})

# Source: the SDK docstrings of these parameters ("between 0 and 2", "between 0 and 1").
_OPENAI_RANGES = {"temperature": (0, 2), "top_p": (0, 1)}


def check_openai_request(body: dict[str, Any]) -> Rejection | None:
    """Called once model and messages are known to be a string and a list of role-carrying
    objects (pairing.py checks that first)."""
    for key in body:
        if key not in OPENAI_PARAMETERS:
            # Source: the SDK's CompletionCreateParams; the API answers an undocumented
            # top-level key with this text.
            return Rejection(UNKNOWN_PARAMETER, f"Unrecognized request argument supplied: {key}")
    messages: list[dict[str, Any]] = body["messages"]
    if not messages:
        # Source: API reference, messages "A list of messages comprising the conversation"
        # (minItems 1 in the published schema).
        return _openai_empty_array("messages")
    for i, msg in enumerate(messages):
        role = msg["role"]
        if role in _OPENAI_CONTENT_REQUIRED and "content" not in msg:
            # Source: content is Required[...] in ChatCompletion{User,System,Developer,Tool}MessageParam.
            return _openai_missing(MISSING_CONTENT, f"messages[{i}].content")
        if role == "tool" and "tool_call_id" not in msg:
            # Source: tool_call_id is Required[str] in ChatCompletionToolMessageParam.
            return _openai_missing(MISSING_TOOL_CALL_ID, f"messages[{i}].tool_call_id")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list) or not tools:
            # Source: API reference, tools "A list of tools the model may call" (minItems 1).
            return _openai_empty_array("tools")
        for i, tool in enumerate(tools):
            found = _openai_tool(tool, i)
            if found is not None:
                return found
    elif "tool_choice" in body:
        # Source: API reference, tool_choice "none is the default when no tools are present";
        # the API refuses a tool_choice without tools with this text.
        return Rejection(
            TOOL_CHOICE_WITHOUT_TOOLS,
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            param="tool_choice",
        )
    if "stream_options" in body and body.get("stream") is not True:
        # Source: the SDK's stream_options docstring, "Only set this when you set `stream: true`."
        return Rejection(
            STREAM_OPTIONS_WITHOUT_STREAM,
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options",
        )
    for key, (low, high) in _OPENAI_RANGES.items():
        value = body.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not low <= value <= high:
            above = value > high
            return Rejection(
                OUT_OF_RANGE,
                f"Invalid '{key}': decimal {'above maximum' if above else 'below minimum'} value. "
                f"Expected a value {'<=' if above else '>='} {high if above else low}, but got {value} instead.",
                param=key,
                error_code="decimal_above_max_value" if above else "decimal_below_min_value",
            )
    return None


def _openai_tool(tool: Any, i: int) -> Rejection | None:
    # Source: ChatCompletionFunctionToolParam (function and type Required) and
    # FunctionDefinition (name Required).
    if not isinstance(tool, dict) or not isinstance(tool.get("function"), dict):
        return _openai_missing(TOOL_MISSING_FIELD, f"tools[{i}].function")
    if not isinstance(tool["function"].get("name"), str):
        return _openai_missing(TOOL_MISSING_FIELD, f"tools[{i}].function.name")
    return None


def _openai_empty_array(param: str) -> Rejection:
    return Rejection(
        EMPTY_MESSAGES if param == "messages" else EMPTY_TOOLS,
        f"Invalid '{param}': empty array. Expected an array with minimum length 1, but got an "
        "empty array instead.",
        param=param,
        error_code="empty_array",
    )


def _openai_missing(code: str, param: str) -> Rejection:
    return Rejection(
        code, f"Missing required parameter: '{param}'.", param=param, error_code="missing_required_parameter"
    )


def check_anthropic_request(body: dict[str, Any]) -> Rejection | None:
    """Called once model, max_tokens and messages are known to be there and messages is a
    list of role-carrying objects (pairing.py checks that first)."""
    for key in body:
        if key not in ANTHROPIC_PARAMETERS:
            # Source: the SDK's MessageCreateParams; the API validates the body strictly and
            # answers an undocumented key in pydantic's words.
            return Rejection(UNKNOWN_PARAMETER, f"{key}: Extra inputs are not permitted")
    if body["max_tokens"] < 0:
        # Source: the SDK's max_tokens docstring: 0 is allowed ("Set to `0` to populate the
        # prompt cache without generating a response"), below it is not.
        return Rejection(OUT_OF_RANGE, "max_tokens: Input should be greater than or equal to 0")
    messages: list[dict[str, Any]] = body["messages"]
    if not messages:
        # Source: API reference, messages "Input messages" ("you can specify a single
        # user-role message" at least); the API refuses an empty list with this text.
        return Rejection(EMPTY_MESSAGES, "messages: at least one message is required")
    for i, msg in enumerate(messages):
        found = _anthropic_content(msg, i, last=i == len(messages) - 1)
        if found is not None:
            return found
    tools = body.get("tools")
    if tools is not None:
        for i, tool in enumerate(tools if isinstance(tools, list) else []):
            # Source: ToolParam (name and input_schema Required) for a custom tool, the one
            # whose type is absent, null or "custom"; server tools have a dated type instead.
            if isinstance(tool, dict) and tool.get("type") in (None, "custom"):
                for field in ("name", "input_schema"):
                    if field not in tool:
                        return Rejection(TOOL_MISSING_FIELD, f"tools.{i}.custom.{field}: Field required")
    elif "tool_choice" in body:
        # Source: API reference, tool_choice "How the model should use the provided tools";
        # the API refuses it without tools with this text.
        return Rejection(TOOL_CHOICE_WITHOUT_TOOLS, "tool_choice may only be specified while providing tools.")
    return None


def _anthropic_content(msg: dict[str, Any], i: int, last: bool) -> Rejection | None:
    # Source: UserMessageParam / AssistantMessageParam (content Required: a string or a list
    # of ContentBlockParam). Only a final assistant message (a prefill) may be empty.
    if "content" not in msg:
        return Rejection(MISSING_CONTENT, f"messages.{i}.content: Field required")
    content = msg["content"]
    if not isinstance(content, (str, list)):
        return Rejection(MISSING_CONTENT, f"messages.{i}.content: Input should be a valid list")
    if not content and not (last and msg.get("role") == "assistant"):
        return Rejection(
            EMPTY_CONTENT,
            f"messages.{i}: all messages must have non-empty content except for the optional "
            "final assistant message",
        )
    for j, block in enumerate(content if isinstance(content, list) else []):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in ANTHROPIC_BLOCK_TYPES:
            expected = ", ".join(f"'{t}'" for t in ANTHROPIC_BLOCK_TYPES)
            return Rejection(
                UNKNOWN_BLOCK_TYPE,
                f"messages.{i}.content.{j}: Input tag '{kind}' found using 'type' does not match any "
                f"of the expected tags: {expected}",
            )
    return None
