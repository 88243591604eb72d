"""``tastebench release OUT_DIR``: export the de-identified public benchmark (docs/release.md).

Flow: read the gated marts (read-only) -> public codes and pair sides from the gated folder
(drawn once with ``secrets`` when absent, redrawn until the de-identification rules and both
audits are clean) -> write the data tables into a temporary sibling of OUT_DIR -> re-derive the
metric tables from those files (the code ``tastebench verify`` runs) and check them against the
warehouse's marts -> README, Croissant, manifest -> ``guard_release_dir`` -> only when it
returns no violation: store the gated state and rename the folder to OUT_DIR.
"""

from __future__ import annotations

import re
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse import __version__
from warehouse.release import derive
from warehouse.release.croissant import build_croissant, write_croissant
from warehouse.release.gated import GatedStore, check_out_dir, ensure_separate
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
    TB_OOF,
    TB_OOF_DIR,
    TB_PAIRS,
)
from warehouse.release.tables import (
    ReleaseError,
    TableSpec,
    table_bytes,
    write_manifest,
    write_table,
)

MAX_DRAWS = 200
MART_TOLERANCE = 1e-12
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class ReleaseResult:
    out_dir: Path
    gated_dir: Path
    data_origin: str
    files: list[str]
    code_map_reused: bool
    pair_sides_reused: bool
    audits: pd.DataFrame
    elapsed_s: float
    timings: dict[str, float] = field(default_factory=dict)


# --- inputs -------------------------------------------------------------------------------------
@dataclass
class WarehouseInputs:
    products: pd.DataFrame  # category, product_code, is_analog, is_reference, panel_mean, origin
    categories: pd.DataFrame
    pairs: pd.DataFrame  # fct_within_category_pairs
    panelist_rows: pd.DataFrame
    reliability: pd.DataFrame
    split_half: pd.DataFrame
    curve: pd.DataFrame
    human_mart: pd.DataFrame
    oof: pd.DataFrame
    tb_pairs: pd.DataFrame
    metrics_mart: pd.DataFrame

    @property
    def data_origin(self) -> str:
        vals = sorted(self.products["data_origin"].dropna().astype(str).unique())
        if len(vals) != 1:
            raise ReleaseError(f"the warehouse mixes data origins {vals}")
        return vals[0]


def read_inputs(con) -> WarehouseInputs:
    q = lambda sql: con.sql(sql).df()  # noqa: E731
    products = q(
        "select p.category, p.product_code, p.is_analog, p.is_reference, m.panel_mean, "
        "p.data_origin from marts.dim_products p join marts.fct_panel_means m "
        "on m.product_key = p.product_key"
    )
    if products.empty:
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
        tb_pairs=q(
            "select pair_id, category, product_code_1, product_code_2, winner_product_code "
            "from staging.stg_tastebench__gold_pairs"
        ),
        metrics_mart=q("select * from marts.agg_model_metrics"),
    )


# --- gated draws --------------------------------------------------------------------------------
def ranked_products(products: pd.DataFrame) -> pd.DataFrame:
    """Add ``true_rank`` (analogs only) from the panel means."""
    out = products.copy()
    analog = out["is_analog"].astype(bool).to_numpy()
    out["true_rank"] = np.nan
    out.loc[analog, "true_rank"] = derive.within_category_ranks(
        out.loc[analog, "category"], out.loc[analog, "panel_mean"]
    )
    return out


def public_products(ranked: pd.DataFrame, cmap: pd.DataFrame) -> pd.DataFrame:
    out = ranked.merge(
        cmap[["category", "product_code", "public_code"]],
        on=["category", "product_code"],
        how="left",
        validate="1:1",
    )
    if out["public_code"].isna().any():
        raise ReleaseError("the public-code map does not cover every product")
    out["public_code"] = out["public_code"].astype(np.int64)
    return out


