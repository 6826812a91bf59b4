"""The layout shows the flow (docs/architecture.md): the packages of `pipeline/` import each
other without a cycle, and only the few modules every package shares sit loose at the top.

The graph is computed from the source: every `import` and `from ... import` of every
module, those inside functions included (a lazy import is still a dependency), those under
`if TYPE_CHECKING:` left out (they are annotations, never run). A subpackage counts as part
of its top-level package (`replay.fast` is `replay`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"
LOOSE = {"__init__", "errors", "files", "limits", "model", "worker_boot"}


def _node(module: str) -> str | None:
    """`pipeline.replay.fast.kernel` -> `replay`; a loose module is its own node."""
    parts = module.split(".")
    if parts[0] != "pipeline" or len(parts) == 1:
        return None
    return parts[1]


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skip.update(id(n) for n in ast.walk(inner))
    return skip


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    relative_to = ".".join(path.relative_to(PIPELINE.parent).with_suffix("").parts)
    names = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = relative_to.split(".")[: -node.level]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            if module == "pipeline":  # `from pipeline import engines`
                names.update(f"pipeline.{alias.name}" for alias in node.names)
    return names


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PIPELINE.rglob("*.py")):
        source = _node(".".join(path.relative_to(PIPELINE.parent).with_suffix("").parts))
        if source is None:
            continue
        edges = graph.setdefault(source, set())
        for name in _imports(path):
            target = _node(name)
            if target is not None and target != source:
                edges.add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_package_imports_back_a_package_that_imports_it():
    graph = package_graph()
    assert {"cli", "engines", "ingest", "replay", "reader", "audit", "dataset", "stats"} <= set(graph)
    circles = cycles(graph)
    paths = {tuple(c): sorted((a, b) for a in c for b in graph[a] if b in c) for c in circles}
    assert circles == [], f"packages that import each other (edges inside each circle): {paths}"


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_engines_seam_is_not_imported_by_the_library():
    """Routing reaches the library as arguments: only the commands import pipeline.engines."""
    importers = sorted(p for p, targets in package_graph().items() if "engines" in targets)
    assert importers == ["cli"]


def test_at_most_six_modules_sit_loose_in_pipeline():
    loose = {p.stem for p in PIPELINE.glob("*.py")}
    assert loose <= LOOSE, f"loose modules beyond {sorted(LOOSE)}: {sorted(loose - LOOSE)}"
    assert len(LOOSE) == 6


# rules/, replay/, simulate/ and model.py are being rewritten in another branch: checked there
DOCSTRING_EXEMPT = ("rules/", "replay/", "simulate/", "model.py")
REPO_DIRS = ("pipeline", "docs", "tests", "bench", "sql", "schemas", "scripts", "sample_logs")
_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md|sql|json|toml|csv|jsonl|properties))")
_FILE = re.compile(r"(?<![\w/.-])([\w-]+\.(?:py|md))\b")
_ISSUE = re.compile(r"\bissues? ?(?:\d+|[A-Z]\b)|(?<![\w&])#\d+\b")
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|µs|seconds?|minutes?)\b(?![\w-])")


def _docstrings():
    for path in sorted(PIPELINE.rglob("*.py")):
        relative = path.relative_to(PIPELINE).as_posix()
        if relative.startswith(DOCSTRING_EXEMPT):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node, clean=False)
                if text:
                    yield f"{relative}:{getattr(node, 'lineno', 1)}", path, text


def test_docstrings_name_only_files_of_the_repository():
    root = PIPELINE.parent
    names = {p.name for d in REPO_DIRS for p in (root / d).rglob("*")} | {p.name for p in root.glob("*")}
    missing = []
    for where, path, text in _docstrings():
        for name in _PATH.findall(text):
            if name.split("/")[0] in REPO_DIRS and not (root / name).exists():
                missing.append((where, name))
            elif name.split("/")[0] not in REPO_DIRS and not (PIPELINE / name).exists() and not name[0].isupper():
                if not (path.parent / name).exists() and name.split("/")[0] not in ("root", ".snapshots", ".current"):
                    missing.append((where, name))
        missing += [(where, name) for name in _FILE.findall(text) if name not in names]
    assert missing == []


def test_docstrings_hold_no_issue_numbers_or_timings():
    """History and measurements go to docs/performance.md and the commit log."""
    found = [(where, m) for where, _, text in _docstrings() for m in _ISSUE.findall(text) + _TIMING.findall(text)]
    assert found == []


def test_no_private_name_is_imported_across_modules():
    """What another module needs is public; `_name` stays inside its module."""
    crossings = []
    for path in sorted(PIPELINE.rglob("*.py")):
        relative = path.relative_to(PIPELINE).as_posix()
        if relative.startswith(DOCSTRING_EXEMPT):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipeline"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        crossings.append(f"{relative}: from {node.module} import {alias.name}")
                    modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                modules.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("pipeline"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                crossings.append(f"{relative}: {node.value.id}.{node.attr}")
    assert crossings == []
