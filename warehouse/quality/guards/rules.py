"""The guard rules by name: per-table rules (:data:`TABLE_RULES`, run on one public frame by
:func:`guard_frame`) and set-level rules (:data:`SET_RULES`, over all public frames at once), with
their one-line descriptions (:data:`RULES`). :func:`guard_frames` runs both."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from warehouse.quality.guards.base import GatedContext, GuardViolation, as_polars
from warehouse.quality.guards.codes import (
    check_code_map_published,
    check_public_codes,
    check_row_order,
)
from warehouse.quality.guards.linkage import check_feature_target_join, check_linkage
from warehouse.quality.guards.names import (
    check_brand_in_text,
    check_forbidden_columns,
    check_identifier_values,
    check_unreadable_text,
)
from warehouse.quality.guards.panelists import check_cross_block_key
from warehouse.quality.guards.target import check_panel_mean_shape, check_target_near_copy

RULES: dict[str, str] = {
    "forbidden_column_name": "brand, UPC, join_key, respondent ids, raw product codes or panel "
    "means by column name",
    "gated_identifier_values": "UPC (any separators, with or without check digit) or join_key "
    "values of the gated products table in any column",
    "panel_mean_shape": "a float column equal to the per-product panel means under any name",
    "target_near_copy": "a column within 0.1 of (or correlated >= 0.99 with) the panel mean, "
    "also after dividing by a count; a pair column equal to |delta mean|",
    "brand_in_text": "a brand of the gated products table or of the curated brand seed inside "
    "free text, in any spelling variant",
    "unreadable_text": "free text with an invisible or control character, a character outside the "
    "declared scripts, or a mixed-script word (the export does not publish text it cannot read)",
    "public_code_permutation": "public codes must be a per-category random permutation: not the "
    "raw codes, unrelated to the target",
    "code_map_in_public": "the gated public-code map must never be written into a public folder",
    "row_order_hidden_id": "row order must be a function of released columns only",
    "cross_block_panelist_key": "no column may join one panelist across blocks",
    "feature_target_join": "no pair of public tables may join features to targets on a key",
    "cross_file_linkage": "no join of two public tables on their shared columns may link two code "
    "spaces or put the target next to product codes",
}

TABLE_RULES = {
    "forbidden_column_name": check_forbidden_columns,
    "gated_identifier_values": check_identifier_values,
    "panel_mean_shape": check_panel_mean_shape,
    "target_near_copy": check_target_near_copy,
    "brand_in_text": check_brand_in_text,
    "unreadable_text": check_unreadable_text,
    "public_code_permutation": check_public_codes,
    "row_order_hidden_id": check_row_order,
    "cross_block_panelist_key": check_cross_block_key,
}

SET_RULES = {
    "feature_target_join": check_feature_target_join,
    "code_map_in_public": check_code_map_published,
    "cross_file_linkage": check_linkage,
}


def guard_frame(
    table: str, frame, ctx: GatedContext, rules: Iterable[str] | None = None
) -> list[GuardViolation]:
    """Every per-table rule (or ``rules``) on one public frame."""
    frame = as_polars(frame)
    out: list[GuardViolation] = []
    for rule in rules or TABLE_RULES:
        out.extend(TABLE_RULES[rule](table, frame, ctx))
    return out


def guard_frames(frames: Mapping[str, object], ctx: GatedContext) -> list[GuardViolation]:
    """Every per-table rule on every frame, then the set-level rules over all of them."""
    frames = {name: as_polars(f) for name, f in frames.items()}
    out: list[GuardViolation] = []
    for name, frame in frames.items():
        out.extend(guard_frame(name, frame, ctx))
    for rule in SET_RULES.values():
        out.extend(rule(frames, ctx))
    return out
