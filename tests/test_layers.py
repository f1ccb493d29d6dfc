"""The auditor's layers (auditor/layers.py): no module imports one of a higher layer, and
no modules import each other, directly or round a longer loop.

The imports are read from the source (ast), not run: every `import` and `from ... import`
of a module, at its top, inside a function (an import deferred to dodge a loop is a loop
all the same) or under `if TYPE_CHECKING`. Importing `a.b.c` runs the packages `a` and
`a.b` too: those are counted where the importer is not in them itself.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from auditor.layers import LAYERS, PACKAGE, layer_of

ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# (importer, imported) -> why it may go up a layer. None, and it should stay so: a
# piece both need goes down instead.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def modules_of(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module under `root` (the package `package`) by dotted name: its file, and
    whether it is a package's __init__."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _known(name: str, modules: dict) -> str | None:
    """`name`, or the module it is an attribute of."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, is_package: bool, modules: dict) -> set[str]:
    """The modules of the package that `module` imports, anywhere in its source."""
    here = module if is_package else module.rpartition(".")[0]
    package = module.split(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here.split(".")[: len(here.split(".")) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:  # `from a import b`: the module a.b, else a
                named.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules
                          else source)
    imported = set()
    for name in named:
        if name != package and not name.startswith(package + "."):
            continue
        target = _known(name, modules)
        if target is None:
            continue
        parts = target.split(".")
        for depth in range(1, len(parts) + 1):  # the packages it runs on the way
            step = ".".join(parts[:depth])
            inside = module == step or module.startswith(step + ".")
            if step in modules and not inside:
                imported.add(step)
    return imported


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    modules = modules_of(root, package)
    return {name: imports_of(name, path, is_package, modules)
            for name, (path, is_package) in modules.items()}


def upward(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for importer, imported in sorted(graph.items()):
        for target in sorted(imported):
            low, high = layer_of(importer), layer_of(target)
            if high < low and (importer, target) not in ALLOWED_UPWARD:
                found.append(f"{importer} ({LAYERS[low].name}) imports {target} "
                             f"({LAYERS[high].name})")
    return found


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as loop:
        return loop.args[1]
    return None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m) is None] == []


def test_every_name_in_the_layers_is_a_module(graph):
    names = [name for layer in LAYERS for name in layer.modules]
    assert [n for n in names if n not in graph] == []
    assert len(names) == len(set(names))


def test_no_module_imports_a_higher_layer(graph):
    assert upward(graph) == []


def test_no_import_cycle(graph):
    assert cycle(graph) is None


def test_each_exception_has_a_reason_and_is_still_needed(graph):
    for (importer, target), reason in ALLOWED_UPWARD.items():
        assert reason.strip(), (importer, target)
        assert target in graph.get(importer, ()), f"{importer} no longer imports {target}"
        assert layer_of(target) < layer_of(importer), (importer, target)


def test_the_graph_reads_deferred_and_relative_imports(graph):
    """Known edges of the real tree, a function's own import among them."""
    assert "auditor.ingest.vocabulary" in graph["auditor.scope"]
    assert "auditor.games.blackjack.replay" in graph["auditor.details"]  # in a function
    assert "auditor.rules.catalog" in graph["auditor.paragraphs"]  # in a function
    assert "auditor.report" in graph["auditor.store.write"]  # the package it runs
    assert "auditor.house" in graph["auditor.rules.registry"]  # under TYPE_CHECKING


def test_a_loop_hidden_in_a_function_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from .sub.high import g\n    return g\n")
    (package / "sub" / "high.py").write_text("from .. import low\n\ndef g():\n    pass\n")
    found = import_graph(package, "pkg")
    assert found["pkg.low"] == {"pkg.sub", "pkg.sub.high"}
    assert found["pkg.sub.high"] == {"pkg.low"}
    assert set(cycle(found)) >= {"pkg.low", "pkg.sub.high"}
