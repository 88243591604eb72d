"""The layout rule (DEVELOPERS.md, STYLE.md), as executable checks.

* the top of ``warehouse/`` holds only cli.py, config.py, errors.py, files.py (file helpers),
  build.py and packages;
* a dbt Python model imports only ``warehouse.<domain>.marts``;
* a domain package imports only the packages below it (``ALLOWED``), never ``release``, ``quality``
  or ``evaluate``, and never another domain's ``marts``;
* no module is longer than ``MAX_LINES``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from warehouse.config import REPO_ROOT

PACKAGE = REPO_ROOT / "warehouse"
TOP_LEVEL = {"__init__.py", "cli.py", "config.py", "errors.py", "files.py", "build.py"}
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
    # the top layer beside build.py: the build lock and incremental state (used by build.py),
    # status and the Dagster definitions (which call the build)
    "orchestrate": {"build", "sources", "quality"},
}
HIGHER = {"release", "quality", "evaluate", "orchestrate"}
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
    assert packages <= set(ALLOWED), (
        f"packages without a layer in ALLOWED: {packages - set(ALLOWED)}"
    )


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
