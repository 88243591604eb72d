"""The quality gate of the build: GX suites and de-identification guards on the staging file,
before the swap (docs/quality.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from warehouse.config import Settings


def run_quality_gate(
    staging_path: Path, settings: Settings, log: Callable[[str], None], manifest: Path | None = None
):
    """GX suites and de-identification guards on the staging file, before the swap: writes
    reports.rpt_data_quality into it, the HTML report and a history line beside the warehouse
    file (also when it fails), and raises QualityError (a WarehouseError) if anything failed
    (docs/quality.md). Returns the :class:`~warehouse.quality.runner.QualityResult`."""
    from warehouse.quality.governance import manifest_path
    from warehouse.quality.runner import report_paths, run_quality

    log("validating: GX suites and de-identification guards")
    report_path, history_path = report_paths(settings.db_path)
    result = run_quality(
        staging_path,
        manifest=manifest or manifest_path(settings.build_dir),
        write_table=True,
        report_path=report_path,
        history_path=history_path,
        settings=settings,
        trigger="build",
        published_as=settings.db_path,
    )
    result.raise_for_failures("quality gate failed; the previous warehouse was kept")
    return result
