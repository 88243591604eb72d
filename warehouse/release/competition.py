"""``tastebench competition OUT_DIR``: the leaderboard export (docs/release.md, "Competition").

* **Products**: the rated analogs of the warehouse, interleaved with unrated **decoys** of the
  same category taken from the public competition products
  (``staging.stg_tastebench__competition_products``), selected by ingredient-set Jaccard
  (:mod:`.competition_draw`).
* **Features only**: ingredient list (brands of the bundle and of the curated seed, join keys and
  UPCs removed by the guards' one text matcher, ``GatedContext.redact``) and the 18 label
  nutrition values per serving; no target, no origin flag.
* **Codes, sides, split and solution**: :mod:`.competition_draw`; audits and scoring:
  :mod:`.leaderboard`. The state is stored in the gated folder and reused by later exports.
* The warehouse is opened through ``sources.readonly.connect_read_only`` (the one way a warehouse
  is opened for reading; the export reads relations only).
* Before publishing, the written folder passes ``guard_release_dir`` (every table, the
  cross-file linkage of every pair of files, text files) and the audits again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from warehouse import __version__
from warehouse.errors import require_warehouse
from warehouse.files import atomic_dir
from warehouse.release.competition_draw import (
    JACCARD_MAX,
    MAX_DRAWS,
    STATE_COLUMNS,
    CompetitionState,
    build_solution,
    draw_state,
    guard_ctx_map,
    ingredient_tokens,
    jaccard,
    load_state,
    max_jaccard,
    member_key,
    select_decoys,
    within_category_pairs,
)
from warehouse.release.croissant import build_croissant, build_time, write_croissant
from warehouse.release.gated import COMPETITION, check_out_dir, ensure_separate, write_private_bytes
from warehouse.release.leaderboard import audit_competition, audit_pairs, round2, score_submission
from warehouse.release.schema import (
    COMP_PAIRS,
    COMP_PRODUCTS,
    COMP_SAMPLE,
    COMP_SOLUTION,
    COMPETITION_TABLES,
    NUTRIENT_COLUMNS,
)
from warehouse.release.tables import ReleaseError, table_bytes, write_manifest, write_table

USAGES = ("Public", "Private", "Ignored")
NUTRIENTS = [n for n, _ in NUTRIENT_COLUMNS]


# --- inputs -------------------------------------------------------------------------------------
def read_members(con, ctx) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(members: category, kind, product_code, competition_product_code, ingredient_list,
    nutrients; rated frame with every rated product's text; gated pairs). Ingredient lists are
    redacted with ``ctx`` (a GatedContext) before anything else sees them."""
    nutri = ", ".join(f"s.{n}" for n in NUTRIENTS)
    rated_all = con.sql(
        "select p.category, p.product_code, p.is_analog, s.ingredient_list, "
        f"{nutri} from marts.dim_products p join staging.stg_nectar__products s "
        "on s.product_key = p.product_key and s.product_year = p.label_year"
    ).pl()
    if rated_all.select(pl.struct("category", "product_code").is_duplicated().any()).item():
        raise ReleaseError("stg_nectar__products has two label rows for one product-year")
    cand = con.sql(
        f"select category, competition_product_code, ingredient_list, {', '.join(NUTRIENTS)} "
        "from staging.stg_tastebench__competition_products"
    ).pl()
    rated_all, cand = (
        f.with_columns(ingredient_list=pl.Series(ctx.redact(f["ingredient_list"].to_list())))
        for f in (rated_all, cand)
    )
    decoys = select_decoys(rated_all.select("category", "ingredient_list"), cand)
    analogs = rated_all.filter(pl.col("is_analog"))
    cols = ["category", "kind", "product_code", "competition_product_code", "ingredient_list"]
    members = pl.concat(
        [
            analogs.with_columns(
                kind=pl.lit("rated"),
                product_code=pl.col("product_code").cast(pl.Int64),
                competition_product_code=pl.lit(None, dtype=pl.Int64),
            ).select(cols + NUTRIENTS),
            decoys.with_columns(
                kind=pl.lit("decoy"),
                product_code=pl.lit(None, dtype=pl.Int64),
                competition_product_code=pl.col("competition_product_code").cast(pl.Int64),
            ).select(cols + NUTRIENTS),
        ],
        how="vertical_relaxed",
    )
    pairs = con.sql(
        "select category, product_code_a, product_code_b, is_tie, winner_product_code "
        "from marts.fct_within_category_pairs"
    ).pl()
    return members, rated_all, pairs


