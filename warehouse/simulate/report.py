"""What a simulation run reports (:func:`warehouse.simulate.bundle.simulate_bundle`'s result),
the input of the bundle's ``SIMULATION.md`` (:mod:`warehouse.simulate.readme`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from warehouse.simulate.calibration import CalibrationSummary


@dataclass
class SimulationReport:
    out_dir: Path
    seed: int
    scale: int
    plant_signal: str | None
    version: str
    n_categories: int
    n_products: int
    n_analogs: int
    n_references: int
    n_ratings: int
    n_respondents: int
    n_published_blocks: int
    n_filler_groups: int
    n_images: int
    n_branded_ingredient_lists: int
    parameters: dict[str, float]
    files: dict[str, str] = field(default_factory=dict, repr=False)  # relative path -> sha256
    calibration: CalibrationSummary | None = None
    elapsed_s: float = 0.0


def summary_lines(report: SimulationReport, out_dir: Path) -> list[str]:
    """What `tastebench simulate` prints about the bundle it wrote."""
    return [
        f"simulated bundle written to {out_dir} in {report.elapsed_s:.1f} s",
        f"{report.n_categories} categories, {report.n_analogs} analogs + {report.n_references} "
        f"references, {report.n_respondents} respondents, {report.n_ratings} ratings",
        f"calibration: {report.calibration}",
    ]
