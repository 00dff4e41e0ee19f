"""What a scenario says should happen, derived once per variant and handed to every check.

Checks compare a port's record with these facts — which calls are relay calls, which
suspend, what the raw arguments were, which Request a suspension raises, what the host
and the resume Answer supply — never with another port's output and never with the raw
scenario JSON, so a check means the same thing for every port and every check reads the
scenario the same way. :func:`facts_for` is the only reader of ``Scenario.data`` outside
scenario loading and the runner's provider script.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from toolnexus_conformance.fake_provider.script import Script
from toolnexus_conformance.helpers.json_copy import copy_json
from toolnexus_conformance.scenario.model import Variant

SUSPENDING = frozenset({"relay", "suspend"})
QUESTION_TOOL = "question"


def question_request(arguments: Any) -> dict[str, Any]:
    """The Request the builtin question tool raises for these arguments, without the id its
    port generates (upstream §4A): kind question, data.questions as given, and a prompt of each
    question's text in order, " (options: a, b)" after one with options, one per line."""
    questions = arguments.get("questions") if isinstance(arguments, dict) else None
    questions = questions if isinstance(questions, list) else []
    lines = []
    for item in questions:
        item = item if isinstance(item, dict) else {}
        line = item["question"] if isinstance(item.get("question"), str) else ""
        options = item.get("options")
        if isinstance(options, list) and options:
            line += " (options: " + ", ".join(str(o) for o in options) + ")"
        lines.append(line)
    return {"kind": "question", "prompt": "\n".join(lines), "data": {"questions": questions}}


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call the provider script makes, with what the toolkit makes of it."""

    id: str
    name: str
    raw_arguments: str
    kind: str  # "relay" | "suspend" | "real" | "unknown"

    @property
    def arguments(self) -> Any:
        try:
            return json.loads(self.raw_arguments)
        except json.JSONDecodeError:
            return None

    @property
    def suspends(self) -> bool:
        return self.kind in SUSPENDING


@dataclass(frozen=True)
class Goldens:
    """The goldens a variant's checks compare with, read before the run so a check reads
    nothing from disk: by variant name, the parsed golden (None when there is none) or the
    error reading it gave (raised again by the check that asks, as reading would have)."""

    found: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    errors: dict[str, Exception] = field(default_factory=dict)
    reference: str = ""  # the reference's version, as a golden's provenance records it

    def of(self, variant_name: str) -> dict[str, Any] | None:
        """The golden of ``variant_name``: None when there is none or it was not loaded."""
        error = self.errors.get(variant_name)
        if error is not None:
            raise error
        return self.found.get(variant_name)


NO_GOLDENS = Goldens()


@dataclass(frozen=True)
class Facts:
    """The scenario as every check sees it (one variant: style, entry, toolkit), and the
    goldens its checks compare with (none until the verdict pipeline loads them)."""

    scenario_id: str
    scenario_digest: str  # the scenario file's hash, as a golden's provenance records it
    variant_name: str
    node_id: str
    style: str
    entry: str
    resume_entry: str | None
    rerun_entry: str | None  # the second run of a rerun scenario: "run" or "ask"
    uncalled_relay: bool
    relay_free: bool
    rules: tuple[str, ...]
    prompt: str
    toolkit: dict[str, Any]
    tools: dict[str, dict[str, Any]]  # by name, toolkit order
    relay_tools: frozenset[str]
    builtins: bool
    first_turns: tuple[dict[str, Any], ...]  # scripted turns of the first phase
    resume_turns: tuple[dict[str, Any], ...]  # scripted turns after the resume or the rerun
    turn_calls: tuple[tuple[ScriptedCall, ...], ...]  # classified calls of every turn, in order
    calls: dict[str, ScriptedCall]  # every scripted call by id
    hook_rules: tuple[dict[str, Any], ...]  # the host's beforeTool override rules
    hooks: tuple[str, ...]  # which hooks the host registers
    wait_for: dict[str, Any] | None  # the host's waitFor block; None on the durable path
    store_configured: bool
    system_prompt: str | None
    model: str | None
    max_turns: int | None
    root_base_url: bool
    stored_history: tuple[dict[str, Any], ...] | None
    conversation_id: str
    stream_with_id: bool
    resume: dict[str, Any] | None  # the resume block: answer, history, restartShim, expectError
    rerun: dict[str, Any] | None  # the rerun block: prompt, toolkit, restartShim
    expect: dict[str, Any]
    goldens: Goldens = NO_GOLDENS

    # -- turns ---------------------------------------------------------------------------

    @property
    def turns(self) -> tuple[dict[str, Any], ...]:
        """Every scripted turn in the order the provider serves them (first phase, then resume)."""
        return self.first_turns + self.resume_turns

    @functools.cached_property
    def script(self) -> Script:
        """The provider's script of :attr:`turns`: immutable, so every run of the variant (both
        ports' in a differential) is served from one. Raises ScriptError for a bad script."""
        return Script.from_neutral(self.turns)

    @property
    def first_turn_calls(self) -> tuple[tuple[ScriptedCall, ...], ...]:
        return self.turn_calls[: len(self.first_turns)]

    def served_calls(self, served: int) -> list[ScriptedCall]:
        """Calls of the first ``served`` turns (a halted or failed run serves fewer)."""
        return [c for turn in self.turn_calls[:served] for c in turn]

    @property
    def halting_turn_index(self) -> int | None:
        """Where a durable run halts: the first first-phase turn with a suspending call (no
        later turn is served), else the last one with tool calls; None without tool calls."""
        suspending = self.first_suspending_turn
        if suspending is not None:
            return suspending
        return max((i for i, turn in enumerate(self.first_turn_calls) if turn), default=None)

    @property
    def halting_turn(self) -> tuple[ScriptedCall, ...] | None:
        """The calls of the turn at ``halting_turn_index``."""
        index = self.halting_turn_index
        return None if index is None else self.first_turn_calls[index]

    @property
    def first_suspending_turn(self) -> int | None:
        """Index of the first first-phase turn with a call that suspends (the turn whose tools
        call ``waitFor`` first), or None."""
        return next((i for i, turn in enumerate(self.first_turn_calls) if any(c.suspends for c in turn)), None)

    @property
    def first_suspension(self) -> int | None:
        """Index in the halting turn of the first call that suspends."""
        return next((i for i, c in enumerate(self.halting_turn or ()) if c.suspends), None)

    @property
    def calls_relay(self) -> bool:
        return any(c.kind == "relay" for c in self.calls.values())

    # -- toolkit and host ----------------------------------------------------------------

    def behaviour(self, tool: str) -> dict[str, Any]:
        return dict(self.tools.get(tool, {}).get("behaviour") or {})

    @property
    def has_tools(self) -> bool:
        return bool(self.tools) or self.builtins

    @property
    def hook_suspends(self) -> frozenset[str]:
        return frozenset(r["tool"] for r in self.hook_rules if "suspend" in r)

    @property
    def rewritten_args(self) -> dict[str, Any]:
        return {r["tool"]: r["args"] for r in self.hook_rules if "args" in r}

    @property
    def in_process(self) -> bool:
        return self.wait_for is not None

    @property
    def durable(self) -> bool:
        return self.wait_for is None

    @property
    def waitfor_raises(self) -> bool:
        return bool((self.wait_for or {}).get("raise"))

    def scripted_answer(self, key: str) -> dict[str, Any] | None:
        """The waitFor answer the scenario scripts for a Request id or ``call:<id>``."""
        answers = (self.wait_for or {}).get("answers", {})
        found = answers.get(key) or answers.get("*")
        return copy_json(found) if found is not None else None

    def native_request(self, call: ScriptedCall) -> dict[str, Any] | None:
        """The Request a non-relay suspending call raises first (hook rules win: the tool never
        runs); without ``id`` where the port generates it (the builtin question tool)."""
        for rule in self.hook_rules:
            if rule["tool"] == call.name and "suspend" in rule:
                return dict(rule["suspend"])
        if call.kind == "suspend" and call.name == QUESTION_TOOL and call.name not in self.tools:
            return question_request(call.arguments)
        behaviour = self.behaviour(call.name)
        found = behaviour.get("suspend") or behaviour.get("alwaysSuspend")
        return dict(found) if found else None

    def expected_real_output(self, call: ScriptedCall) -> tuple[str, bool] | None:
        """(content, is_error) a real tool call produces, when the script pins it."""
        behaviour = self.behaviour(call.name)
        if "reply" in behaviour:
            return behaviour["reply"], False
        if "fail" in behaviour:
            return behaviour["fail"], True
        return None

    # -- expectations the scenario states ----------------------------------------------

    @property
    def expected_error(self) -> str | None:
        """A port error the scenario expects: on the run, or (``"resume"``) on the resume."""
        if self.expect.get("error"):
            return str(self.expect["error"])
        return "resume" if (self.resume or {}).get("expectError") else None

    @property
    def resume_halts_again(self) -> bool:
        """Whether the resumed run ends pending: the scenario says so (``resumedStatus``), or,
        where it says nothing (generated scenarios), a non-relay call of the halting turn
        always suspends (re-executed on resume, resume.non-relay-reexecutes), or a turn served
        after the resume has a suspending call."""
        stated = self.expect.get("resumedStatus")
        if stated is not None:
            return bool(stated == "pending")
        if any(c.kind == "suspend" and "alwaysSuspend" in self.behaviour(c.name) for c in self.halting_turn or ()):
            return True
        return any(c.suspends for turn in self.turn_calls[len(self.first_turns):] for c in turn)

    @property
    def resume_refused(self) -> bool:
        return bool((self.resume or {}).get("expectError"))

    @property
    def resume_replaces_history(self) -> bool:
        return "history" in (self.resume or {})

    @property
    def restart_before_resume(self) -> bool:
        return bool((self.resume or self.rerun or {}).get("restartShim"))

    @property
    def rerun_toolkit(self) -> dict[str, Any]:
        """The toolkit of the second run of a rerun scenario (the first run's unless the
        scenario says the world changed)."""
        return dict((self.rerun or {}).get("toolkit") or self.toolkit)