# --- the export ---------------------------------------------------------------------------------
@dataclass
class CompetitionResult:
    out_dir: Path
    solution_path: Path
    data_origin: str
    n_products: int
    n_rated: int
    n_decoys: int
    n_pairs: int
    n_public_pairs: int
    n_private_pairs: int
    audit: dict[str, object]
    state_reused: bool
    elapsed_s: float
    files: list[str] = field(default_factory=list)


def readme_text(data_origin: str, n_products: int, n_pairs: int) -> str:
    simulated = data_origin == "simulation"
    banner = (
        "> **data_origin = SIMULATED.** The hidden winners come from the calibrated simulation of "
        "the NECTAR panels, not from real ratings: leaderboard scores are not real results.\n"
        if simulated
        else f"> data_origin = `{data_origin}`.\n"
    )
    return f"""# TasteBench competition data (TasteBench Warehouse {__version__})

{banner}
Predict, for each pair of products of the same category, which one a consumer panel rated as
more similar to the animal product it imitates.

| file | rows | what |
|---|---:|---|
| `products.csv` | {n_products} | {COMP_PRODUCTS.description} |
| `ranking_pairs.csv` | {n_pairs} | {COMP_PAIRS.description} |
| `sample_submission.csv` | {n_pairs} | {COMP_SAMPLE.description} |
| `*.parquet` | | the same three tables as Parquet (same rows, typed) |
| `croissant.json` | | Croissant 1.0 metadata |
| `MANIFEST.sha256` | | sha256 of every other file |

Not every product was rated: unrated products are interleaved with the rated ones, and pairs
that involve one are not scored. Product codes are one random permutation of all products;
which product of a pair is listed first is random. The score is the share of scored pairs
whose winner you name (Public and Private leaderboards: disjoint sets of categories), rounded to
2 decimals.

Licences: NECTAR-derived data CC BY-NC 4.0 (non-commercial; attribution: NECTAR and the
TasteBench authors); the product label data are those of the public TasteBench competition
(CC BY-NC 4.0).
"""


@dataclass
class CompetitionInputs:
    ctx: object  # GatedContext of the warehouse
    members: pl.DataFrame
    gold_pairs: pl.DataFrame
    data_origin: str
    built_at: str


def read_competition_inputs(db_path: Path) -> CompetitionInputs:
    """The warehouse's members, gold pairs, origin and build time, read through
    ``connect_read_only`` (relations only; the export writes its files with polars/pyarrow)."""
    from warehouse.quality.guards import GatedContext
    from warehouse.sources.readonly import connect_read_only

    require_warehouse(db_path, ReleaseError)
    con = connect_read_only(Path(db_path))
    try:
        ctx = GatedContext.from_warehouse(con)
        members, _, gold_pairs = read_members(con, ctx)
        origin = con.sql("select distinct data_origin from marts.dim_products").fetchall()
        built_at = build_time(con)
    finally:
        con.close()
    if len(origin) != 1:
        raise ReleaseError(f"the warehouse mixes data origins {origin}")
    return CompetitionInputs(ctx, members, gold_pairs, str(origin[0][0]), built_at)


def public_frames(state: CompetitionState, inp: CompetitionInputs):
    """(products, pairs, sample submission, solution, audit) of a competition state; raise when
    the audits are not at chance."""
    pairs, solution = build_solution(state, inp.gold_pairs)
    audit = audit_pairs(solution)
    if not audit["at_chance"]:
        raise ReleaseError(f"competition audits not at chance: {audit}")
    codes = state.code_map.select(member_key().alias("_key"), "public_code")
    products = inp.members.with_columns(_key=member_key()).join(
        codes, on="_key", how="left", validate="1:1"
    )
    sample = pairs.select("pair_id", pl.col("public_code_1").alias("public_code_winner"))
    return products, pairs, sample, solution, audit