def draw_code_map(ranked: pd.DataFrame, ctx, log: Callable[[str], None]) -> pd.DataFrame:
    """``guards.draw_public_codes`` redrawn until products.csv passes the permutation and
    row-order rules and the lower-code audit sits at chance."""
    from warehouse.metrics import lower_code_wins
    from warehouse.quality.guards import draw_public_codes, guard_frame

    base = ranked[["category", "product_code", "is_analog"]]
    for attempt in range(1, MAX_DRAWS + 1):
        cmap = draw_public_codes(base, ctx)
        cmap = cmap.merge(base, on=["category", "product_code"], validate="1:1")
        pub = public_products(ranked, cmap).sort_values(["category", "public_code"])
        frame = pub[["category", "public_code", "is_reference", "true_rank"]].reset_index(drop=True)
        bad = guard_frame(
            PRODUCTS.path,
            frame,
            ctx.with_code_map(cmap),
            rules=["public_code_permutation", "row_order_hidden_id"],
        )
        analogs = pub[pub["true_rank"].notna()]
        lcw = lower_code_wins(
            analogs["category"].to_numpy(dtype=object),
            analogs["public_code"].to_numpy(dtype=np.float64),
            analogs["true_rank"].to_numpy(dtype=np.float64),
        )["pairwise_accuracy"]
        if not bad and not lcw["differs_from_chance"]:
            log(f"public codes drawn (attempt {attempt})")
            return cmap
    raise ReleaseError(f"no clean public-code permutation in {MAX_DRAWS} draws")


def draw_pair_sides(
    analog_pairs: pd.DataFrame, cmap: pd.DataFrame, ctx, log: Callable[[str], None]
) -> pd.DataFrame:
    """Fair coin per pair (``secrets``), redrawn until the slot-1 audit on the untied pairs
    includes 0.5 and the pair file passes the row-order rule."""
    from warehouse.quality.guards import guard_frame

    for attempt in range(1, MAX_DRAWS + 1):
        sides = analog_pairs[["category", "product_code_a", "product_code_b"]].copy()
        sides["a_in_slot_1"] = derive.draw_sides(len(sides))
        oriented = orient_pairs(analog_pairs, sides, cmap)
        audit = derive.slot1_audit(oriented["public_code_1"], oriented["public_code_winner"])
        bad = guard_frame(
            GOLD_PAIRS.path, oriented, ctx.with_code_map(cmap), rules=["row_order_hidden_id"]
        )
        if not audit["differs_from_chance"] and not bad:
            log(f"gold pair sides drawn (attempt {attempt})")
            return sides
    raise ReleaseError(f"no pair orientation at chance in {MAX_DRAWS} draws")


def orient_pairs(pairs: pd.DataFrame, sides: pd.DataFrame, cmap: pd.DataFrame) -> pd.DataFrame:
    """Untied raw pairs (category, product_code_a, product_code_b, winner_product_code) + sides
    -> public (pair_id, category, public_code_1, public_code_2, public_code_winner)."""
    keys = ["category", "product_code_a", "product_code_b"]
    p = pairs[~pairs["is_tie"].astype(bool)].merge(sides, on=keys, validate="1:1")
    codes = cmap.set_index(["category", "product_code"])["public_code"]

    def pub(col: str) -> np.ndarray:
        idx = pd.MultiIndex.from_arrays([p["category"], p[col].astype(np.int64)])
        return codes.reindex(idx).to_numpy(dtype=np.int64)

    a, b, w = pub("product_code_a"), pub("product_code_b"), pub("winner_product_code")
    first = p["a_in_slot_1"].to_numpy(bool)
    out = pd.DataFrame(
        {
            "category": p["category"].to_numpy(),
            "public_code_1": np.where(first, a, b),
            "public_code_2": np.where(first, b, a),
            "public_code_winner": w,
        }
    )
    return derive.number_pairs(out, "public_code_1", "public_code_2")


# --- table frames -------------------------------------------------------------------------------
def check_pairs_against_ranks(ranked: pd.DataFrame, mart_pairs: pd.DataFrame) -> None:
    ours = derive.analog_pairs(ranked.assign(true_rank=ranked["true_rank"]), "product_code")
    ours = ours.rename(columns={"code_a": "product_code_a", "code_b": "product_code_b"})
    m = ours.merge(
        mart_pairs, on=["category", "product_code_a", "product_code_b"], how="outer", indicator=True
    )
    bad = (m["_merge"] != "both") | (m["is_tie_x"] != m["is_tie_y"])
    bad |= ~m["is_tie_x"].astype(bool) & (m["winner"] != m["winner_product_code"])
    if bad.any():
        r = m[bad].iloc[0]
        raise ReleaseError(
            f"true_rank disagrees with marts.fct_within_category_pairs on {r['category']} "
            f"{r['product_code_a']}/{r['product_code_b']}: the warehouse is inconsistent"
        )


