"""`tastebench release`, `tastebench verify` and `tastebench competition`."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles

_GATED_HELP = (
    "Gated folder (code maps, pair sides, solution). Default: gated/ beside the DuckDB file."
)


def release(
    out_dir: Annotated[Path, typer.Argument(help="New or empty folder for the public release.")],
    db: Annotated[Path | None, typer.Option(help="DuckDB file (opened read-only).")] = None,
    gated_dir: Annotated[Path | None, typer.Option(help=_GATED_HELP)] = None,
) -> None:
    """Export the de-identified public benchmark (guards must pass; see docs/release.md)."""
    from warehouse.config import load_settings
    from warehouse.errors import require_warehouse

    settings = load_settings(db_path=db)
    require_warehouse(settings.db_path)  # before the slow imports
    from warehouse.release.export import export_release
    from warehouse.release.summary import print_release

    export = partial(export_release, settings=settings)
    _export("release", export, print_release, out_dir, settings, gated_dir)


def verify(
    release_dir: Annotated[Path, typer.Argument(help="A folder written by `tastebench release`.")],
) -> None:
    """Re-derive every published number of a release from its own files; fail on any mismatch."""
    from warehouse.config import load_settings
    from warehouse.release.summary import print_verified
    from warehouse.release.verify import verify_release

    console = consoles.results()
    with consoles.progress().status("verifying the release"):
        report = verify_release(release_dir, load_settings())
    print_verified(console, report)


def competition(
    out_dir: Annotated[Path, typer.Argument(help="New or empty folder for the competition data.")],
    db: Annotated[Path | None, typer.Option(help="DuckDB file (opened read-only).")] = None,
    gated_dir: Annotated[Path | None, typer.Option(help=_GATED_HELP)] = None,
) -> None:
    """Export the competition (decoys, global codes, random sides); solution goes to the gated
    folder only."""
    from warehouse.config import load_settings
    from warehouse.errors import require_warehouse

    settings = load_settings(db_path=db)
    require_warehouse(settings.db_path)  # before the slow imports
    from warehouse.release.competition import export_competition
    from warehouse.release.summary import print_competition

    _export("competition", export_competition, print_competition, out_dir, settings, gated_dir)


def _export(what: str, export, show, out_dir: Path, settings, gated_dir: Path | None) -> None:
    """Run ``export`` (the release's or the competition's) on the warehouse of ``settings`` under a
    progress line, then ``show`` its result; the gated folder defaults to the one beside the
    DuckDB file."""
    from warehouse.release.gated import gated_dir_for

    console = consoles.results()
    progress = consoles.progress()
    with progress.status(f"exporting the {what}") as status:
        result = export(
            out_dir,
            db_path=settings.db_path,
            gated_dir=gated_dir or gated_dir_for(settings.db_path),
            log=lambda m: status.update(m) or progress.log(m),
        )
    show(console, result)
