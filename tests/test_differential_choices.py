"""The differential generator's one-draw decisions (toolnexus_conformance/differential/choices.py):
zero bytes decide the plain scenario (what hypothesis shrinks towards), each part of a
scenario reads its own region of the bytes, and the bytes alone decide the scenario."""

from __future__ import annotations

from random import Random
from typing import Any

from hypothesis import Phase, find, settings
from hypothesis.errors import NoSuchExample

from toolnexus_conformance.differential.choices import REGIONS, SPEC_SIZE, Choices
from toolnexus_conformance.differential.search import (
    QUESTION,
    Features,
    as_scenario,
    scenario_from,
    scenarios,
    search_settings,
)

ALL = Features(relay=True, resume=True, hooks=True, store=True, register=True, result_metadata=True)


def _offset(region: str) -> int:
    names = list(REGIONS)
    return sum(REGIONS[n] for n in names[: names.index(region)])


def test_zero_bytes_decide_the_plain_scenario() -> None:
    plain = scenario_from(bytes(SPEC_SIZE), ALL, False)
    as_scenario(plain)  # raises on a schema violation
    assert [t["name"] for t in plain["toolkit"]["tools"]] == ["get_time"]
    assert plain["toolkit"]["tools"][0]["behaviour"] == {"reply": "get_time ok"}
    assert "builtins" not in plain["toolkit"] and "register" not in plain["toolkit"]
    assert [len(t.get("toolCalls", [])) for t in plain["turns"]] == [1, 0]
    assert all("wire" not in t and "extra" not in t for t in plain["turns"])
    assert not {"host", "resume", "rerun", "expect", "storedHistory", "client"} & set(plain)
    assert plain["styles"] == ["openai"] and plain["entries"] == ["run"]


def test_each_part_reads_its_own_region() -> None:
    rng = Random(7)
    spec = bytearray(rng.randbytes(SPEC_SIZE))
    before = scenario_from(bytes(spec), ALL, False)
    start = _offset("host")
    spec[start:start + REGIONS["host"]] = rng.randbytes(REGIONS["host"])
    after = scenario_from(bytes(spec), ALL, False)
    assert after["toolkit"] == before["toolkit"], "the host's bytes changed the toolkit"
    # the turns a resume or rerun leaves in the first phase are the drawn turns' prefix
    drawn = [*before["turns"], *before.get("resume", before.get("rerun", {})).get("turns", [])]
    kept = after["turns"]
    assert [t.get("toolCalls") for t in kept] == [t.get("toolCalls") for t in drawn[: len(kept)]]


def test_the_bytes_alone_decide_the_scenario() -> None:
    spec = Random(11).randbytes(SPEC_SIZE)
    assert scenario_from(spec, ALL, True) == scenario_from(spec, ALL, True)
    assert scenario_from(spec, ALL, True) is not scenario_from(spec, ALL, True)
    first = scenario_from(spec, ALL, False)
    first["toolkit"]["tools"][0]["name"] = "edited"
    assert scenario_from(spec, ALL, False)["toolkit"]["tools"][0]["name"] != "edited", "scenarios share state"


def test_regions_read_zeros_past_their_end() -> None:
    region = Choices(b"\xff" * SPEC_SIZE).region("store")
    assert [region.byte() for _ in range(REGIONS["store"] + 2)] == [0xFF] * REGIONS["store"] + [0, 0]


def test_metadata_and_questions_are_drawn_where_both_ports_have_them() -> None:
    found: dict[str, dict[str, Any]] = {}

    def keep(scenario: dict[str, Any]) -> bool:
        calls = [c["name"] for t in scenario["turns"] for c in t.get("toolCalls", [])]
        if QUESTION in calls:
            assert scenario["toolkit"].get("builtins") is True, "a question called with builtins off"
            found.setdefault("question", scenario)
        if any("metadata" in t.get("behaviour", {}) for t in scenario["toolkit"]["tools"]):
            assert "resultMetadata" in scenario["requires"]
            found.setdefault("metadata", scenario)
        return False

    try:
        find(scenarios(ALL), keep, settings=settings(search_settings(300), phases=[Phase.generate]))
    except NoSuchExample:
        pass
    assert set(found) == {"question", "metadata"}
    for scenario in found.values():
        as_scenario(scenario)
    without = Features(relay=True, resume=True, hooks=True, store=True, register=True)
    for seed in range(40):
        scenario = scenario_from(Random(seed).randbytes(SPEC_SIZE), without, False)
        assert all("metadata" not in t.get("behaviour", {}) for t in scenario["toolkit"]["tools"])


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


def test_two_scenarios_share_no_container() -> None:
    rng = Random(3)
    for _ in range(300):
        spec = rng.randbytes(SPEC_SIZE)
        one, two = scenario_from(spec, ALL, True), scenario_from(spec, ALL, True)
        shared = {id(c) for c in _containers(one)} & {id(c) for c in _containers(two)}
        assert not shared, f"two scenarios share {[c for c in _containers(one) if id(c) in shared][:3]}"
