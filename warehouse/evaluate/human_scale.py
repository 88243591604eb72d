"""A model on the human scale (docs/benchmark.md §5): its within-block pairwise accuracy with a
block-bootstrap interval, beside the median leave-one-out panelist accuracy and the group-size
curve, and k* (the smallest panel whose median accuracy reaches the model's).

Two sources of the human side:

* ``--gold warehouse``: everything from the built warehouse (``marts.fct_block_products``,
  ``marts.fct_panelist_block_accuracy``, ``marts.agg_group_size_curve`` within blocks); the model
  is scored on the pairs inside each block, so model and panels share one scope.
* ``--gold file`` (the public files): the blocks are not public. What can be shown is shown: the
  median LOO panelist accuracy from the published ``individual_loo_accuracy.csv`` (as the
  one-panelist point) and the published panels of 3 and 5 (docs/benchmark.md §5); the model's
  accuracy is its all-pairs accuracy, and k* is bracketed between those points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError
from warehouse.human.published import PUBLISHED_CONSTANTS
from warehouse.metrics.scoring import json_float

BLOCK_CI_METHOD = "block_bootstrap_percentile"
PUBLIC_NOTE = (
    "the blocks are not public: the model's accuracy is over all within-category pairs (not "
    "within blocks); the human points are the published median LOO panelist accuracy (as one "
    "panelist) and the published panels of 3 and 5; k* is bracketed between them. Run with "
    "--gold warehouse for the within-block scope, the whole group-size curve and an exact k*."
)


def kstar_record(curve: Sequence[tuple[int, float]], accuracy: float | None) -> dict[str, object]:
    """Where ``accuracy`` sits on a curve of ``(k, median accuracy)`` points (ascending k).

    ``k_star`` is the smallest listed k whose median reaches ``accuracy``; with sparse points
    (the public ones) the true k* lies in ``(previous k, k]``: ``k_star_min``..``k_star_max``.
    ``position``: ``below_one_panelist`` (under the k = 1 point), ``on_curve`` or
    ``above_largest_panel`` (no listed panel reaches it; ``k_star_min`` = largest k + 1).
    """
    pts = [(int(k), float(v)) for k, v in curve if v is not None and np.isfinite(v)]
    if accuracy is None or not np.isfinite(accuracy) or not pts:
        return {
            "k_star": None,
            "k_star_min": None,
            "k_star_max": None,
            "position": "unknown",
            "label": "not computable",
        }
    if accuracy < pts[0][1] and pts[0][0] == 1:
        return {
            "k_star": None,
            "k_star_min": None,
            "k_star_max": 1,
            "position": "below_one_panelist",
            "label": "below one panelist",
        }
    prev = 0
    for k, v in pts:
        if v >= accuracy:
            exact = k == prev + 1
            label = f"k* = {k}" if exact else f"k* between {prev + 1} and {k}"
            return {
                "k_star": k if exact else None,
                "k_star_min": prev + 1,
                "k_star_max": k,
                "position": "on_curve",
                "label": label,
            }
        prev = k
    return {
        "k_star": None,
        "k_star_min": prev + 1,
        "k_star_max": None,
        "position": "above_largest_panel",
        "label": f"above the largest panel ({prev}): k* > {prev}",
    }


def block_pairs(blocks: pl.DataFrame) -> pl.DataFrame:
    """``block`` (index), ``pair_key`` ('<category>:<lo>:<hi>') of every analog pair inside
    each block (``category, block_id, product_code``; a product in two blocks counts in both)."""
    rows = []
    for i, ((cat, _bid), g) in enumerate(
        blocks.sort("category", "block_id", "product_code").group_by(
            "category", "block_id", maintain_order=True
        )
    ):
        codes = sorted(int(c) for c in g["product_code"].to_list())
        rows += [(i, f"{cat}:{a}:{b}") for j, a in enumerate(codes) for b in codes[j + 1 :]]
    return pl.DataFrame(rows, schema={"block": pl.Int64, "pair_key": pl.String}, orient="row")


def within_block_accuracy(
    pairs: pl.DataFrame, in_blocks: pl.DataFrame, n_boot: int, seed: int, alpha: float = 0.05
) -> dict[str, object]:
    """Pairwise accuracy pooled over the pairs inside each block, with a percentile bootstrap
    over blocks (docs/benchmark.md §4, within-block scope). ``pairs``: a model's
    :func:`warehouse.metrics.scoring.pair_table`; ``in_blocks``: :func:`block_pairs`."""
    joined = in_blocks.join(pairs.select("pair_key", "credit"), on="pair_key", how="inner")
    if joined.is_empty():
        return {
            "point": None,
            "ci_lo": None,
            "ci_hi": None,
            "ci_method": BLOCK_CI_METHOD,
            "n_blocks": 0,
            "n_pairs": 0,
        }
    per = joined.group_by("block").agg(pl.col("credit").sum(), pl.len().alias("n")).sort("block")
    credit, n = per["credit"].to_numpy(), per["n"].to_numpy().astype(float)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(len(n), np.full(len(n), 1 / len(n)), size=n_boot).astype(float)
    draws = (w @ credit) / (w @ n)
    lo, hi = np.percentile(draws, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return {
        "point": json_float(credit.sum() / n.sum()),
        "ci_lo": json_float(lo),
        "ci_hi": json_float(hi),
        "ci_method": BLOCK_CI_METHOD,
        "n_blocks": int(len(n)),
        "n_pairs": int(n.sum()),
    }


def _panelist_summary(acc: np.ndarray) -> dict[str, object]:
    acc = acc[np.isfinite(acc)]
    return {
        "median": json_float(np.median(acc)) if acc.size else None,
        "q25": json_float(np.quantile(acc, 0.25)) if acc.size else None,
        "q75": json_float(np.quantile(acc, 0.75)) if acc.size else None,
        "n_panelist_blocks": int(acc.size),
    }


def public_human_side(settings) -> dict[str, object]:
    """The published aggregates: LOO panelist accuracy and the panels of 3 and 5."""
    from warehouse.sources.public import read_tastebench_file

    path, loo = read_tastebench_file("tastebench_panelist_block_accuracy", settings)
    panelist = _panelist_summary(loo["pairwise_accuracy"].cast(pl.Float64).to_numpy())
    curve = [
        {
            "k": 1,
            "median_accuracy": panelist["median"],
            "q025": None,
            "q975": None,
            "source": f"median LOO panelist accuracy ({Path(path).name})",
        },
        {
            "k": 3,
            "median_accuracy": PUBLISHED_CONSTANTS["panel3_accuracy"][0],
            "q025": None,
            "q975": None,
            "source": PUBLISHED_CONSTANTS["panel3_accuracy"][1],
        },
        {
            "k": 5,
            "median_accuracy": PUBLISHED_CONSTANTS["panel5_accuracy"][0],
            "q025": None,
            "q975": None,
            "source": PUBLISHED_CONSTANTS["panel5_accuracy"][1],
        },
    ]
    return {
        "scope": "all_pairs",
        "source": "published aggregates",
        "is_within_block": False,
        "note": PUBLIC_NOTE,
        "panelist_accuracy": {**panelist, "source": str(path)},
        "curve": curve,
    }


def warehouse_human_side(db_path: Path) -> tuple[dict[str, object], pl.DataFrame]:
    """The warehouse's human baseline and its block pairs (:func:`block_pairs`)."""
    import duckdb

    from warehouse.sources.readonly import connect_read_only

    con = connect_read_only(Path(db_path))
    try:
        try:
            blocks = con.sql(
                "select category, block_id, product_code from marts.fct_block_products "
                "where not is_reference"
            ).pl()
            loo = con.sql("select pairwise_accuracy from marts.fct_panelist_block_accuracy").pl()
            curve = con.sql(
                "select k, median_accuracy, q025, q975 from marts.agg_group_size_curve "
                "where pooling = 'within_block' order by k"
            ).pl()
        except duckdb.CatalogException as exc:
            raise WarehouseError(
                f"{db_path} lacks the human-baseline marts ({exc}). Fix: rebuild the warehouse, "
                "or score with --alone."
            ) from exc
    finally:
        con.close()
    side = {
        "scope": "within_block",
        "source": f"{db_path}: marts.agg_group_size_curve (within_block), "
        "marts.fct_panelist_block_accuracy, marts.fct_block_products",
        "is_within_block": True,
        "note": "model and panels scored on the pairs inside each block; gold = the warehouse's "
        "panel means (the curve's gold is each block's full panel mean)",
        "panelist_accuracy": {
            **_panelist_summary(loo["pairwise_accuracy"].cast(pl.Float64).to_numpy()),
            "source": f"{db_path}: marts.fct_panelist_block_accuracy",
        },
        "curve": [
            {
                "k": int(r["k"]),
                **{c: json_float(r[c]) for c in ("median_accuracy", "q025", "q975")},
                "source": "warehouse",
            }
            for r in curve.iter_rows(named=True)
        ],
    }
    return side, block_pairs(blocks)


def place_models(
    side: dict[str, object],
    accuracies: Mapping[str, dict[str, object]],
) -> dict[str, object]:
    """``side`` plus, per model, its accuracy on the human scale and k* (point and interval,
    read off the curve at the interval's bounds)."""
    points = [(c["k"], c["median_accuracy"]) for c in side["curve"]]
    models = []
    for name, acc in accuracies.items():
        models.append(
            {
                "name": name,
                "accuracy": acc,
                "k_star": kstar_record(points, acc.get("point")),
                "k_star_ci_lo": kstar_record(points, acc.get("ci_lo")),
                "k_star_ci_hi": kstar_record(points, acc.get("ci_hi")),
            }
        )
    return {**side, "models": models}
