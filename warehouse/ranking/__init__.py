"""Food-level ranking models (docs/benchmark.md §3): designs, LOOCV fits, nested ensembles,
ablations.

Layout: :mod:`.design` (what a model reads), :mod:`.preprocess` (per-fold scaling and PCA),
:mod:`.bt` (Bradley-Terry solver, tournament, hierarchical shrinkage), :mod:`.models` (the five
supervised models and their exact configurations), :mod:`.distance` (MMRF baselines),
:mod:`.loocv` (LOOCV and K-fold runs, and the distance baselines' cached runs), :mod:`.nested`
(nested NNLS, rank average, mean), :mod:`.ablation` (default stage and grid), :mod:`.oof` (the
stage's fits as mart rows), :mod:`.warehouse_design` (the build's design from the marts),
:mod:`.cache` (content-addressed fits), :mod:`.guards` (leakage guards), :mod:`.synthetic`
(synthetic designs for tests and benchmarks), :mod:`.marts` (what the dbt Python models call:
settings and dbt vars resolved, one library call each). docs/ranking.md has every convention.
"""

from warehouse.ranking.cache import FitCache
from warehouse.ranking.design import Design, FeatureSet, design_from_frames
from warehouse.ranking.loocv import FitResult, Job, run_fits, run_loocv
from warehouse.ranking.nested import nested_base, run_ensembles

__all__ = [
    "Design",
    "FeatureSet",
    "FitCache",
    "FitResult",
    "Job",
    "design_from_frames",
    "nested_base",
    "run_ensembles",
    "run_fits",
    "run_loocv",
]
