"""Block C: FoodAtlas compounds of a product's first three mapped ingredients
(docs/benchmark.md §2).

Pipeline (docs/features.md, "Block C"):

1. Parse ``cleaned_ingredients`` and match each item to FoodAtlas foods
   (:mod:`warehouse.features.ingredients`).
2. Take the matched foods' ``contains`` edges. Concentrations (FoodAtlas v4 attestations; the v1
   extracts have none) are converted to mg/100 g with :data:`UNIT_TO_MG_PER_100G` *before*
   averaging; a unit not in the table (volumes, IU, ...) is not converted and is counted.
   A compound's concentration in an ingredient = mean of its converted values over every
   attestation of every matched food entity; missing when it has none.
3. Resolve each compound to an RDKit canonical SMILES through ``int_molecules_featurized``:
   by PubChem CID (the KGv2 seed structures), else by InChIKey (exact structure identity with a
   FartDB molecule). Duplicate structures inside one ingredient count once.
4. Each structure's vector comes from ``fct_compound_embeddings`` for one encoder (the Morgan
   fingerprint encoder always; the selected D-MPNN when registered).
5. Ingredient vector = aggregation of its compound vectors (:data:`AGGREGATIONS`):
   ``log`` (main): weights log(1 + c) + 1e-6 with a missing c taken as 0, so an ingredient with
   no concentration at all gets the uniform mean; ``linear``: weights c + 1e-6; ``uniform``:
   plain mean; ``max``: element-wise maximum; ``top3``: plain mean of the three highest
   concentrations (missing last, ties by SMILES).
6. Product vector = mean of the first three *usable* ingredients in label order (usable: matched
   and at least one compound with a vector). A product without one has ``has_block = False`` and
   a zero row: coverage is reported, never filled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from warehouse.features.block import KEY_COLUMNS, FeatureBlock, FeatureError
from warehouse.features.ingredients import FoodMatcher, parse_ingredients
from warehouse.features.products import product_frame

AGGREGATIONS = ("log", "uniform", "max", "top3", "linear")
MAIN_AGGREGATION = "log"
N_INGREDIENTS = 3
WEIGHT_EPS = 1e-6
C_RULES_VERSION = "1"
FINGERPRINT_ENCODER = "morgan2_2048_tsvd64"

# mass fraction units -> factor to mg per 100 g (w/w). 1 % = 1 g/100 g = 1000 mg/100 g.
UNIT_TO_MG_PER_100G = {
    "mg/100g": 1.0,
    "g/100g": 1000.0,
    "ug/100g": 1e-3,
    "ng/100g": 1e-6,
    "g/g": 1e5,
    "mg/g": 100.0,
    "ug/g": 0.1,
    "ng/g": 1e-4,
    "g/kg": 100.0,
    "mg/kg": 0.1,
    "ug/kg": 1e-4,
    "ng/kg": 1e-7,
    "%": 1000.0,
    "percent": 1000.0,
    "ppm": 0.1,
    "ppb": 1e-4,
}


def normalize_unit(unit: str | None) -> str | None:
    """'mg / 100 g' -> 'mg/100g'; micro signs and 'mcg' -> 'ug'; None stays None."""
    if unit is None:
        return None
    u = unit.strip().lower().replace("µ", "u").replace("μ", "u").replace("mcg", "ug")
    u = re.sub(r"\s+", "", u).replace("gram", "g").replace("per", "/")
    u = u.replace("(w/w)", "").replace("w/w", "")
    return u or None


def to_mg_per_100g(values: pl.Series, units: pl.Series) -> pl.Series:
    """Converted values (null where the value is missing or the unit is not a mass fraction)."""
    factors = [UNIT_TO_MG_PER_100G.get(normalize_unit(u)) for u in units.to_list()]
    out = values.cast(pl.Float64, strict=False) * pl.Series(factors, dtype=pl.Float64)
    return out.fill_nan(None)


@dataclass(frozen=True)
class FoodAtlasGraph:
    """FoodAtlas in the shape block C needs, for one KG version.

    ``foods``: food_entity_id, food_name, synonyms (list[str]);
    ``contains``: food_entity_id, compound_entity_id, edge_id;
    ``concentrations``: edge_id, conc_value, conc_unit (may be empty);
    ``compounds``: compound_entity_id, pubchem_cid, inchikey.
    """

    kg_version: str
    foods: pl.DataFrame
    contains: pl.DataFrame
    concentrations: pl.DataFrame
    compounds: pl.DataFrame


@dataclass(frozen=True)
class CompoundFeatures:
    """Blocks keyed by (encoder, aggregation), the per-ingredient match table and the unit
    conversion summary."""

    blocks: dict[tuple[str, str], FeatureBlock]
    ingredients: pl.DataFrame
    units: pl.DataFrame


def _structures(graph: FoodAtlasGraph, molecules: pl.DataFrame) -> pl.DataFrame:
    """compound_entity_id -> canonical_smiles and the route (pubchem_cid | inchikey)."""
    mol = molecules.select(
        pl.col("canonical_smiles").cast(pl.String),
        pl.col("pubchem_cid").cast(pl.Int64, strict=False),
        pl.col("inchikey").cast(pl.String),
    )
    by_cid = (
        mol.filter(pl.col("pubchem_cid").is_not_null())
        .group_by("pubchem_cid")
        .agg(pl.col("canonical_smiles").min().alias("smiles_cid"))
    )
    by_key = (
        mol.filter(pl.col("inchikey").is_not_null())
        .group_by("inchikey")
        .agg(pl.col("canonical_smiles").min().alias("smiles_key"))
    )
    comp = graph.compounds.select(
        pl.col("compound_entity_id").cast(pl.String),
        pl.col("pubchem_cid").cast(pl.Int64, strict=False),
        pl.col("inchikey").cast(pl.String),
    ).unique("compound_entity_id", keep="first")
    out = comp.join(by_cid, on="pubchem_cid", how="left").join(by_key, on="inchikey", how="left")
    return out.select(
        "compound_entity_id",
        pl.coalesce("smiles_cid", "smiles_key").alias("canonical_smiles"),
        pl.when(pl.col("smiles_cid").is_not_null())
        .then(pl.lit("pubchem_cid"))
        .when(pl.col("smiles_key").is_not_null())
        .then(pl.lit("inchikey"))
        .alias("structure_route"),
    )


def _edge_table(graph: FoodAtlasGraph) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(food_entity_id, compound_entity_id, conc values in mg/100g as a list) and unit summary."""
    conc = graph.concentrations
    if conc.height:
        conc = conc.select(
            pl.col("edge_id").cast(pl.String),
            pl.col("conc_value").cast(pl.String),
            pl.col("conc_unit").cast(pl.String),
        )
        converted = to_mg_per_100g(conc["conc_value"], conc["conc_unit"])
        conc = conc.with_columns(converted.alias("conc_mg_per_100g"))
        units = (
            conc.filter(pl.col("conc_value").is_not_null())
            .group_by("conc_unit")
            .agg(
                pl.len().alias("n_values"),
                pl.col("conc_mg_per_100g").is_not_null().sum().alias("n_converted"),
            )
            .with_columns(
                pl.col("conc_unit")
                .map_elements(
                    lambda u: UNIT_TO_MG_PER_100G.get(normalize_unit(u)), return_dtype=pl.Float64
                )
                .alias("factor_to_mg_per_100g")
            )
            .sort("conc_unit", nulls_last=True)
        )
    else:
        conc = pl.DataFrame(schema={"edge_id": pl.String, "conc_mg_per_100g": pl.Float64})
        units = pl.DataFrame(
            schema={
                "conc_unit": pl.String,
                "n_values": pl.UInt32,
                "n_converted": pl.UInt32,
                "factor_to_mg_per_100g": pl.Float64,
            }
        )
    edges = graph.contains.select(
        pl.col("food_entity_id").cast(pl.String),
        pl.col("compound_entity_id").cast(pl.String),
        pl.col("edge_id").cast(pl.String),
    )
    per_edge = edges.join(conc.select("edge_id", "conc_mg_per_100g"), on="edge_id", how="left")
    return per_edge, units


