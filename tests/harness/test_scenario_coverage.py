"""The scenario set exercises every optional key of the host-facing wire objects on each
path a port implements separately: every optional key of Request, Answer and the relay
call entry appears in a durable, an in-process and a streamed scenario, so a port that
drops or renames one on one path only is seen.

The Requests and Answers are read from the scenarios' facts (the Requests suspending tools
and hooks raise, the relay Requests relay calls raise, the Answers the host scripts and
the resume passes), not from a run, so the test needs no port.
"""

from __future__ import annotations

import json
from typing import Any

from toolnexus_conformance.helpers.paths import fixtures_dir, schemas_dir
from toolnexus_conformance.run.facts import Facts, facts_for
from toolnexus_conformance.scenario.model import load_scenario, scenario_files

PATHS = ("durable", "in-process", "stream")
RELAY_CALL_KEYS = ("id", "name", "input", "arguments")


def _optional(schema: str) -> list[str]:
    raw = json.loads((schemas_dir() / f"{schema}.schema.json").read_text(encoding="utf-8"))
    return sorted(set(raw["properties"]) - set(raw.get("required", [])))


def _paths(facts: Facts, entries: tuple[str, ...]) -> set[str]:
    found = {"in-process" if facts.in_process else "durable"}
    return found | ({"stream"} if "stream" in entries else set())


def _requests(facts: Facts) -> list[dict[str, Any]]:
    found = [r for c in facts.calls.values() if c.kind == "suspend" and (r := facts.native_request(c)) is not None]
    if facts.calls_relay:  # a relay Request carries data.calls with every call entry key
        found.append({"data": {"calls": [dict.fromkeys(RELAY_CALL_KEYS)]}})
    return found


def _answers(facts: Facts) -> list[dict[str, Any]]:
    found = [dict(a) for a in ((facts.wait_for or {}).get("answers") or {}).values()]
    if facts.resume is not None:
        found.append(dict(facts.resume["answer"]))
    return found


def _coverage(keys: list[str], objects: Any) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {key: set() for key in keys}
    for path in scenario_files(fixtures_dir() / "scenarios"):
        scenario = load_scenario(path)
        facts = facts_for(next(iter(scenario.variants())))
        for obj in objects(facts):
            for key in keys:
                if key in obj:
                    seen[key] |= _paths(facts, tuple(scenario.data["entries"]))
    return seen


def _missing(seen: dict[str, set[str]]) -> list[str]:
    return [f"{key}: not on the {', '.join(p for p in PATHS if p not in paths)} path" for key, paths in seen.items()
            if set(PATHS) - paths]


def test_every_optional_request_key_is_on_every_path() -> None:
    missing = _missing(_coverage(_optional("request"), _requests))
    assert not missing, "optional Request keys no scenario carries on a path:\n  " + "\n  ".join(missing)


def test_every_optional_answer_key_is_on_every_path() -> None:
    missing = _missing(_coverage(_optional("answer"), _answers))
    assert not missing, "optional Answer keys no scenario carries on a path:\n  " + "\n  ".join(missing)


def test_every_relay_call_entry_key_is_on_every_path() -> None:
    # the call entry has no optional key today; should one be added, it must be covered too
    keys = sorted(set(RELAY_CALL_KEYS) | set(_optional("relay-call")))
    calls = lambda facts: [c for r in _requests(facts) for c in (r.get("data") or {}).get("calls", [])]  # noqa: E731
    missing = _missing(_coverage(keys, calls))
    assert not missing, "relay call entry keys no scenario carries on a path:\n  " + "\n  ".join(missing)
