"""Scenario files: loading, validation and expansion into variants.

A scenario (``fixtures/scenarios/*.json``, schema ``schemas/scenario.schema.json``) is
data. This module owns turning one file into the :class:`Variant` s the plugin collects:
one per style x first-phase entry point, plus, for relay-free scenarios, the same run with
an uncalled relay tool declared last (the byte-identical-absent-relay check). A bad file
raises :class:`ScenarioError` naming the file and every schema violation.
"""

from __future__ import annotations

import errno
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolnexus_conformance.fake_provider.script_check import check_neutral
from toolnexus_conformance.fake_provider.script_error import ScriptError
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.json_types import NotJsonConstant, refuse_constant
from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.helpers.schemas import validate

RESUME_ENTRY = {"run": "runWithAnswer", "stream": "runWithAnswer", "ask": "askWithAnswer"}
# The second run of a rerun scenario: run and stream pass the halted transcript as history
# (the stream entry point takes none), ask continues the conversation its store holds.
RERUN_ENTRY = {"run": "run", "stream": "run", "ask": "ask"}
UNCALLED_RELAY_TOOL: dict[str, Any] = {
    "name": "conformance_uncalled_relay",
    "description": "A relay tool the model never calls; declaring it must change nothing else.",
    "schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    "relay": True,
}


class ScenarioError(HarnessError):
    """A scenario file is not valid JSON or does not follow the scenario schema."""


@dataclass(frozen=True)
class Scenario:
    path: Path
    data: dict[str, Any]
    digest: str

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(self.data["rules"])

    @property
    def requires(self) -> tuple[str, ...]:
        return tuple(self.data.get("requires", ()))

    @property
    def relay_free(self) -> bool:
        toolkits = [self.data["toolkit"], *([self.data["rerun"]["toolkit"]] if "toolkit" in self.data.get("rerun", {}) else [])]
        return not any(tool.get("relay") for toolkit in toolkits for tool in [*toolkit["tools"], *toolkit.get("register", [])])

    def variants(self) -> Iterator[Variant]:
        for style in self.data["styles"]:
            for entry in self.data["entries"]:
                yield Variant(self, style, entry, uncalled_relay=False)
                if self.relay_free and not {"resume", "rerun"} & self.data.keys() and "register" not in self.data["toolkit"]:
                    # The uncalled relay tool is appended to the constructor's tools; registered
                    # tools are declared after it, so "declared last" would not hold.
                    yield Variant(self, style, entry, uncalled_relay=True)


@dataclass(frozen=True)
class Variant:
    """One collected test: a scenario run in one style through one entry point."""

    scenario: Scenario
    style: str
    entry: str
    uncalled_relay: bool

    @property
    def name(self) -> str:
        suffix = "-uncalled-relay" if self.uncalled_relay else ""
        return f"{self.style}-{self.entry}{suffix}"

    @property
    def node_id(self) -> str:
        return f"{self.scenario.id}[{self.name}]"

    @property
    def resume_entry(self) -> str | None:
        return RESUME_ENTRY[self.entry] if "resume" in self.scenario.data else None

    @property
    def rerun_entry(self) -> str | None:
        return RERUN_ENTRY[self.entry] if "rerun" in self.scenario.data else None

    @property
    def requires(self) -> frozenset[str]:
        needs = set(self.scenario.requires) | {self.style}
        if self.entry == "stream":
            needs.add("stream")
        if self.entry == "ask" or self.resume_entry == "askWithAnswer":
            needs.add("store")
        if self.resume_entry:
            needs.add("resume")
        if self.uncalled_relay or not self.scenario.relay_free:
            needs.add("relay")
        return frozenset(needs)

    def toolkit(self) -> dict[str, Any]:
        toolkit = dict(self.scenario.data["toolkit"])
        if self.uncalled_relay:
            toolkit["tools"] = [*toolkit["tools"], UNCALLED_RELAY_TOOL]
        return toolkit


def load_scenario(path: Path) -> Scenario:
    raw, data = read_json_file(path)
    violations = validate("scenario", data)
    if violations:
        listed = "\n".join(f"  {v.json_path}: {v.message}" for v in violations)
        raise ScenarioError(f"{path}: not a valid scenario:\n{listed}")
    if path.stem != data["id"]:
        raise ScenarioError(f"{path}: file name must equal the scenario id {data['id']!r}")
    unknown = sorted(set(data["rules"]) - known_rule_ids())
    if unknown:
        raise ScenarioError(f"{path}: cites rule ids that fixtures/rules.json does not know: {', '.join(unknown)}")
    try:  # what the fake provider would otherwise fail on mid-run, as an HTTP 500 ports retry
        check_neutral(data["turns"], data["styles"], "turns")
        check_neutral(data.get("resume", {}).get("turns", []), data["styles"], "resume.turns")
        check_neutral(data.get("rerun", {}).get("turns", []), data["styles"], "rerun.turns")
    except ScriptError as exc:
        raise ScenarioError(f"{path}: the fake provider cannot serve this script: {exc}") from None
    return Scenario(path=path, data=data, digest=hashlib.sha256(raw).hexdigest()[:16])


def read_json_file(path: Path) -> tuple[bytes, Any]:
    """The bytes and the parsed JSON of a scenario file; every way that fails is one
    :class:`ScenarioError` naming the file (and line:col where there is one)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        why = "a symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise ScenarioError(f"{path}: cannot read scenario: {why}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        raise ScenarioError(f"{path}:{line}:{col}: cannot read scenario: not UTF-8 (byte 0x{raw[exc.start]:02x})") from None
    try:
        # Python's json reads NaN and Infinity; no wire or port would, and the run path's
        # encoders would send them on as null (helpers/fast_json.py).
        return raw, json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path}:{exc.lineno}:{exc.colno}: cannot read scenario: not valid JSON: {exc.msg}") from None
    except NotJsonConstant as exc:
        line, col = _line_col(text, _outside_strings(text, exc.name))
        raise ScenarioError(f"{path}:{line}:{col}: cannot read scenario: not valid JSON: {exc.name} is not a JSON value "
                            "(JSON has no NaN or infinity: write a number, or a string)") from None


def _line_col(text: str | bytes, at: int) -> tuple[int, int]:
    """Line and column (from 1) of offset ``at``."""
    if isinstance(text, bytes):
        return text.count(b"\n", 0, at) + 1, at - text.rfind(b"\n", 0, at)
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _outside_strings(text: str, word: str) -> int:
    """The offset of the first ``word`` that is not inside a JSON string (0 if none is)."""
    in_string = escaped = False
    for at, char in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif text.startswith(word, at):
            return at
    return 0


@lru_cache(maxsize=1)
def known_rule_ids() -> frozenset[str]:
    registry = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))
    return frozenset(rule["id"] for rule in registry["rules"])


def scenario_files(root: Path) -> list[Path]:
    return sorted(root.glob("*.json"))
