"""Metric tables of out-of-fold predictions (``agg_model_metrics``,
``agg_model_metrics_per_category``, ``agg_model_comparisons`` and the release's metric files),
built with the scoring engine of :mod:`warehouse.metrics.scoring` (the same numbers
``tastebench evaluate`` prints for the same files).

Input ``oof``: one row per (model, product) with ``model_id, category, product_code,
gold_value, predicted_score, source, data_origin``. Each model is scored on its own rows in
(category, product_code) order, which is the public files' row order (the order only matters
for Recall when a category's maximum gold is tied, which never happens in the public files).
The trivial policies are scored on the public products and gold (rows with
``source = 'tastebench_public'``), the position audit on the public gold pair file.

Frames are polars (Arrow accepted as input). The tables hold no float NaN: a missing value
(an undefined metric, a metric without interval) is null.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .conventions import policies_by_convention, score_conventions
from .core import METRIC_NAMES, as_polars
from .policies import random_policy_expected
from .scoring import COMPARE_METHOD, COMPARISON_SCHEMA, compare_pair_tables, pair_table

PUBLIC_SOURCE = "tastebench_public"
SCOPE_ALL = "all"


def _check_columns(oof: pl.DataFrame) -> None:
    need = {"model_id", "category", "product_code", "gold_value", "predicted_score"}
    if missing := need - set(oof.columns):
        raise ValueError(f"fct_oof_predictions lacks column(s) {sorted(missing)}")


def split_models(oof: object) -> dict[str, pl.DataFrame]:
    """Model id -> its rows sorted by (category, product_code), in sorted model order."""
    oof = as_polars(oof, "fct_oof_predictions")
    _check_columns(oof)
    out = {}
    for model_id in sorted(oof["model_id"].drop_nulls().unique().to_list()):
        rows = oof.filter(pl.col("model_id") == model_id)
        out[str(model_id)] = rows.sort(
            ["category", "product_code"], maintain_order=True, nulls_last=True
        )
    return out


def _distinct(rows: pl.DataFrame, column: str) -> list[str]:
    if column not in rows.columns:
        return []
    return sorted(rows[column].drop_nulls().cast(pl.String).unique().to_list())


def _origin(rows: pl.DataFrame) -> str:
    vals = _distinct(rows, "data_origin")
    return "|".join(vals) if vals else "unknown"


def _source(rows: pl.DataFrame) -> str | None:
    if "source" not in rows.columns:
        return None
    vals = _distinct(rows, "source")
    return "|".join(vals) if vals else None


def _public(oof: pl.DataFrame) -> pl.DataFrame:
    if "source" not in oof.columns:
        return oof
    return oof.filter(pl.col("source") == PUBLIC_SOURCE)


def public_reference(oof: object) -> pl.DataFrame:
    """Distinct public products with their gold (``category, product_code, gold_value``)."""
    oof = as_polars(oof, "fct_oof_predictions")
    ref = _public(oof).select("category", "product_code", "gold_value").unique(maintain_order=True)
    dup = ref.filter(pl.struct("category", "product_code").is_duplicated())
    if len(dup):
        first = dup.row(0, named=True)
        raise ValueError(
            f"public files disagree on the gold of {first['category']}:{first['product_code']}"
        )
    return ref.sort(["category", "product_code"], nulls_last=True)


def _nan_to_null(frame: pl.DataFrame) -> pl.DataFrame:
    """Float NaN -> null (a mart holds NULL, never NaN, for a missing value)."""
    return frame.with_columns(pl.col(pl.Float32, pl.Float64).fill_nan(None))


METRICS_SCHEMA = {
    "model_id": pl.String,
    "metric": pl.String,
    "scope": pl.String,
    "point": pl.Float64,
    "ci_lo": pl.Float64,
    "ci_hi": pl.Float64,
    "ci_method": pl.String,
    "is_degenerate": pl.Boolean,
    "ci_note": pl.String,
    "is_default_ci": pl.Boolean,
    "n_products": pl.Int64,
    "n_pairs": pl.Int64,
    "is_trivial_policy": pl.Boolean,
    "chance_value": pl.Float64,
    "beats_chance": pl.Boolean,
    "differs_from_chance": pl.Boolean,
    "source": pl.String,
    "data_origin": pl.String,
}
"""Columns of :func:`model_metrics_table` after its key ``model_metric_key``."""


def model_metrics_table(
    oof: object, gold_pairs: object, *, n_boot: int = 10000, seed: int = 42
) -> pl.DataFrame:
    """``agg_model_metrics``: one row per (model or trivial policy, metric, scope)."""
    oof = as_polars(oof, "fct_oof_predictions")
    gold_pairs = as_polars(gold_pairs, "gold pairs")
    rows = [
        row
        for model_id, df in split_models(oof).items()
        for row in _model_metric_rows(model_id, df, n_boot=n_boot, seed=seed)
    ]
    rows += _policy_metric_rows(oof, gold_pairs, n_boot=n_boot, seed=seed)
    out = pl.DataFrame(rows, schema=METRICS_SCHEMA)
    key = pl.concat_str("model_id", "metric", "scope", "ci_method", separator=":")
    return _nan_to_null(out.select(key.alias("model_metric_key"), pl.all()))


def _model_metric_rows(
    model_id: str, df: pl.DataFrame, *, n_boot: int, seed: int
) -> list[dict[str, object]]:
    """One model's rows of :func:`model_metrics_table`, every convention (a metric without
    interval once, as ``none``)."""
    chance = random_policy_expected(np.asarray(df["category"].to_list(), dtype=object))
    chance["pairwise_accuracy_macro"] = 0.5
    seen: set[tuple[str, str]] = set()
    rows = []
    for scored in score_conventions(
        df["category"], df["gold_value"], df["predicted_score"], n_boot=n_boot, seed=seed
    ):
        conv, score = scored.convention, scored.overall
        for metric in METRIC_NAMES:
            iv = score["metrics"][metric]
            if (metric, iv["ci_method"]) in seen:  # no interval: one 'none' row
                continue
            seen.add((metric, iv["ci_method"]))
            ch = chance.get(metric)
            has_ci = iv["ci_lo"] is not None and ch is not None
            rows.append(
                {
                    "model_id": model_id,
                    "metric": metric,
                    "scope": SCOPE_ALL,
                    **iv,
                    "is_default_ci": conv == "default" or iv["ci_method"] == "none",
                    "n_products": score["n_products"],
                    "n_pairs": score["n_pairs"],
                    "is_trivial_policy": False,
                    "chance_value": ch,
                    "beats_chance": bool(iv["ci_lo"] > ch) if has_ci else None,
                    "differs_from_chance": bool(iv["ci_lo"] > ch or iv["ci_hi"] < ch)
                    if has_ci
                    else None,
                    "source": _source(df),
                    "data_origin": _origin(df),
                }
            )
    return rows


def _policy_metric_rows(
    oof: pl.DataFrame, gold_pairs: pl.DataFrame, *, n_boot: int, seed: int
) -> list[dict[str, object]]:
    """The trivial policies' rows of :func:`model_metrics_table`, scored on the public products
    (a metric's row once per method)."""
    ref = public_reference(oof)
    pairs = gold_pairs.rename({"winner_product_code": "higher_rated_product"}, strict=False)
    origin = _origin(_public(oof))
    seen_pol: set[tuple[str, str, str]] = set()
    rows = []
    for conv, policies in policies_by_convention(
        ref["category"],
        ref["product_code"],
        ref["gold_value"],
        pairs,
        n_boot=n_boot,
        seed=seed,
        pair_file="stg_tastebench__gold_pairs",
    ):
        for pol in policies:
            for metric, iv in pol["metrics"].items():
                method = iv.get("ci_method", pol["ci_method"])
                if iv["ci_lo"] is None and pol["ci_method"] != "analytical":
                    method = "none"
                if (pol["name"], metric, method) in seen_pol:
                    continue
                seen_pol.add((pol["name"], metric, method))
                rows.append(
                    {
                        "model_id": f"policy:{pol['name']}",
                        "metric": metric,
                        "scope": SCOPE_ALL,
                        "point": iv["point"],
                        "ci_lo": iv["ci_lo"],
                        "ci_hi": iv["ci_hi"],
                        "ci_method": method,
                        "is_degenerate": iv["ci_lo"] is not None and iv["ci_lo"] == iv["ci_hi"],
                        "ci_note": "",
                        "is_default_ci": conv == "default"
                        or pol["name"] != "lower_code_wins"
                        or method == "none",
                        "n_products": pol["n_products"],
                        "n_pairs": pol["n_pairs"],
                        "is_trivial_policy": True,
                        "chance_value": iv["chance"],
                        "beats_chance": iv["beats_chance"],
                        "differs_from_chance": iv["differs_from_chance"],
                        "source": PUBLIC_SOURCE,
                        "data_origin": origin,
                    }
                )
    return rows


def model_metrics_per_category_table(
    oof: object, *, n_boot: int = 10000, seed: int = 42
) -> pl.DataFrame:
    """``agg_model_metrics_per_category``: one row per (model, category)."""
    parts = []
    for model_id, df in split_models(oof).items():
        for scored in score_conventions(
            df["category"],
            df["gold_value"],
            df["predicted_score"],
            n_boot=n_boot,
            seed=seed,
            overall=False,
            per_category=True,
        ):
            conv, table = scored.convention, scored.per_category
            parts.append(
                table.select(
                    pl.lit(model_id, dtype=pl.String).alias("model_id"), pl.all()
                ).with_columns(
                    pl.lit(conv == "default", dtype=pl.Boolean).alias("is_default_ci"),
                    pl.lit(_source(df), dtype=pl.String).alias("source"),
                    pl.lit(_origin(df), dtype=pl.String).alias("data_origin"),
                )
            )
    out = pl.concat(parts, how="vertical")
    key = pl.concat_str("model_id", "category", "ci_method", separator=":")
    return _nan_to_null(out.select(key.alias("model_category_key"), pl.all()))


def model_comparisons_table(oof: object, *, n_boot: int = 10000, seed: int = 42) -> pl.DataFrame:
    """``agg_model_comparisons``: one row per unordered model pair (model_a < model_b) of the
    same source, by the comparison method :data:`.scoring.COMPARE_METHOD` (``ustat_t``), named in
    ``ci_method``. A comparison needs one gold: the public files share theirs, the warehouse's own
    fits share the build's panel means, and the two golds differ (always on a simulated build),
    so each source is its own family of comparisons (Holm within the family)."""
    models = split_models(oof)
    tables = {
        m: pair_table(df["category"], df["product_code"], df["gold_value"], df["predicted_score"])
        for m, df in models.items()
    }
    families: dict[str, list[str]] = {}
    for m, df in models.items():
        families.setdefault(_source(df) or "", []).append(m)
    out = pl.concat(
        [pl.DataFrame(schema=COMPARISON_SCHEMA)]
        + [
            compare_pair_tables(
                {m: tables[m] for m in families[family]},
                n_boot=n_boot,
                seed=seed,
                method=COMPARE_METHOD,
            )
            for family in sorted(families)
        ],
        how="vertical",
    )
    origins = {m: _origin(df) for m, df in models.items()}
    data_origin = [
        origins[a] if origins[a] == origins[b] else f"{origins[a]}|{origins[b]}"
        for a, b in zip(out["model_a"], out["model_b"], strict=True)
    ]
    key = pl.concat_str("model_a", "model_b", separator=":")
    out = out.select(key.alias("comparison_key"), pl.all()).with_columns(
        pl.Series("data_origin", data_origin, dtype=pl.String)
    )
    return _nan_to_null(out)


__all__ = [
    "model_comparisons_table",
    "model_metrics_per_category_table",
    "model_metrics_table",
    "public_reference",
    "split_models",
]
