"""TasteBench metrics library (docs/benchmark.md section 4): point metrics, BCa bootstrap CIs,
paired model comparisons, trivial policies, difficulty slices and input validation.

Pure numpy/scipy. Conventions are stated in each submodule's docstring:
:mod:`.core` (point metrics, tie rules, gold direction), :mod:`.bootstrap` (which BCa variant:
the main-table procedure of docs/benchmark.md, giving NNLS pairwise [.653, .740]), :mod:`.compare`,
:mod:`.policies`, :mod:`.slices`, :mod:`.validate`.
"""

from .bootstrap import (
    BOOT_METRICS,
    bca_ci,
    bca_ci_per_category,
    bca_interval,
    bootstrap_replicates,
    draw_main_indices,
)
from .compare import compare_models, holm
from .core import (
    METRIC_NAMES,
    TIE_EPS,
    arrays_from_frame,
    canonical_order,
    compute_all,
    dersimonian_laird,
    kendall_weighted,
    pairwise_accuracy,
    pairwise_accuracy_macro,
    pairwise_accuracy_pooled,
    pairwise_credits,
    per_category_metrics,
    per_category_pairwise,
    recall_at_k,
    spearman_weighted,
)
from .policies import lower_code_wins, random_policy_expected, slot1_wins_accuracy
from .slices import (
    accuracy_by_delta_quintile,
    accuracy_clear_vs_ambiguous,
    expected_calibration_error,
)
from .validate import Coverage, PredictionValidationError, validate_predictions

__all__ = [
    "BOOT_METRICS",
    "METRIC_NAMES",
    "TIE_EPS",
    "Coverage",
    "PredictionValidationError",
    "accuracy_by_delta_quintile",
    "accuracy_clear_vs_ambiguous",
    "arrays_from_frame",
    "bca_ci",
    "bca_ci_per_category",
    "bca_interval",
    "bootstrap_replicates",
    "canonical_order",
    "compare_models",
    "compute_all",
    "dersimonian_laird",
    "draw_main_indices",
    "expected_calibration_error",
    "holm",
    "kendall_weighted",
    "lower_code_wins",
    "pairwise_accuracy",
    "pairwise_accuracy_macro",
    "pairwise_accuracy_pooled",
    "pairwise_credits",
    "per_category_metrics",
    "per_category_pairwise",
    "random_policy_expected",
    "recall_at_k",
    "slot1_wins_accuracy",
    "spearman_weighted",
    "validate_predictions",
]
