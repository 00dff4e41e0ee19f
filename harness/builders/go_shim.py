"""Build step of the golang port: the shim binary, against a toolnexus checkout.

``python go_shim.py --shim DIR --src CHECKOUT --work DIR --out BINARY`` copies the shim's
module (DIR) into a scratch folder (WORK, recreated each time), points the port's module
at ``CHECKOUT/golang`` with a ``replace`` there — never in the committed go.mod — then
runs ``go mod tidy`` and ``go build``. Go's own build cache keeps warm rebuilds fast.
Failures print the command that failed with its output tail and exit non-zero.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

PORT_MODULE = "github.com/muthuishere/toolnexus/golang"
SHIM_FILES = ("go.mod", "go.sum")


class BuildError(Exception):
    """The checkout is unusable or a go command failed; the message says which."""


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


def stage(shim: Path, work: Path) -> None:
    """Copy the shim module (top-level .go files, go.mod, go.sum) into a fresh ``work``."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for item in shim.iterdir():
        if item.is_file() and (item.suffix == ".go" or item.name in SHIM_FILES):
            shutil.copy2(item, work / item.name)


def commands(port: Path, out: Path) -> list[list[str]]:
    return [
        ["go", "mod", "edit", f"-replace={PORT_MODULE}={port}"],
        ["go", "mod", "tidy"],
        ["go", "build", "-trimpath", "-o", str(out), "."],
    ]


def _run(argv: list[str], cwd: Path) -> None:
    # GOTOOLCHAIN=local: build with the installed go, never download another one.
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": os.environ.get("GOFLAGS", "") + " -buildvcs=false"}
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-20:]
        raise BuildError(f"exit {done.returncode}: {' '.join(argv)} (in {cwd})\n" + "\n".join(f"  | {t}" for t in tail))


def build(shim: Path, src: Path, work: Path, out: Path) -> None:
    port = port_dir(src)
    stage(shim, work)
    out.parent.mkdir(parents=True, exist_ok=True)
    for argv in commands(port.resolve(), out.resolve()):
        _run(argv, work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shim", required=True, type=Path, help="the shim's Go module folder")
    parser.add_argument("--src", required=True, type=Path, help="a toolnexus checkout (holds golang/)")
    parser.add_argument("--work", required=True, type=Path, help="scratch folder for the patched copy")
    parser.add_argument("--out", required=True, type=Path, help="where the binary goes")
    args = parser.parse_args(argv)
    try:
        build(args.shim.resolve(), args.src.resolve(), args.work.resolve(), args.out.resolve())
    except BuildError as exc:
        print(f"go_shim: {exc}", file=sys.stderr)
        return 1
    print(f"go_shim: built {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