def data_tables(
    inp: WarehouseInputs, ranked: pd.DataFrame, cmap: pd.DataFrame, sides: pd.DataFrame
) -> list[tuple[TableSpec, pd.DataFrame]]:
    origin = inp.data_origin
    pub = public_products(ranked, cmap)
    out: list[tuple[TableSpec, pd.DataFrame]] = [(PRODUCTS, pub), (CATEGORIES, inp.categories)]
    gold = orient_pairs(inp.pairs, sides, cmap)
    gold["data_origin"] = origin
    out.append((GOLD_PAIRS, gold))
    out += [
        (PANELIST_ROWS, inp.panelist_rows),
        (BLOCK_RELIABILITY, inp.reliability),
        (SPLIT_HALF, inp.split_half),
        (GROUP_SIZE_CURVE, inp.curve),
    ]
    tb = inp.tb_pairs.rename(
        columns={
            "product_code_1": "tastebench_public_code_1",
            "product_code_2": "tastebench_public_code_2",
            "winner_product_code": "tastebench_public_code_winner",
        }
    )
    out.append((TB_PAIRS, tb))
    oof = inp.oof
    public = oof[oof["source"] == PUBLIC_SOURCE]
    for model_id, rows in public.groupby("model_id", sort=True):
        name = str(model_id)
        if not _SAFE_NAME.match(name) or name == Path(TB_PAIRS.path).stem:
            raise ReleaseError(f"model id {name!r} cannot be a file name in {TB_OOF_DIR}/")
        if rows["true_rank"].isna().any():
            raise ReleaseError(f"public OOF file {name} has no true_rank for every product")
        frame = rows.rename(columns={"product_code": "tastebench_public_code"})
        out.append((TB_OOF.with_path(f"{TB_OOF_DIR}/{name}.csv"), frame))
    fits = oof[oof["source"] != PUBLIC_SOURCE]
    gold_rank = pub[["category", "product_code", "public_code", "true_rank"]]
    for model_id, rows in fits.groupby("model_id", sort=True):
        name = re.sub(r"[^A-Za-z0-9_.-]", "__", str(model_id))
        frame = rows[["model_id", "category", "product_code", "predicted_score", "data_origin"]]
        frame = frame.merge(gold_rank, on=["category", "product_code"], how="left")
        if frame["public_code"].isna().any() or frame["true_rank"].isna().any():
            raise ReleaseError(f"fit {model_id}: products without a public code or true_rank")
        out.append((FIT_OOF.with_path(f"{FIT_OOF_DIR}/{name}.csv"), frame))
    return out


def check_against_marts(metrics: pd.DataFrame, summary: pd.DataFrame, inp: WarehouseInputs) -> None:
    """The re-derived metric tables must equal the warehouse's marts."""
    problems = []
    mart = inp.metrics_mart.set_index("model_metric_key")
    ours = metrics.set_index("model_metric_key")
    if set(mart.index) != set(ours.index):
        diff = sorted(set(mart.index) ^ set(ours.index))[:3]
        problems.append(f"model metric rows differ from marts.agg_model_metrics: {diff}")
    else:
        for col in ("point", "ci_lo", "ci_hi", "chance_value"):
            a = ours[col].astype(float).reindex(mart.index).to_numpy()
            b = mart[col].astype(float).to_numpy()
            bad = ~np.isclose(a, b, rtol=0, atol=MART_TOLERANCE, equal_nan=True)
            if bad.any():
                problems.append(f"{col} of {mart.index[bad][0]} differs from agg_model_metrics")
    hm = inp.human_mart.set_index("metric")["warehouse_value"].astype(float)
    sv = summary.set_index("metric")["value"].astype(float)
    for metric in sorted(set(hm.index) & set(sv.index)):
        if not np.isclose(hm[metric], sv[metric], rtol=0, atol=MART_TOLERANCE, equal_nan=True):
            problems.append(f"human-baseline {metric} differs from marts.agg_human_baseline")
    if problems:
        raise ReleaseError(
            "re-derived release metrics disagree with the warehouse: "
            + "; ".join(problems)
            + ". Fix: rebuild the warehouse (its marts are stale or inconsistent)."
        )


