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
"""

from __future__ import annotations

import pandas as pd

from .core import METRIC_NAMES
from .policies import random_policy_expected
from .scoring import (
    COMPARE_METHOD,
    compare_pair_tables,
    pair_table,
    score_model,
    score_per_category,
    trivial_policies,
)

PUBLIC_SOURCE = "tastebench_public"
SCOPE_ALL = "all"


def conventions(rows: pd.DataFrame) -> tuple[str, ...]:
    """Interval conventions of a model's rows: ``published_bca`` and ``default`` for the
    published files (every row ``source = 'tastebench_public'``), ``default`` alone otherwise."""
    public = "source" in rows and bool((rows["source"] == PUBLIC_SOURCE).all())
    return ("published_bca", "default") if public else ("default",)


def _check_columns(oof: pd.DataFrame) -> None:
    need = {"model_id", "category", "product_code", "gold_value", "predicted_score"}
    if missing := need - set(oof.columns):
        raise ValueError(f"fct_oof_predictions lacks column(s) {sorted(missing)}")


def split_models(oof: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Model id -> its rows sorted by (category, product_code), in sorted model order."""
    _check_columns(oof)
    out = {}
    for model_id, rows in oof.groupby("model_id", sort=True):
        out[str(model_id)] = rows.sort_values(["category", "product_code"], kind="stable")
    return out


def _origin(rows: pd.DataFrame) -> str:
    vals = (
        sorted(rows["data_origin"].dropna().astype(str).unique()) if "data_origin" in rows else []
    )
    return "|".join(vals) if vals else "unknown"


def _source(rows: pd.DataFrame) -> str | None:
    if "source" not in rows:
        return None
    vals = sorted(rows["source"].dropna().astype(str).unique())
    return "|".join(vals) if vals else None


def public_reference(oof: pd.DataFrame) -> pd.DataFrame:
    """Distinct public products with their gold (``category, product_code, gold_value``)."""
    pub = oof[oof["source"] == PUBLIC_SOURCE] if "source" in oof else oof
    ref = pub[["category", "product_code", "gold_value"]].drop_duplicates()
    dup = ref.duplicated(["category", "product_code"], keep=False)
    if dup.any():
        first = ref[dup].iloc[0]
        raise ValueError(
            f"public files disagree on the gold of {first['category']}:{first['product_code']}"
        )
    return ref.sort_values(["category", "product_code"]).reset_index(drop=True)


def model_metrics_table(
    oof: pd.DataFrame, gold_pairs: pd.DataFrame, *, n_boot: int = 10000, seed: int = 42
) -> pd.DataFrame:
    """``agg_model_metrics``: one row per (model or trivial policy, metric, scope)."""
    rows = []
    models = split_models(oof)
    for model_id, df in models.items():
        chance = random_policy_expected(df["category"].to_numpy(dtype=object))
        chance["pairwise_accuracy_macro"] = 0.5
        seen: set[tuple[str, str]] = set()
        for conv in conventions(df):
            score = score_model(
                df["category"],
                df["gold_value"],
                df["predicted_score"],
                n_boot=n_boot,
                seed=seed,
                ci=conv,
            )
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
    ref = public_reference(oof)
    pairs = gold_pairs.rename(columns={"winner_product_code": "higher_rated_product"})
    origin = _origin(oof[oof["source"] == PUBLIC_SOURCE]) if "source" in oof else _origin(oof)
    seen_pol: set[tuple[str, str, str]] = set()
    for conv in ("published_bca", "default"):  # policies are scored on the public products
        for pol in trivial_policies(
            ref["category"],
            ref["product_code"],
            ref["gold_value"],
            pairs,
            n_boot=n_boot,
            seed=seed,
            pair_file="stg_tastebench__gold_pairs",
            ci=conv,
        ):
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
    out = pd.DataFrame(rows)
    out.insert(
        0,
        "model_metric_key",
        out["model_id"] + ":" + out["metric"] + ":" + out["scope"] + ":" + out["ci_method"],
    )
    out["is_degenerate"] = out["is_degenerate"].astype(bool)
    out["is_default_ci"] = out["is_default_ci"].astype(bool)
    out["n_products"] = out["n_products"].astype("Int64")
    out["n_pairs"] = out["n_pairs"].astype("Int64")
    for col in ("point", "ci_lo", "ci_hi", "chance_value"):
        out[col] = out[col].astype("float64")
    for col in ("beats_chance", "differs_from_chance"):
        out[col] = out[col].astype("boolean")
    return out


def model_metrics_per_category_table(
    oof: pd.DataFrame, *, n_boot: int = 10000, seed: int = 42
) -> pd.DataFrame:
    """``agg_model_metrics_per_category``: one row per (model, category)."""
    parts = []
    for model_id, df in split_models(oof).items():
        for conv in conventions(df):
            table = score_per_category(
                df["category"],
                df["gold_value"],
                df["predicted_score"],
                n_boot=n_boot,
                seed=seed,
                ci=conv,
            )
            table.insert(0, "model_id", model_id)
            table["is_default_ci"] = conv == "default"
            table["source"] = _source(df)
            table["data_origin"] = _origin(df)
            parts.append(table)
    out = pd.concat(parts, ignore_index=True)
    out.insert(
        0,
        "model_category_key",
        out["model_id"] + ":" + out["category"] + ":" + out["ci_method"],
    )
    out["is_degenerate"] = out["is_degenerate"].astype(bool)
    out["n_products"] = out["n_products"].astype("int64")
    out["n_pairs"] = out["n_pairs"].astype("int64")
    return out


def model_comparisons_table(
    oof: pd.DataFrame, *, n_boot: int = 10000, seed: int = 42
) -> pd.DataFrame:
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
    rows = [
        row
        for family in sorted(families)
        for row in compare_pair_tables(
            {m: tables[m] for m in families[family]},
            n_boot=n_boot,
            seed=seed,
            method=COMPARE_METHOD,
        )
    ]
    out = pd.DataFrame(
        rows,
        columns=[
            "model_a",
            "model_b",
            "n_products",
            "n_pairs",
            "acc_a",
            "acc_b",
            "diff",
            "ci_lo",
            "ci_hi",
            "p_value",
            "p_holm",
            "is_resolved",
            "ci_method",
            "ci_note",
        ],
    )
    out.insert(0, "comparison_key", out["model_a"] + ":" + out["model_b"])
    origins = {m: _origin(df) for m, df in models.items()}
    out["data_origin"] = [
        origins[a] if origins[a] == origins[b] else f"{origins[a]}|{origins[b]}"
        for a, b in zip(out["model_a"], out["model_b"], strict=True)
    ]
    for col in ("acc_a", "acc_b", "diff", "ci_lo", "ci_hi", "p_value", "p_holm"):
        out[col] = out[col].astype("float64")
    out["is_resolved"] = out["is_resolved"].astype(bool)
    return out


__all__ = [
    "model_comparisons_table",
    "model_metrics_per_category_table",
    "model_metrics_table",
    "public_reference",
    "split_models",
]
