"""copy_json: the run path's deep copy must be a real deep copy of JSON data, and of
anything else it is handed (which goes to copy.deepcopy)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest

from toolnexus_conformance.helpers.json_copy import copy_json

SAMPLE: dict[str, Any] = {
    "messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}],
    "flags": [True, False, 0, 1, -0.0, 1.5, 10**30, "é\u2028"],
    "pair": ("a", ["b"]),
}


def containers(value: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(value, dict):
        found.append(value)
        for member in value.values():
            found.extend(containers(member))
    elif isinstance(value, list | tuple):
        found.append(value)
        for member in value:
            found.extend(containers(member))
    return found


def shared_containers(original: Any, copied: Any) -> list[Any]:
    """The mutable containers the two trees share (a tuple is immutable: sharing is fine)."""
    ids = {id(c) for c in containers(original) if not isinstance(c, tuple)}
    return [c for c in containers(copied) if id(c) in ids]


def typed(value: Any) -> Any:
    """``value`` with every scalar's type spelled out, so True never equals 1 here."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(v) for v in value])
    return (type(value).__name__, repr(value))


def check_deep_copy(copier: Callable[[Any], Any]) -> None:
    copied = copier(SAMPLE)
    assert typed(copied) == typed(SAMPLE), "the copy differs in a value or a type"
    assert not shared_containers(SAMPLE, copied), "the copy shares a container with the original"
    copied["messages"][0]["tool_calls"][0]["id"] = "changed"
    assert SAMPLE["messages"][0]["tool_calls"][0]["id"] == "c1"


def test_a_copy_is_equal_typed_alike_and_shares_no_container() -> None:
    check_deep_copy(copy_json)


@pytest.mark.parametrize("broken", [copy.copy, lambda v: v, lambda v: {**v, "flags": [int(x) if isinstance(x, bool) else x for x in v["flags"]]}],
                         ids=["shallow", "same-object", "bools-as-ints"])
def test_the_check_fails_a_copy_that_is_not_deep_or_changes_a_type(broken: Callable[[Any], Any]) -> None:
    with pytest.raises(AssertionError):
        check_deep_copy(broken)


class Text(str):
    pass


@pytest.mark.parametrize("odd", [OrderedDict(a=[1]), {"k": OrderedDict(a=[1])}, {"a": [1], "t": Text("x")}],
                         ids=["ordered-dict", "nested-ordered-dict", "str-subclass"])
def test_what_marshal_refuses_is_still_copied_deeply(odd: Any) -> None:
    copied = copy_json(odd)
    assert typed(copied) == typed(odd) and type(copied) is type(odd)
    assert not shared_containers(odd, copied)
