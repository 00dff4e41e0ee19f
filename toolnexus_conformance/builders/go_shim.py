"""Build step of the golang port: the shim binary, against a toolnexus checkout.

``python -m toolnexus_conformance.builders.go_shim --shim DIR --src CHECKOUT --work DIR --out BINARY``
copies the shim's module (DIR) into a scratch folder (WORK, recreated each time), points
the port's module at ``CHECKOUT/golang`` with a ``replace`` there — never in the committed
go.mod — then runs ``go mod tidy`` and ``go build``. Go's own build cache keeps warm
rebuilds fast. The binary reports the checkout's newest CHANGELOG release with a
``+checkout`` suffix as the library version, since the checkout may be ahead of it.
A checkout from before relay support (no ``func RelayTool`` in the port, as at
``golang/v0.10.0``) is built with the ``norelay`` tag: the shim then uses its stand-ins
for the relay API and declares neither ``relay`` nor ``resume``.
``--race`` builds with Go's race detector. Failures print the command that failed with its
output tail and exit non-zero.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path

from .common import BuildError, cli, run_command

PORT_MODULE = "github.com/muthuishere/toolnexus/golang"
SHIM_FILES = ("go.mod", "go.sum")
RELEASE_HEADING = re.compile(r"^## v?(\d+\.\d+\.\d+\S*)", re.M)
RELAY_API = re.compile(r"^func RelayTool\(", re.M)


def port_dir(src: Path) -> Path:
    """The checkout's golang module folder, checked to be the port's module."""
    folder = src / "golang"
    go_mod = folder / "go.mod"
    if not go_mod.is_file():
        raise BuildError(f"{src} is not a toolnexus checkout: no golang/go.mod")
    first = next((line.split() for line in go_mod.read_text(encoding="utf-8").splitlines() if line.startswith("module ")), [])
    if first[1:] != [PORT_MODULE]:
        raise BuildError(f"{go_mod} declares module {' '.join(first[1:]) or '?'}, expected {PORT_MODULE}")
    return folder


def checkout_version(src: Path) -> str:
    """What the shim reports as the port's version: a checkout carries no version of its
    own, so its newest CHANGELOG release, marked as a checkout."""
    changelog = src / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8", errors="replace") if changelog.is_file() else ""
    release = RELEASE_HEADING.search(text)
    return f"{release[1]}+checkout" if release else "checkout"


def stage(shim: Path, work: Path) -> None:
    """Copy the shim module (top-level .go files, go.mod, go.sum) into a fresh ``work``."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for item in shim.iterdir():
        if item.is_file() and (item.suffix == ".go" or item.name in SHIM_FILES):
            shutil.copy2(item, work / item.name)


def has_relay(port: Path) -> bool:
    """Whether the port's package declares the relay API (``RelayTool``, golang v0.12.0 on)."""
    return any(RELAY_API.search(f.read_text(encoding="utf-8", errors="replace")) for f in port.glob("*.go"))


def commands(port: Path, out: Path, version: str, *, race: bool = False, relay: bool = True) -> list[list[str]]:
    flags = [*(["-race"] if race else []), *([] if relay else ["-tags", "norelay"])]
    build = ["go", "build", "-trimpath", *flags, f"-ldflags=-X main.portVersion={version}"]
    return [
        ["go", "mod", "edit", f"-replace={PORT_MODULE}={port}"],
        ["go", "mod", "tidy"],
        [*build, "-o", str(out), "."],
    ]


def go_environment() -> dict[str, str]:
    # GOTOOLCHAIN=local: build with the installed go, never download another one.
    return {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": os.environ.get("GOFLAGS", "") + " -buildvcs=false"}


def build(shim: Path, src: Path, work: Path, out: Path, *, race: bool = False) -> None:
    port = port_dir(src)
    stage(shim, work)
    out.parent.mkdir(parents=True, exist_ok=True)
    env = go_environment()
    for argv in commands(port.resolve(), out.resolve(), checkout_version(src), race=race, relay=has_relay(port)):
        run_command(argv, cwd=work, env=env)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shim", required=True, type=Path, help="the shim's Go module folder")
    parser.add_argument("--src", required=True, type=Path, help="a toolnexus checkout (holds golang/)")
    parser.add_argument("--work", required=True, type=Path, help="scratch folder for the patched copy")
    parser.add_argument("--out", required=True, type=Path, help="where the binary goes")
    parser.add_argument("--race", action="store_true", help="build with Go's race detector (needs cgo)")


def _build(args: argparse.Namespace) -> str:
    build(args.shim.resolve(), args.src.resolve(), args.work.resolve(), args.out.resolve(), race=args.race)
    return f"built {args.out}"


def main(argv: list[str] | None = None) -> int:
    return cli("go_shim", __doc__.splitlines()[0], _arguments, _build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