def _ingredient_compounds(
    per_edge: pl.DataFrame, structures: pl.DataFrame, food_ids: Sequence[str]
) -> pl.DataFrame:
    """Compounds of one matched ingredient (the union of its food entities): one row per
    compound entity with its structure and pooled mean concentration."""
    rows = per_edge.filter(pl.col("food_entity_id").is_in(list(food_ids)))
    return (
        rows.group_by("compound_entity_id")
        .agg(pl.col("conc_mg_per_100g").mean().alias("conc_mg_per_100g"))
        .join(structures, on="compound_entity_id", how="left")
        .sort("compound_entity_id")
    )


def _aggregate(vectors: np.ndarray, conc: np.ndarray, aggregation: str) -> np.ndarray:
    """Compound vectors (k x d, rows in canonical SMILES order) -> one ingredient vector."""
    c = np.where(np.isnan(conc), 0.0, conc)
    if aggregation == "log":
        w = np.log1p(c) + WEIGHT_EPS
        return (w[:, None] * vectors).sum(axis=0) / w.sum()
    if aggregation == "linear":
        w = c + WEIGHT_EPS
        return (w[:, None] * vectors).sum(axis=0) / w.sum()
    if aggregation == "uniform":
        return vectors.mean(axis=0)
    if aggregation == "max":
        return vectors.max(axis=0)
    if aggregation == "top3":
        # highest concentration first, missing last; the stable sort keeps SMILES order on ties
        key = np.where(np.isnan(conc), -np.inf, conc)
        order = np.argsort(-key, kind="stable")[:3]
        return vectors[order].mean(axis=0)
    raise FeatureError(f"block C: unknown aggregation {aggregation!r}; use one of {AGGREGATIONS}")


