"""The dependency rules of docs/architecture.md, checked on the source.

The import graph is read with :mod:`ast` (no code runs): every import of a module of
``judging`` or ``metrics`` by another, at module level or inside a function (a circle
hidden in a function is still a circle); imports under ``if TYPE_CHECKING:`` are not
dependencies. The rules:

1. no import circle between modules, function-level imports included;
2. ``judging`` never imports ``metrics`` (anywhere, functions included);
3. no lower layer imports an upper one: ``models``, ``services``, ``selectors`` and the
   pure modules never import a ``views``, ``api``, ``forms`` or ``admin`` module;
4. ``config`` imports neither app, and ``graded`` (the code shared below both, e.g. the
   text policy) imports none of ``config``, ``judging`` and ``metrics``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("judging", "metrics")
#: Every top-level package of the project: the apps, the configuration and the shared code.
PACKAGES = ("config", "graded", *APPS)
#: Module names (the last part, or the package under an app's capability) of upper layers.
UPPER = {"views", "api", "forms", "admin", "urls"}


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target``; ``late`` when only inside a function."""

    source: str
    target: str
    late: bool
    line: int


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path, apps: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for app in apps:
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            found[_module_name(path, root)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Return every import with whether it runs late (inside a function or class body)."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(nodes: list[ast.stmt], late: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append((node, late))
            elif isinstance(node, ast.If) and _is_type_checking(node):
                continue
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, True)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, late)
            else:
                # if/try/with/for bodies, and the bodies of except handlers
                for field in ("body", "orelse", "finalbody", "handlers"):
                    children = getattr(node, field, None)
                    if isinstance(children, list):
                        visit(children, late)

    visit(tree.body, False)
    return found


def edges(root: Path = ROOT, apps: tuple[str, ...] = APPS) -> list[Edge]:
    """Return the import edges between the modules of ``apps`` (the project's by default)."""
    modules = _modules(root, apps)
    result = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, late in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    result.append(Edge(name, target, late, node.lineno))
    return result


def cycles(graph_edges: list[Edge]) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for edge in graph_edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def layer(module: str) -> str:
    """Return ``upper`` for views/api/forms/admin/urls modules (or packages), else ``lower``."""
    parts = module.split(".")[1:]
    if any(p in UPPER or p.startswith(tuple(f"{u}_" for u in UPPER)) for p in parts):
        return "upper"
    return "lower"


# --- the checks on hand-made graphs (so the checker itself can fail) ----------------------


def test_cycles_finds_circles_through_late_imports_too() -> None:
    """A two-module circle is found, also when one side imports inside a function."""
    circle = [Edge("a", "b", False, 1), Edge("b", "a", False, 1), Edge("b", "c", False, 2)]
    assert cycles(circle) == [["a", "b"]]
    assert cycles([Edge("a", "b", False, 1), Edge("b", "a", True, 1)]) == [["a", "b"]]
    assert cycles([Edge("a", "b", False, 1), Edge("b", "c", True, 1)]) == []


def test_layer_names() -> None:
    """Views, API, forms, admin and URL modules are upper; models and services lower."""
    assert layer("judging.llm.views") == "upper"
    assert layer("judging.lists.api") == "upper"
    assert layer("judging.llm.views") == "upper"
    assert layer("judging.llm.api") == "upper"
    assert layer("judging.llm.services") == "lower"
    assert layer("metrics.engine.core") == "lower"


def test_edges_read_relative_and_late_imports(tmp_path: Path) -> None:
    """The reader resolves relative imports and marks function-level ones late."""
    tree = ast.parse(
        "from . import services\nimport x\nif TYPE_CHECKING:\n    import y\n"
        "def f():\n    from .views import v\n"
    )
    found = [(type(n).__name__, late) for n, late in _imports(tree)]
    assert found == [("ImportFrom", False), ("Import", False), ("ImportFrom", True)]
    # The same on files: relative names resolve to modules, names inside modules to them.
    package = tmp_path / "app" / "cap"
    package.mkdir(parents=True)
    for path in (tmp_path / "app" / "__init__.py", package / "__init__.py"):
        path.write_text("")
    (tmp_path / "app" / "models.py").write_text("X = 1\n")
    (package / "views.py").write_text("V = 1\n")
    (package / "services.py").write_text(
        "from ..models import X\ntry:\n    import os\nexcept ImportError:\n"
        "    from . import views\ndef f():\n    from .views import V\n"
    )
    got = sorted((e.source, e.target, e.late) for e in edges(tmp_path, ("app",)))
    assert got == [
        ("app.cap.services", "app.cap.views", False),
        ("app.cap.services", "app.cap.views", True),
        ("app.cap.services", "app.models", False),
    ]


# --- the rules on the project --------------------------------------------------------------


@pytest.fixture(scope="module")
def project_edges() -> list[Edge]:
    """Return the project's import edges."""
    return edges()


def test_no_import_circles(project_edges: list[Edge]) -> None:
    """No module of judging or metrics takes part in an import circle."""
    found = cycles(project_edges)
    inside = [
        f"{e.source}:{e.line} -> {e.target}" + (" (in a function)" if e.late else "")
        for component in found
        for e in project_edges
        if e.source in component and e.target in component
    ]
    assert found == [], "\n".join(inside)


def test_judging_never_imports_metrics(project_edges: list[Edge]) -> None:
    """Metrics reads judging; judging never imports metrics, not even inside a function."""
    wrong = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in project_edges
        if e.source.startswith("judging") and e.target.startswith("metrics")
    ]
    assert wrong == []


def test_lower_layers_never_import_upper_ones(project_edges: list[Edge]) -> None:
    """Models, services, selectors and pure modules import no views, API, forms or admin."""
    wrong = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in project_edges
        if layer(e.source) == "lower" and layer(e.target) == "upper"
    ]
    assert wrong == []


@pytest.fixture(scope="module")
def all_edges() -> list[Edge]:
    """Return the import edges between every package of the project, config included."""
    return edges(ROOT, PACKAGES)


def test_config_imports_neither_app(all_edges: list[Edge]) -> None:
    """Configuration sits below the apps: it names their modules only as strings."""
    wrong = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in all_edges
        if e.source.split(".")[0] == "config" and e.target.split(".")[0] in APPS
    ]
    assert wrong == []


def test_shared_code_imports_no_project_package(all_edges: list[Edge]) -> None:
    """``graded`` is below everything: it imports neither app nor the configuration."""
    wrong = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in all_edges
        if e.source.split(".")[0] == "graded" and e.target.split(".")[0] != "graded"
    ]
    assert wrong == []
    assert any(e.target.startswith("graded.") for e in all_edges)  # and it is used


def test_the_text_policy_is_shared_from_below(all_edges: list[Edge]) -> None:
    """``config``, ``judging`` and ``metrics`` all read the one policy in graded."""
    users = {e.source.split(".")[0] for e in all_edges if e.target == "graded.textpolicy"}
    assert users == {"config", "judging", "metrics"}
    assert not (ROOT / "judging" / "textpolicy.py").exists()


def test_the_config_rule_can_fail(tmp_path: Path) -> None:
    """A config module importing an app is an edge the rule sees."""
    for package in ("config", "judging"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "judging" / "models.py").write_text("X = 1\n")
    (tmp_path / "config" / "parsers.py").write_text("from judging.models import X\n")
    found = [(e.source, e.target) for e in edges(tmp_path, ("config", "judging"))]
    assert found == [("config.parsers", "judging.models")]
