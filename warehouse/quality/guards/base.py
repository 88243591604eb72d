"""What every guard rule shares: the violation type, the gated facts (:class:`GatedContext`),
tolerances, and helpers that classify columns and tie rows to products.

Frames are polars DataFrames; a pandas frame (the GX boundary) is converted by :func:`as_polars`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError
from warehouse.quality.identifiers import Matcher, brand_names, fingerprint
from warehouse.quality.public_tables import PUBLIC_CODE_PATTERN

# --- tolerances (docs/quality.md) ---------------------------------------------------------------
SHAPE_MATCH_SHARE = 0.9  # share of a column's values equal to panel means that is a leak
SHAPE_MIN_VALUES = 5  # fewer distinct values than this are not tested by sorted-value matching
SHAPE_MIN_DECIMALS = 3  # sorted-value matching needs values stored with >= 3 decimals
AFFINE_MIN_ABS_R = 0.9999  # |Pearson r| with the panel mean (key-joined): a rescaled mean
NEAR_MIN_ABS_R = 0.99  # |Pearson r| with the target that makes a near-copy
NEAR_ABS_TOL = 0.1  # a column within this of the panel mean (on NEAR_SHARE of rows) is a copy
NEAR_SHARE = 0.9
NEAR_MIN_ROWS = 10  # rows a correlation needs before it is tested
PAIR_ABS_TOL = 0.01  # a pair column within this of |delta mean| is a copy
FIXED_POINT_SHARE = 0.5  # share of public codes equal to the raw code that is a leak
RHO_TOL = 0.3  # |pooled Spearman| tolerated between a code/row position and a hidden value ...
Z_CRIT = 3.5  # ... unless the pooled z statistic also stays below this (two-sided p ~ 5e-4)
MIN_GROUP = 3  # groups (categories, blocks) smaller than this do not enter pooled Spearman tests
JOIN_SHARE = 0.5  # share of a target table's keys found in a feature table that is a join
LINK_SHARE = 0.5  # share of one file's products that a join links one-to-one to another space
LINK_MIN_ROWS = 5
MAX_ROWS_NAMED = 5  # row numbers listed in a message

SOURCE_BRAND = "bundle brand"
SOURCE_SEED = "known brand (seeds.known_brands)"
SOURCE_UPC = "bundle UPC"
SOURCE_JOIN_KEY = "bundle join_key"

_PUBLIC_CODE = re.compile(PUBLIC_CODE_PATTERN)


class GuardError(WarehouseError):
    """A de-identification guard failed."""


@dataclass(frozen=True)
class GuardViolation:
    """One finding: where (table or file, rows, column), which rule, what; never the gated value
    itself (``examples`` hold fingerprints or public values only)."""

    table: str
    column: str
    rule: str
    detail: str
    examples: tuple[str, ...] = ()
    rows: tuple[int, ...] = ()  # 1-based data rows (a CSV's line = row + 1)
    n_rows: int = 0  # rows in all, when more than len(rows)

    @property
    def message(self) -> str:
        where = f"table {self.table}"
        if self.rows:
            named = ", ".join(str(r) for r in self.rows[:MAX_ROWS_NAMED])
            more = max(self.n_rows, len(self.rows)) - min(len(self.rows), MAX_ROWS_NAMED)
            label = "row" if len(self.rows) == 1 and not more else "rows"
            where += f", {label} {named}" + (f" (+{more} more)" if more > 0 else "")
        ex = f" (e.g. {'; '.join(self.examples[:3])})" if self.examples else ""
        return f"{where}, column {self.column}: rule {self.rule}: {self.detail}{ex}"

    def __str__(self) -> str:
        return self.message


def violation_rows(mask: np.ndarray) -> tuple[tuple[int, ...], int]:
    """(first 1-based row numbers where ``mask`` holds, how many in all)."""
    idx = np.flatnonzero(np.asarray(mask, dtype=bool))
    return tuple(int(i) + 1 for i in idx[:MAX_ROWS_NAMED]), int(idx.size)


@dataclass
class GatedContext:
    """The gated facts the guards compare public data against.

    ``panel_means``: category, product_code (raw), panel_mean[, is_analog, n_ratings].
    ``names``: brand and product names of the bundle; ``known_brands``: the curated brand seed
    (``seeds/known_brands.csv``), so brands a bundle omits are caught too.
    ``identifier_values``: {"upc": {...}, "join_key": {...}} as stored in the bundle.
    ``code_map``: category, product_code (raw), public_code; None when no public codes exist.
    ``panelists``: category, block_id, panelist_number, respondent_id; or None.
    """

    panel_means: pl.DataFrame
    names: tuple[str, ...] = ()
    identifier_values: Mapping[str, frozenset[str]] = field(default_factory=dict)
    code_map: pl.DataFrame | None = None
    panelists: pl.DataFrame | None = None
    known_brands: tuple[str, ...] = ()
    _matchers: dict[str, Matcher] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.panel_means = as_polars(self.panel_means)
        if self.code_map is not None:
            self.code_map = as_polars(self.code_map)
        if self.panelists is not None:
            self.panelists = as_polars(self.panelists)

    def with_code_map(self, code_map) -> GatedContext:
        return dataclasses.replace(self, code_map=None if code_map is None else as_polars(code_map))

    @property
    def brand_matcher(self) -> Matcher:
        """Brands of the bundle and of the seed."""
        if "brand" not in self._matchers:
            names = dict.fromkeys(self.known_brands, SOURCE_SEED)
            names.update(dict.fromkeys(self.names, SOURCE_BRAND))
            self._matchers["brand"] = Matcher(names)
        return self._matchers["brand"]

    @property
    def identifier_matcher(self) -> Matcher:
        """UPC digits (any separators, with or without check digit) and join keys."""
        if "id" not in self._matchers:
            keys = {str(k): SOURCE_JOIN_KEY for k in self.identifier_values.get("join_key", ())}
            upcs = {str(u): SOURCE_UPC for u in self.identifier_values.get("upc", ())}
            self._matchers["id"] = Matcher(keys, upcs)
        return self._matchers["id"]

    @property
    def text_matcher(self) -> Matcher:
        """Everything redaction removes: brands, seed brands, join keys and UPCs."""
        if "text" not in self._matchers:
            names = dict(self.brand_matcher.names)
            names.update(self.identifier_matcher.names)
            self._matchers["text"] = Matcher(names, self.identifier_matcher.identifiers)
        return self._matchers["text"]

    def redact(self, values: Iterable[object]) -> list[object]:
        m = self.text_matcher
        return [m.redact(v) for v in values]

    @classmethod
    def from_warehouse(cls, con, *, code_map=None, with_panelists: bool = True) -> GatedContext:
        """Read the gated facts from a built warehouse (a DuckDB connection)."""
        means = con.sql(
            "select category, product_code, panel_mean, is_analog, n_ratings "
            "from marts.fct_panel_means"
        ).pl()
        products = con.sql(
            "select distinct brand, upc, join_key from staging.stg_nectar__products"
        ).pl()
        try:
            seed = con.sql("select brand from seeds.known_brands").pl()["brand"].to_list()
        except Exception as exc:  # duckdb.CatalogException: built before the seed existed
            raise GuardError(
                "the warehouse has no seeds.known_brands (the curated brand list the guards read)."
                " Fix: rebuild it with this version (`tastebench build`)."
            ) from exc
        ids = {
            "upc": frozenset(str(v).strip() for v in products["upc"].drop_nulls().to_list()),
            "join_key": frozenset(
                str(v).strip() for v in products["join_key"].drop_nulls().to_list()
            ),
        }
        panelists = None
        if with_panelists:
            panelists = _panelist_map(con)
        return cls(
            panel_means=means,
            names=brand_names(products["brand"].drop_nulls().to_list()),
            identifier_values=ids,
            code_map=code_map,
            panelists=panelists,
            known_brands=brand_names(seed, expand=False),
        )


def _panelist_map(con) -> pl.DataFrame | None:
    """category, block_id, panelist_number, respondent_id (text), from the human library."""
    from warehouse.human import panelists as human_panelists

    dim = con.sql("select product_key, is_reference from marts.dim_products").pl()
    ratings = con.sql(
        "select category, respondent_id, product_code, product_key, similarity, "
        "is_benchmark_year, is_benchmark_category from staging.stg_nectar__ratings"
    ).pl()
    rated = human_panelists.benchmark_ratings(ratings, dim)
    if not rated.height:
        return None
    _, br = human_panelists.blocks(rated)
    numbers = human_panelists.panelist_numbers(br)
    cols = ["category", "block_id", "panelist_number", "respondent_id"]
    return numbers.select(cols).with_columns(pl.col("respondent_id").cast(pl.String))


# --- frames and columns -------------------------------------------------------------------------
def as_polars(frame) -> pl.DataFrame:
    """A polars DataFrame; pandas input (GX batches) is converted here, object columns as text."""
    if isinstance(frame, pl.DataFrame):
        return frame
    import pandas as pd  # GX's pandas execution engine hands the guard expectation pandas batches

    if isinstance(frame, pd.DataFrame):
        f = frame.copy()
        for c in f.columns:
            if f[c].dtype == object:
                f[c] = f[c].map(lambda v: v if v is None or isinstance(v, str) else str(v))
        f.columns = [str(c) for c in f.columns]
        return pl.from_pandas(f)
    return pl.DataFrame(frame)


def norm(name: object) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).lower()).strip("_")


def is_float(dtype: pl.DataType) -> bool:
    return dtype.is_float()


def is_integer(dtype: pl.DataType) -> bool:
    return dtype.is_integer()


def is_numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric()


def is_text(dtype: pl.DataType) -> bool:
    return dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum)


def text_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c, d in frame.schema.items() if is_text(d)]


def float_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c, d in frame.schema.items() if is_float(d)]


def numeric_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c, d in frame.schema.items() if is_numeric(d)]


def public_code_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c in frame.columns if _PUBLIC_CODE.match(norm(c))]


def floats(frame: pl.DataFrame, column: str) -> np.ndarray:
    """A column as float64 (text parsed, unparseable -> NaN)."""
    s = frame[column]
    if s.dtype == pl.Boolean:
        s = s.cast(pl.Int8)
    if not s.dtype.is_numeric():
        s = s.cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
    return s.cast(pl.Float64).fill_null(np.nan).to_numpy()


def texts(frame: pl.DataFrame, column: str) -> list[str]:
    return [str(v) for v in frame[column].cast(pl.String).to_list()]


def mask_values(values: Iterable[object]) -> tuple[str, ...]:
    """Fingerprints of gated values, sorted and de-duplicated (never the values)."""
    return tuple(sorted({fingerprint(v) for v in values}))


# --- tying rows to products ---------------------------------------------------------------------
def _means(ctx: GatedContext) -> pl.DataFrame:
    m = ctx.panel_means
    cols = {
        "category": m["category"].cast(pl.String),
        "product_code": m["product_code"].cast(pl.Float64),
        "panel_mean": m["panel_mean"].cast(pl.Float64),
        "is_analog": m["is_analog"].cast(pl.Boolean)
        if "is_analog" in m.columns
        else pl.Series([True] * len(m), dtype=pl.Boolean),
        "n_ratings": m["n_ratings"].cast(pl.Float64)
        if "n_ratings" in m.columns
        else pl.Series([None] * len(m), dtype=pl.Float64),
    }
    return pl.DataFrame(cols).unique(["category", "product_code"], keep="first")


def raw_codes(frame: pl.DataFrame, code_column: str, ctx: GatedContext) -> np.ndarray | None:
    """Per row, the raw product code behind public code column ``code_column`` (NaN when not in
    the map); None without a category column or a code map."""
    if "category" not in frame.columns or ctx.code_map is None:
        return None
    keys = pl.DataFrame(
        {
            "category": frame["category"].cast(pl.String),
            "public_code": pl.Series(floats(frame, code_column)).fill_nan(None),
        }
    ).with_row_index("_row")
    cmap = pl.DataFrame(
        {
            "category": ctx.code_map["category"].cast(pl.String),
            "public_code": ctx.code_map["public_code"].cast(pl.Float64),
            "product_code": ctx.code_map["product_code"].cast(pl.Float64),
        }
    ).unique(["category", "public_code"], keep="first")
    out = keys.join(cmap, on=["category", "public_code"], how="left").sort("_row")
    return out["product_code"].fill_null(np.nan).to_numpy()


def row_products(
    frame: pl.DataFrame, ctx: GatedContext, code_column: str | None = None
) -> pl.DataFrame | None:
    """Per row (same order): category, raw product_code, panel_mean, is_analog, n_ratings; None
    when the rows cannot be tied to products (no category, or no code column that the gated facts
    resolve). ``code_column`` picks the column (default: the first public code column, else a raw
    ``product_code`` column)."""
    if "category" not in frame.columns or frame.is_empty():
        return None
    codes = public_code_columns(frame)
    if code_column is None:
        code_column = codes[0] if codes else None
    if code_column is not None and _PUBLIC_CODE.match(norm(code_column)):
        raw = raw_codes(frame, code_column, ctx)
    elif "product_code" in frame.columns:
        raw = floats(frame, "product_code")
    else:
        return None
    if raw is None:
        return None
    keys = pl.DataFrame(
        {"category": frame["category"].cast(pl.String), "product_code": raw}
    ).with_columns(pl.col("product_code").fill_nan(None))
    out = (
        keys.with_row_index("_row")
        .join(_means(ctx), on=["category", "product_code"], how="left")
        .sort("_row")
        .drop("_row")
    )
    if out["product_code"].is_null().all():
        return None
    return out.with_columns(pl.col("panel_mean").fill_null(np.nan))


def pooled_spearman(x, y, groups) -> tuple[float, float, int]:
    """Spearman rho of x and y within each group, pooled: (n-weighted mean rho, Stouffer z with
    z_g = rho_g * sqrt(n_g - 1), rows used). Groups under MIN_GROUP rows or constant are skipped.

    One grouped polars query (average ranks, Pearson of the ranks per group, in the groups' first
    appearance order): a loop over the groups cost 25 ms a call, and a release runs ~200."""
    df = pl.DataFrame(
        {
            "x": np.asarray(x, dtype=float),
            "y": np.asarray(y, dtype=float),
            "g": [str(g) for g in groups],
        }
    ).filter(pl.col("x").is_not_nan() & pl.col("y").is_not_nan())
    per = (
        df.group_by("g", maintain_order=True)
        .agg(
            n=pl.len(),
            rho=pl.corr(pl.col("x").rank("average"), pl.col("y").rank("average")),
            varied=(pl.col("x").n_unique() > 1) & (pl.col("y").n_unique() > 1),
        )
        .filter((pl.col("n") >= MIN_GROUP) & pl.col("varied"))
    )
    if per.is_empty():
        return 0.0, 0.0, 0
    r, n = per["rho"].to_numpy(), per["n"].to_numpy().astype(float)
    return (
        float((r * n).sum() / n.sum()),
        float((r * np.sqrt(n - 1)).sum() / np.sqrt(len(r))),
        int(n.sum()),
    )


def decimals(values: np.ndarray) -> int:
    """Decimals needed to write every value exactly (capped at 10)."""
    for d in range(11):
        if np.all(np.abs(np.round(values, d) - values) <= 1e-12 * np.maximum(1, np.abs(values))):
            return d
    return 10


def tolerance(n_decimals: int) -> float:
    return 1e-9 if n_decimals >= 9 else 0.5 * 10.0**-n_decimals + 1e-12


def pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    """Pearson r on the rows where both are finite; None with < NEAR_MIN_ROWS rows or no spread."""
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < NEAR_MIN_ROWS or np.std(a[ok]) == 0 or np.std(b[ok]) == 0:
        return None
    return float(np.corrcoef(a[ok], b[ok])[0, 1])
