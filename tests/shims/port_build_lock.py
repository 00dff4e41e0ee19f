"""One build of a port's shim per test run: the tests that start a registry port (tests/shims)
resolve it, build steps included, under a run-wide lock named after the port, so two xdist
workers never build the same cache folder at the same time and the second one finds it
current (the python port's venv from PyPI takes many seconds of CPU to build).
"""

from __future__ import annotations

import pytest
from build_once import shared_lock

from toolnexus_conformance.shim.ports import ResolvedPort, resolve


def lock_name(port: str) -> str:
    """The run-wide lock of ``port``'s build (``build_once.shared_lock``)."""
    return f"port-build-{port}"


def resolve_locked(tmp_path_factory: pytest.TempPathFactory, port: str, port_src: str | None = None) -> ResolvedPort:
    """``resolve(port)`` (building it if its cache is not current) under the port's lock."""
    with shared_lock(tmp_path_factory, lock_name(port)):
        return resolve(port, None, port_src, None)