# --- README -------------------------------------------------------------------------------------
def readme_text(specs: list[tuple[TableSpec, int]], data_origin: str) -> str:
    simulated = data_origin == "simulation"
    banner = (
        "> **data_origin = SIMULATED.** Every product rank, gold pair and human-baseline figure "
        "here comes from the calibrated simulation of the NECTAR panels (the real ratings are "
        "under NDA). It has the real structure and realistic values, but **no number computed "
        "from it is a real result.** The model metrics are the exception: they score the "
        "published TasteBench out-of-fold files against their own published gold.\n"
        if simulated
        else f"> data_origin = `{data_origin}`.\n"
    )
    rows = "\n".join(
        f"| `{s.path}` | {n} | {s.description} |" for s, n in sorted(specs, key=lambda x: x[0].path)
    )
    return f"""# TasteBench public release (TasteBench Warehouse {__version__})

{banner}
De-identified benchmark files exported by `tastebench release` from a built warehouse
(BENCHMARK.md sections 4, 5 and 7; docs/release.md of the warehouse repository).

## Files

| file | rows | what |
|---|---:|---|
{rows}
| `croissant.json` | | Croissant 1.0 metadata with RAI fields (every file and column) |
| `MANIFEST.sha256` | | `<sha256>  <path>` of every other file, sorted by path |

## Keying: two code spaces, never mixed

- `public_code` (`benchmark/`, `oof/`): this release's codes. Per category a cryptographically
  random permutation of the analogs to 1..n_c, references n_c+1, ...; drawn once and kept only in
  the gated area, so later releases reuse them. Codes carry no information about the target.
- `tastebench_public_code` (`{TB_OOF_DIR}/`): the codes of the original TasteBench public release,
  kept as published so those files stay identical to the published ones (only the column
  `product_code` is renamed). **Do not join the two spaces on the code**: the same number names
  different products. The folder is self-contained (its own gold `true_rank` and gold pairs).

## What is never here

Brands, UPCs, bundle join keys, raw product codes, respondent ids or any key that follows one
panelist across blocks, per-product panel means (the gold is a within-category rank, ties x.5),
product features next to targets. Row order is a function of the released columns only. Every
file passed the de-identification guards before publication.

## Verify

`tastebench verify <this folder>` checks the manifest and the Croissant hashes, then recomputes
the gold pairs (from `true_rank`), the category counts, the human-baseline summary, the model
metrics (from the OOF files) and the release audits, and compares them byte for byte.
Floats are written as the shortest text that reads back as the same float64.

## Licences

NECTAR-derived data (everything in this release): **CC BY-NC 4.0** (non-commercial; attribution:
NECTAR and the TasteBench authors). FartDB-derived data (none in this release): MIT.
"""


TB_README = f"""# Published TasteBench out-of-fold predictions (original keying)

These files are the out-of-fold predictions and gold pairs of the original TasteBench public
release, **keyed by the ORIGINAL TasteBench public codes** (`tastebench_public_code`), not by the
`public_code` of `benchmark/`. Values are exactly as published; the column `product_code` is
renamed so that it cannot be mistaken for a code of this release.

- `<model>.csv`: `category, tastebench_public_code, true_rank, predicted_score` (215 analogs).
- `gold_pairs.csv`: the published 932 untied gold pairs in the same keying.

`metrics/model_metrics.csv` scores every file here against its own `true_rank` (rows
`policy:*`: the trivial policies on these products and pairs).
data_origin: `{PUBLIC_SOURCE}` (real results). Licence: CC BY-NC 4.0.
"""


