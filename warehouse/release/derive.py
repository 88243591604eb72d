"""Pure derivations shared by ``export`` and ``verify``: everything a release publishes that can
be recomputed from other released files (gold pairs from ranks, the human-baseline summary, the
model metrics, the release audits). Metrics come from :mod:`warehouse.metrics`
(:mod:`.tables`, :mod:`.scoring`) and :mod:`warehouse.human`; nothing is re-implemented here.
Frames are polars; those libraries take pandas, converted at each call."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

import numpy as np
import polars as pl

from warehouse.metrics import TIE_EPS, slot1_wins_accuracy
from warehouse.release.schema import N_BOOT, PUBLIC_SOURCE, SEED
from warehouse.release.tables import as_frame

SUMMARY_DROP = ("n_panelists", "model_accuracy", "k_star")


# --- gold ranks and pairs -----------------------------------------------------------------------
def within_category_ranks(category: object, values: object, eps: float = TIE_EPS) -> np.ndarray:
    """Average rank (1 = lowest value) within each category; values closer than ``eps`` (chained
    in sorted order) are tied and share the mean of their positions (x.5 ranks)."""
    cat = np.asarray(category, dtype=object).astype(str)
    v = np.asarray(values, dtype=np.float64)
    out = np.full(v.shape, np.nan)
    for c in np.unique(cat):
        idx = np.flatnonzero(cat == c)
        order = idx[np.argsort(v[idx], kind="stable")]
        sv = v[order]
        start = 0
        for i in range(1, len(order) + 1):
            if i == len(order) or not (sv[i] - sv[i - 1] < eps):
                out[order[start:i]] = (start + 1 + i) / 2.0
                start = i
    return out


def analog_pairs(products, code: str, rank: str = "true_rank") -> pl.DataFrame:
    """Every within-category pair of analogs (rows with a rank): ``category, code_a < code_b,
    is_tie, winner`` (winner = higher rank, null for ties)."""
    products = as_frame(products)
    ranked = products.filter(pl.col(rank).is_not_null() & pl.col(rank).is_not_nan())
    rows = []
    for (cat,), g in ranked.sort("category").group_by("category", maintain_order=True):
        g = g.sort(code)
        codes, ranks = g[code].to_numpy(), g[rank].to_numpy().astype(float)
        i, j = np.triu_indices(len(codes), k=1)
        for a, b, ra, rb in zip(codes[i], codes[j], ranks[i], ranks[j], strict=True):
            tie = bool(ra == rb)
            rows.append((cat, int(a), int(b), tie, None if tie else int(a if ra > rb else b)))
    schema = {
        "category": pl.String,
        "code_a": pl.Int64,
        "code_b": pl.Int64,
        "is_tie": pl.Boolean,
        "winner": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def draw_sides(n: int) -> np.ndarray:
    """``n`` fair coin flips from the OS CSPRNG (``secrets``): True = side a in slot 1."""
    bits = secrets.randbits(n) if n else 0
    return np.array([(bits >> k) & 1 == 1 for k in range(n)], dtype=bool)


def slot1_audit(first: object, winner: object) -> dict[str, object]:
    """Position audit of oriented pairs: share of pairs whose winner is listed first, exact
    binomial CI (:func:`warehouse.metrics.slot1_wins_accuracy`)."""
    frame = pl.DataFrame(
        {"product_code_1": np.asarray(first), "higher_rated_product": np.asarray(winner)}
    )
    return slot1_wins_accuracy(frame)


def number_pairs(pairs, c1: str, c2: str) -> pl.DataFrame:
    """Sort by (category, c1, c2) and set ``pair_id`` = 1-based row number."""
    out = as_frame(pairs).sort(["category", c1, c2], maintain_order=True)
    return out.select(pl.int_range(1, len(out) + 1, dtype=pl.Int64).alias("pair_id"), pl.all())


def gold_pairs_from_products(products, oriented) -> pl.DataFrame:
    """``benchmark/gold_pairs.csv`` from ``products`` (category, public_code, true_rank) and the
    published orientation (category, public_code_1, public_code_2): winners re-derived from the
    ranks, ties dropped, pair ids renumbered. Raises ``ValueError`` when the oriented pairs are
    not exactly the untied analog pairs."""
    untied = analog_pairs(products, "public_code").filter(~pl.col("is_tie"))
    o = as_frame(oriented).select(
        pl.col("category").cast(pl.String),
        pl.col("public_code_1").cast(pl.Int64),
        pl.col("public_code_2").cast(pl.Int64),
    )
    o = o.with_columns(
        code_a=pl.min_horizontal("public_code_1", "public_code_2"),
        code_b=pl.max_horizontal("public_code_1", "public_code_2"),
    )
    keys = ["category", "code_a", "code_b"]
    dup = o.filter(pl.struct(keys).is_duplicated())
    if len(dup):
        r = dup.row(0, named=True)
        raise ValueError(f"pair {r['category']} {r['code_a']}/{r['code_b']} listed twice")
    merged = untied.join(o, on=keys, how="full", coalesce=True)
    missing = merged.filter(pl.col("public_code_1").is_null() | pl.col("is_tie").is_null())
    if len(missing):
        r = missing.sort(keys).row(0, named=True)
        where = "not an untied analog pair" if r["is_tie"] is None else "missing"
        raise ValueError(f"pair {r['category']} {r['code_a']}/{r['code_b']}: {where}")
    out = merged.select(
        "category", "public_code_1", "public_code_2", pl.col("winner").alias("public_code_winner")
    )
    return number_pairs(out, "public_code_1", "public_code_2")


def category_counts(products) -> pl.DataFrame:
    """Per category: n_analogs, n_references, n_within_category_pairs from products.csv."""
    g = as_frame(products).with_columns(pl.col("is_reference").cast(pl.Boolean))
    out = g.group_by("category").agg(
        n_analogs=(~pl.col("is_reference")).sum().cast(pl.Int64),
        n_references=pl.col("is_reference").sum().cast(pl.Int64),
    )
    out = out.with_columns(
        n_within_category_pairs=pl.col("n_analogs") * (pl.col("n_analogs") - 1) // 2
    )
    return out.sort("category")


# --- human baseline -----------------------------------------------------------------------------
def human_summary(panelist_rows, reliability, split_half, curve) -> pl.DataFrame:
    """``human_baseline/summary.csv`` (metric, value) from the released human-baseline tables via
    :func:`warehouse.human.summarize_human_baseline` (pandas, converted at that call); figures
    that need panelist ids (n_panelists) or a model (model_accuracy, k_star) are left out."""
    import pandas as pd

    from warehouse.human import summarize_human_baseline

    row = summarize_human_baseline(
        pd.DataFrame({"respondent_id": pd.Series([], dtype=object)}),
        *(as_frame(f).to_pandas() for f in (panelist_rows, reliability, split_half, curve)),
    ).iloc[0]
    rows = [(k, float(v)) for k, v in row.items() if k not in SUMMARY_DROP]
    return pl.DataFrame(rows, schema={"metric": pl.String, "value": pl.Float64}, orient="row")


# --- model metrics ------------------------------------------------------------------------------
def oof_frame(public_files: Mapping[str, object], fit_files: Mapping[str, object]) -> pl.DataFrame:
    """The ``fct_oof_predictions`` columns that
    :func:`warehouse.metrics.tables.model_metrics_table` needs: TasteBench files (keyed by
    tastebench_public_code; model id = file stem) and warehouse fits (keyed by public_code; model
    id from the file)."""
    parts = []
    for stem, f in sorted(public_files.items()):
        f = as_frame(f)
        parts.append(
            f.select(
                pl.lit(stem).alias("model_id"),
                pl.col("category").cast(pl.String),
                pl.col("tastebench_public_code").cast(pl.Int64).alias("product_code"),
                pl.col("true_rank").cast(pl.Float64).alias("gold_value"),
                pl.col("predicted_score").cast(pl.Float64),
                pl.lit(PUBLIC_SOURCE).alias("source"),
                pl.lit(PUBLIC_SOURCE).alias("data_origin"),
            )
        )
    for _, f in sorted(fit_files.items()):
        f = as_frame(f)
        parts.append(
            f.select(
                pl.col("model_id").cast(pl.String),
                pl.col("category").cast(pl.String),
                pl.col("public_code").cast(pl.Int64).alias("product_code"),
                pl.col("true_rank").cast(pl.Float64).alias("gold_value"),
                pl.col("predicted_score").cast(pl.Float64),
                pl.lit("warehouse_fit").alias("source"),
                pl.col("data_origin").cast(pl.String),
            )
        )
    return pl.concat(parts, how="vertical")


def model_metrics(oof, tb_pairs, *, n_boot: int = N_BOOT, seed: int = SEED) -> pl.DataFrame:
    """``metrics/model_metrics.csv`` = :func:`warehouse.metrics.tables.model_metrics_table` on the
    OOF rows and the published gold pair file (original keying)."""
    from warehouse.metrics.tables import model_metrics_table

    pairs = as_frame(tb_pairs).select(
        pl.col("tastebench_public_code_1").cast(pl.Int64).alias("product_code_1"),
        pl.col("tastebench_public_code_2").cast(pl.Int64).alias("product_code_2"),
        pl.col("tastebench_public_code_winner").cast(pl.Int64).alias("higher_rated_product"),
    )
    return model_metrics_table(as_frame(oof), pairs, n_boot=n_boot, seed=seed)


def release_audits(
    products,
    gold_pairs,
    data_origin: str,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> pl.DataFrame:
    """``metrics/release_audits.csv``: :func:`warehouse.metrics.scoring.trivial_policies` on this
    release's analogs (public_code, true_rank) and gold pairs."""
    from warehouse.metrics.scoring import trivial_policies

    analogs = (
        as_frame(products)
        .filter(pl.col("true_rank").is_not_null() & pl.col("true_rank").is_not_nan())
        .sort("category", "public_code")
    )
    pairs = as_frame(gold_pairs).select(
        pl.col("public_code_1").cast(pl.Int64).alias("product_code_1"),
        pl.col("public_code_2").cast(pl.Int64).alias("product_code_2"),
        pl.col("public_code_winner").cast(pl.Int64).alias("higher_rated_product"),
    )
    rows = []
    for pol in trivial_policies(
        analogs["category"].cast(pl.String).to_numpy().astype(object),
        analogs["public_code"].cast(pl.Int64).to_numpy(),
        analogs["true_rank"].cast(pl.Float64).to_numpy(),
        pairs,
        n_boot=n_boot,
        seed=seed,
        pair_file="benchmark/gold_pairs.csv",
    ):
        for metric, iv in pol["metrics"].items():
            has_ci = iv["ci_lo"] is not None
            rows.append(
                {
                    "policy": pol["name"],
                    "metric": metric,
                    "point": _float(iv["point"]),
                    "ci_lo": _float(iv["ci_lo"]),
                    "ci_hi": _float(iv["ci_hi"]),
                    "ci_method": iv.get("ci_method", pol["ci_method"])
                    if has_ci or pol["ci_method"] == "analytical"
                    else "none",
                    "n_products": pol["n_products"],
                    "n_pairs": pol["n_pairs"],
                    "chance_value": _float(iv["chance"]),
                    "beats_chance": iv["beats_chance"],
                    "differs_from_chance": iv["differs_from_chance"],
                    "data_origin": data_origin,
                }
            )
    return pl.DataFrame(rows, schema=AUDIT_SCHEMA)


