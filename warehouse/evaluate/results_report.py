"""The results report: ONE self-contained HTML page from the built warehouse's metrics marts.

Inline CSS, figures as inline base64 PNG (matplotlib, Agg backend), no script, no external
reference of any kind. The warehouse is opened read-only. Contents: a banner stating the origin
of the numbers, the main table (point [95% CI] with the published value side by side, then the
trivial-policy rows), a per-category heat map (models x categories, pairwise accuracy), a CI plot
(pairwise accuracy, point and interval per model) and the resolved paired comparisons.
"""

from __future__ import annotations

import base64
import html
import io
import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError, require_warehouse
from warehouse.metrics.core import METRIC_NAMES, TABLE2_METRICS

TABLE2 = TABLE2_METRICS
EXTRA = tuple(m for m in METRIC_NAMES if m not in TABLE2_METRICS)
LABELS = {
    "pairwise_accuracy": "Pairwise acc.",
    "spearman": "Spearman &rho;",
    "kendall_tau": "Kendall &tau;",
    "recall_at_1": "Recall@1",
    "recall_at_2": "Recall@2",
    "recall_at_3": "Recall@3",
    "pairwise_accuracy_macro": "Macro acc.",
    "pairwise_accuracy_pooled": "Pooled acc.",
}

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto;
       max-width: 1200px; color: #222; line-height: 1.4; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
.banner { border: 2px solid #2e7d32; background: #edf7ed; padding: .8rem 1rem; margin: 1rem 0;
          font-size: 1.02rem; }
