"""De-identification guards (BENCHMARK.md §7): what may never leave the gated area.

Each rule is a plain function over a polars frame (a pandas frame from a GX batch is converted at
that boundary) or a set of frames, plus a :class:`GatedContext` holding the gated facts to compare
against (panel means, brand names of the bundle and of the curated seed, identifiers, the
public-code map, the panelist map). A rule returns :class:`GuardViolation` s whose message names
the table (or file), the rows, the column and the rule, never the gated value (a fingerprint
instead). The same functions run

* in the warehouse build and ``tastebench quality``, on every public table and public candidate
  (``warehouse.quality.public_tables``), wrapped as GX expectations
  (``warehouse.quality.expectations.ExpectTableToPassDeidentificationGuards``), and the set-level
  rules over all of them;
* on a written folder: ``guard_release_dir(path, gated_context)`` (:mod:`.folders`);
  ``raise_for_violations`` turns violations into a :class:`GuardError`.

Modules: :mod:`.base` (violations, context, tolerances), :mod:`.names` (column names, brands and
identifiers in text, unreadable text), :mod:`.target` (panel means and near-copies),
:mod:`.codes` (public codes, row order), :mod:`.panelists` (cross-block keys), :mod:`.linkage`
(set-level: feature/target joins, cross-file linkage), :mod:`.folders` (release folders).
Tolerances: docs/quality.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from warehouse.quality.guards.base import (
    AFFINE_MIN_ABS_R,
    FIXED_POINT_SHARE,
    JOIN_SHARE,
    LINK_SHARE,
    MIN_GROUP,
    NEAR_ABS_TOL,
    NEAR_MIN_ABS_R,
    RHO_TOL,
    SHAPE_MATCH_SHARE,
    Z_CRIT,
    GatedContext,
    GuardError,
    GuardViolation,
    as_polars,
    pooled_spearman,
    public_code_columns,
)
from warehouse.quality.guards.codes import (
    check_code_map_published,
    check_public_codes,
    check_row_order,
    code_map_violations,
    draw_public_codes,
)
from warehouse.quality.guards.folders import guard_release_dir, read_release_dir
from warehouse.quality.guards.linkage import check_feature_target_join, check_linkage
from warehouse.quality.guards.names import (
    check_brand_in_text,
    check_forbidden_columns,
    check_identifier_values,
    check_unreadable_text,
    redact_names,
)
from warehouse.quality.guards.panelists import check_cross_block_key
from warehouse.quality.guards.target import check_panel_mean_shape, check_target_near_copy
from warehouse.quality.identifiers import brand_names

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


def raise_for_violations(violations: Iterable[GuardViolation], where: str = "") -> None:
    v = list(violations)
    if v:
        head = f"{len(v)} de-identification guard violation(s){' in ' + where if where else ''}"
        lines = "\n".join(f"  - {x.message}" for x in v[:20])
        more = f"\n  ... and {len(v) - 20} more" if len(v) > 20 else ""
        raise GuardError(
            f"{head}:\n{lines}{more}\nFix: remove or rewrite the named columns/rows (values are "
            "shown as sha256 fingerprints, never as they are)."
        )


__all__ = [
    "AFFINE_MIN_ABS_R",
    "FIXED_POINT_SHARE",
    "JOIN_SHARE",
    "LINK_SHARE",
    "MIN_GROUP",
    "NEAR_ABS_TOL",
    "NEAR_MIN_ABS_R",
    "RHO_TOL",
    "RULES",
    "SET_RULES",
    "SHAPE_MATCH_SHARE",
    "TABLE_RULES",
    "Z_CRIT",
    "GatedContext",
    "GuardError",
    "GuardViolation",
    "brand_names",
    "check_brand_in_text",
    "check_code_map_published",
    "check_cross_block_key",
    "check_feature_target_join",
    "check_forbidden_columns",
    "check_identifier_values",
    "check_linkage",
    "check_panel_mean_shape",
    "check_public_codes",
    "check_row_order",
    "check_target_near_copy",
    "check_unreadable_text",
    "code_map_violations",
    "draw_public_codes",
    "guard_frame",
    "guard_frames",
    "guard_release_dir",
    "pooled_spearman",
    "public_code_columns",
    "raise_for_violations",
    "read_release_dir",
    "redact_names",
]