def embedding_lookup(embeddings: pl.DataFrame) -> dict[str, tuple[str, dict[str, np.ndarray]]]:
    """encoder -> (fit_hash, canonical_smiles -> float64 vector) from fct_compound_embeddings."""
    needed = ["canonical_smiles", "encoder", "fit_hash", "embedding"]
    missing = [c for c in needed if c not in embeddings.columns]
    if missing:
        raise FeatureError(
            f"marts.fct_compound_embeddings: missing column(s) {missing}. "
            "Fix: pass the compound embeddings mart"
        )
    out: dict[str, tuple[str, dict[str, np.ndarray]]] = {}
    for (encoder,), part in embeddings.partition_by("encoder", as_dict=True).items():
        hashes = part["fit_hash"].unique().to_list()
        if len(hashes) != 1:
            raise FeatureError(
                f"marts.fct_compound_embeddings: encoder {encoder!r} has {len(hashes)} fit "
                "hashes. Fix: one fit per encoder"
            )
        vecs = part["embedding"].to_list()
        out[str(encoder)] = (
            str(hashes[0]),
            {
                s: np.asarray(v, dtype=np.float64)
                for s, v in zip(part["canonical_smiles"].to_list(), vecs, strict=True)
            },
        )
    return out


def compound_features(
    products: pl.DataFrame,
    graph: FoodAtlasGraph,
    molecules: pl.DataFrame,
    embeddings: pl.DataFrame,
    synonyms: pl.DataFrame,
    *,
    encoders: Sequence[str] | None = None,
    aggregations: Sequence[str] = AGGREGATIONS,
) -> CompoundFeatures:
    """Block C for every product, one :class:`FeatureBlock` per (encoder, aggregation).

    ``encoders`` defaults to every encoder in ``embeddings``. Per-product coverage columns go
    into each block's ``extra`` (see :func:`_coverage_frame`); ``ingredients`` lists every parsed
    item with its match, for inspection.
    """
    keys = product_frame(products, "dim_products", "cleaned_ingredients")
    bad = [a for a in aggregations if a not in AGGREGATIONS]
    if bad:
        raise FeatureError(f"block C: unknown aggregation(s) {bad}; use {AGGREGATIONS}")
    lookup = embedding_lookup(embeddings)
    encoders = list(encoders) if encoders is not None else sorted(lookup)
    for enc in encoders:
        if enc not in lookup:
            raise FeatureError(
                f"block C: encoder {enc!r} has no rows in marts.fct_compound_embeddings "
                f"(present: {sorted(lookup)}). Fix: build the molecular marts first"
            )
    matcher = FoodMatcher(graph.foods, synonyms)
    per_edge, units = _edge_table(graph)
    tables, item_rows = _match_items(keys, matcher, per_edge, _structures(graph, molecules))
    ing_vec, ing_stats = _ingredient_vectors(tables, lookup, encoders, aggregations)
    blocks: dict[tuple[str, str], FeatureBlock] = {}
    for enc in encoders:
        fit_hash, vecs = lookup[enc]
        dim = len(next(iter(vecs.values()))) if vecs else 0
        coverage, used_sets = _coverage(keys.height, item_rows, tables, ing_stats, enc)
        for agg in aggregations:
            matrix = np.zeros((keys.height, dim), dtype=np.float64)
            for r, used in enumerate(used_sets):
                if used:
                    matrix[r] = np.mean([ing_vec[(f, enc, agg)] for f in used], axis=0)
            blocks[(enc, agg)] = FeatureBlock(
                name="C",
                keys=keys.select(KEY_COLUMNS),
                matrix=matrix,
                feature_names=tuple(f"compound_{j}" for j in range(dim)),
                encoder=enc,
                encoder_version=(
                    f"fit={fit_hash};agg={agg};kg={graph.kg_version};rules={C_RULES_VERSION}"
                ),
                has_block=np.array([bool(u) for u in used_sets], dtype=bool),
                is_imputed=np.zeros(keys.height, dtype=bool),
                data_origin=tuple(keys["data_origin"].to_list()),
                extra=_coverage_frame(coverage, agg, graph.kg_version),
            )
    ingredients = _ingredients_frame(keys, item_rows)
    return CompoundFeatures(blocks=blocks, ingredients=ingredients, units=units)