.warning { border: 2px solid #c62828; background: #fdecea; padding: .8rem 1rem; margin: 1rem 0; }
table { border-collapse: collapse; font-size: .82rem; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .25rem .45rem; text-align: right; }
th { background: #f4f4f4; }
td.name, th.name { text-align: left; overflow-wrap: anywhere; min-width: 8rem; max-width: 16rem; }
td:not(.name) span.small { white-space: nowrap; }
.scroll { max-width: 100%; overflow-x: auto; }
tr.policy td { color: #666; background: #fafafa; font-style: italic; }
tr.flag td { color: #c62828; }
.pub { color: #555; font-size: .76rem; }
.conv { color: #888; font-size: .72rem; font-style: italic; }
.miss { color: #c62828; font-weight: bold; }
figure { margin: 1rem 0; }
figcaption { font-size: .85rem; color: #444; }
img { max-width: 100%; }
.small { font-size: .8rem; color: #555; }
"""


def _fig_to_data_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def load_marts(db_path: Path) -> dict[str, object]:
    """The marts the report needs, read from ``db_path`` opened read-only."""
    import duckdb

    from warehouse.sources.readonly import connect_read_only

    require_warehouse(db_path)
    con = connect_read_only(db_path)
    try:
        try:
            out = {
                "metrics": con.sql("select * from marts.agg_model_metrics").pl(),
                "per_category": con.sql("select * from marts.agg_model_metrics_per_category").pl(),
                "comparisons": con.sql("select * from marts.agg_model_comparisons").pl(),
                "published": con.sql("select * from seeds.published_table2").pl(),
            }
        except duckdb.CatalogException as exc:
            raise WarehouseError(
                f"{db_path} lacks the metrics marts ({exc}). Fix: rebuild with `tastebench build`."
            ) from exc
        try:
            build_origin = con.execute(
                "select string_agg(distinct data_origin, '|') from marts.dim_categories"
            ).fetchall()[0][0]
        except duckdb.CatalogException:
            build_origin = None
        out["build_origin"] = build_origin
    finally:
        con.close()
    return out


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cell(point, lo, hi) -> str:
    if _missing(point):
        return "&ndash;"
    text = f"{point:.3f}"
    if not _missing(lo) and not _missing(hi):
        text += f"<br><span class='small'>[{lo:.3f}, {hi:.3f}]</span>"
    return text


def _split_conventions(metrics: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(default rows: one per model and metric; published-convention rows, shown for
    comparison)."""
    return (
        metrics.filter(pl.col("is_default_ci")),
        metrics.filter(pl.col("ci_method") == "published_bca"),
    )


def _by(frame: pl.DataFrame, key: str) -> dict[object, dict[str, object]]:
    """Rows of ``frame`` as dicts keyed by column ``key`` (the last row of a repeated key wins)."""
    return {r[key]: r for r in frame.iter_rows(named=True)}


def _main_table(metrics: pl.DataFrame, published: pl.DataFrame) -> str:
    pub = _by(published, "model_file_stem")
    metrics, conv = _split_conventions(metrics)
    models = metrics.filter(~pl.col("is_trivial_policy"))
    policies = metrics.filter(pl.col("is_trivial_policy"))
    order = (
        models.filter(pl.col("metric") == "pairwise_accuracy")
        .sort("point", descending=True, nulls_last=True, maintain_order=True)["model_id"]
        .to_list()
    )
    head = (
        "<tr><th class='name'>model</th><th>n</th>"
        + "".join(f"<th>{LABELS[m]}</th>" for m in TABLE2 + EXTRA)
        + "</tr>"
    )
    body = [_model_row(model_id, models, conv, pub) for model_id in order]
    body += [
        _policy_row(policy_id, policies)
        for policy_id in sorted(policies["model_id"].unique().to_list())
    ]
    return f"<table id='main-table'>{head}{''.join(body)}</table>"


def _model_row(
    model_id: str, models: pl.DataFrame, conv: pl.DataFrame, pub: dict[object, dict]
) -> str:
    """A model's row of the main table: default intervals, the published convention's interval
    and the published Table-2 value under each."""
    model_rows = models.filter(pl.col("model_id") == model_id)
    rows = _by(model_rows, "metric")
    pubci = _by(conv.filter(pl.col("model_id") == model_id), "metric")
    name = pub[model_id]["display_name"] if model_id in pub else model_id
    cells = []
    for m in TABLE2 + EXTRA:
        r = rows.get(m)
        cell = "&ndash;" if r is None else _cell(r["point"], r["ci_lo"], r["ci_hi"])
        if r is not None and bool(r["is_degenerate"]):
            cell += "<br><span class='small'>degenerate</span>"
        if m in pubci:
            q = pubci[m]
            cell += (
                f"<br><span class='conv'>published BCa [{q['ci_lo']:.3f}, {q['ci_hi']:.3f}]</span>"
            )
        if m in TABLE2 and model_id in pub:
            published_value = float(pub[model_id][m])
            ok = r is not None and abs(float(r["point"]) - published_value) <= 0.0005 + 1e-9
            cls = "pub" if ok else "pub miss"
            cell += f"<br><span class='{cls}'>published {published_value:.3f}</span>"
        cells.append(f"<td>{cell}</td>")
    n = model_rows["n_products"][0] if len(model_rows) else ""
    # the model id under the display name only where they differ (a warehouse fit has no
    # display name: labelling it twice was issue #21)
    ident = "" if name == model_id else f"<br><span class='small'>{html.escape(model_id)}</span>"
    return (
        f"<tr><td class='name'>{html.escape(str(name))}{ident}</td><td>{n}</td>"
        + "".join(cells)
        + "</tr>"
    )


def _policy_row(policy_id: str, policies: pl.DataFrame) -> str:
    """A trivial policy's row of the main table (red when it differs from chance)."""
    policy_rows = policies.filter(pl.col("model_id") == policy_id)
    rows = _by(policy_rows, "metric")
    flagged = bool(rows.get("pairwise_accuracy", {}).get("differs_from_chance") or False)
    cls = "policy flag" if flagged else "policy"
    cells = []
    for m in TABLE2 + EXTRA:
        if m in rows:
            r = rows[m]
            cells.append(f"<td>{_cell(r['point'], r['ci_lo'], r['ci_hi'])}</td>")
        else:
            cells.append("<td>&ndash;</td>")
    n = policy_rows["n_products"].drop_nulls()
    label = policy_id.replace("policy:", "trivial policy: ")
    return (
        f"<tr class='{cls}'><td class='name'>{html.escape(label)}"
        + (" (differs from chance)" if flagged else "")
        + f"</td><td>{'' if n.is_empty() else int(n[0])}</td>"
        + "".join(cells)
        + "</tr>"
    )


def _heatmap(per_category: pl.DataFrame, names: dict[str, str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per_category = per_category.filter(pl.col("is_default_ci"))
    grid = per_category.pivot(
        on="category", index="model_id", values="pairwise_accuracy", aggregate_function=None
    )
    categories = sorted(c for c in grid.columns if c != "model_id")
    models = sorted(grid["model_id"].to_list())
    grid = grid.sort("model_id").select("model_id", *categories)
    values = grid.select(categories).cast(pl.Float64).to_numpy()  # null -> NaN
    mean = np.nanmean(values, axis=1) if values.size else np.zeros(len(models))
    order = np.argsort(-mean, kind="stable")  # best overall first, ties by model id
    values = values[order]
    models = [models[i] for i in order]
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(categories) + 3), 0.5 * len(models) + 2))
    im = ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(categories)), categories, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(models)), [names.get(m, m) for m in models], fontsize=8)
    for i in range(len(models)):
        for j in range(len(categories)):
            v = values[i, j]
            if not np.isnan(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6.5)
    fig.colorbar(im, ax=ax, fraction=0.025, pad=0.01, label="pairwise accuracy")
    ax.set_title("Pairwise accuracy per category (public out-of-fold files)")
    uri = _fig_to_data_uri(fig)
    plt.close(fig)
    return uri


def _ci_plot(metrics: pl.DataFrame, published: pl.DataFrame, names: dict[str, str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sel = metrics.filter((pl.col("metric") == "pairwise_accuracy") & ~pl.col("is_trivial_policy"))
    acc = sel.filter(pl.col("is_default_ci")).sort("point", nulls_last=True, maintain_order=True)
    conv = _by(sel.filter(pl.col("ci_method") == "published_bca"), "model_id")
    pub = dict(
        zip(
            published["model_file_stem"].to_list(),
            published["pairwise_accuracy"].to_list(),
            strict=True,
        )
    )
    point = acc["point"].cast(pl.Float64).to_numpy()
    lo = acc["ci_lo"].cast(pl.Float64).to_numpy()
    hi = acc["ci_hi"].cast(pl.Float64).to_numpy()
    ids = acc["model_id"].to_list()
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(acc) + 1.5))
    y = range(len(acc))
    ax.errorbar(
        point,
        y,
        xerr=[point - lo, hi - point],
        fmt="o",
        color="#1f5fa8",
        capsize=3,
        label="point and 95% CI (default: ustat_t)",
    )
    shown = [(i, m) for i, m in enumerate(ids) if m in conv]
    if shown:
        ax.hlines(
            [i + 0.25 for i, _ in shown],
            [conv[m]["ci_lo"] for _, m in shown],
            [conv[m]["ci_hi"] for _, m in shown],
            color="#999",
            linewidth=2,
            label="published convention (BCa), for comparison",
        )
    pub_x = [pub.get(m) for m in ids]
    ax.scatter(pub_x, list(y), marker="x", color="#c62828", zorder=3, label="published point")
    ax.axvline(0.5, color="#888", linestyle="--", linewidth=1, label="random policy (0.5)")
    ax.set_yticks(list(y), [names.get(m, m) for m in ids], fontsize=8)
    ax.set_xlabel("pairwise accuracy")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Pairwise accuracy with 95% intervals")
    uri = _fig_to_data_uri(fig)
    plt.close(fig)
    return uri


def _comparisons(comparisons: pl.DataFrame, names: dict[str, str]) -> str:
    res = comparisons.filter(pl.col("is_resolved")).sort(
        "diff", descending=True, nulls_last=True, maintain_order=True
    )
    if res.is_empty():
        return "<p>No lead is resolved after Holm correction.</p>"
    rows = []
    for r in res.iter_rows(named=True):
        diff = r["diff"]
        a, b = (r["model_a"], r["model_b"]) if diff > 0 else (r["model_b"], r["model_a"])
        lo, hi = (r["ci_lo"], r["ci_hi"]) if diff > 0 else (-r["ci_hi"], -r["ci_lo"])
        rows.append(
            f"<tr><td class='name'>{html.escape(names.get(a, a))}</td>"
            f"<td class='name'>{html.escape(names.get(b, b))}</td>"
            f"<td>{abs(diff):+.3f} [{lo:+.3f}, {hi:+.3f}]</td>"
            f"<td>{r['p_holm']:.4f}</td></tr>"
        )
    return (
        "<table id='comparisons'><tr><th class='name'>leader</th><th class='name'>over</th>"
        "<th>accuracy lead [95% CI]</th><th>p (Holm)</th></tr>" + "".join(rows) + "</table>"
    )


PUBLIC_SOURCE = "tastebench_public"
SIMULATION_NOTE = (
    "On a simulated build the features carry no signal about the panel: the simulator gives "
    "real public products simulated ratings that do not depend on their features, so the "
    "feature-only models should sit near chance (pointwise models such as Ridge can fall below .5 "
    "under LOOCV; docs/ranking.md). The ensembles with the published Gemini scores rise above it "
    "only because the simulated panel means reproduce the public gold order that Gemini was "
    "scored on. None of these numbers is a real result."
)


def _warehouse_section(metrics: pl.DataFrame, published: pl.DataFrame) -> str:
    """The warehouse's own fits (source warehouse_fit), beside the published models, labelled
    with their data origin."""
    if metrics.is_empty():
        return ""
    origins = metrics["data_origin"].drop_nulls().cast(pl.String).unique().to_list()
    origin = "|".join(sorted(origins)) or "unknown"
    note = SIMULATION_NOTE if "simulation" in origin else ""
    table = _main_table(metrics, published.clear()).replace(
        "id='main-table'", "id='warehouse-table'", 1
    )
    return (
        "<h2>Figure 1b. The warehouse's own models "
        f"<span class='miss'>{html.escape(origin)}</span></h2>"
        "<p class='small'>Fitted by this build from its feature marts (marts.dim_food_fits) and "
        "scored against its panel means, same metrics and intervals as above. "
        f"<code>data_origin = {html.escape(origin)}</code>. {note}</p>{table}"
    )


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>TasteBench results</title>
<style>{CSS}</style>
</head>
<body>
<h1>TasteBench results: public out-of-fold models</h1>
<p class="small">Generated {generated} from {db_path} (read-only), marts
agg_model_metrics, agg_model_metrics_per_category, agg_model_comparisons.</p>
{banner}
{warning}
<h2>Figure 1. Main table</h2>
<p class="small">Point [95% CI] by the default methods (docs/statistics.md: ustat_t for
pairwise, Kendall and macro accuracy, ustat_satt for Spearman, category_randomized for
Recall@k); pooled (DerSimonian&ndash;Laird): point only. Under each value the published Table-2
value (red when not reproduced to 3 decimals) and, in grey and <em>for comparison only</em>, the
interval of the published convention (published_bca: main-table BCa, docs/benchmark.md &sect;4,
10,000 replicates, seed 42; it can exclude its own estimate). Grey rows: trivial policies
(random: analytical; slot1_wins: first listed product of the gold pair file,
Clopper&ndash;Pearson; lower_code_wins: default methods); red when the pairwise-accuracy interval
excludes chance.</p>
{main_table}
{warehouse_section}
<h2>Figure 2. Per-category pairwise accuracy</h2>
<figure id="heatmap"><img alt="Heat map of pairwise accuracy, models by categories" src="{heat}">
<figcaption>Models (rows, best overall first) by categories; per-category CIs (default
distinct_percentile; the published per-category BCa as ci_method = 'published_bca') are in
marts.agg_model_metrics_per_category.</figcaption></figure>
<h2>Figure 3. Confidence intervals</h2>
<figure id="ci-plot"><img alt="Pairwise accuracy with 95% intervals per model" src="{ci}">
<figcaption>Pairwise accuracy per model: point and 95% default interval (blue), the published
convention's BCa interval for comparison (grey), published point (red cross), random policy
(dashed).</figcaption></figure>
<h2>Resolved leads</h2>
<p class="small">Paired comparisons on the same 935 pairs by ustat_t (the difference of two
U-statistics over the same products; CI and t p-value from one standard error;
docs/statistics.md), Holm-corrected over all pairs of the published models; listed when
p (Holm) &lt; .05 and the CI excludes 0.</p>
{comparisons}
</body>
</html>
"""
"""The report page; its fields are filled by :func:`render_report` (no literal braces)."""


def render_report(marts: dict[str, object], db_path: Path | str = "") -> str:
    """The HTML page for the marts returned by :func:`load_marts`."""
    all_metrics: pl.DataFrame = marts["metrics"]
    own = all_metrics["source"].fill_null("") == "warehouse_fit"
    metrics = all_metrics.filter(~own)
    public_ids = metrics["model_id"].unique().to_list()
    per_category = marts["per_category"]
    per_category = per_category.filter(pl.col("model_id").is_in(public_ids))
    comparisons = marts["comparisons"]
    comparisons = comparisons.filter(pl.col("model_a").is_in(public_ids))
    published: pl.DataFrame = marts["published"]
    names = dict(
        zip(
            published["model_file_stem"].to_list(), published["display_name"].to_list(), strict=True
        )
    )
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    heat = _heatmap(per_category, names)
    ci = _ci_plot(metrics, published, names)
    return _PAGE.format(
        CSS=CSS,
        generated=generated,
        db_path=html.escape(str(db_path)),
        banner=_banner(metrics, marts.get("build_origin") or "unknown"),
        warning=_warning(all_metrics),
        main_table=_main_table(metrics, published),
        warehouse_section=_warehouse_section(all_metrics.filter(own), published),
        heat=heat,
        ci=ci,
        comparisons=_comparisons(comparisons, names),
    )


def _banner(metrics: pl.DataFrame, build_origin: object) -> str:
    """Which numbers are real: the public files' models, not this build's ratings."""
    n_models = metrics.filter(~pl.col("is_trivial_policy"))["model_id"].n_unique()
    return (
        "<div class='banner'><strong>Real results.</strong> Every number outside Figure 1b comes "
        f"from the public out-of-fold prediction files ({n_models} models, "
        "<code>data_origin = tastebench_public</code>) scored against their own published gold "
        "(<code>true_rank</code>). They do not use the NECTAR ratings of this build "
        f"(<code>data_origin = {html.escape(str(build_origin))}</code>). "
        "<strong>Anything computed from <code>data_origin = 'simulation'</code> is not a real "
        "result.</strong></div>"
    )


def _warning(all_metrics: pl.DataFrame) -> str:
    """A warning when any row of the marts comes from a simulated origin, else empty."""
    origins = sorted(all_metrics["data_origin"].drop_nulls().unique().to_list())
    simulated = [o for o in origins if "simulation" in o]
    if not simulated:
        return ""
    return (
        "<div class='warning'><strong>Warning:</strong> some rows of these marts come from "
        f"<code>{html.escape(', '.join(simulated))}</code>: those numbers are NOT real "
        "results.</div>"
    )


def write_report(db_path: Path | str, out: Path | str) -> Path:
    """Read the marts from ``db_path`` (read-only) and write the HTML page to ``out``."""
    marts = load_marts(Path(db_path))
    page = render_report(marts, db_path)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
