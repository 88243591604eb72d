"""``tastebench release OUT_DIR``: export the de-identified public benchmark (docs/release.md).

Flow: read the gated marts (polars, through ``sources.readonly.connect_read_only``, the one way
a warehouse is opened for reading: the export reads relations only, and writes its files with
polars/pyarrow and a separate DuckDB file) -> public codes and pair sides from the gated
folder (drawn once with ``secrets`` when absent, redrawn until the de-identification rules and
both audits are clean) -> write the data tables (CSV + Parquet) into a temporary sibling of
OUT_DIR -> re-derive the metric tables from those files and the upstream TasteBench files they
reference by hash (the code ``tastebench verify`` runs) and check them against the warehouse's
marts -> the public DuckDB file -> README, Croissant, manifest -> ``guard_release_dir`` (every
table, every pair of tables joined on their shared columns, every text file, every table of the
DuckDB file) -> only when it returns no violation: store the gated state and rename the folder
to OUT_DIR. The README's text is the template ``templates/release_README.md`` (package data).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template

import numpy as np
import polars as pl

from warehouse import __version__
from warehouse.config import Settings
from warehouse.errors import require_warehouse
from warehouse.files import atomic_dir
from warehouse.release import derive
from warehouse.release.croissant import build_croissant, build_time, write_croissant
from warehouse.release.gated import GatedStore, check_out_dir, ensure_separate
from warehouse.release.public_db import write_public_db
from warehouse.release.schema import (
    BLOCK_RELIABILITY,
    CATEGORIES,
    FIT_OOF,
    FIT_OOF_DIR,
    GOLD_PAIRS,
    GROUP_SIZE_CURVE,
    HUMAN_SUMMARY,
    MODEL_METRICS,
    PANELIST_ROWS,
    PRODUCTS,
    PUBLIC_SOURCE,
    RELEASE_AUDITS,
    SPLIT_HALF,
    UPSTREAM_FILES,
)
from warehouse.release.tables import (
    PUBLIC_DB,
    ReleaseError,
    TableSpec,
    table_bytes,
    write_manifest,
    write_table,
)
from warehouse.release.upstream import upstream_listing

MAX_DRAWS = 200
MART_TOLERANCE = 1e-12


@dataclass
class ReleaseResult:
    out_dir: Path
    gated_dir: Path
    data_origin: str
    files: list[str]
    code_map_reused: bool
    pair_sides_reused: bool
    audits: pl.DataFrame
    elapsed_s: float
    timings: dict[str, float] = field(default_factory=dict)


# --- inputs -------------------------------------------------------------------------------------
@dataclass
class WarehouseInputs:
    products: pl.DataFrame  # category, product_code, is_analog, is_reference, panel_mean, origin
    categories: pl.DataFrame
    pairs: pl.DataFrame  # fct_within_category_pairs
    panelist_rows: pl.DataFrame
    reliability: pl.DataFrame
    split_half: pl.DataFrame
    curve: pl.DataFrame
    human_mart: pl.DataFrame
    oof: pl.DataFrame
    metrics_mart: pl.DataFrame

    @property
    def data_origin(self) -> str:
        vals = sorted(self.products["data_origin"].drop_nulls().cast(pl.String).unique())
        if len(vals) != 1:
            raise ReleaseError(f"the warehouse mixes data origins {vals}")
        return vals[0]


_CODES = ("product_code", "product_code_a", "product_code_b", "winner_product_code")


def _typed(frame: pl.DataFrame) -> pl.DataFrame:
    """Raw code columns as Int64 (DuckDB INTEGER arrives as Int32), so joins line up."""
    return frame.with_columns(pl.col(c).cast(pl.Int64) for c in _CODES if c in frame.columns)


def read_inputs(con) -> WarehouseInputs:
    q = lambda sql: _typed(con.sql(sql).pl())  # noqa: E731
    products = q(
        "select p.category, p.product_code, p.is_analog, p.is_reference, m.panel_mean, "
        "p.data_origin from marts.dim_products p join marts.fct_panel_means m "
        "on m.product_key = p.product_key"
    )
    if products.is_empty():
        raise ReleaseError("the warehouse has no benchmark products. Fix: build it first.")
    return WarehouseInputs(
        products=products,
        categories=q("select * from marts.dim_categories"),
        pairs=q(
            "select category, product_code_a, product_code_b, is_tie, winner_product_code "
            "from marts.fct_within_category_pairs"
        ),
        panelist_rows=q("select * from marts.fct_panelist_block_accuracy"),
        reliability=q("select * from marts.agg_block_reliability"),
        split_half=q("select * from marts.agg_split_half_reliability"),
        curve=q("select * from marts.agg_group_size_curve"),
        human_mart=q("select metric, warehouse_value from marts.agg_human_baseline"),
        oof=q("select * from marts.fct_oof_predictions"),
        metrics_mart=q("select * from marts.agg_model_metrics"),
    )


# --- gated draws --------------------------------------------------------------------------------
def ranked_products(products) -> pl.DataFrame:
    """Add ``true_rank`` (analogs only) from the panel means."""
    out = _typed(derive.as_frame(products)).with_row_index("_row")
    analogs = out.filter(pl.col("is_analog").cast(pl.Boolean))
    ranks = derive.within_category_ranks(
        analogs["category"].to_numpy(), analogs["panel_mean"].to_numpy()
    )
    ranked = analogs.select("_row", pl.Series("true_rank", ranks, dtype=pl.Float64))
    return out.join(ranked, on="_row", how="left").sort("_row").drop("_row")


def public_products(ranked: pl.DataFrame, cmap) -> pl.DataFrame:
    cmap = _typed(derive.as_frame(cmap)).select(
        "category", "product_code", pl.col("public_code").cast(pl.Int64)
    )
    out = ranked.join(cmap, on=["category", "product_code"], how="left", validate="1:1")
    if out["public_code"].null_count():
        raise ReleaseError("the public-code map does not cover every product")
    return out


def draw_code_map(ranked: pl.DataFrame, ctx, log: Callable[[str], None]) -> pl.DataFrame:
    """``guards.draw_public_codes`` redrawn until products.csv passes the permutation and
    row-order rules and the lower-code audit sits at chance."""
    from warehouse.metrics import lower_code_wins
    from warehouse.quality.guards import draw_public_codes, guard_frame

    base = ranked.select("category", "product_code", "is_analog")
    for attempt in range(1, MAX_DRAWS + 1):
        cmap = draw_public_codes(base, ctx)
        cmap = _typed(cmap).join(base, on=["category", "product_code"], validate="1:1")
        pub = public_products(ranked, cmap).sort("category", "public_code")
        frame = pub.select("category", "public_code", "is_reference", "true_rank")
        bad = guard_frame(
            PRODUCTS.path,
            frame,
            ctx.with_code_map(cmap),
            rules=["public_code_permutation", "row_order_hidden_id"],
        )
        analogs = pub.filter(pl.col("true_rank").is_not_null())
        lcw = lower_code_wins(
            analogs["category"].to_numpy().astype(object),
            analogs["public_code"].to_numpy().astype(np.float64),
            analogs["true_rank"].to_numpy().astype(np.float64),
            ci="default",  # as the release audit (release_audits.csv) judges it
        )["pairwise_accuracy"]
        if not bad and not lcw["differs_from_chance"]:
            log(f"public codes drawn (attempt {attempt})")
            return cmap
    raise ReleaseError(f"no clean public-code permutation in {MAX_DRAWS} draws")


def draw_pair_sides(
    analog_pairs: pl.DataFrame, cmap: pl.DataFrame, ctx, log: Callable[[str], None]
) -> pl.DataFrame:
    """Fair coin per pair (``secrets``), redrawn until the slot-1 audit on the untied pairs
    includes 0.5 and the pair file passes the row-order rule."""
    from warehouse.quality.guards import guard_frame

    for attempt in range(1, MAX_DRAWS + 1):
        sides = analog_pairs.select("category", "product_code_a", "product_code_b")
        sides = sides.with_columns(a_in_slot_1=pl.Series(derive.draw_sides(len(sides))))
        oriented = orient_pairs(analog_pairs, sides, cmap)
        audit = derive.slot1_audit(
            oriented["public_code_1"].to_numpy(), oriented["public_code_winner"].to_numpy()
        )
        bad = guard_frame(
            GOLD_PAIRS.path, oriented, ctx.with_code_map(cmap), rules=["row_order_hidden_id"]
        )
        if not audit["differs_from_chance"] and not bad:
            log(f"gold pair sides drawn (attempt {attempt})")
            return sides
    raise ReleaseError(f"no pair orientation at chance in {MAX_DRAWS} draws")


def orient_pairs(pairs, sides, cmap) -> pl.DataFrame:
    """Untied raw pairs (category, product_code_a, product_code_b, winner_product_code) + sides
    -> public (pair_id, category, public_code_1, public_code_2, public_code_winner)."""
    keys = ["category", "product_code_a", "product_code_b"]
    pairs, sides = _typed(derive.as_frame(pairs)), _typed(derive.as_frame(sides))
    p = pairs.filter(~pl.col("is_tie").cast(pl.Boolean)).join(sides, on=keys, validate="1:1")
    codes = _typed(derive.as_frame(cmap)).select(
        "category", "product_code", pl.col("public_code").cast(pl.Int64)
    )

    def pub(col: str) -> pl.Series:
        m = p.select("category", pl.col(col).alias("product_code")).with_row_index("_r")
        return m.join(codes, on=["category", "product_code"], how="left").sort("_r")["public_code"]

    a, b, w = pub("product_code_a"), pub("product_code_b"), pub("winner_product_code")
    first = p["a_in_slot_1"].cast(pl.Boolean)
    out = pl.DataFrame(
        {
            "category": p["category"],
            "public_code_1": pl.select(pl.when(first).then(a).otherwise(b)).to_series(),
            "public_code_2": pl.select(pl.when(first).then(b).otherwise(a)).to_series(),
            "public_code_winner": w,
        }
    )
    return derive.number_pairs(out, "public_code_1", "public_code_2")


# --- table frames -------------------------------------------------------------------------------
def check_pairs_against_ranks(ranked: pl.DataFrame, mart_pairs: pl.DataFrame) -> None:
    ours = derive.analog_pairs(ranked, "product_code").rename(
        {"code_a": "product_code_a", "code_b": "product_code_b"}
    )
    m = ours.join(
        _typed(mart_pairs),
        on=["category", "product_code_a", "product_code_b"],
        how="full",
        coalesce=True,
        suffix="_mart",
    )
    bad = m.filter(
        pl.col("is_tie").is_null()
        | pl.col("is_tie_mart").is_null()
        | (pl.col("is_tie") != pl.col("is_tie_mart"))
        | (~pl.col("is_tie") & (pl.col("winner") != pl.col("winner_product_code")))
    )
    if len(bad):
        r = bad.row(0, named=True)
        raise ReleaseError(
            f"true_rank disagrees with marts.fct_within_category_pairs in category "
            f"{r['category']} ({len(bad)} pair(s)): the warehouse is inconsistent. Fix: rebuild it."
        )


def data_tables(
    inp: WarehouseInputs, ranked: pl.DataFrame, cmap: pl.DataFrame, sides: pl.DataFrame
) -> list[tuple[TableSpec, pl.DataFrame]]:
    origin = inp.data_origin
    pub = public_products(ranked, cmap)
    out: list[tuple[TableSpec, pl.DataFrame]] = [(PRODUCTS, pub), (CATEGORIES, inp.categories)]
    gold = orient_pairs(inp.pairs, sides, cmap).with_columns(data_origin=pl.lit(origin))
    out.append((GOLD_PAIRS, gold))
    out += [
        (PANELIST_ROWS, inp.panelist_rows),
        (BLOCK_RELIABILITY, inp.reliability),
        (SPLIT_HALF, inp.split_half),
        (GROUP_SIZE_CURVE, inp.curve),
    ]
    oof = inp.oof
    published = oof.filter(pl.col("source") == PUBLIC_SOURCE)
    out.append((UPSTREAM_FILES, upstream_listing(published["model_id"].unique().to_list())))
    fits = oof.filter(pl.col("source") != PUBLIC_SOURCE)
    gold_rank = pub.select("category", "product_code", "public_code", "true_rank")
    for (model_id,), rows in fits.sort("model_id").group_by("model_id", maintain_order=True):
        name = re.sub(r"[^A-Za-z0-9_.-]", "__", str(model_id))
        frame = rows.select(
            "model_id", "category", "product_code", "predicted_score", "data_origin"
        )
        frame = frame.join(gold_rank, on=["category", "product_code"], how="left")
        if frame["public_code"].null_count() or frame["true_rank"].null_count():
            raise ReleaseError(f"fit {model_id}: products without a public code or true_rank")
        out.append((FIT_OOF.with_path(f"{FIT_OOF_DIR}/{name}.csv"), frame))
    return out


def check_against_marts(metrics: pl.DataFrame, summary: pl.DataFrame, inp: WarehouseInputs) -> None:
    """The re-derived metric tables must equal the warehouse's marts."""
    problems = []
    key = "model_metric_key"
    mart, ours = inp.metrics_mart, metrics
    if set(mart[key]) != set(ours[key]):
        diff = sorted(set(mart[key]) ^ set(ours[key]))[:3]
        problems.append(f"model metric rows differ from marts.agg_model_metrics: {diff}")
    else:
        m = mart.join(ours, on=key, suffix="_ours")
        for col in ("point", "ci_lo", "ci_hi", "chance_value"):
            a = m[f"{col}_ours"].cast(pl.Float64).fill_null(np.nan).to_numpy()
            b = m[col].cast(pl.Float64).fill_null(np.nan).to_numpy()
            bad = ~np.isclose(a, b, rtol=0, atol=MART_TOLERANCE, equal_nan=True)
            if bad.any():
                problems.append(f"{col} of {m[key][int(np.flatnonzero(bad)[0])]} differs")
    hm = dict(inp.human_mart.select("metric", "warehouse_value").iter_rows())
    sv = dict(summary.select("metric", "value").iter_rows())
    for metric in sorted(set(hm) & set(sv)):
        a, b = hm[metric], sv[metric]
        a = np.nan if a is None else float(a)
        b = np.nan if b is None else float(b)
        if not np.isclose(a, b, rtol=0, atol=MART_TOLERANCE, equal_nan=True):
            problems.append(f"human-baseline {metric} differs from marts.agg_human_baseline")
    if problems:
        raise ReleaseError(
            "re-derived release metrics disagree with the warehouse: "
            + "; ".join(problems)
            + ". Fix: rebuild the warehouse (its marts are stale or inconsistent)."
        )


