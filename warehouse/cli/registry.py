"""`tastebench registry list` and `tastebench registry verify`: the pinned dataset registry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles


def registry_list() -> None:
    """List registered datasets with their pins."""
    from rich.table import Table

    from warehouse.sources.registry import load_registry

    table = Table("key", "path", "rows", "sha256", "license")
    for d in load_registry().values():
        table.add_row(d.key, d.path, str(d.rows or ""), d.sha256[:12], d.license)
    consoles.results().print(table)


def registry_verify(
    mirror: Annotated[Path | None, typer.Option(help="Local data mirror.")] = None,
) -> None:
    """Resolve and hash-check every non-optional dataset."""
    from warehouse.config import load_settings
    from warehouse.sources.registry import load_registry, resolve

    settings = load_settings(mirror=mirror)
    for d in load_registry().values():
        if not d.optional:
            resolve(d.key, settings)
            consoles.results().print(f"[green]ok[/green] {d.key}")
