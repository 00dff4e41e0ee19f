"""What the differential generator draws beyond well-formed happy paths: the contract's
error paths, its construction guards and hosts that observe concurrency.

Every choice here takes the plain case first (differential/choices.py), so hypothesis shrinks a variation away when it
is not what makes a port differ, and each returns the rules the scenario then cites (so a
find written as a fixture is judged on them).

**Construction** (:func:`construction`): builtins on or off; a native tool named like a
builtin (relay.non-relay-may-shadow); a relay tool named like a builtin, refused at
construction whether builtins are on or off (relay.collision-guard, ``expect.error``
``toolkit``); no tool at all (loop.tools-omitted-when-empty: every call is of an undeclared
tool); a second tool of a name already in the toolkit (the first is kept, decl.order);
and, with the ``register`` capability, tools registered at runtime: a new one, one whose name
is present already, a native one named like a builtin, a relay one named like a builtin
(the reference refuses it as at construction; relay.collision-guard-register, advisory). A
duplicate copies its original's kind and behaviour, so what a call of that name does is the
same whichever copy runs, and registered tools are never
called: the scenario's facts (toolnexus_conformance/run/facts.py) describe the toolkit's own tools by name.

**Resume error paths** (:func:`resume_answer_id`, :func:`resume_history`): an Answer whose
id is wrong or stale (another Request's); a resume from a transcript that is empty, has no
assistant turn with calls, was already answered, or completed. Each must be refused (kind
``resume``) with no provider call, so the resumed phase serves no turns. And a resume from
the halted transcript as another port or the provider hands it over, with keys the
reference does not write (:func:`foreign_halted_history`).

**Answers** (:data:`HOST_ANSWER_EXTRAS`, :func:`relay_results`): ``ok:false`` without a
reason, relay results with ``isError`` true, and results naming one call twice.

**Stored conversations with foreign keys** (:func:`foreign_history`): the store holds what
another port or the provider wrote (OpenAI ``refusal``/``annotations``, an Anthropic thinking
block), or a halted transcript that an ``ask`` continues by asking again.

**Concurrency** (:func:`hold_until`, :func:`answer_order`): a host that parks every waitFor
until it has seen the N callbacks the first suspending turn makes at once; a port that calls
back one at a time never gets there, the host's hold runs out (toolnexus_conformance/run/host.py) and the
variant fails its rule within that deadline instead of hanging. Once the hold is reached, the
host may answer the N in a drawn order, each after the one before was sent.
"""

from __future__ import annotations

import functools
import itertools
import json
from typing import Any

from toolnexus_conformance.differential.choices import Region
from toolnexus_conformance.scenario.declarations import BUILTIN_NAMES

# Builtin names a generated tool may take: the ones every port has (SPEC.md decl.builtin-names).
BUILTINS_TAKEN = ("read", "bash", "grep")
assert set(BUILTINS_TAKEN) <= BUILTIN_NAMES
REGISTERED_NATIVE = "take_note"
REGISTERED_RELAY = "send_receipt"
WRONG_ANSWER_ID = "answer-for-another-request"

# What a toolkit is built from: plain (most likely: shrinks there), then each guard case.
CONSTRUCTIONS = ("plain",) * 10 + ("builtins", "native-builtin", "relay-builtin", "duplicate", "register-new",
                                   "register-present", "register-native-builtin", "register-relay-builtin", "empty")
_SYSTEM_PROMPTS = (None, None, None, "You are terse. Antworte kurz ☕")
# The construction and the system prompt, picked at once.
_CONSTRUCTION = tuple(itertools.product(CONSTRUCTIONS, _SYSTEM_PROMPTS))
_BUILTINS_ON = (False, True, None)  # None: the key absent (off)
# The resume's Answer id and the transcript it resumes from, picked at once.
_RESUME_ERRORS = tuple(itertools.product(["$pending.id"] * 8 + ["wrong", "stale"],
                                         [None] * 16 + ["empty", "no-calls", "answered", "completed"] + ["foreign"] * 6))
_STORED_KIND = ("plain", "plain", "foreign", "halted")


def _schema() -> dict[str, Any]:
    return {"type": "object", "properties": {"zone": {"type": "string"}}}