# --- README -------------------------------------------------------------------------------------
README_TEMPLATE = "templates/release_README.md"  # package data (pyproject.toml)
SIMULATED_BANNER = (
    "> **data_origin = SIMULATED.** Every product rank, gold pair and human-baseline figure "
    "here comes from the calibrated simulation of the NECTAR panels (the real ratings are "
    "under NDA). It has the real structure and realistic values, but **no number computed "
    "from it is a real result.** The model metrics are the exception: they score the "
    "published TasteBench out-of-fold files against their own published gold.\n"
)


def readme_text(specs: list[tuple[TableSpec, int]], data_origin: str) -> str:
    """The release's README.md: the template of :data:`README_TEMPLATE` with the file table."""
    simulated = data_origin == "simulation"
    banner = SIMULATED_BANNER if simulated else f"> data_origin = `{data_origin}`.\n"
    rows = "\n".join(
        f"| `{s.path}` | {n} | {s.description} |" for s, n in sorted(specs, key=lambda x: x[0].path)
    )
    template = resources.files("warehouse.release").joinpath(README_TEMPLATE)
    return Template(template.read_text(encoding="utf-8")).substitute(
        version=__version__, banner=banner, rows=rows, public_db=PUBLIC_DB
    )


# --- the export ---------------------------------------------------------------------------------
@dataclass
class GatedDraws:
    """The gated state of one export: ranked products, public codes and pair sides (loaded from
    the gated folder, or drawn now when absent)."""

    ranked: pl.DataFrame
    cmap: pl.DataFrame
    sides: pl.DataFrame
    code_map_reused: bool
    pair_sides_reused: bool


