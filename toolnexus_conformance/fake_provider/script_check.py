"""Everything a session would fail on mid-run, checked when the session is created (and when a
scenario file is loaded), so a script mistake is refused up front with the field named
instead of surfacing as an HTTP 500 a port retries.

What parsing (script.py, wire.py) cannot see alone is checked here, per provider style:
Anthropic sends each call's ``input`` as a parsed object, so every argument text must be a
JSON object; an Anthropic extra event is sent under an ``event:`` line named after its
``type``, which must be a plain ASCII word; and a split may cut a turn's stream into at most
``wire.MAX_PIECES`` pieces, counted on the stream as rendered for a model name of
``MODEL_NAME_BOUND`` characters (a longer name only lengthens the stream: the pieces past
the limit are then sent as one, see ``ScriptedSplit.pieces``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import anthropic, openai
from .script import Script, ScriptedTurn
from .script_error import ScriptError
from .wire import MAX_PIECES

# The model name the split check renders with; scenario models are far shorter.
MODEL_NAME_BOUND = 64
# as long as the ids sessions.py gives (a 12-digit token, a turn number)
_PLACEHOLDER_ID = "fake-000000000000-000"
_EVENT_NAME = re.compile(r"[A-Za-z0-9_.:-]+")


def check_script(script: Script, style: str, where: str = "turn") -> None:
    """Raises ScriptError (naming ``turn[i]`` and the field) for what ``style`` cannot serve."""
    for i, turn in enumerate(script.turns):
        where_turn = f"{where}[{i}]"
        if style == anthropic.STYLE:
            for j, call in enumerate(turn.tool_calls):
                try:
                    call.parsed_arguments()
                except ScriptError as exc:
                    raise ScriptError(f"{where_turn}.toolCalls[{j}].arguments: {exc}") from None
            for j, event in enumerate(turn.extra.events):
                name = event.get("type", "unknown")
                if not isinstance(name, str) or _EVENT_NAME.fullmatch(name) is None:
                    raise ScriptError(
                        f"{where_turn}.extra.extraEvents[{j}].type: an Anthropic event is sent as 'event: <type>', "
                        f"so its type must be a plain ASCII word, not {name!r}"
                    )
        if turn.wire.split is not None:
            # an OpenAI stream may end with a usage chunk or not; an Anthropic one has one form
            usages = (False, True) if style == openai.STYLE else (False,)
            count = max(_pieces(turn, style, usage) for usage in usages)
            if count > MAX_PIECES:
                raise ScriptError(
                    f"{where_turn}.wire.split: cuts this turn's {style} stream into {count} pieces; at most {MAX_PIECES} "
                    "(cut less often: a larger every, fewer at offsets)"
                )


def check_neutral(turns: Sequence[Mapping[str, Any]], styles: Iterable[str], where: str = "turn") -> Script:
    """The script of neutral ``turns``, checked for every style in ``styles``; ``where``
    names the list in errors (a scenario's ``turns`` or ``resume.turns``)."""
    script = Script.from_neutral(turns, where)
    for style in styles:
        check_script(script, style, where)
    return script


def _pieces(turn: ScriptedTurn, style: str, include_usage: bool) -> int:
    model = "m" * MODEL_NAME_BOUND
    if style == openai.STYLE:
        events = openai.completion_events(turn, model, f"chatcmpl-{_PLACEHOLDER_ID}", include_usage)
    else:
        events = anthropic.message_events(turn, model, f"msg_{_PLACEHOLDER_ID}")
    assert turn.wire.split is not None
    return len(turn.wire.split.boundaries(b"".join(events))) + 1
