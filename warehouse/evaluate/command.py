"""The body of ``tastebench evaluate`` (kept out of the CLI package): in context by default
(:func:`warehouse.evaluate.context.evaluate_in_context`), the given files only with ``--alone``
(:func:`warehouse.evaluate.files.evaluate_files`); printing and the ``--html`` page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from warehouse.config import Settings
from warehouse.errors import WarehouseError


def score(
    predictions: Sequence[Path],
    alone: bool,
    html_out: Path | None,
    gold: str | None,
    n_boot: int,
    seed: int,
    db: Path | None,
    ci: str,
    settings: Settings,
) -> dict[str, object]:
    """The result of docs/evaluate.md; ``--html`` is checked before any work."""
    if html_out is not None and alone:
        raise WarehouseError("--html needs the in-context result. Fix: drop --alone.")
    if html_out is not None and html_out.is_dir():
        raise WarehouseError(f"--html {html_out} is a directory. Fix: give a file name.")
    if alone:
        from warehouse.evaluate.files import evaluate_files

        return evaluate_files(
            predictions, gold=gold, n_boot=n_boot, seed=seed, db_path=db, ci=ci, settings=settings
        )
    from warehouse.evaluate.context import evaluate_in_context

    return evaluate_in_context(
        predictions, gold=gold, n_boot=n_boot, seed=seed, db_path=db, ci=ci, settings=settings
    )


def show(result: dict, per_category: bool, html_out: Path | None, console) -> None:
    """Print the tables (and the in-context summary); write the page when asked."""
    from warehouse.evaluate.render import render_table

    console.print(render_table(result, per_category=per_category))
    if "context" in result:
        from warehouse.evaluate.context_text import render_context

        console.print(render_context(result))
    if html_out is not None:
        from warehouse.evaluate.context_html import write_context_page

        console.print(f"HTML written to {write_context_page(result, html_out)}")