def construction(choices: Region, natives: list[str], relays: list[str], *, relay: bool,
                 register: bool) -> dict[str, Any]:
    """Which construction case the scenario builds: ``kind``, the renamed names lists,
    ``builtins`` (True/False/None), ``register`` (tools to register at runtime) and
    ``refused`` (the toolkit must be refused); and ``client`` (maybe a system prompt). Cases
    a port's features cannot carry fall back to the plain toolkit."""
    kind, system = choices.pick(_CONSTRUCTION)
    client = {"systemPrompt": system} if system else {}
    if kind.startswith("register") and not register or kind.endswith("relay-builtin") and not relay:
        kind = "plain"
    out: dict[str, Any] = {"kind": kind, "natives": list(natives), "relays": list(relays), "builtins": None,
                           "register": [], "refused": False, "duplicate": None, "rules": [], "client": client,
                           "client_rules": ["loop.system-prompt"] if client else []}
    if kind == "plain":
        return out
    out["builtins"] = choices.pick(_BUILTINS_ON)
    if kind == "empty":  # no tool at all: every call is of an undeclared tool
        out.update(natives=[], relays=[], builtins=False, rules=["loop.tools-omitted-when-empty"])
    elif kind == "builtins":
        out["builtins"] = True
        out["rules"] = ["decl.builtin-names"]
    elif kind == "native-builtin":
        out["natives"][0] = choices.pick(BUILTINS_TAKEN)
        out["rules"] = ["relay.non-relay-may-shadow"]
    elif kind == "relay-builtin":
        name = choices.pick(BUILTINS_TAKEN)
        out["relays"] = [name, *relays[1:]] if relays else [name]
        out["refused"] = True
        out["rules"] = ["relay.collision-guard"]
    elif kind == "duplicate":
        out["duplicate"] = (natives + relays)[0]
        out["rules"] = ["decl.order"]
    elif kind == "register-new":
        out["register"] = [_registered(REGISTERED_RELAY if relay and choices.chance(1, 2) else REGISTERED_NATIVE)]
        out["rules"] = ["decl.runtime-register"]
    elif kind == "register-present":
        out["register"] = [_registered(natives[0], relay=relay and choices.chance(1, 2))]
        out["rules"] = ["decl.runtime-register"]
    elif kind == "register-native-builtin":
        out["register"] = [_registered(choices.pick(BUILTINS_TAKEN))]
        out["rules"] = ["decl.runtime-register"]
    else:  # register-relay-builtin: refused by the reference; a spec gap (advisory) for the ports
        out["register"] = [_registered(choices.pick(BUILTINS_TAKEN), relay=True)]
        out["refused"] = True
        out["rules"] = ["relay.collision-guard-register"]
    return out


def _registered(name: str, *, relay: bool = False) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": f"{name}, registered at runtime", "schema": _schema()}
    if relay:
        tool["relay"] = True
    else:
        tool["behaviour"] = {"reply": f"{name} (registered) ran"}
    return tool


def apply_construction(scenario: dict[str, Any], built: dict[str, Any]) -> None:
    """Put the construction case into ``scenario`` (its toolkit, requires, expect, rules)."""
    toolkit = scenario["toolkit"]
    if built["builtins"] is not None:
        toolkit["builtins"] = built["builtins"]
    if built["duplicate"] is not None:
        first = next(t for t in toolkit["tools"] if t["name"] == built["duplicate"])
        toolkit["tools"].append({**first, "description": f"A second {first['name']}, never the one declared"})
    if built["register"]:
        toolkit["register"] = built["register"]
        scenario["requires"] = sorted({*scenario["requires"], "register"})
        if any(t.get("relay") for t in built["register"]):
            scenario["relayFree"] = False
            scenario["requires"] = sorted({*scenario["requires"], "relay"})
            scenario["rules"] = [r for r in scenario["rules"] if r != "absent.byte-identical"]
    if built["refused"]:
        scenario["expect"] = {"error": "toolkit"}
    scenario["rules"] += built["rules"]


def needs_declarations(scenario: dict[str, Any]) -> bool:
    """Whether a search asks the ports for their declarations on this scenario: only where
    the construction is what was drawn (the decl.* and guard rules read toolkit.describe)."""
    toolkit = scenario["toolkit"]
    return "builtins" in toolkit or "register" in toolkit or scenario.get("expect", {}).get("error") == "toolkit" \
        or len({t["name"] for t in toolkit["tools"]}) < len(toolkit["tools"]) \
        or any(t["name"] in BUILTIN_NAMES for t in toolkit["tools"])


def resume_errors(choices: Region) -> tuple[str, str | None]:
    """The resume's error-path choices at once: the Answer id's kind and the history's kind."""
    return choices.pick(_RESUME_ERRORS)


def resume_answer_id(kind: str, halted_tool: str, tools: list[str]) -> tuple[str, bool]:
    """The resume Answer's id for ``kind``: the pending one's (``$pending.id``), a wrong one,
    or a stale one (another Request's of this scenario); and whether the resume must be refused."""
    if kind == "$pending.id":
        return kind, False
    if kind == "stale":
        others = [t for t in tools if t != halted_tool]
        return (f"req-{others[0]}" if others else "req-an-earlier-request"), True
    return WRONG_ANSWER_ID, True


def foreign_halted_history(style: str, prompt: str, turn: dict[str, Any], placeholder: str) -> list[dict[str, Any]]:
    """The transcript a run halted on ``turn``'s first call writes (the assistant turn with
    every call, the placeholder as that call's result), as another port or the provider may
    hand it over: with keys the reference does not write (OpenAI ``refusal`` and
    ``annotations`` on the assistant message, an Anthropic thinking block before the calls)."""
    calls = turn["toolCalls"]
    user = {"content": prompt, "role": "user"}
    if style == "openai":
        assistant = {"content": None, "role": "assistant", "refusal": None, "annotations": [], "tool_calls": [
            {"function": {"arguments": c["arguments"], "name": c["name"]}, "id": c["id"], "type": "function"} for c in calls]}
        return [user, assistant, {"content": placeholder, "role": "tool", "tool_call_id": calls[0]["id"]}]
    blocks = [{"type": "thinking", "thinking": "Another port kept this.", "signature": "sig-foreign"},
              *({"id": c["id"], "input": json.loads(c["arguments"]), "name": c["name"], "type": "tool_use"} for c in calls)]
    result = {"content": placeholder, "is_error": True, "tool_use_id": calls[0]["id"], "type": "tool_result"}
    return [user, {"content": blocks, "role": "assistant"}, {"content": [result], "role": "user"}]


