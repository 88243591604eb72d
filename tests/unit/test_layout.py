"""The layout rule (docs/architecture.md, "The package" and the layout rule), as executable checks.

* the top of ``warehouse/`` holds only config.py, errors.py, files.py (file helpers) and
  packages: the CLI package ``cli/`` (the top layer: it may import anything, nothing imports it),
  the build machinery ``pipeline`` (which ``orchestrate`` uses, never the other way round) and
  the domain packages;
* a dbt Python model imports only ``warehouse.<domain>.marts``;
* a domain package imports only the packages below it (``ALLOWED``), never ``release``, ``quality``
  or ``evaluate``, and never another domain's ``marts``;
* in ``SETTINGS_ONLY_IN_MARTS`` only the dbt entry point (``marts.py``) reads the settings;
* no module is longer than ``MAX_LINES``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from warehouse.config import REPO_ROOT

PACKAGE = REPO_ROOT / "warehouse"
TOP_LEVEL = {"__init__.py", "config.py", "errors.py", "files.py"}
CLI = "cli"  # the top layer: may import anything, nothing imports it
BASE = {"config", "errors", "files", "__version__"}
# What each package may import besides itself and BASE: the layers, bottom to top.
ALLOWED: dict[str, set[str]] = {
    "sources": set(),
    "metrics": set(),
    "human": {"metrics"},
    "molecular": {"sources"},
    "simulate": {"sources", "human"},
    "features": {"sources", "molecular"},
    "ranking": {"sources", "metrics", "features"},
    "evaluate": {"sources", "metrics", "human"},
    "quality": {"sources", "metrics", "human"},
    "release": {"sources", "metrics", "human", "quality"},
    # the build machinery: lock, state, plan, dbt, quality gate, publish, build record, build()
    "pipeline": {"sources", "simulate", "quality"},
    # the top layer: status and the Dagster definitions, which use the pipeline
    "orchestrate": {"pipeline", "sources", "quality"},
}
HIGHER = {"release", "quality", "evaluate", "pipeline", "orchestrate"}
# Packages whose library takes paths as arguments: only their marts.py calls load_settings().
SETTINGS_ONLY_IN_MARTS = {"ranking"}
MAX_LINES = 600


def _imports(path: Path) -> list[str]:
    """Absolute ``warehouse...`` modules a file imports (``from a import b`` yields ``a.b``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [f"{node.module}.{a.name}" for a in node.names]
    return [m for m in out if m == "warehouse" or m.startswith("warehouse.")]


def _package_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0]


