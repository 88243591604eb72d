"""Human baseline of TasteBench (docs/benchmark.md sections 2 "Blocks" and 5).

Blocks, leave-one-out panelist accuracy, Krippendorff's alpha / Kendall's W, split-half
reliability and the group-size curve, computed on a ratings frame with columns
``category, respondent_id, product_code, is_reference, similarity``.
"""

from warehouse.human.baseline import (
    HumanBaseline,
    SplitHalf,
    block_reliability,
    compute_human_baseline,
    group_size_curve,
    human_baseline_summary,
    k_star,
    panelist_block_accuracy,
    split_half_credit,
    split_half_median,
    split_half_reliability,
    split_half_result,
    summarize_human_baseline,
)
from warehouse.human.blocks import BlockMatrix, assign_blocks, block_matrices, clean_ratings
from warehouse.human.metrics import alpha_from_coincidence, coincidence_matrix, kendall_w

__all__ = [
    "BlockMatrix",
    "HumanBaseline",
    "SplitHalf",
    "alpha_from_coincidence",
    "assign_blocks",
    "block_matrices",
    "block_reliability",
    "clean_ratings",
    "coincidence_matrix",
    "compute_human_baseline",
    "group_size_curve",
    "human_baseline_summary",
    "k_star",
    "kendall_w",
    "panelist_block_accuracy",
    "split_half_credit",
    "split_half_median",
    "split_half_reliability",
    "split_half_result",
    "summarize_human_baseline",
]