def _float(v) -> float | None:
    return None if v is None else float(v)


AUDIT_SCHEMA = {
    "policy": pl.String,
    "metric": pl.String,
    "point": pl.Float64,
    "ci_lo": pl.Float64,
    "ci_hi": pl.Float64,
    "ci_method": pl.String,
    "n_products": pl.Int64,
    "n_pairs": pl.Int64,
    "chance_value": pl.Float64,
    "beats_chance": pl.Boolean,
    "differs_from_chance": pl.Boolean,
    "data_origin": pl.String,
}


def audits_at_chance(audits) -> list[str]:
    """Problems: a position or code-leak audit whose pairwise-accuracy CI excludes chance."""
    audits = as_frame(audits)
    out = []
    for policy in ("slot1_wins", "lower_code_wins"):
        row = audits.filter(
            (pl.col("policy") == policy) & (pl.col("metric") == "pairwise_accuracy")
        )
        if row.is_empty():
            out.append(f"{policy}: missing")
        elif bool(row["differs_from_chance"][0]):
            r = row.row(0, named=True)
            out.append(
                f"{policy}: {r['point']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}] excludes 0.5"
            )
    return out


__all__ = [
    "analog_pairs",
    "audits_at_chance",
    "category_counts",
    "draw_sides",
    "gold_pairs_from_products",
    "human_summary",
    "model_metrics",
    "number_pairs",
    "oof_frame",
    "release_audits",
    "slot1_audit",
    "within_category_ranks",
]