def read_warehouse(db_path: Path):
    """(inputs, GatedContext, build time) of the warehouse, opened by ``connect_read_only`` (the
    export reads relations only; its files are written by polars/pyarrow and a separate DuckDB
    file, never by the warehouse connection)."""
    from warehouse.quality.guards import GatedContext
    from warehouse.sources.readonly import connect_read_only

    require_warehouse(db_path, ReleaseError)
    con = connect_read_only(db_path)
    try:
        return read_inputs(con), GatedContext.from_warehouse(con), build_time(con)
    finally:
        con.close()


def gated_draws(inp: WarehouseInputs, ctx, store: GatedStore, log) -> GatedDraws:
    ranked = ranked_products(inp.products)
    check_pairs_against_ranks(ranked, inp.pairs)
    base = ranked.select("category", "product_code", "is_analog")
    cmap = store.load_code_map(base)
    code_map_reused = cmap is not None
    if cmap is None:
        cmap = draw_code_map(ranked, ctx, log)
    sides_key = inp.pairs.select("category", "product_code_a", "product_code_b")
    sides = store.load_pair_sides(sides_key)
    sides_reused = sides is not None
    if sides is None:
        sides = draw_pair_sides(inp.pairs, cmap, ctx, log)
    return GatedDraws(ranked, cmap, sides, code_map_reused, sides_reused)


