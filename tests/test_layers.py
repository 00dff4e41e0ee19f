"""The layer contract of the ``toolnexus_conformance`` package (CONTRIBUTING.md, "The layers").

Every module belongs to one subpackage, every subpackage to one layer. A module may import
its own layer and the layers below it, never a layer above; it never uses another module's
``_private`` names (imported, or read off an imported module); and no two packages import each
other, directly or round a longer loop. Imports inside functions and under ``TYPE_CHECKING``
count: a lazy import still couples the two packages. Read from the source with ``ast``,
nothing imported.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "toolnexus_conformance"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# Top to bottom: each layer may import itself and the layers after it.
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("entry points", frozenset({"plugin", "ci_gate", "cross", "differential", "reports", "builders"})),
    ("verdict", frozenset({"verdict"})),
    ("run and golden", frozenset({"run", "golden"})),
    ("scenario, shim transport, fake provider", frozenset({"scenario", "shim", "fake_provider"})),
    ("helpers", frozenset({"helpers"})),
]


@dataclass(frozen=True)
class Use:
    """One module using another: ``source`` imports ``target`` (both dotted module names), or
    reads ``name`` from it (an imported name, or an attribute of the imported module)."""

    source: str
    target: str
    name: str | None
    where: str  # path:line, for the message


def package_of(module: str) -> str:
    """The subpackage a dotted module name belongs to ('' for the top-level package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_of(package: str) -> int | None:
    for index, (_, packages) in enumerate(LAYERS):
        if package in packages:
            return index
    return None


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def uses_in(path: Path, known: set[str], root: Path = ROOT) -> Iterator[Use]:
    """Every use of a package module that ``path`` (a file under ``root``) makes."""
    source = module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bound: dict[str, str] = {}  # local name -> package module it is bound to
    for node in ast.walk(tree):
        where = f"{path.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield Use(source, alias.name, None, where)
                    if alias.asname:
                        bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = source.split(".") if is_package else source.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in known:
                    yield Use(source, submodule, None, where)
                    bound[alias.asname or alias.name] = submodule
                else:
                    yield Use(source, target, alias.name, where)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            yield Use(source, bound[node.value.id], node.attr, f"{path.relative_to(root.parent)}:{node.lineno}")


def package_uses() -> list[Use]:
    found = modules()
    known = set(found)
    return [use for path in found.values() for use in uses_in(path, known)]


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def violations(uses: Iterable[Use], module_names: Iterable[str]) -> list[str]:
    """Every breach of the contract, one readable line each (empty: the contract holds)."""
    problems: list[str] = []
    names = sorted(module_names)
    for module in names:
        package = package_of(module)
        if not package:
            continue
        if module.count(".") == 1 and not any(other.startswith(module + ".") for other in names):
            problems.append(f"{module}: a module directly in {PACKAGE}/; put it in the package of its layer")
        elif layer_of(package) is None:
            problems.append(f"{module}: package {package!r} is in no layer; add it to LAYERS in tests/test_layers.py")
    edges: dict[tuple[str, str], Use] = {}
    for use in uses:
        source, target = package_of(use.source), package_of(use.target)
        if use.name is not None and is_private(use.name) and use.source != use.target:
            problems.append(
                f"{use.where}: {use.source} uses {use.target}.{use.name}, a private name of another module; "
                f"make it public (and list it in __all__) where it is defined"
            )
        if source == target or not target:
            continue
        edges.setdefault((source, target), use)
        low, high = layer_of(source), layer_of(target)
        if low is not None and high is not None and high < low:
            problems.append(
                f"{use.where}: {use.source} imports {use.target}: {source!r} ({LAYERS[low][0]}) may not import "
                f"{target!r} ({LAYERS[high][0]}), a layer above it"
            )
    for component in cycles(edges):
        links = [
            f"{edges[(a, b)].where} ({a} -> {b})" for a in component for b in component if (a, b) in edges
        ]
        problems.append(f"packages import each other in a cycle: {' <-> '.join(component)}; imports: {'; '.join(links)}")
    return problems


def test_the_package_keeps_its_layer_contract() -> None:
    problems = violations(package_uses(), modules())
    assert not problems, "the layer contract (CONTRIBUTING.md) is broken:\n" + "\n".join(problems)


def test_every_package_says_what_it_owns_and_its_public_surface() -> None:
    missing = []
    for init in sorted(ROOT.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if ast.get_docstring(tree) is None:
            missing.append(f"{init.relative_to(ROOT.parent)}: no module docstring")
        if not any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in n.targets) for n in tree.body):
            missing.append(f"{init.relative_to(ROOT.parent)}: no __all__")
    assert not missing, "\n".join(missing)