# --- the export ---------------------------------------------------------------------------------
def export_release(
    out_dir: Path,
    *,
    db_path: Path,
    gated_dir: Path,
    log: Callable[[str], None] = lambda m: None,
) -> ReleaseResult:
    """Write the release into ``out_dir`` (new or empty) or raise without writing anything."""
    import duckdb

    from warehouse.quality.guards import GatedContext, guard_release_dir, raise_for_violations
    from warehouse.release.verify import derive_tables, read_release_tables

    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    out_dir = check_out_dir(out_dir)
    gated_dir = Path(gated_dir).resolve()
    ensure_separate(out_dir, gated_dir)
    db_path = Path(db_path)
    if not db_path.exists():
        raise ReleaseError(f"no warehouse at {db_path}. Fix: run `tastebench build` first.")
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        inp = read_inputs(con)
        ctx = GatedContext.from_warehouse(con)
    finally:
        con.close()
    origin = inp.data_origin
    timings["read"] = time.perf_counter() - t0

    store = GatedStore(gated_dir)
    ranked = ranked_products(inp.products)
    check_pairs_against_ranks(ranked, inp.pairs)
    base = ranked[["category", "product_code", "is_analog"]]
    cmap = store.load_code_map(base)
    code_map_reused = cmap is not None
    if cmap is None:
        cmap = draw_code_map(ranked, ctx, log)
    sides_key = inp.pairs[["category", "product_code_a", "product_code_b"]]
    sides = store.load_pair_sides(sides_key)
    sides_reused = sides is not None
    if sides is None:
        sides = draw_pair_sides(inp.pairs, cmap, ctx, log)
    ctx = ctx.with_code_map(cmap)
    timings["gated"] = time.perf_counter() - t0 - timings["read"]

    tmp = out_dir.parent / f".{out_dir.name}.tmp-{secrets.token_hex(4)}"
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp.mkdir()
    try:
        written: list[tuple[TableSpec, int]] = []
        for spec, frame in data_tables(inp, ranked, cmap, sides):
            frame = frame.copy()
            if "data_origin" in spec.names and "data_origin" not in frame.columns:
                frame["data_origin"] = origin
            write_table(tmp, frame, spec)
            written.append((spec, len(frame)))
        (tmp / TB_OOF_DIR / "README.md").write_text(TB_README, encoding="utf-8")
        t1 = time.perf_counter()
        tables = read_release_tables(tmp)
        derived, problems = derive_tables(tables)
        if problems:
            raise ReleaseError("; ".join(problems))
        for spec in (GOLD_PAIRS, CATEGORIES):
            if table_bytes(derived[spec.path], spec) != (tmp / spec.path).read_bytes():
                raise ReleaseError(f"{spec.path} does not re-derive from the release files")
        check_against_marts(derived[MODEL_METRICS.path], derived[HUMAN_SUMMARY.path], inp)
        audits = derived[RELEASE_AUDITS.path]
        if bad := derive.audits_at_chance(audits):
            raise ReleaseError(
                "release audits not at chance: " + "; ".join(bad) + ". Fix: move the gated "
                "code map / pair sides away to redraw them."
            )
        for spec in (HUMAN_SUMMARY, MODEL_METRICS, RELEASE_AUDITS):
            write_table(tmp, derived[spec.path], spec)
            written.append((spec, len(derived[spec.path])))
        timings["metrics"] = time.perf_counter() - t1
        (tmp / "README.md").write_text(readme_text(written, origin), encoding="utf-8")
        specs = [s for s, _ in written]
        doc = build_croissant(
            tmp,
            name="tastebench-release",
            description=(
                "De-identified TasteBench benchmark: products with public codes and "
                "within-category ranks, gold pairs, human-baseline aggregates, out-of-fold "
                "predictions and metrics."
                + (
                    " Ratings are SIMULATED (data_origin = simulation)."
                    if origin == "simulation"
                    else ""
                )
            ),
            tables=specs,
            other_files={
                "README.md": "What is released, keying, verification, licences.",
                f"{TB_OOF_DIR}/README.md": "Label of the original-keying OOF folder.",
            },
            data_origin=origin,
            version=__version__,
            derived_from=["https://github.com/Food-Intelligence-Lab/tastebench"],
        )
        write_croissant(tmp, doc)
        write_manifest(tmp)
        t2 = time.perf_counter()
        violations = guard_release_dir(tmp, ctx)
        timings["guards"] = time.perf_counter() - t2
        raise_for_violations(violations, where=f"the release for {out_dir}")
        if not code_map_reused:
            store.save_code_map(cmap)
        if not sides_reused:
            store.save_pair_sides(sides)
        if out_dir.exists():
            out_dir.rmdir()  # empty (checked above)
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    files = sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file())
    return ReleaseResult(
        out_dir=out_dir,
        gated_dir=gated_dir,
        data_origin=origin,
        files=files,
        code_map_reused=code_map_reused,
        pair_sides_reused=sides_reused,
        audits=audits,
        elapsed_s=time.perf_counter() - t0,
        timings=timings,
    )


__all__ = ["ReleaseResult", "export_release", "orient_pairs", "ranked_products", "read_inputs"]