def write_data_tables(
    tmp: Path, inp: WarehouseInputs, draws: GatedDraws
) -> list[tuple[TableSpec, int]]:
    """Write the data tables (CSV + Parquet); return (spec, rows) of each."""
    written: list[tuple[TableSpec, int]] = []
    for spec, frame in data_tables(inp, draws.ranked, draws.cmap, draws.sides):
        if "data_origin" in spec.names and "data_origin" not in frame.columns:
            frame = frame.with_columns(data_origin=pl.lit(inp.data_origin))
        write_table(tmp, frame, spec)
        written.append((spec, len(frame)))
    return written


def derive_metric_tables(tmp: Path, inp: WarehouseInputs, settings: Settings):
    """Re-derive the metric tables from the written files (the code ``tastebench verify`` runs),
    check them against the files and the marts; return (release tables, derived frames)."""
    from warehouse.release.verify import derive_tables, read_release_tables

    tables = read_release_tables(tmp, settings)
    derived, problems = derive_tables(tables, settings.fits_dir)
    problems = tables.upstream_problems + problems
    if problems:
        raise ReleaseError("; ".join(problems))
    for spec in (GOLD_PAIRS, CATEGORIES):
        if table_bytes(derived[spec.path], spec) != (tmp / spec.path).read_bytes():
            raise ReleaseError(f"{spec.path} does not re-derive from the release files")
    check_against_marts(derived[MODEL_METRICS.path], derived[HUMAN_SUMMARY.path], inp)
    if bad := derive.audits_at_chance(derived[RELEASE_AUDITS.path]):
        raise ReleaseError(
            "release audits not at chance: " + "; ".join(bad) + ". Fix: move the gated "
            "code map / pair sides away to redraw them."
        )
    return tables, derived