def write_public_files(tmp: Path, inp: CompetitionInputs, products, pairs, sample) -> None:
    """The three tables, README, Croissant and manifest of the competition folder."""
    for spec, frame in ((COMP_PRODUCTS, products), (COMP_PAIRS, pairs), (COMP_SAMPLE, sample)):
        write_table(tmp, frame, spec)
    (tmp / "README.md").write_text(
        readme_text(inp.data_origin, len(products), len(pairs)), encoding="utf-8"
    )
    doc = build_croissant(
        tmp,
        name="tastebench-competition",
        description="TasteBench pairwise similarity competition: product features and "
        "pairs to rank, no labels."
        + (" Hidden labels are SIMULATED." if inp.data_origin == "simulation" else ""),
        tables=COMPETITION_TABLES,
        other_files={"README.md": "Task, files, scoring, licences."},
        data_origin=inp.data_origin,
        version=__version__,
        date_published=inp.built_at,
    )
    write_croissant(tmp, doc)
    write_manifest(tmp)


def export_competition(
    out_dir: Path,
    *,
    db_path: Path,
    gated_dir: Path,
    log: Callable[[str], None] = lambda m: None,
) -> CompetitionResult:
    """Write the competition folder into ``out_dir`` (new or empty) and the solution into the
    gated folder; raise without writing anything when a guard or an audit fails."""
    from warehouse.quality.guards import guard_release_dir, raise_for_violations

    t0 = time.perf_counter()
    out_dir = check_out_dir(out_dir)
    gated = Path(gated_dir).resolve()
    ensure_separate(out_dir, gated)
    inp = read_competition_inputs(db_path)
    members, folder = inp.members, gated / COMPETITION
    state = load_state(folder, members)
    reused = state is not None
    if state is None:
        state = draw_state(members, inp.gold_pairs, inp.ctx, log)
    ctx = inp.ctx.with_code_map(guard_ctx_map(state.code_map))
    products, pairs, sample, solution, audit = public_frames(state, inp)

    with atomic_dir(out_dir) as tmp:  # an existing out_dir is empty (checked above)
        write_public_files(tmp, inp, products, pairs, sample)
        raise_for_violations(guard_release_dir(tmp, ctx), where=f"the competition for {out_dir}")
        if audit_competition(tmp, solution) != audit:
            raise ReleaseError("the written ranking_pairs.csv does not match the solution")
        if not reused:
            state.save(folder)
        solution_path = write_private_bytes(
            folder / COMP_SOLUTION.path, table_bytes(solution, COMP_SOLUTION)
        )
    counts = dict(solution["usage"].value_counts().iter_rows())
    return CompetitionResult(
        out_dir=out_dir,
        solution_path=solution_path,
        data_origin=inp.data_origin,
        n_products=len(products),
        n_rated=int((members["kind"] == "rated").sum()),
        n_decoys=int((members["kind"] == "decoy").sum()),
        n_pairs=len(pairs),
        n_public_pairs=int(counts.get("Public", 0)),
        n_private_pairs=int(counts.get("Private", 0)),
        audit=audit,
        state_reused=reused,
        elapsed_s=time.perf_counter() - t0,
        files=sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()),
    )


__all__ = [
    "JACCARD_MAX",
    "MAX_DRAWS",
    "STATE_COLUMNS",
    "USAGES",
    "CompetitionResult",
    "CompetitionState",
    "audit_competition",
    "audit_pairs",
    "build_solution",
    "draw_state",
    "export_competition",
    "guard_ctx_map",
    "ingredient_tokens",
    "jaccard",
    "load_state",
    "max_jaccard",
    "read_members",
    "round2",
    "score_submission",
    "select_decoys",
    "within_category_pairs",
]
