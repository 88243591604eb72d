"""De-identification guards (BENCHMARK.md §7): what may never leave the gated area.

Each rule is a plain function over a pandas frame (or a set of frames) plus a ``GatedContext``
holding the gated facts to compare against (panel means, brand names, identifiers, the public-code
map, the panelist map). A rule returns ``GuardViolation``s whose message names the table, the
column and the rule. The same functions run

* in the warehouse build and ``tastebench quality``, on every public table and public candidate
  (``warehouse.quality.public_tables``), wrapped as GX expectations
  (``warehouse.quality.expectations.ExpectTableToPassDeidentificationGuards``);
* on a release folder: ``guard_release_dir(path, gated_context)`` reads every CSV/TSV/Parquet
  file and every text file under ``path`` and returns the violations (empty list = clean);
  ``raise_for_violations`` turns them into a ``GuardError``.

Tolerances are module constants (documented in docs/quality.md).
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse.errors import WarehouseError
from warehouse.quality.public_tables import PUBLIC_CODE_PATTERN

RULES: dict[str, str] = {
    "forbidden_column_name": "brand, UPC, join_key, respondent ids, raw product codes or panel "
    "means by column name",
    "gated_identifier_values": "UPC or join_key values of the gated products table in any column",
    "panel_mean_shape": "a float column equal to the per-product panel means under any name",
    "brand_in_text": "a brand or product name of the gated products table inside free text",
    "public_code_permutation": "public codes must be a per-category random permutation: not the "
    "raw codes, unrelated to the target",
    "code_map_in_public": "the gated public-code map must never be written into a public folder",
    "row_order_hidden_id": "row order must be a function of released columns only",
    "cross_block_panelist_key": "no column may join one panelist across blocks",
    "feature_target_join": "no pair of public tables may join features to targets on a key",
}

# --- tolerances -------------------------------------------------------------------------------
SHAPE_MATCH_SHARE = 0.9  # share of a float column's values equal to panel means that is a leak
SHAPE_MIN_VALUES = 5  # fewer distinct values than this are not tested by sorted-value matching
SHAPE_MIN_DECIMALS = 3  # sorted-value matching needs values stored with >= 3 decimals
AFFINE_MIN_ABS_R = 0.9999  # |Pearson r| with the panel mean (key-joined) that is a rescaled leak
FIXED_POINT_SHARE = 0.5  # share of public codes equal to the raw code that is a leak
RHO_TOL = 0.3  # |pooled Spearman| tolerated between a code/row position and a hidden value ...
Z_CRIT = 3.5  # ... unless the pooled z statistic also stays below this (two-sided p ~ 5e-4)
MIN_GROUP = 3  # groups (categories, blocks) smaller than this do not enter pooled Spearman tests
JOIN_SHARE = 0.5  # share of a target table's keys found in a feature table that is a join

_NAME_SUFFIXES = {
    "co",
    "company",
    "inc",
    "llc",
    "brands",
    "foods",
    "food",
    "kitchen",
    "pantry",
    "table",
    "harvest",
    "provisions",
    "smokehouse",
    "dairy",
    "creamery",
    "farms",
    "farm",
    "meats",
}

_FORBIDDEN_NAMES: tuple[tuple[str, str], ...] = (
    (r"brand", "a brand"),
    (r"upc|gtin|barcode|\bean\b", "a UPC/barcode"),
    (r"join_?key", "the bundle join_key"),
    (r"respondent", "a respondent id"),
    (
        r"^(raw_)?product_codes?(_\w+)?$|^(winner|higher_rated|lower_rated)_product(_code)?$"
        r"|^product_key$|^(pair|block_pair|block_product|rating|label|product_year|image)_key$"
        r"|^(relative_path|image_path)$",
        "a raw product code (public codes are named public_code*)",
    ),
    (r"panel_mean|panel_sd|similarity|true_score|mean_rating", "a per-product panel mean"),
)
_COUNT_NAME = re.compile(r"^n_\w+$")  # n_respondents etc. are counts, not ids

_TARGET_TOKENS = {"winner", "rank", "ranks", "gold", "tie", "label", "labels", "target"}
_TARGET_PREFIXES = ("higher_rated", "true_", "is_tie", "panel_mean", "preferred")
_FEATURE_PATTERN = re.compile(
    r"ingredient|per_100g|nutri|image|photo|embedding|smiles|calorie|_fat|fat_|sodium|protein"
    r"|sugar|carbohydrate|fiber|product_type"
)
_CODE_PATTERN = re.compile(r"code")
_PERSON_LEVEL = re.compile(r"panelist|respondent|person|participant|rater|subject|user|pid")
_NON_KEY_COLUMNS = {"category", "block_id", "block_key", "data_origin", "panelist_block_key"}


class GuardError(WarehouseError):
    """A de-identification guard failed."""


@dataclass(frozen=True)
class GuardViolation:
    table: str
    column: str
    rule: str
    detail: str
    examples: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        ex = f" (e.g. {'; '.join(self.examples[:3])})" if self.examples else ""
        return f"table {self.table}, column {self.column}: rule {self.rule}: {self.detail}{ex}"

    def __str__(self) -> str:
        return self.message


@dataclass
class GatedContext:
    """The gated facts the guards compare public data against.

    ``panel_means``: category, product_code (raw), panel_mean[, is_analog].
    ``names``: brand and product names to find in free text.
    ``identifier_values``: e.g. {"upc": {...}, "join_key": {...}}.
    ``code_map``: category, product_code (raw), public_code, or None when no public codes exist.
    ``panelists``: category, block_id, panelist_number, respondent_id, or None.
    """

    panel_means: pd.DataFrame
    names: tuple[str, ...] = ()
    identifier_values: Mapping[str, frozenset[str]] = field(default_factory=dict)
    code_map: pd.DataFrame | None = None
    panelists: pd.DataFrame | None = None
    _regex: re.Pattern | None = field(default=None, init=False, repr=False, compare=False)

    def with_code_map(self, code_map: pd.DataFrame | None) -> GatedContext:
        return dataclasses.replace(self, code_map=code_map)

    @property
    def name_regex(self) -> re.Pattern | None:
        if self._regex is None and self.names:
            self._regex = names_regex(self.names)
        return self._regex

    @classmethod
    def from_warehouse(
        cls, con, *, code_map: pd.DataFrame | None = None, with_panelists: bool = True
    ) -> GatedContext:
        """Read the gated facts from a built warehouse (a DuckDB connection)."""
        means = con.sql(
            "select category, product_code, panel_mean, is_analog from marts.fct_panel_means"
        ).df()
        products = con.sql(
            "select distinct brand, upc, join_key from staging.stg_nectar__products"
        ).df()
        ids = {
            "upc": frozenset(_digits(v) for v in products["upc"].dropna().astype(str)),
            "join_key": frozenset(products["join_key"].dropna().astype(str).str.strip()),
        }
        panelists = None
        if with_panelists:
            from warehouse.human import panelists as human_panelists

            dim = con.sql("select product_key, is_reference from marts.dim_products").df()
            ratings = con.sql(
                "select category, respondent_id, product_code, product_key, similarity, "
                "is_benchmark_year, is_benchmark_category from staging.stg_nectar__ratings"
            ).df()
            rated = human_panelists.benchmark_ratings(ratings, dim)
            if len(rated):
                _, br = human_panelists.blocks(rated)
                panelists = human_panelists.panelist_numbers(br)[
                    ["category", "block_id", "panelist_number", "respondent_id"]
                ]
        return cls(
            panel_means=means,
            names=brand_names(products["brand"].dropna().astype(str)),
            identifier_values=ids,
            code_map=code_map,
            panelists=panelists,
        )


# --- helpers ----------------------------------------------------------------------------------
def _digits(value: str) -> str:
    return re.sub(r"\D", "", value).lstrip("0")


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).lower()).strip("_")


def brand_names(brands: Iterable[str]) -> tuple[str, ...]:
    """Names to look for: every brand, plus the brand without a generic suffix ("Stone Bend
    Provisions" -> "Stone Bend") when what is left is distinctive (>= 4 characters)."""
    out: set[str] = set()
    for brand in brands:
        b = " ".join(str(brand).split())
        if len(b) < 3:
            continue
        out.add(b)
        tokens = b.split(" ")
        while len(tokens) > 1 and tokens[-1].lower().rstrip(".") in _NAME_SUFFIXES:
            tokens = tokens[:-1]
        core = " ".join(tokens)
        if core != b and len(core) >= 4:
            out.add(core)
    return tuple(sorted(out, key=lambda s: (-len(s), s.lower())))


def names_regex(names: Iterable[str]) -> re.Pattern:
    """Case-insensitive, token-boundary alternation of ``names`` (longest first)."""
    parts = [
        r"\s+".join(re.escape(t) for t in n.split())
        for n in sorted(set(names), key=len, reverse=True)
    ]
    return re.compile(r"(?<![0-9A-Za-z])(?:" + "|".join(parts) + r")(?![0-9A-Za-z])", re.I)


def redact_names(text: pd.Series, names: Iterable[str]) -> pd.Series:
    """Remove brand/product names from free text, as the public competition file did
    ("<Brand> Plant-Based Pork Blend (...)" -> "Plant-Based Pork Blend (...)")."""
    names = tuple(names)
    if not names:
        return text
    rx = names_regex(names)
    pattern = re.compile(rx.pattern + r"['’]?s?\s*", re.I)
    return text.map(lambda s: " ".join(pattern.sub("", s).split()) if isinstance(s, str) else s)


def _float_columns(frame: pd.DataFrame) -> list[str]:
    return [
        c
        for c in frame.columns
        if pd.api.types.is_float_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    ]


def _text_columns(frame: pd.DataFrame) -> list[str]:
    out = []
    for c in frame.columns:
        s = frame[c]
        is_text = isinstance(s.dtype, pd.StringDtype) or (
            s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in ("string", "mixed")
        )
        if is_text:
            out.append(c)
    return out


def public_code_columns(frame: pd.DataFrame) -> list[str]:
    rx = re.compile(PUBLIC_CODE_PATTERN)
    return [c for c in frame.columns if rx.match(_norm(c))]


def _as_float(s: pd.Series) -> pd.Series:
    return pd.to_numeric(s, errors="coerce").astype(float)


def _row_products(frame: pd.DataFrame, ctx: GatedContext) -> pd.DataFrame | None:
    """Per row (same order): category, raw product_code and panel_mean; None when the rows cannot
    be tied to products (no category, or no code column that the gated facts can resolve)."""
    if "category" not in frame.columns:
        return None
    codes = public_code_columns(frame)
    keys = pd.DataFrame({"category": frame["category"].astype(str).to_numpy()})
    if codes and ctx.code_map is not None:
        keys["public_code"] = _as_float(frame[codes[0]]).to_numpy()
        cmap = ctx.code_map[["category", "product_code", "public_code"]].copy()
        cmap["category"] = cmap["category"].astype(str)
        cmap["public_code"] = _as_float(cmap["public_code"])
        cmap["product_code"] = _as_float(cmap["product_code"])
        keys = keys.merge(cmap, on=["category", "public_code"], how="left")
    elif "product_code" in frame.columns:
        keys["product_code"] = _as_float(frame["product_code"]).to_numpy()
    else:
        return None
    cols = ["category", "product_code", "panel_mean"]
    means = ctx.panel_means[cols + ["is_analog"] * ("is_analog" in ctx.panel_means)].copy()
    if "is_analog" not in means.columns:
        means["is_analog"] = True
    means["category"] = means["category"].astype(str)
    means["product_code"] = _as_float(means["product_code"])
    out = keys.merge(means, on=["category", "product_code"], how="left")
    if len(out) != len(frame) or out["product_code"].notna().sum() == 0:
        return None
    return out


def pooled_spearman(x, y, groups) -> tuple[float, float, int]:
    """Spearman rho of x and y within each group, pooled: (n-weighted mean rho, Stouffer z with
    z_g = rho_g * sqrt(n_g - 1), rows used). Groups under MIN_GROUP rows or constant are skipped."""
    df = pd.DataFrame({"x": np.asarray(x, float), "y": np.asarray(y, float), "g": list(groups)})
    df = df.dropna()
    rhos, ns = [], []
    for _, g in df.groupby("g", sort=False):
        if len(g) < MIN_GROUP:
            continue
        rx, ry = g["x"].rank().to_numpy(), g["y"].rank().to_numpy()
        if rx.std() == 0 or ry.std() == 0:
            continue
        rhos.append(float(np.corrcoef(rx, ry)[0, 1]))
        ns.append(len(g))
    if not rhos:
        return 0.0, 0.0, 0
    r, n = np.asarray(rhos), np.asarray(ns, float)
    return (
        float((r * n).sum() / n.sum()),
        float((r * np.sqrt(n - 1)).sum() / np.sqrt(len(r))),
        int(n.sum()),
    )


def _decimals(values: np.ndarray) -> int:
    """Decimals needed to write every value exactly (capped at 10)."""
    for d in range(11):
        if np.all(np.abs(np.round(values, d) - values) <= 1e-12 * np.maximum(1, np.abs(values))):
            return d
    return 10


def _tolerance(decimals: int) -> float:
    return 1e-9 if decimals >= 9 else 0.5 * 10.0**-decimals + 1e-12


# --- per-table rules --------------------------------------------------------------------------
def check_forbidden_columns(
    table: str, frame: pd.DataFrame, ctx: GatedContext | None = None
) -> list[GuardViolation]:
    out = []
    for col in frame.columns:
        name = _norm(col)
        for pattern, what in _FORBIDDEN_NAMES:
            if re.search(pattern, name) and not (
                what == "a respondent id" and _COUNT_NAME.match(name)
            ):
                out.append(
                    GuardViolation(
                        table, str(col), "forbidden_column_name", f"the name says {what}"
                    )
                )
                break
    return out


def check_identifier_values(
    table: str, frame: pd.DataFrame, ctx: GatedContext
) -> list[GuardViolation]:
    out = []
    upcs = ctx.identifier_values.get("upc", frozenset())
    keys = ctx.identifier_values.get("join_key", frozenset())
    for col in frame.columns:
        s = frame[col].dropna()
        if s.empty or pd.api.types.is_bool_dtype(s):
            continue
        if pd.api.types.is_numeric_dtype(s):
            vals = s[s == s.round()]
            tokens = {str(int(v)) for v in vals.unique()[:100000] if abs(v) >= 1e7}
            hits = sorted(tokens & upcs)
            kind = "UPC"
        else:
            text = s.astype(str)
            hits = sorted(set(text.str.strip()) & keys)
            kind = "join_key"
            if not hits and upcs:
                found = text.str.findall(r"\d[\d -]{6,16}\d").explode().dropna()
                hits = sorted({_digits(t) for t in found} & upcs)
                kind = "UPC"
        if hits:
            out.append(
                GuardViolation(
                    table,
                    str(col),
                    "gated_identifier_values",
                    f"{len(hits)} value(s) are {kind}s of the gated products table",
                    tuple(hits[:3]),
                )
            )
    return out


def check_panel_mean_shape(
    table: str, frame: pd.DataFrame, ctx: GatedContext
) -> list[GuardViolation]:
    out = []
    floats = _float_columns(frame)
    if not floats or ctx.panel_means.empty:
        return out
    target = np.sort(ctx.panel_means["panel_mean"].dropna().to_numpy(float))
    rows = _row_products(frame, ctx)
    for col in floats:
        values = frame[col].to_numpy(float)
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            continue
        tol = _tolerance(_decimals(np.unique(finite)[:5000]))
        detail = None
        if rows is not None:
            pm = rows["panel_mean"].to_numpy(float)
            ok = np.isfinite(pm) & np.isfinite(values)
            if ok.sum() >= MIN_GROUP:
                equal = np.abs(values[ok] - pm[ok]) <= tol
                if equal.mean() >= SHAPE_MATCH_SHARE:
                    detail = (
                        f"{int(equal.sum())} of {int(ok.sum())} rows equal the product's panel "
                        "mean (joined on the product key)"
                    )
                elif ok.sum() >= SHAPE_MIN_VALUES and np.std(values[ok]) > 0:
                    r = float(np.corrcoef(values[ok], pm[ok])[0, 1])
                    if abs(r) >= AFFINE_MIN_ABS_R:
                        detail = f"a rescaled panel mean (Pearson r = {r:.5f} on the product key)"
        if detail is None:
            distinct = np.unique(finite)
            decimals = _decimals(distinct[:5000])
            if distinct.size >= SHAPE_MIN_VALUES and decimals >= SHAPE_MIN_DECIMALS and target.size:
                idx = np.clip(np.searchsorted(target, distinct), 1, target.size - 1)
                near = np.minimum(
                    np.abs(distinct - target[idx - 1]), np.abs(distinct - target[idx])
                )
                if target.size == 1:
                    near = np.abs(distinct - target[0])
                share = float((near <= tol).mean())
                if share >= SHAPE_MATCH_SHARE:
                    detail = (
                        f"{share:.0%} of its {distinct.size} distinct values are panel means "
                        "(sorted-value match)"
                    )
        if detail:
            ex = tuple(f"{v:.6g}" for v in finite[:3])
            out.append(GuardViolation(table, str(col), "panel_mean_shape", detail, ex))
    return out


def check_brand_in_text(table: str, frame: pd.DataFrame, ctx: GatedContext) -> list[GuardViolation]:
    rx = ctx.name_regex
    if rx is None:
        return []
    out = []
    for col in _text_columns(frame):
        s = frame[col]
        text = s[s.map(lambda v: isinstance(v, str))]
        found = text.map(lambda v: m.group(0) if (m := rx.search(v)) else None).dropna()
        if len(found):
            names = sorted(set(found.str.strip()))
            out.append(
                GuardViolation(
                    table,
                    str(col),
                    "brand_in_text",
                    f"{len(found)} row(s) name a gated brand/product: {', '.join(names[:5])}",
                    tuple(str(v)[:80] for v in text.loc[found.index[:3]]),
                )
            )
    return out


def _code_map_violations(table: str, column: str, ctx: GatedContext) -> list[GuardViolation]:
    cmap = ctx.code_map
    assert cmap is not None
    out = []
    m = cmap[["category", "product_code", "public_code"]].copy()
    m["product_code"], m["public_code"] = _as_float(m["product_code"]), _as_float(m["public_code"])
    fixed = m["product_code"] == m["public_code"]
    if len(m) >= SHAPE_MIN_VALUES and fixed.mean() >= FIXED_POINT_SHARE:
        out.append(
            GuardViolation(
                table,
                column,
                "public_code_permutation",
                f"public codes equal the raw codes for {int(fixed.sum())} of {len(m)} products",
            )
        )
    dup = m.duplicated(["category", "public_code"], keep=False)
    if dup.any():
        ex = m.loc[dup, ["category", "public_code"]].head(3).astype(str).agg(":".join, axis=1)
        out.append(
            GuardViolation(
                table,
                column,
                "public_code_permutation",
                "public codes are not unique within a category",
                tuple(ex),
            )
        )
    means = ctx.panel_means.copy()
    means["product_code"] = _as_float(means["product_code"])
    if "is_analog" in means.columns:
        means = means[means["is_analog"].astype(bool)]
    j = m.merge(means, on=["category", "product_code"], how="inner")
    for hidden in ("panel_mean",):
        rho, z, n = pooled_spearman(j["public_code"], j[hidden], j["category"])
        if n and abs(rho) > RHO_TOL and abs(z) > Z_CRIT:
            out.append(
                GuardViolation(
                    table,
                    column,
                    "public_code_permutation",
                    f"public codes correlate with the target beyond chance (pooled within-category "
                    f"Spearman {rho:+.2f}, z = {z:+.1f}, n = {n})",
                )
            )
    return out


def check_public_codes(table: str, frame: pd.DataFrame, ctx: GatedContext) -> list[GuardViolation]:
    codes = public_code_columns(frame)
    if not codes:
        return []
    if ctx.code_map is None:
        return [
            GuardViolation(
                table,
                codes[0],
                "public_code_permutation",
                "public codes present but no gated code map was given to verify them",
            )
        ]
    out = _code_map_violations(table, codes[0], ctx)
    if "category" in frame.columns:
        known = set(
            zip(
                ctx.code_map["category"].astype(str),
                _as_float(ctx.code_map["public_code"]),
                strict=True,
            )
        )
        for col in codes:
            pairs = zip(frame["category"].astype(str), _as_float(frame[col]), strict=True)
            unknown = {p for p in pairs if not np.isnan(p[1]) and p not in known}
            if unknown:
                ex = tuple(f"{c}:{v:g}" for c, v in sorted(unknown)[:3])
                out.append(
                    GuardViolation(
                        table,
                        col,
                        "public_code_permutation",
                        f"{len(unknown)} (category, code) value(s) are not in the gated code map",
                        ex,
                    )
                )
    return out


def check_row_order(table: str, frame: pd.DataFrame, ctx: GatedContext) -> list[GuardViolation]:
    out = []
    position = np.arange(len(frame), dtype=float)
    rows = _row_products(frame, ctx)
    if rows is not None:
        # within category and product kind (analog/reference is public), so that "references
        # last" is not mistaken for a hidden order
        groups = rows["category"] + ":" + rows["is_analog"].astype(str)
        for hidden, label in (("product_code", "raw product code"), ("panel_mean", "panel mean")):
            rho, z, n = pooled_spearman(position, rows[hidden], groups)
            if n and abs(rho) > RHO_TOL and abs(z) > Z_CRIT:
                out.append(
                    GuardViolation(
                        table,
                        "(row order)",
                        "row_order_hidden_id",
                        f"rows follow the {label} (pooled within-category Spearman {rho:+.2f}, "
                        f"z = {z:+.1f}, n = {n})",
                    )
                )
    people = _row_people(frame, ctx)
    if people is not None:
        block = frame["category"].astype(str) + ":" + frame["block_id"].astype(str)
        checks = [("(row order)", position)]
        checks += [(c, _as_float(frame[c]).to_numpy()) for c in _dense_columns(frame)]
        for col, values in checks:
            rho, z, n = pooled_spearman(values, people, block)
            if n and abs(rho) > RHO_TOL and abs(z) > Z_CRIT:
                out.append(
                    GuardViolation(
                        table,
                        col,
                        "row_order_hidden_id",
                        f"follows the respondent id within blocks (pooled Spearman {rho:+.2f}, "
                        f"z = {z:+.1f}, n = {n})",
                    )
                )
    return out


def _row_people(frame: pd.DataFrame, ctx: GatedContext) -> pd.Series | None:
    need = {"category", "block_id", "panelist_number"}
    if ctx.panelists is None or not need <= set(frame.columns):
        return None
    keys = frame[["category", "block_id", "panelist_number"]].copy()
    keys["category"] = keys["category"].astype(str)
    keys["block_id"] = _as_float(keys["block_id"])
    keys["panelist_number"] = _as_float(keys["panelist_number"])
    p = ctx.panelists.copy()
    p["category"] = p["category"].astype(str)
    p["block_id"] = _as_float(p["block_id"])
    p["panelist_number"] = _as_float(p["panelist_number"])
    merged = keys.merge(p, on=["category", "block_id", "panelist_number"], how="left")
    if len(merged) != len(frame) or merged["respondent_id"].isna().all():
        return None
    return merged["respondent_id"].astype(float)


def _dense_columns(frame: pd.DataFrame) -> list[str]:
    """Integer columns numbered exactly 1..n inside every block (per-block numbering)."""
    block = frame["category"].astype(str) + ":" + frame["block_id"].astype(str)
    out = []
    for col in frame.columns:
        if col in _NON_KEY_COLUMNS or not pd.api.types.is_integer_dtype(frame[col]):
            continue
        ok = frame.groupby(block)[col].agg(
            lambda s: sorted(s.tolist()) == list(range(1, len(s) + 1))
        )
        if ok.all():
            out.append(col)
    return out


def check_cross_block_key(
    table: str, frame: pd.DataFrame, ctx: GatedContext
) -> list[GuardViolation]:
    if not {"category", "block_id"} <= set(frame.columns) or frame.empty:
        return []
    if not any(
        _PERSON_LEVEL.search(_norm(c)) and not _COUNT_NAME.match(_norm(c)) for c in frame.columns
    ):
        return []  # not panelist-level rows (blocks, block products, ...)
    block = frame["category"].astype(str) + ":" + frame["block_id"].astype(str)
    if block.nunique() < 2:
        return []
    dense = set(_dense_columns(frame))
    people = _row_people(frame, ctx)
    candidates = [
        c
        for c in frame.columns
        if c not in _NON_KEY_COLUMNS
        and not _float_columns(frame[[c]])
        and not pd.api.types.is_bool_dtype(frame[c])
        and frame[c].nunique(dropna=True) > 1
    ]
    out = []
    for col in candidates:
        df = pd.DataFrame({"v": frame[col].to_numpy(), "b": block.to_numpy()}).dropna()
        if people is not None:
            df["p"] = people.to_numpy()[frame[col].notna().to_numpy()]
            stats = df.groupby("v").agg(blocks=("b", "nunique"), people=("p", "nunique"))
            cross = stats[stats["blocks"] >= 2]
            if col in dense:
                # per-block numbering: a leak only if equal numbers mean the same person
                same = _same_person_share(df)
                if same is not None and same >= 0.5:
                    out.append(
                        GuardViolation(
                            table,
                            str(col),
                            "cross_block_panelist_key",
                            f"equal values in different blocks are the same panelist in "
                            f"{same:.0%} of cases",
                        )
                    )
                continue
            linking = cross[cross["people"] == 1]
            if len(linking):
                ex = tuple(
                    f"{col}={v!s} -> one panelist in {int(r.blocks)} blocks"
                    for v, r in linking.head(3).iterrows()
                )
                out.append(
                    GuardViolation(
                        table,
                        str(col),
                        "cross_block_panelist_key",
                        f"{len(linking)} value(s) each pick out one panelist across blocks",
                        ex,
                    )
                )
        elif col not in dense:
            within = df.groupby("b")["v"].agg(lambda s: s.is_unique)
            recurring = df.groupby("v")["b"].nunique()
            if within.all() and (recurring >= 2).any():
                out.append(
                    GuardViolation(
                        table,
                        str(col),
                        "cross_block_panelist_key",
                        f"unique within every block and {int((recurring >= 2).sum())} value(s) "
                        "recur across blocks (a person key; use per-block 1..n numbering)",
                    )
                )
    return out


def _same_person_share(df: pd.DataFrame) -> float | None:
    pairs = df.merge(df, on="v")
    pairs = pairs[pairs["b_x"] < pairs["b_y"]]
    if pairs.empty:
        return None
    return float((pairs["p_x"] == pairs["p_y"]).mean())


TABLE_RULES = {
    "forbidden_column_name": check_forbidden_columns,
    "gated_identifier_values": check_identifier_values,
    "panel_mean_shape": check_panel_mean_shape,
    "brand_in_text": check_brand_in_text,
    "public_code_permutation": check_public_codes,
    "row_order_hidden_id": check_row_order,
    "cross_block_panelist_key": check_cross_block_key,
}


def guard_frame(
    table: str, frame: pd.DataFrame, ctx: GatedContext, rules: Iterable[str] | None = None
) -> list[GuardViolation]:
    """Every per-table rule (or ``rules``) on one public frame."""
    out: list[GuardViolation] = []
    for rule in rules or TABLE_RULES:
        out.extend(TABLE_RULES[rule](table, frame, ctx))
    return out


# --- set-level rules --------------------------------------------------------------------------
def _is_target_column(col: str) -> bool:
    name = _norm(col)
    return bool(set(name.split("_")) & _TARGET_TOKENS) or name.startswith(_TARGET_PREFIXES)


def _keys(frame: pd.DataFrame) -> list[tuple[str, ...]]:
    codes = [c for c in frame.columns if _CODE_PATTERN.search(_norm(c))]
    return [("category", c) if "category" in frame.columns else (c,) for c in codes]


def _key_values(frame: pd.DataFrame, key: tuple[str, ...]) -> set[tuple]:
    cols = [frame[c].astype(str) if c == "category" else _as_float(frame[c]) for c in key]
    return {t for t in zip(*cols, strict=True) if not any(pd.isna(v) for v in t)}


def check_feature_target_join(
    frames: Mapping[str, pd.DataFrame], ctx: GatedContext | None = None
) -> list[GuardViolation]:
    """Feature tables (ingredients, nutrition, images, embeddings) and target tables (winners,
    ranks, ties, labels) must not share product keys: one table with both, or a pair whose code
    columns join on >= JOIN_SHARE of the target's keys, is a leak."""
    features = {
        t: f for t, f in frames.items() if any(_FEATURE_PATTERN.search(_norm(c)) for c in f)
    }
    targets = {t: f for t, f in frames.items() if any(_is_target_column(c) for c in f)}
    out = []
    for t_name, t_frame in targets.items():
        target_cols = [c for c in t_frame.columns if _is_target_column(c)]
        for f_name, f_frame in features.items():
            if f_name == t_name:
                if _keys(t_frame):
                    out.append(
                        GuardViolation(
                            t_name,
                            target_cols[0],
                            "feature_target_join",
                            "the table carries features and targets keyed by product",
                        )
                    )
                continue
            for tk in _keys(t_frame):
                for fk in _keys(f_frame):
                    if len(tk) != len(fk):
                        continue
                    tv = _key_values(t_frame, tk)
                    if not tv:
                        continue
                    share = len(tv & _key_values(f_frame, fk)) / len(tv)
                    if share >= JOIN_SHARE:
                        out.append(
                            GuardViolation(
                                t_name,
                                tk[-1],
                                "feature_target_join",
                                f"joins feature table {f_name} on {fk[-1]} ({share:.0%} of keys) "
                                f"and carries targets ({', '.join(target_cols[:3])})",
                            )
                        )
                        break
                else:
                    continue
                break
    return out


def check_code_map_published(
    frames: Mapping[str, pd.DataFrame], ctx: GatedContext
) -> list[GuardViolation]:
    """No public frame may hold the (raw code, public code) map, under any column names.

    Codes are per category: when both the map and the frame carry ``category``, pairs are matched
    on (category, a, b); a category-blind match would flag any complete table of within-category
    code pairs (gold pairs list every pair of small codes), since small codes coincide across
    categories. Frames without ``category`` are matched category-blind.
    """
    out = []
    if ctx.code_map is None or ctx.code_map.empty:
        return out
    has_cat = "category" in ctx.code_map.columns
    pairs = pd.DataFrame(
        {"a": _as_float(ctx.code_map["product_code"]), "b": _as_float(ctx.code_map["public_code"])}
    )
    if has_cat:
        pairs["category"] = ctx.code_map["category"].astype(str).to_numpy()
    pairs = pairs[pairs["a"] != pairs["b"]].drop_duplicates()  # fixed points say nothing
    if len(pairs) < SHAPE_MIN_VALUES:
        return out
    for name, frame in frames.items():
        keys = ["category", "a", "b"] if has_cat and "category" in frame.columns else ["a", "b"]
        ref = pairs[keys].drop_duplicates()
        ints = []
        for c in frame.columns:
            s = frame[c]
            if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
                v = _as_float(s).dropna()
                if len(v) and (v == v.round()).all():
                    ints.append(c)
        for a in ints:
            for b in ints:
                if a == b:
                    continue
                vals = pd.DataFrame({"a": _as_float(frame[a]), "b": _as_float(frame[b])})
                if "category" in keys:
                    vals["category"] = frame["category"].astype(str).to_numpy()
                vals = vals.dropna().drop_duplicates()
                if len(vals) < 0.9 * len(ref):
                    continue
                share = len(ref.merge(vals, on=keys)) / len(ref)
                if share >= 0.9:
                    out.append(
                        GuardViolation(
                            name,
                            f"{a}, {b}",
                            "code_map_in_public",
                            f"the columns reproduce {share:.0%} of the gated raw-to-public code "
                            "map",
                        )
                    )
                    break
            else:
                continue
            break
    return out


SET_RULES = {
    "feature_target_join": check_feature_target_join,
    "code_map_in_public": check_code_map_published,
}


def guard_frames(frames: Mapping[str, pd.DataFrame], ctx: GatedContext) -> list[GuardViolation]:
    """Every per-table rule on every frame, then the set-level rules over all of them."""
    out: list[GuardViolation] = []
    for name, frame in frames.items():
        out.extend(guard_frame(name, frame, ctx))
    for rule in SET_RULES.values():
        out.extend(rule(frames, ctx))
    return out


# --- release folders --------------------------------------------------------------------------
TABLE_SUFFIXES = {".csv", ".tsv", ".parquet"}
TEXT_SUFFIXES = {".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".html", ".tex", ".cff"}
_MAP_FILE = re.compile(r"code_?map|gated|mapping|crosswalk", re.I)


def read_release_dir(path: Path) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Tables (by relative path) and text files of a release folder."""
    path = Path(path)
    tables: dict[str, pd.DataFrame] = {}
    texts: dict[str, str] = {}
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        suffix = f.suffix.lower()
        if suffix == ".parquet":
            tables[rel] = pd.read_parquet(f)
        elif suffix in {".csv", ".tsv"}:
            tables[rel] = pd.read_csv(f, sep="\t" if suffix == ".tsv" else ",")
        elif suffix in TEXT_SUFFIXES:
            texts[rel] = f.read_text(errors="replace")
    return tables, texts


def guard_release_dir(path: Path, gated_context: GatedContext) -> list[GuardViolation]:
    """All guards on a release folder: every table as a public table, the set-level rules, text
    files scanned for brand names, and no file that looks like (or holds) the gated code map."""
    path = Path(path)
    if not path.is_dir():
        raise GuardError(f"release folder {path} does not exist. Fix: export the release first.")
    tables, texts = read_release_dir(path)
    out = guard_frames(tables, gated_context)
    for rel, text in texts.items():
        frame = pd.DataFrame({"(file text)": text.splitlines() or [""]})
        out.extend(check_brand_in_text(rel, frame, gated_context))
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        if _MAP_FILE.search(f.stem):
            out.append(
                GuardViolation(
                    f.relative_to(path).as_posix(),
                    "(file name)",
                    "code_map_in_public",
                    "a file named like the gated code map is inside the public folder",
                )
            )
    return out


def raise_for_violations(violations: Iterable[GuardViolation], where: str = "") -> None:
    v = list(violations)
    if v:
        head = f"{len(v)} de-identification guard violation(s){' in ' + where if where else ''}"
        lines = "\n".join(f"  - {x.message}" for x in v[:20])
        raise GuardError(f"{head}:\n{lines}\nFix: remove or rewrite the named columns/rows.")


# --- public codes -----------------------------------------------------------------------------
def draw_public_codes(
    products: pd.DataFrame, ctx: GatedContext | None = None, max_tries: int = 100
) -> pd.DataFrame:
    """A per-category cryptographically random permutation (``secrets``): analogs get 1..n_c,
    references n_c+1, ... Redrawn (rarely) until it passes the public-code rule against ``ctx``.

    ``products``: category, product_code, is_analog. Returns category, product_code, public_code.
    Store the result only in the gated area.
    """
    rng = secrets.SystemRandom()
    for _ in range(max_tries):
        parts = []
        for cat, g in products.groupby("category", sort=True):
            analogs = g.loc[g["is_analog"].astype(bool), "product_code"].tolist()
            refs = g.loc[~g["is_analog"].astype(bool), "product_code"].tolist()
            rng.shuffle(analogs)
            rng.shuffle(refs)
            for i, code in enumerate(analogs + refs, start=1):
                parts.append((cat, code, i))
        cmap = pd.DataFrame(parts, columns=["category", "product_code", "public_code"])
        if ctx is None or not _code_map_violations(
            "code_map", "public_code", ctx.with_code_map(cmap)
        ):
            return cmap
    raise GuardError("could not draw public codes that pass the permutation rule")
