"""Benchmark: the feature stage (blocks S, N, C, T, I) cold vs warm vector cache.

Usage::

    python benchmarks/features.py [--db build/tastebench.duckdb]

Reads the inputs of the feature marts from a built warehouse (read-only) and runs the same
``warehouse.features.marts`` functions the dbt models call, in one process on this machine:

* baseline: cold, an empty cache folder (every text embedded, every photo described; the
  process also pays the one-off sentence-transformers import, as a fresh build does);
* warm: the same folder again (every vector read back from the cache).

Both runs must give byte-identical vectors; the ratio printed is baseline / warm.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def _inputs(db: Path) -> dict:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    q = {
        "products": "select * from marts.dim_products",
        "categories": "select * from seeds.categories",
        "nutrition": "select * from marts.fct_nutrition_per_100g",
        "entities": "select * from staging.stg_foodatlas__entities",
        "edges": "select * from staging.stg_foodatlas__edges",
        "concentrations": "select * from staging.stg_foodatlas__concentrations",
        "molecules": "select * from intermediate.int_molecules_featurized",
        "embeddings": "select * from marts.fct_compound_embeddings",
        "synonyms": "select * from seeds.foodatlas_food_synonyms",
        "images": "select * from staging.stg_nectar__images",
    }
    out = {k: con.sql(v).pl() for k, v in q.items()}
    con.close()
    return out


def run_stage(x: dict, cache: Path) -> tuple[dict[str, float], dict]:
    from warehouse.features import marts

    t: dict[str, float] = {}
    frames = {}
    t0 = time.perf_counter()
    frames["S"] = marts.subset_features(x["products"], x["categories"])
    frames["N"] = marts.nutrition_features(x["products"], x["nutrition"])
    t["S+N"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    variants = marts.compound_feature_variants(
        x["products"], x["entities"], x["edges"], x["concentrations"], x["molecules"],
        x["embeddings"], x["synonyms"],
    )  # fmt: skip
    frames["C"] = marts.main_compound_features(variants)
    t["C (all variants)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    frames["T"] = marts.text_features(x["products"], cache)
    t["T"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    frames["I"] = marts.image_features(
        x["products"], x["images"], [frames["N"], frames["C"], frames["T"]], cache
    )
    t["I (+ imputation)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    marts.feature_coverage(x["products"], [frames[b] for b in "SNCTI"])
    t["coverage"] = time.perf_counter() - t0
    t["total"] = sum(t.values())
    return t, frames


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=REPO_ROOT / "build" / "tastebench.duckdb")
    args = ap.parse_args()
    t0 = time.perf_counter()
    x = _inputs(args.db)
    read_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        cold, a = run_stage(x, Path(tmp))
        warm, b = run_stage(x, Path(tmp))
    same = all(a[k]["vector"].equals(b[k]["vector"]) for k in a)
    print(f"inputs read from {args.db}: {read_s:.2f} s")
    print(f"{'step':20s} {'cold (baseline) s':>18s} {'warm s':>8s}")
    for k in cold:
        print(f"{k:20s} {cold[k]:18.2f} {warm[k]:8.2f}")
    print(f"warm vs cold: {cold['total'] / warm['total']:.1f}x faster; vectors identical: {same}")
    if not same:
        raise SystemExit("cold and warm vectors differ")


if __name__ == "__main__":
    from _results import run_and_record

    run_and_record("features", main)
