"""The calibrated NECTAR simulation (docs/benchmark.md section 8).

``simulate_bundle`` writes a complete simulated bundle in the official raw layout;
``calibration_summary`` recomputes the published reliability figures on any bundle.
"""

from warehouse.simulate.bundle import SIMULATION_VERSION, SimulationError, simulate_bundle
from warehouse.simulate.calibration import PUBLISHED, CalibrationSummary, calibration_summary
from warehouse.simulate.products import is_valid_upc, upc_check_digit
from warehouse.simulate.ratings import DEFAULT_PARAMS, NoiseParams
from warehouse.simulate.report import SimulationReport

__all__ = [
    "DEFAULT_PARAMS",
    "PUBLISHED",
    "SIMULATION_VERSION",
    "CalibrationSummary",
    "NoiseParams",
    "SimulationError",
    "SimulationReport",
    "calibration_summary",
    "is_valid_upc",
    "simulate_bundle",
    "upc_check_digit",
]