def test_top_of_warehouse_holds_only_the_four_modules_and_packages() -> None:
    files = {p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py"}
    assert files <= TOP_LEVEL, f"modules outside a domain package: {sorted(files - TOP_LEVEL)}"
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(ALLOWED) | {CLI}, (
        f"packages without a layer in ALLOWED: {packages - set(ALLOWED) - {CLI}}"
    )


def test_nothing_imports_the_cli() -> None:
    paths = [p for p in PACKAGE.rglob("*.py") if _package_of(p) != CLI]
    paths += sorted((REPO_ROOT / "python_models").rglob("*.py"))
    for path in paths:
        for module in _imports(path):
            parts = module.split(".")
            assert parts[1:2] != [CLI], f"{path.relative_to(REPO_ROOT)} imports {module}"


@pytest.mark.parametrize("package", sorted(SETTINGS_ONLY_IN_MARTS))
def test_only_the_dbt_entry_point_reads_the_settings(package: str) -> None:
    for path in sorted((PACKAGE / package).rglob("*.py")):
        if path.name != "marts.py":
            where = path.relative_to(REPO_ROOT)
            assert "warehouse.config.load_settings" not in _imports(path), where


def test_python_models_import_only_domain_marts() -> None:
    models = sorted((REPO_ROOT / "python_models").rglob("*.py"))
    assert models
    for path in models:
        for module in _imports(path):
            parts = module.split(".")
            ok = len(parts) == 3 and parts[1] in ALLOWED and parts[2] == "marts"
            where = f"{path.relative_to(REPO_ROOT)} imports {module}"
            assert ok, f"{where}: a Python model imports only warehouse.<domain>.marts"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_domain_packages_import_only_lower_layers(package: str) -> None:
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for module in _imports(path):
            parts = module.split(".")
            if len(parts) < 2 or parts[1] in BASE or parts[1] == package:
                continue
            target = parts[1]
            where = f"{path.relative_to(REPO_ROOT)} imports {module}"
            assert target in ALLOWED[package], f"{where}: {package} may import {ALLOWED[package]}"
            assert not (package not in HIGHER and target in HIGHER), where
            assert "marts" not in parts[2:], f"{where}: another domain's glue"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_library_never_imports_its_own_marts(package: str) -> None:
    """``marts.py`` is the dbt glue on top of its package: the library below it never calls up."""
    for path in sorted((PACKAGE / package).rglob("*.py")):
        if path.name != "marts.py":
            glue = [m for m in _imports(path) if m.startswith(f"warehouse.{package}.marts")]
            assert not glue, f"{path.relative_to(REPO_ROOT)} imports {glue}: pass what it needs in"


def test_the_checks_catch_a_violation(tmp_path: Path) -> None:
    """The import parser sees the forms a violation would take."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from warehouse.release.export import export_release\n"
        "import warehouse.quality.guards\n"
        "from warehouse.metrics import marts\n"
    )
    assert _imports(bad) == [
        "warehouse.release.export.export_release",
        "warehouse.quality.guards",
        "warehouse.metrics.marts",
    ]


def test_no_module_over_the_line_limit() -> None:
    long = {
        str(p.relative_to(REPO_ROOT)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"split these modules along a natural seam: {long}"


# --- short functions ----------------------------------------------------------------------------
MAX_FUNCTION_LINES = 80  # docs/architecture.md: aim under 60, never over 80


def long_functions(root: Path = PACKAGE, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """``path:function`` (relative to ``root``'s parent) -> lines, decorators included, for every
    function, method or nested function under ``root`` longer than ``limit``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if (n := node.end_lineno - start + 1) > limit:
                    out[f"{path.relative_to(root.parent).as_posix()}:{node.name}"] = n
    return out


def test_no_function_over_the_line_limit() -> None:
    long = long_functions()
    assert not long, (
        f"split these functions into named steps (at most {MAX_FUNCTION_LINES}): {long}"
    )


def test_the_function_length_check_sees_methods_and_nested_functions(tmp_path: Path) -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(79))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        f"class C:\n    @property\n    def f(self):\n{body}"
        f"def outer():\n    def inner():\n{body}\n"
        f"def short():\n    return 1\n"
    )
    found = long_functions(tmp_path / "pkg")
    assert found == {"pkg/m.py:f": 81, "pkg/m.py:outer": 81}, found
    assert long_functions(tmp_path / "pkg", limit=79) == {
        "pkg/m.py:f": 81,
        "pkg/m.py:outer": 81,
        "pkg/m.py:inner": 80,
    }


# --- no import cycle between files --------------------------------------------------------------
# Empty: a new cycle is broken where it appears, never listed here.
ALLOWED_CYCLES: set[frozenset[str]] = set()


def _module_name(path: Path, root: Path) -> str:
    """``<root>/a/b.py`` -> ``<root name>.a.b``; a package's ``__init__.py`` -> the package."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_targets(path: Path, root: Path, modules: set[str]) -> set[str]:
    """Modules of ``modules`` that ``path`` imports anywhere (top level, inside functions, under
    ``TYPE_CHECKING``), relative imports resolved; ``from a import b`` is ``a.b`` when that is a
    module, else ``a``; ``import a.b.c`` is its longest prefix that is a module."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            candidates = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
        else:
            continue
        for module in candidates:
            while module and module not in modules:
                module = module.rpartition(".")[0]
            if module and module != name:
                found.add(module)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules under ``root`` it imports (every import statement of its file)."""
    paths = sorted(root.rglob("*.py"))
    modules = {_module_name(p, root) for p in paths}
    return {_module_name(p, root): _import_targets(p, root, modules) for p in paths}


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan): the cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_files() -> None:
    cycles = [sorted(c) for c in import_cycles(import_graph()) if c not in ALLOWED_CYCLES]
    assert not cycles, f"import cycles (function-level imports included): {cycles}"


def test_the_cycle_check_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "warehouse" / "demo"
    pkg.mkdir(parents=True)
    (tmp_path / "warehouse" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from warehouse.demo.b import g\n    return g\n")
    (pkg / "b.py").write_text("from .c import h\n\n\ndef g():\n    return h\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from warehouse.demo import a\n"
    )
    (pkg / "d.py").write_text("import warehouse.demo.a.f\n")
    graph = import_graph(tmp_path / "warehouse")
    assert graph["warehouse.demo.d"] == {"warehouse.demo.a"}
    assert graph["warehouse.demo.b"] == {"warehouse.demo.c"}
    assert import_cycles(graph) == [
        frozenset({"warehouse.demo.a", "warehouse.demo.b", "warehouse.demo.c"})
    ]