def test_every_package_ships_in_the_wheel() -> None:
    """pyproject.toml lists packages one by one: a new package left out would be missing from
    the wheel a port's repository installs, and only there."""
    listed = set(tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {module_name(init) for init in ROOT.rglob("__init__.py")}
    assert packages <= listed, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(packages - listed)}"


def _synthetic(*links: tuple[str, str, str | None]) -> list[Use]:
    return [Use(f"{PACKAGE}.{a}", f"{PACKAGE}.{b}", name, f"{a.replace('.', '/')}.py:1") for a, b, name in links]


def test_the_contract_names_an_import_from_a_lower_layer_to_a_higher_one() -> None:
    problems = violations(_synthetic(("helpers.paths", "verdict.judge", None)), [])
    assert len(problems) == 1, problems
    assert "'helpers' (helpers) may not import 'verdict' (verdict), a layer above it" in problems[0]
    assert problems[0].startswith("helpers/paths.py:1: ")


def test_the_contract_names_a_private_name_of_another_module() -> None:
    problems = violations(_synthetic(("plugin.items", "verdict.selection", "_rules_of"),
                                     ("verdict.selection", "verdict.selection", "_inside")), [])
    assert problems == [
        "plugin/items.py:1: toolnexus_conformance.plugin.items uses toolnexus_conformance.verdict.selection._rules_of, "
        "a private name of another module; make it public (and list it in __all__) where it is defined"
    ]


def test_the_contract_names_a_cycle_between_packages_even_within_one_layer() -> None:
    problems = violations(_synthetic(("cross.report", "reports.parity", None), ("reports.parity", "plugin.items", None),
                                     ("plugin.items", "cross.resume", None)), [])
    assert problems == [
        "packages import each other in a cycle: cross <-> plugin <-> reports; imports: "
        "cross/report.py:1 (cross -> reports); plugin/items.py:1 (plugin -> cross); reports/parity.py:1 (reports -> plugin)"
    ]


def test_the_contract_finds_lazy_imports_and_private_attributes(tmp_path: Path) -> None:
    source = tmp_path / PACKAGE / "helpers" / "mod.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "from toolnexus_conformance.shim import fork_server\n"
        "def f():\n"
        "    from toolnexus_conformance.verdict.judge import judge\n"
        "    return fork_server._serve, judge\n",
        encoding="utf-8",
    )
    known = {f"{PACKAGE}.shim.fork_server", f"{PACKAGE}.verdict.judge"}
    problems = violations(uses_in(source, known, root=tmp_path / PACKAGE), [])
    assert any("may not import 'verdict'" in p for p in problems), problems
    assert any("fork_server._serve, a private name of another module" in p for p in problems), problems


def test_a_package_in_no_layer_and_a_module_outside_the_packages_are_named() -> None:
    problems = violations([], [PACKAGE, f"{PACKAGE}.tools", f"{PACKAGE}.tools.thing", f"{PACKAGE}.loose"])
    assert problems == [
        f"{PACKAGE}.loose: a module directly in {PACKAGE}/; put it in the package of its layer",
        f"{PACKAGE}.tools: package 'tools' is in no layer; add it to LAYERS in tests/test_layers.py",
        f"{PACKAGE}.tools.thing: package 'tools' is in no layer; add it to LAYERS in tests/test_layers.py",
    ]
