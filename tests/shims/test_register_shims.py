"""Protocol v1.1 ``register`` through each real shim (SPEC.md §6): the shim declares the
capability and hands the ``register`` tools to the port's own runtime registration method
after construction, so ``toolkit.describe`` shows what that method kept.

The conformance scenarios for ``register`` also need relay tools, which the js, java and
python ports lack, so on those ports this is the only run of their ``register`` path. A
shim that ignored ``register`` would leave ``late`` out; one that registered before
construction, or skipped the port's method, would let the second ``first`` replace the
first. Each port is built with its registry entry (toolnexus_conformance/shim/ports.toml) and skipped, with
the reason, when this machine lacks its toolchain or a checkout.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from port_build_lock import resolve_locked

from toolnexus_conformance.shim.ports import load_registry
from toolnexus_conformance.shim.session import ShimSession

CHECKOUT = os.environ.get("TOOLNEXUS_SRC")
NO_CHECKOUT = "no registry here serves the port; set TOOLNEXUS_SRC to a toolnexus checkout to run it"
BUILD_BUDGET_S = 1800  # java's Maven build from an empty cache on the loaded 2-core machine


def native(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "behaviour": {"reply": description}}


TOOLKIT = {
    "builtins": False,
    "tools": [native("first", "built with the toolkit")],
    "register": [native("first", "registered under a name already present"), native("late", "registered late")],
}
# What every port's first-name-wins, append-only register leaves declared.
DECLARED = [("first", "built with the toolkit"), ("late", "registered late")]


def declared(described: dict[str, Any]) -> list[tuple[str, str]]:
    return [(tool["function"]["name"], tool["function"]["description"]) for tool in described["openai"]]


def assert_register_applied(port: str, described: dict[str, Any]) -> None:
    got = declared(described)
    assert got == DECLARED, (
        f"port {port}: toolkit.describe after register declares {got}, expected {DECLARED} "
        "(registered tools follow the toolkit's own; a name already present is kept)"
    )


@pytest.fixture
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShimSession]:
    port: str = request.param
    entry = load_registry()[port]
    if entry.toolchain and shutil.which(entry.toolchain) is None:
        pytest.skip(f"{port} shim: toolchain {entry.toolchain!r} is not installed on this machine")
    if entry.needs_source and not CHECKOUT:
        pytest.skip(f"{port} shim: {NO_CHECKOUT}")
    # A port a registry serves (python) runs its pinned release; the checkout is for the others.
    resolved = resolve_locked(tmp_path_factory, port, CHECKOUT if entry.needs_source else None)
    env = {**os.environ, **resolved.env} if resolved.env else None
    with ShimSession(resolved.argv, env=env, start_timeout=60) as running:
        running.ensure_alive()
        yield running


@pytest.mark.timeout(BUILD_BUDGET_S)
@pytest.mark.parametrize("session", ["reference", "python", "golang", "js", "java"], indirect=True)
@pytest.mark.slow
def test_shim_registers_through_the_port_after_construction(session: ShimSession) -> None:
    handshake = session.ensure_alive()
    assert handshake.supports("register"), f"port {handshake.port} does not declare capability 'register'"
    described = session.call("toolkit.describe", {"toolkit": TOOLKIT}, timeout=60)
    assert_register_applied(handshake.port, described)


def openai_tools(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"openai": [{"type": "function", "function": {"name": n, "description": d}} for n, d in pairs]}


@pytest.mark.parametrize(
    ("broken", "what"),
    [
        (openai_tools(("first", "built with the toolkit")), "register ignored"),
        (openai_tools(("first", "registered under a name already present"), ("late", "registered late")), "last wins"),
        (openai_tools(("late", "registered late"), ("first", "built with the toolkit")), "registered first"),
    ],
)
def test_the_check_catches_a_shim_that_mistranslates_register(broken: dict[str, Any], what: str) -> None:
    with pytest.raises(AssertionError, match=r"port broken: toolkit.describe after register declares"):
        assert_register_applied("broken", broken)