def release_croissant(tmp: Path, specs: list[TableSpec], origin: str, built_at: str, urls):
    """The release's Croissant document (``urls``: the upstream files it derives from)."""
    simulated = origin == "simulation"
    note = " Ratings are SIMULATED (data_origin = simulation)." if simulated else ""
    return build_croissant(
        tmp,
        name="tastebench-release",
        description=(
            "De-identified TasteBench benchmark: products with public codes and "
            "within-category ranks, gold pairs, human-baseline aggregates, out-of-fold "
            "predictions of warehouse fits and metrics." + note
        ),
        tables=specs,
        other_files={"README.md": "What is released, keying, verification, licences."},
        data_origin=origin,
        version=__version__,
        date_published=built_at,
        derived_from=["https://github.com/Food-Intelligence-Lab/tastebench", *sorted(urls)],
    )


def export_release(
    out_dir: Path,
    *,
    db_path: Path,
    gated_dir: Path,
    settings: Settings,
    log: Callable[[str], None] = lambda m: None,
) -> ReleaseResult:
    """Write the release into ``out_dir`` (new or empty) or raise without writing anything.
    ``settings``: where the upstream TasteBench files are fetched."""
    from warehouse.quality.guards import guard_release_dir, raise_for_violations

    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    out_dir = check_out_dir(out_dir)
    gated_dir = Path(gated_dir).resolve()
    ensure_separate(out_dir, gated_dir)
    inp, ctx, built_at = read_warehouse(Path(db_path))
    origin = inp.data_origin
    timings["read"] = time.perf_counter() - t0
    store = GatedStore(gated_dir)
    draws = gated_draws(inp, ctx, store, log)
    ctx = ctx.with_code_map(draws.cmap)
    timings["gated"] = time.perf_counter() - t0 - timings["read"]

    with atomic_dir(out_dir) as tmp:  # an existing out_dir is empty (checked above)
        written = write_data_tables(tmp, inp, draws)
        t1 = time.perf_counter()
        tables, derived = derive_metric_tables(tmp, inp, settings)
        for spec in (HUMAN_SUMMARY, MODEL_METRICS, RELEASE_AUDITS):
            write_table(tmp, derived[spec.path], spec)
            written.append((spec, len(derived[spec.path])))
        timings["metrics"] = time.perf_counter() - t1
        write_public_db(tmp, [s for s, _ in written])
        (tmp / "README.md").write_text(readme_text(written, origin), encoding="utf-8")
        urls = tables.frames[UPSTREAM_FILES.path]["url"].to_list()
        doc = release_croissant(tmp, [s for s, _ in written], origin, built_at, urls)
        write_croissant(tmp, doc)
        write_manifest(tmp)
        t2 = time.perf_counter()
        violations = guard_release_dir(tmp, ctx)
        timings["guards"] = time.perf_counter() - t2
        raise_for_violations(violations, where=f"the release for {out_dir}")
        if not draws.code_map_reused:
            store.save_code_map(draws.cmap)
        if not draws.pair_sides_reused:
            store.save_pair_sides(draws.sides)
    files = sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file())
    return ReleaseResult(
        out_dir=out_dir,
        gated_dir=gated_dir,
        data_origin=origin,
        files=files,
        code_map_reused=draws.code_map_reused,
        pair_sides_reused=draws.pair_sides_reused,
        audits=derived[RELEASE_AUDITS.path],
        elapsed_s=time.perf_counter() - t0,
        timings=timings,
    )


__all__ = ["ReleaseResult", "export_release", "orient_pairs", "ranked_products", "read_inputs"]
