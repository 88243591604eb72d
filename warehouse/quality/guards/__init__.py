"""De-identification guards (docs/benchmark.md §7): what may never leave the gated area.

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
(set-level: feature/target joins, cross-file linkage), :mod:`.rules` (the rules by name),
:mod:`.folders` (release folders).
Tolerances: docs/quality.md.
"""

from __future__ import annotations

from collections.abc import Iterable

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
from warehouse.quality.guards.rules import RULES, SET_RULES, TABLE_RULES, guard_frame, guard_frames
from warehouse.quality.guards.target import check_panel_mean_shape, check_target_near_copy
from warehouse.quality.identifiers import brand_names


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
    "as_polars",
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