def classify(toolkit_tools: dict[str, dict[str, Any]], hooked: frozenset[str], turn: dict[str, Any],
             builtins: bool = False) -> tuple[ScriptedCall, ...]:
    out = []
    for call in turn.get("toolCalls", []):
        tool = toolkit_tools.get(call["name"])
        if tool is None and builtins and call["name"] == QUESTION_TOOL:
            kind = "suspend"  # the builtin question tool asks the human (upstream §4A)
        elif tool is None:
            kind = "unknown"
        elif tool.get("relay"):
            kind = "relay"
        elif call["name"] in hooked or {"suspend", "alwaysSuspend"} & set(tool.get("behaviour", {})):
            kind = "suspend"
        else:
            kind = "real"
        out.append(ScriptedCall(call["id"], call["name"], call["arguments"], kind))
    return tuple(out)


def facts_for(variant: Variant) -> Facts:
    data = variant.scenario.data
    toolkit = variant.toolkit()
    tools = {t["name"]: t for t in toolkit["tools"]}
    host = data.get("host") or {}
    hook_rules = tuple((host.get("hooks") or {}).get("beforeTool", []))
    hooked = frozenset(r["tool"] for r in hook_rules if "suspend" in r)
    resume = data.get("resume")
    rerun = data.get("rerun")
    first_turns = tuple(data["turns"])
    resume_turns = tuple((resume or rerun or {}).get("turns", ()))
    # A rerun's calls are made to the toolkit the resuming host built.
    later_tools = {t["name"]: t for t in rerun["toolkit"]["tools"]} if rerun and "toolkit" in rerun else tools
    later_builtins = bool((rerun.get("toolkit") or toolkit).get("builtins")) if rerun else bool(toolkit.get("builtins"))
    turn_calls = (tuple(classify(tools, hooked, t, bool(toolkit.get("builtins"))) for t in first_turns)
                  + tuple(classify(later_tools, hooked, t, later_builtins) for t in resume_turns))
    client = data.get("client") or {}
    stored = data.get("storedHistory")
    return Facts(
        scenario_id=variant.scenario.id,
        scenario_digest=variant.scenario.digest,
        variant_name=variant.name,
        node_id=variant.node_id,
        style=variant.style,
        entry=variant.entry,
        resume_entry=variant.resume_entry,
        rerun_entry=variant.rerun_entry,
        uncalled_relay=variant.uncalled_relay,
        relay_free=variant.scenario.relay_free,
        rules=variant.scenario.rules,
        prompt=data["prompt"],
        toolkit=toolkit,
        tools=tools,
        relay_tools=frozenset(n for n, t in tools.items() if t.get("relay")),
        builtins=bool(toolkit.get("builtins")),
        first_turns=first_turns,
        resume_turns=resume_turns,
        turn_calls=turn_calls,
        calls={c.id: c for turn in turn_calls for c in turn},
        hook_rules=hook_rules,
        hooks=tuple(name for name in ("beforeTool", "afterTool") if name in (host.get("hooks") or {})),
        wait_for=host.get("waitFor") if "waitFor" in host else None,
        store_configured=bool(host.get("store")),
        system_prompt=client.get("systemPrompt"),
        model=client.get("model"),
        max_turns=client.get("maxTurns"),
        root_base_url=client.get("baseUrl") == "root",
        stored_history=tuple(stored) if stored is not None else None,
        conversation_id=data.get("conversationId", f"conv-{variant.scenario.id}"),
        stream_with_id=bool(data.get("streamWithId")),
        resume=resume,
        rerun=copy_json(rerun) if rerun else None,
        expect=dict(data.get("expect") or {}),
    )
