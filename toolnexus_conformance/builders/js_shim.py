"""Build step of the js port (toolnexus_conformance/shim/ports.toml [js]): the port compiled from a checkout.

No registry reachable here serves the npm package, so the checkout's ``js/`` folder is
copied into ``--out`` (the checkout may be read-only, and the build must never write
there), its dependencies installed with ``npm ci`` against the untouched lockfile
(``npm install`` would rewrite the lockfile), and compiled with the package's own
TypeScript (``tsc -p tsconfig.json``). The shim (``shims/js/shim.mjs``) imports the result:

    <out>/node          symlink to the node the build used (the start command runs it)
    <out>/port/...      the copy; <out>/port/dist/index.js is the port's entry module
    <out>/build.stamp   digest of every input; an unchanged stamp skips npm and tsc

Run: ``python -m toolnexus_conformance.builders.js_shim --src PATH/TO/toolnexus --out DIR``. A failure
prints one line naming what is missing or the command that failed (with its output tail),
exit status 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import stat
from pathlib import Path

from .common import BuildError, cli, run_command

MIN_NODE = 20
PACKAGE = "toolnexus"
INPUTS = ("package.json", "package-lock.json", "tsconfig.json", "src")
ENTRY = Path("dist/index.js")
NPM_TIMEOUT_S = 600
TSC_TIMEOUT_S = 600


def port_dir(src: Path) -> Path:
    """The checkout's js package folder, checked to be the port's package with a lockfile."""
    folder = src / "js"
    manifest = folder / "package.json"
    if not manifest.is_file():
        raise BuildError(f"{src} is not a toolnexus checkout: no js/package.json")
    try:
        name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError) as exc:
        raise BuildError(f"{manifest}: cannot read it: {exc}") from None
    if name != PACKAGE:
        raise BuildError(f"{manifest} names package {name!r}, expected {PACKAGE!r}")
    if not (folder / "package-lock.json").is_file():
        raise BuildError(f"{folder} has no package-lock.json: npm ci needs the port's lockfile")
    return folder


def find_node(environ: dict[str, str] | None = None) -> tuple[Path, str]:
    """node (>= 20) and npm on PATH: node's resolved path and its version."""
    path = (os.environ if environ is None else environ).get("PATH")
    node = shutil.which("node", path=path)
    if node is None or shutil.which("npm", path=path) is None:
        raise BuildError(f"the js port is built with node >= {MIN_NODE} and npm; {'npm' if node else 'node'} is not on PATH")
    version = run_command([node, "--version"]).stdout.strip()
    found = re.match(r"v?(\d+)\.", version)
    if not found or int(found.group(1)) < MIN_NODE:
        raise BuildError(f"{node} is node {version or '?'}; the js port needs node >= {MIN_NODE}")
    return Path(node).resolve(), version


def inputs_digest(port: Path, node_version: str) -> str:
    """One digest over the package's manifest, lockfile, tsconfig and sources, and node."""
    digest = hashlib.sha256(f"node {node_version}\n".encode())
    for name in INPUTS:
        top = port / name
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            digest.update(str(path.relative_to(port)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def stage(port: Path, work: Path) -> None:
    """A fresh, writable copy of the package's inputs in ``work`` (no node_modules, no dist)."""
    remove_tree(work)
    work.mkdir(parents=True)
    for name in INPUTS:
        source = port / name
        if source.is_dir():
            shutil.copytree(source, work / name, copy_function=shutil.copyfile)
        elif source.is_file():
            shutil.copyfile(source, work / name)
    make_writable(work)


def make_writable(top: Path) -> None:
    # copytree copies a read-only checkout's folder modes; npm and tsc must write here.
    for path in [top, *top.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR | stat.S_IRUSR | (stat.S_IXUSR if path.is_dir() else 0))


def remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        make_writable(path)
        shutil.rmtree(path)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(src: Path, out: Path, environ: dict[str, str] | None = None) -> Path:
    """Build (or reuse) the port for the checkout at ``src``; return its entry module."""
    src, out = src.resolve(), out.resolve()
    port = port_dir(src)
    node, version = find_node(environ)
    out.mkdir(parents=True, exist_ok=True)
    work, stamp = out / "port", out / "build.stamp"
    digest = inputs_digest(port, version)
    if (work / ENTRY).is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == digest:
        _link_node(out, node)
        return work / ENTRY
    stamp.unlink(missing_ok=True)
    stage(port, work)
    lock = file_digest(work / "package-lock.json")
    env = {**(os.environ if environ is None else environ), "NO_UPDATE_NOTIFIER": "1"}
    npm = shutil.which("npm", path=env.get("PATH"))
    assert npm is not None  # find_node checked it
    run_command([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=work, env=env, timeout=NPM_TIMEOUT_S)
    if file_digest(work / "package-lock.json") != lock:
        raise BuildError(f"npm ci changed {work / 'package-lock.json'}: the port must build from its own lockfile")
    tsc = work / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.is_file():
        raise BuildError(f"npm ci installed no TypeScript compiler ({tsc}); the port's devDependencies should name typescript")
    run_command([str(node), str(tsc), "-p", "tsconfig.json"], cwd=work, env=env, timeout=TSC_TIMEOUT_S)
    if not (work / ENTRY).is_file():
        raise BuildError(f"tsc wrote no {work / ENTRY}")
    stamp.write_text(digest + "\n", encoding="utf-8")
    _link_node(out, node)
    return work / ENTRY


def _link_node(out: Path, node: Path) -> None:
    """Point <out>/node at the build's node, so the registry's start command can run it."""
    link = out / "node"
    if link.is_symlink() and Path(os.readlink(link)) == node:
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(node)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--src", required=True, help="the toolnexus checkout (repository root, holds js/)")
    parser.add_argument("--out", required=True, type=Path, help="the cache folder the build writes to")


def _build(args: argparse.Namespace) -> str:
    if not args.src:
        raise BuildError("no toolnexus checkout given; pass --port-src=PATH")
    return f"built {build(Path(args.src), args.out)}"


def main(argv: list[str] | None = None) -> int:
    return cli("js shim", "Build the js port from a toolnexus checkout.", _arguments, _build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
