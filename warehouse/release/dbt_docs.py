"""Column descriptions of the dbt models, as their yml declares them (docs/release.md, "Column
descriptions").

A released column that a dbt model also has is described once: in that model's yml under the
project's model-paths (``models/**/*.yml``, ``python_models/**/*.yml``). The release reads the
text when a description is asked for (never at import), expands ``{{ doc('name') }}`` with the
``{% docs name %}`` blocks of the ``.md`` files under the same paths, and collapses whitespace
to single spaces (a CSV cell, a Croissant field).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from warehouse.config import project_dir
from warehouse.errors import WarehouseError

_DOC_REF = re.compile(r"\{\{\s*doc\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\}\}")
_DOC_BLOCK = re.compile(r"\{%-?\s*docs\s+(\w+)\s*-?%\}(.*?)\{%-?\s*enddocs\s*-?%\}", re.S)


def _model_paths(root: Path) -> list[Path]:
    import yaml

    project = yaml.safe_load((root / "dbt_project.yml").read_text(encoding="utf-8"))
    return [root / p for p in project.get("model-paths", ["models"])]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@cache
def _doc_blocks(root: Path) -> dict[str, str]:
    blocks: dict[str, str] = {}
    for folder in _model_paths(root):
        for md in sorted(folder.rglob("*.md")):
            for name, body in _DOC_BLOCK.findall(md.read_text(encoding="utf-8")):
                blocks[name] = _one_line(body)
    return blocks


@cache
def _model_columns(root: Path) -> dict[str, dict[str, str]]:
    """model name -> column name -> raw description (``doc()`` not yet expanded)."""
    import yaml

    models: dict[str, dict[str, str]] = {}
    for folder in _model_paths(root):
        for path in sorted(folder.rglob("*.yml")):
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            for model in doc.get("models") or ():
                cols = {c["name"]: str(c.get("description", "")) for c in model.get("columns", ())}
                models[model["name"]] = cols
    return models


def column_description(model: str, column: str, *, root: Path | None = None) -> str:
    """``model.column``'s description in the dbt yml, ``doc()`` blocks expanded, on one line
    (``root``: the dbt project, default :func:`warehouse.config.project_dir`)."""
    root = project_dir() if root is None else root
    columns = _model_columns(root).get(model)
    if columns is None:
        raise WarehouseError(f"no dbt model {model!r} in the yml of {root}")
    if not columns.get(column):
        raise WarehouseError(
            f"dbt model {model} declares no description for column {column!r}. Fix: describe it "
            "in the model's yml (the one declaration, docs/release.md)."
        )
    blocks = _doc_blocks(root)

    def expand(m: re.Match) -> str:
        if m.group(1) not in blocks:
            raise WarehouseError(f"{model}.{column} names an unknown doc block {m.group(1)!r}")
        return blocks[m.group(1)]

    return _one_line(_DOC_REF.sub(expand, columns[column]))


__all__ = ["column_description"]