def resume_history(kind: str | None, style: str, prompt: str, turn: dict[str, Any]) -> tuple[list[Any] | None, str]:
    """For ``kind``, a transcript with no halted turn to resume from (style's wire format):
    empty, without calls, already answered, or completed. (None, "") when the halted one is
    used (``foreign`` is the caller's: see :func:`foreign_halted_history`)."""
    if kind is None or kind == "foreign":
        return None, ""
    if kind == "empty":
        return [], "resume.needs-halted-turn"
    user = {"role": "user", "content": prompt}
    if kind == "no-calls":
        return [user, {"role": "assistant", "content": "No tools were needed."}], "resume.needs-halted-turn"
    calls = turn["toolCalls"]
    answered = [user, *_call_turn(style, calls, [f"{c['name']} answered earlier" for c in calls])]
    if kind == "completed":
        answered.append({"role": "assistant", "content": "Done already." if style == "openai" else
                         [{"type": "text", "text": "Done already."}]})
    return answered, "resume.entry-points"


def _call_turn(style: str, calls: list[dict[str, Any]], results: list[str], *,
               errors: bool = False) -> list[dict[str, Any]]:
    """An assistant turn calling ``calls`` and a result for each, as ``style`` writes them."""
    if style == "openai":
        assistant = {"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]}
        return [assistant, *({"role": "tool", "tool_call_id": c["id"], "content": r} for c, r in zip(calls, results, strict=True))]
    assistant = {"role": "assistant", "content": [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": json.loads(c["arguments"])} for c in calls]}
    blocks = [{"type": "tool_result", "tool_use_id": c["id"], "content": r, **({"is_error": True} if errors else {})}
              for c, r in zip(calls, results, strict=True)]
    return [assistant, {"role": "user", "content": blocks}]


def foreign_history(choices: Region, style: str, history: list[dict[str, Any]],
                    tools: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The stored conversation an ask continues: ``history`` as it is, with keys the port
    does not write itself (another port's or the provider's), or a transcript halted on a
    call of ``tools[0]`` (its placeholder as the result) that the ask resumes by asking
    again. Returns it and the rules it cites."""
    kind = choices.pick(_STORED_KIND)
    if kind == "plain":
        return history, []
    if kind == "foreign":
        out = [dict(m) for m in history]
        for message in out:
            if message["role"] != "assistant":
                continue
            if style == "openai":
                message.update({"refusal": None, "annotations": []})
            else:
                message["content"] = [{"type": "thinking", "thinking": "Earlier thought.", "signature": "sig-foreign"},
                                      {"type": "text", "text": message["content"]}]
        return out, ["store.verbatim-round-trip"]
    if not tools:
        return history, []
    call = {"id": "call_earlier", "name": tools[0], "arguments": "{}"}
    halted = [{"role": "user", "content": "Earlier question."}, *_call_turn(style, [call], [f"Allow {tools[0]}?"], errors=True)]
    return halted, ["store.ask-loads-history"]


def answer_order(choices: Region, keys: tuple[str, ...]) -> list[str] | None:
    """The order a holding host answers its held callbacks in (``keys``: their answer keys in
    call order), or None: in call order, as they come."""
    order = choices.pick(_orders(keys))
    return list(order) if order != keys else None


@functools.cache
def _orders(keys: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Call order first (shrinks there), then reversed, then every other order."""
    return tuple(dict.fromkeys([keys, keys[::-1], *itertools.permutations(keys)]))


def hold_until(choices: Region, suspending_calls: int) -> int | None:
    """How many waitFor callbacks the host parks for (all of the first suspending turn's),
    or None: it answers each at once."""
    if suspending_calls < 2 or not choices.chance(1, 2):
        return None
    return suspending_calls


def relay_results(call_ids: tuple[str, ...], output: str) -> list[dict[str, Any]]:
    """Relay Answer data of ``call_ids`` beyond every call ok: one failed (isError), or one
    named twice (none for no call). A list: the caller picks it with its other choices at once."""
    def result(call: str, error: bool = False) -> dict[str, Any]:
        return {"id": call, "output": f"{output} ({call})" if not error else f"{output} failed ({call})", "isError": error}

    if not call_ids:
        return []
    plain = [result(c) for c in call_ids]
    return [{"results": [result(call_ids[0], error=True), *plain[1:]]},
            {"results": [*plain, {**result(call_ids[0]), "output": f"{output} again"}]}]


HOST_ANSWER_EXTRAS: tuple[dict[str, Any], ...] = ({"ok": False},)  # ok:false without a reason
