"""Pure derivations shared by ``export`` and ``verify``: everything a release publishes that can
be recomputed from other released files (gold pairs from ranks, the human-baseline summary, the
model metrics, the release audits). Metrics come from :mod:`warehouse.metrics`
(:mod:`.tables`, :mod:`.scoring`) and :mod:`warehouse.human`; nothing is re-implemented here."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

import numpy as np
import pandas as pd

from warehouse.metrics import TIE_EPS, slot1_wins_accuracy
from warehouse.release.schema import N_BOOT, PUBLIC_SOURCE, SEED

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


def analog_pairs(products: pd.DataFrame, code: str, rank: str = "true_rank") -> pd.DataFrame:
    """Every within-category pair of analogs (rows with a rank): ``category, code_a < code_b,
    is_tie, winner`` (winner = higher rank, missing for ties)."""
    rows = []
    ranked = products[products[rank].notna()]
    for cat, g in ranked.groupby("category", sort=True):
        g = g.sort_values(code)
        codes, ranks = g[code].to_numpy(), g[rank].to_numpy(float)
        i, j = np.triu_indices(len(codes), k=1)
        for a, b, ra, rb in zip(codes[i], codes[j], ranks[i], ranks[j], strict=True):
            tie = bool(ra == rb)
            rows.append((cat, int(a), int(b), tie, None if tie else int(a if ra > rb else b)))
    out = pd.DataFrame(rows, columns=["category", "code_a", "code_b", "is_tie", "winner"])
    out["winner"] = out["winner"].astype("Int64")
    return out


def draw_sides(n: int) -> np.ndarray:
    """``n`` fair coin flips from the OS CSPRNG (``secrets``): True = side a in slot 1."""
    bits = secrets.randbits(n) if n else 0
    return np.array([(bits >> k) & 1 == 1 for k in range(n)], dtype=bool)


def slot1_audit(first: object, winner: object) -> dict[str, object]:
    """Position audit of oriented pairs: share of pairs whose winner is listed first, exact
    binomial CI (:func:`warehouse.metrics.slot1_wins_accuracy`)."""
    frame = pd.DataFrame(
        {"product_code_1": np.asarray(first), "higher_rated_product": np.asarray(winner)}
    )
    return slot1_wins_accuracy(frame)


def number_pairs(pairs: pd.DataFrame, c1: str, c2: str) -> pd.DataFrame:
    """Sort by (category, c1, c2) and set ``pair_id`` = 1-based row number."""
    out = pairs.sort_values(["category", c1, c2], kind="mergesort").reset_index(drop=True)
    out.insert(0, "pair_id", np.arange(1, len(out) + 1, dtype=np.int64))
    return out


def gold_pairs_from_products(products: pd.DataFrame, oriented: pd.DataFrame) -> pd.DataFrame:
    """``benchmark/gold_pairs.csv`` from ``products`` (category, public_code, true_rank) and the
    published orientation (category, public_code_1, public_code_2): winners re-derived from the
    ranks, ties dropped, pair ids renumbered. Raises ``ValueError`` when the oriented pairs are
    not exactly the untied analog pairs."""
    pairs = analog_pairs(products, "public_code")
    untied = pairs[~pairs["is_tie"]]
    o = oriented[["category", "public_code_1", "public_code_2"]].copy()
    o["code_a"] = o[["public_code_1", "public_code_2"]].min(axis=1).astype(int)
    o["code_b"] = o[["public_code_1", "public_code_2"]].max(axis=1).astype(int)
    keys = ["category", "code_a", "code_b"]
    if o.duplicated(keys).any():
        dup = o[o.duplicated(keys, keep=False)].iloc[0]
        raise ValueError(f"pair {dup['category']} {dup['code_a']}/{dup['code_b']} listed twice")
    merged = untied.merge(o, on=keys, how="outer", indicator=True)
    if not (merged["_merge"] == "both").all():
        bad = merged[merged["_merge"] != "both"].iloc[0]
        where = "not an untied analog pair" if bad["_merge"] == "right_only" else "missing"
        raise ValueError(f"pair {bad['category']} {bad['code_a']}/{bad['code_b']}: {where}")
    merged["public_code_winner"] = merged["winner"].astype(int)
    out = merged[["category", "public_code_1", "public_code_2", "public_code_winner"]]
    return number_pairs(out, "public_code_1", "public_code_2")


def category_counts(products: pd.DataFrame) -> pd.DataFrame:
    """Per category: n_analogs, n_references, n_within_category_pairs from products.csv."""
    g = products.assign(is_reference=products["is_reference"].astype(bool))
    out = g.groupby("category", sort=True).agg(
        n_analogs=("is_reference", lambda s: int((~s).sum())),
        n_references=("is_reference", lambda s: int(s.sum())),
    )
    out["n_within_category_pairs"] = out["n_analogs"] * (out["n_analogs"] - 1) // 2
    return out.reset_index()


# --- human baseline -----------------------------------------------------------------------------
def human_summary(
    panelist_rows: pd.DataFrame,
    reliability: pd.DataFrame,
    split_half: pd.DataFrame,
    curve: pd.DataFrame,
) -> pd.DataFrame:
    """``human_baseline/summary.csv`` (metric, value) from the released human-baseline tables via
    :func:`warehouse.human.summarize_human_baseline`; figures that need panelist ids
    (n_panelists) or a model (model_accuracy, k_star) are left out."""
    from warehouse.human import summarize_human_baseline

    row = summarize_human_baseline(
        pd.DataFrame({"respondent_id": pd.Series([], dtype=object)}),
        panelist_rows,
        reliability,
        split_half,
        curve,
    ).iloc[0]
    rows = [(k, float(v)) for k, v in row.items() if k not in SUMMARY_DROP]
    return pd.DataFrame(rows, columns=["metric", "value"])


# --- model metrics ------------------------------------------------------------------------------
def oof_frame(
    public_files: Mapping[str, pd.DataFrame], fit_files: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """The ``fct_oof_predictions`` columns that
    :func:`warehouse.metrics.tables.model_metrics_table` needs, from released OOF tables:
    TasteBench files (keyed by tastebench_public_code; model id = file stem) and warehouse fits
    (keyed by public_code; model id from the file)."""
    parts = []
    for stem, f in sorted(public_files.items()):
        parts.append(
            pd.DataFrame(
                {
                    "model_id": stem,
                    "category": f["category"].astype(str).to_numpy(),
                    "product_code": f["tastebench_public_code"].astype(np.int64).to_numpy(),
                    "gold_value": f["true_rank"].astype(float).to_numpy(),
                    "predicted_score": f["predicted_score"].astype(float).to_numpy(),
                    "source": PUBLIC_SOURCE,
                    "data_origin": PUBLIC_SOURCE,
                }
            )
        )
    for _, f in sorted(fit_files.items()):
        parts.append(
            pd.DataFrame(
                {
                    "model_id": f["model_id"].astype(str).to_numpy(),
                    "category": f["category"].astype(str).to_numpy(),
                    "product_code": f["public_code"].astype(np.int64).to_numpy(),
                    "gold_value": f["true_rank"].astype(float).to_numpy(),
                    "predicted_score": f["predicted_score"].astype(float).to_numpy(),
                    "source": "warehouse_fit",
                    "data_origin": f["data_origin"].astype(str).to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def model_metrics(
    oof: pd.DataFrame, tb_pairs: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """``metrics/model_metrics.csv`` = :func:`warehouse.metrics.tables.model_metrics_table` on the
    released OOF rows and the published gold pair file (original keying)."""
    from warehouse.metrics.tables import model_metrics_table

    pairs = pd.DataFrame(
        {
            "product_code_1": tb_pairs["tastebench_public_code_1"].astype(np.int64),
            "product_code_2": tb_pairs["tastebench_public_code_2"].astype(np.int64),
            "higher_rated_product": tb_pairs["tastebench_public_code_winner"].astype(np.int64),
        }
    )
    return model_metrics_table(oof, pairs, n_boot=n_boot, seed=seed)


def release_audits(
    products: pd.DataFrame,
    gold_pairs: pd.DataFrame,
    data_origin: str,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> pd.DataFrame:
    """``metrics/release_audits.csv``: :func:`warehouse.metrics.scoring.trivial_policies` on this
    release's analogs (public_code, true_rank) and gold pairs."""
    from warehouse.metrics.scoring import trivial_policies

    analogs = products[products["true_rank"].notna()].sort_values(["category", "public_code"])
    pairs = pd.DataFrame(
        {
            "product_code_1": gold_pairs["public_code_1"].astype(np.int64),
            "product_code_2": gold_pairs["public_code_2"].astype(np.int64),
            "higher_rated_product": gold_pairs["public_code_winner"].astype(np.int64),
        }
    )
    rows = []
    for pol in trivial_policies(
        analogs["category"].astype(str).to_numpy(),
        analogs["public_code"].astype(np.int64).to_numpy(),
        analogs["true_rank"].astype(float).to_numpy(),
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
                    "point": iv["point"],
                    "ci_lo": iv["ci_lo"],
                    "ci_hi": iv["ci_hi"],
                    "ci_method": pol["ci_method"]
                    if has_ci or pol["ci_method"] == "analytical"
                    else "none",
                    "n_products": pol["n_products"],
                    "n_pairs": pol["n_pairs"],
                    "chance_value": iv["chance"],
                    "beats_chance": iv["beats_chance"],
                    "differs_from_chance": iv["differs_from_chance"],
                    "data_origin": data_origin,
                }
            )
    return pd.DataFrame(rows)


def audits_at_chance(audits: pd.DataFrame) -> list[str]:
    """Problems: a position or code-leak audit whose pairwise-accuracy CI excludes chance."""
    out = []
    for policy in ("slot1_wins", "lower_code_wins"):
        row = audits[(audits["policy"] == policy) & (audits["metric"] == "pairwise_accuracy")]
        if row.empty:
            out.append(f"{policy}: missing")
        elif bool(row["differs_from_chance"].iloc[0]):
            r = row.iloc[0]
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