def _match_items(keys: pl.DataFrame, matcher: FoodMatcher, per_edge, structures):
    """Every parsed ingredient item ``(row, position, item, match)`` and one compound table per
    distinct matched food set."""
    tables: dict[tuple[str, ...], pl.DataFrame] = {}
    item_rows = []
    parsed = [parse_ingredients(t) for t in keys["cleaned_ingredients"].to_list()]
    for row, items in enumerate(parsed):
        for pos, item in enumerate(items, start=1):
            m = matcher.match(item)
            if m.food_entity_ids and m.food_entity_ids not in tables:
                tables[m.food_entity_ids] = _ingredient_compounds(
                    per_edge, structures, m.food_entity_ids
                )
            item_rows.append((row, pos, item, m))
    return tables, item_rows


def _ingredient_vectors(tables, lookup, encoders: Sequence[str], aggregations: Sequence[str]):
    """Ingredient vectors per (food set, encoder, aggregation), deduplicated by structure, and
    per (food set, encoder) the counts ``(compounds, with structure, embedded, embedded with a
    concentration, embedded SMILES)``."""
    ing_vec: dict[tuple[tuple[str, ...], str, str], np.ndarray] = {}
    ing_stats: dict[tuple[tuple[str, ...], str], tuple[int, int, int, int, list[str]]] = {}
    for food_ids, table in tables.items():
        with_smiles = table.filter(pl.col("canonical_smiles").is_not_null())
        by_smiles = (
            with_smiles.group_by("canonical_smiles")
            .agg(pl.col("conc_mg_per_100g").mean())
            .sort("canonical_smiles")
        )
        for enc in encoders:
            _, vecs = lookup[enc]
            present = [s for s in by_smiles["canonical_smiles"].to_list() if s in vecs]
            sub = by_smiles.filter(pl.col("canonical_smiles").is_in(present))
            ing_stats[(food_ids, enc)] = (
                table.height,
                with_smiles["compound_entity_id"].n_unique(),
                len(present),
                int(sub["conc_mg_per_100g"].is_not_null().sum()),
                present,
            )
            if not present:
                continue
            mat = np.stack([vecs[s] for s in present])
            conc = sub["conc_mg_per_100g"].fill_null(np.nan).to_numpy().astype(np.float64)
            for agg in aggregations:
                ing_vec[(food_ids, enc, agg)] = _aggregate(mat, conc, agg)
    return ing_vec, ing_stats


