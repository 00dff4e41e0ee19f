"""The ports registry (``toolnexus_conformance/shim/ports.toml``): how to build and start each port's shim.

This module turns ``--port``/``--port-cmd``/``--port-src`` into a ready-to-start command
line, running the port's build step first when it has one. A port the user asked for that
cannot be built fails the run with the exact command that failed; it is never skipped.
The registry also names each port's launch strategy (``launch``, :data:`LAUNCHES`), which a
resolved port carries to whoever starts its shims (:mod:`toolnexus_conformance.shim.launchers`);
``--port-cmd`` is always a plain subprocess.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.paths import repo_root

REGISTRY = Path(__file__).with_name("ports.toml")
DEFAULT_TIMEOUT = 10.0
# A line a build step prints with this prefix is shown in the run's summary even when the
# build succeeds: something the user should know about the shim it built (e.g. it will run
# slower than it could, and why). The build helpers print it (builders.common.note).
NOTE_PREFIX = "note: "
# How a port's shims are started (``launch`` in the registry): a plain subprocess each, or
# forked from a warm zygote of a Python shim's command (``PYTHON SCRIPT [ARG...]``).
PLAIN, FORKED = "plain", "forked"
LAUNCHES = (PLAIN, FORKED)


class PortError(HarnessError):
    """A port cannot be selected, built or started."""


@dataclass(frozen=True)
class Port:
    name: str
    language: str
    start: tuple[str, ...]
    build: tuple[tuple[str, ...], ...] = ()
    toolchain: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    needs_source: bool = False
    description: str = ""
    env: dict[str, str] = field(default_factory=dict)
    expectations: str | None = None  # whose expectations file this port is judged by (default: its own)
    baseline: str | None = None  # the same port without relay support (absent.byte-identical)
    # With --port-src, for a port a registry serves: how to build and start it from the checkout.
    src_build: tuple[tuple[str, ...], ...] = ()
    src_start: tuple[str, ...] = ()
    launch: str = PLAIN  # how its shims are started (LAUNCHES)

    @property
    def takes_source(self) -> bool:
        """Whether --port-src means anything to this port: it needs one, it has a build from
        source, or a build step, the start command or the environment uses ``{src}``."""
        parts = [*self.start, *(p for step in self.build for p in step), *self.env.values()]
        return self.needs_source or bool(self.src_start) or any("{src}" in part for part in parts)

    def steps(self, port_src: str | None) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
        """(build steps, start command) for a run with or without ``--port-src``."""
        if port_src and self.src_start:
            return self.src_build, self.src_start
        return self.build, self.start


def load_registry(path: Path = REGISTRY) -> dict[str, Port]:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    ports = {}
    for name, spec in raw.items():
        launch = spec.get("launch", PLAIN)
        if launch not in LAUNCHES:
            raise PortError(f"{path.name}: port {name!r} has launch = {launch!r}; "
                            f"a launch is one of: {', '.join(repr(k) for k in LAUNCHES)}")
        ports[name] = Port(
            name=name,
            language=spec.get("language", "?"),
            start=tuple(spec["start"]),
            build=tuple(tuple(step) for step in spec.get("build", [])),
            toolchain=spec.get("toolchain"),
            timeout=float(spec.get("timeout", DEFAULT_TIMEOUT)),
            needs_source=bool(spec.get("needs_source", False)),
            description=spec.get("description", ""),
            env=dict(spec.get("env", {})),
            expectations=spec.get("expectations"),
            baseline=spec.get("baseline"),
            src_build=tuple(tuple(step) for step in spec.get("src_build", [])),
            src_start=tuple(spec.get("src_start", [])),
            launch=launch,
        )
    return ports


CACHE_ENV = "TOOLNEXUS_CONFORMANCE_CACHE"


def cache_dir() -> Path:
    """The build cache (ports' shims, private venvs): ``$TOOLNEXUS_CONFORMANCE_CACHE``, else
    ``~/.cache/toolnexus-conformance`` (``$XDG_CACHE_HOME`` respected), outside the
    repository under test so a gate leaves its working tree as it found it."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base).expanduser() / "toolnexus-conformance").resolve()


@dataclass(frozen=True)
class ResolvedPort:
    name: str
    argv: list[str]
    timeout: float
    env: dict[str, str]
    selector: str = ""  # the command-line options that select this port again (rerun hints)
    expectations_port: str = ""  # the `port` an expectations file for this port names
    build_notes: tuple[str, ...] = ()  # what the build steps said the user should know
    launch: str = PLAIN  # how its shims are started: the registry's choice (LAUNCHES)
    fork_server: str = ""  # forked: the socket of a running zygote its shims are forked from

    def __post_init__(self) -> None:
        if not self.expectations_port:
            object.__setattr__(self, "expectations_port", self.name)


def check_choice(name: str | None, port_src: str | None) -> Port:
    """The registry's port ``name``, if ``--port-src`` is given exactly when it applies (the
    plugin and the CI gate both ask here, so both say the same)."""
    registry = load_registry()
    if name not in registry:
        known = ", ".join(sorted(registry))
        raise PortError(f"unknown port {name!r}; the registry ({REGISTRY.name}) knows: {known}")
    port = registry[name]
    if port.needs_source and not port_src:
        raise PortError(
            f"port {name!r} is not served by any registry reachable here; run it against a "
            f"checkout: pytest --port={name} --port-src=PATH/TO/toolnexus"
        )
    if port_src and not port.takes_source:
        takers = ", ".join(sorted(n for n, p in registry.items() if p.takes_source)) or "none"
        raise PortError(
            f"port {name!r} does not build from a toolnexus checkout, so --port-src would be ignored; "
            f"drop it (ports that take one: {takers})"
        )
    return port


def resolve(
    name: str | None, port_cmd: str | None, port_src: str | None, timeout: float | None, *, build: bool = True
) -> ResolvedPort:
    """The command line that starts the port's shim, after its build steps (unless
    ``build`` is false: an xdist worker uses what the controller already built)."""
    if port_cmd:
        if port_src:
            raise PortError("--port-src is not used with --port-cmd: the command already names the shim to start")
        if name is not None and name in load_registry():
            raise PortError(
                f"--port={name} and --port-cmd both choose the shim to start: give one of them "
                f"(--port={name} starts the registry's shim; an ad-hoc shim takes a name the registry "
                f"does not use, e.g. --port={name}-local --port-cmd=...)"
            )
        return ResolvedPort(
            name or "adhoc", shlex.split(port_cmd), timeout or DEFAULT_TIMEOUT, {}, f"--port-cmd={shlex.quote(port_cmd)}"
        )
    port = check_choice(name, port_src)
    name = port.name
    if port.toolchain and shutil.which(port.toolchain) is None:
        raise PortError(f"port {name!r} needs {port.toolchain!r} on PATH to build its shim; it is not installed")
    values = {
        "python": sys.executable,
        "root": str(repo_root()),
        "cache": str(cache_dir() / name),
        "src": str(Path(port_src).resolve()) if port_src else "",
    }
    env = {k: v.format(**values) for k, v in port.env.items()}
    notes: list[str] = []
    build_steps, start = port.steps(port_src)
    for step in build_steps if build else ():
        notes += run_build_step([part.format(**values) for part in step], env, name)
    argv = [part.format(**values) for part in start]
    # Absolute, so a rerun hint built from it works from any folder.
    selector = f"--port={name}" + (f" --port-src={shlex.quote(values['src'])}" if port_src else "")
    return ResolvedPort(name, argv, timeout or port.timeout, env, selector, port.expectations or name, tuple(notes),
                        launch=port.launch)


def run_build_step(argv: list[str], env: dict[str, str], name: str) -> list[str]:
    """Run one build step; return the notes it printed (``builders.common.note``)."""
    try:
        done = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PortError(f"building port {name!r} failed: {shlex.join(argv)}\n  {exc}") from None
    if done.returncode != 0:
        tail = "\n".join(f"  | {line}" for line in (done.stdout + done.stderr).splitlines()[-30:])
        raise PortError(f"building port {name!r} failed (exit {done.returncode}): {shlex.join(argv)}\n{tail}")
    return [line.removeprefix(NOTE_PREFIX) for line in done.stdout.splitlines() if line.startswith(NOTE_PREFIX)]


def describe(port: Any) -> str:
    return f"{port.name} ({port.language})"