def _coverage(n_rows: int, item_rows: list, tables, ing_stats, enc: str):
    """Per product row: the coverage counts of :func:`_coverage_frame` and the food sets of the
    (at most three) ingredients used for encoder ``enc``."""
    by_row: dict[int, list[tuple[int, str, object]]] = {}
    for r, pos, item, m in item_rows:
        by_row.setdefault(r, []).append((pos, item, m))
    coverage = []
    used_sets: list[list[tuple[str, ...]]] = []
    for r in range(n_rows):
        items = by_row.get(r, [])
        mapped = [m for _, _, m in items if m.food_entity_ids]
        usable = [m.food_entity_ids for m in mapped if ing_stats[(m.food_entity_ids, enc)][2]]
        used = usable[:N_INGREDIENTS]
        used_sets.append(used)
        linked = set().union(*[_compound_ids(tables[m.food_entity_ids]) for m in mapped])
        smiles_all = set().union(*[ing_stats[(m.food_entity_ids, enc)][4] for m in mapped])
        smiles_used = set().union(*[ing_stats[(f, enc)][4] for f in used])
        n_conc = sum(ing_stats[(f, enc)][3] for f in used)
        coverage.append(
            (len(items), len(mapped), len(usable), len(used), len(linked),
             _n_with_structure(mapped, tables), len(smiles_all), len(smiles_used), n_conc)
        )  # fmt: skip
    return coverage, used_sets


def _coverage_frame(coverage: list[tuple], agg: str, kg_version: str) -> pl.DataFrame:
    """A C block's ``extra``: the per-product coverage counts, the aggregation and KG version."""
    return pl.DataFrame(
        coverage,
        schema=[
            ("n_ingredients_parsed", pl.Int32),
            ("n_ingredients_mapped", pl.Int32),
            ("n_ingredients_usable", pl.Int32),
            ("n_ingredients_used", pl.Int32),
            ("n_compounds_linked", pl.Int32),
            ("n_compounds_with_structure", pl.Int32),
            ("n_compounds_embedded", pl.Int32),
            ("n_compounds_used", pl.Int32),
            ("n_compounds_used_with_concentration", pl.Int32),
        ],
        orient="row",
    ).with_columns(
        pl.lit(agg).alias("aggregation"),
        pl.lit(kg_version).alias("kg_version"),
    )


def _ingredients_frame(keys: pl.DataFrame, item_rows: list) -> pl.DataFrame:
    """Every parsed item with its match, for inspection."""
    return pl.DataFrame(
        {
            "category": [keys["category"][r] for r, *_ in item_rows],
            "product_code": [keys["product_code"][r] for r, *_ in item_rows],
            "position": [p for _, p, _, _ in item_rows],
            "ingredient_name": [i for _, _, i, _ in item_rows],
            "match_rule": [m.rule for *_, m in item_rows],
            "food_name": [m.food_name for *_, m in item_rows],
            "n_food_entities": [len(m.food_entity_ids) for *_, m in item_rows],
        },
        schema={
            "category": pl.String,
            "product_code": pl.Int32,
            "position": pl.Int32,
            "ingredient_name": pl.String,
            "match_rule": pl.String,
            "food_name": pl.String,
            "n_food_entities": pl.Int32,
        },
    )


def _compound_ids(table: pl.DataFrame) -> set[str]:
    return set(table["compound_entity_id"].to_list())


def _n_with_structure(mapped: list, tables: dict[tuple[str, ...], pl.DataFrame]) -> int:
    ids: set[str] = set()
    for m in mapped:
        t = tables[m.food_entity_ids]
        ids |= set(t.filter(pl.col("canonical_smiles").is_not_null())["compound_entity_id"])
    return len(ids)


def main_encoder(encoders: Sequence[str]) -> str:
    """The C block's main encoder: the selected D-MPNN when present, else the fingerprint one."""
    learned = sorted(e for e in encoders if e != FINGERPRINT_ENCODER)
    if learned:
        return learned[0]
    if FINGERPRINT_ENCODER in encoders:
        return FINGERPRINT_ENCODER
    raise FeatureError(
        f"block C: no compound encoder available (got {list(encoders)}). Fix: build "
        "marts.fct_compound_embeddings"
    )
