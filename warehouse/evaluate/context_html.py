"""The in-context page (``tastebench evaluate FILES --html OUT``): one self-contained HTML page
from an in-context result (:func:`warehouse.evaluate.context.evaluate_in_context`). Inline CSS,
figures as inline base64 PNG (:mod:`.context_figures`), no script, no external reference.

Contents, in order: the data origin (on a simulated warehouse the first lines say that the human
scale is simulated), your models in context (rank with interval, human-scale accuracy, k*), the
main table with your rows highlighted, the per-category heat map, the CI plot, your models on the
group-size curve, the resolved and unresolved comparisons, and the provenance.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

from warehouse.errors import WarehouseError
from warehouse.evaluate import context_figures as figs
from warehouse.metrics.core import METRIC_NAMES

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5rem auto;
       max-width: 1280px; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
.banner { border: 2px solid #2e7d32; background: #edf7ed; padding: .7rem 1rem; margin: .8rem 0; }
.warning { border: 2px solid #c62828; background: #fdecea; padding: .7rem 1rem; margin: .8rem 0; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; font-size: .78rem; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .2rem .4rem; text-align: right; }
th { background: #f4f4f4; }
td.name, th.name { text-align: left; overflow-wrap: anywhere; max-width: 18rem; }
tr.user td { background: #fff3e0; font-weight: bold; }
.ci { color: #555; font-size: .7rem; white-space: nowrap; }
.small { font-size: .8rem; color: #555; }
img { max-width: 100%; height: auto; }
code { overflow-wrap: anywhere; }
"""
SHORT = {
    "pairwise_accuracy": "pairwise acc.",
    "spearman": "Spearman",
    "kendall_tau": "Kendall",
    "recall_at_1": "R@1",
    "recall_at_2": "R@2",
    "recall_at_3": "R@3",
    "pairwise_accuracy_macro": "macro acc.",
    "pairwise_accuracy_pooled": "pooled acc.",
}


def _e(value: object) -> str:
    return html.escape(str(value))


def _cell(iv: Mapping[str, object]) -> str:
    if iv.get("point") is None:
        return "<td>&ndash;</td>"
    ci = ""
    if iv.get("ci_lo") is not None and iv.get("ci_hi") is not None:
        ci = f"<br><span class='ci'>[{iv['ci_lo']:.3f}, {iv['ci_hi']:.3f}]</span>"
    return f"<td>{iv['point']:.3f}{ci}</td>"


def main_order(result: Mapping[str, object]) -> list[str]:
    """Model names by pairwise accuracy, best first (the main table's order)."""
    acc = {m["name"]: m["metrics"]["pairwise_accuracy"]["point"] for m in result["models"]}
    return sorted(acc, key=lambda n: (acc[n] is None, -(acc[n] or 0.0)))


def _origin(result: Mapping[str, object]) -> str:
    human = result["human_scale"]
    parts = []
    if human["is_simulated"] or result["data_origin"] == "simulation":
        parts.append(
            "<div class='warning'><b>The human scale is SIMULATED.</b> The gold and the panels "
            "come from the simulated NECTAR bundle (data_origin = simulation): the k*, the "
            "group-size curve and every number scored against this gold are not real results."
            "</div>"
        )
    gold = (
        "the warehouse's panel means (--gold warehouse)"
        if result["gold"] == "warehouse"
        else "the public out-of-fold files' true_rank (--gold file)"
    )
    parts.append(
        f"<div class='banner'>Gold: {_e(gold)}; data origin <code>{_e(result['data_origin'])}"
        f"</code>; human scale: {_e(human['scope'])} ({_e(human['data_origin'])}).</div>"
    )
    return "".join(parts)


def _summary(result: Mapping[str, object]) -> str:
    ctx, human = result["context"], result["human_scale"]
    placed = {m["name"]: m for m in human["models"]}
    rows = []
    for r in ctx["ranks"]:
        m = placed[r["name"]]
        comps = [c for c in ctx["comparisons"] if c["model_a"] == r["name"]]
        wins = sum(c["winner"] == r["name"] for c in comps)
        losses = sum(c["is_resolved"] and c["winner"] != r["name"] for c in comps)
        rank = (
            _e(r["note"])
            if r["rank"] is None
            else f"{r['rank']} of {r['n_models']} [{r['rank_ci_lo']}, {r['rank_ci_hi']}]"
            + ("" if r["is_resolved"] else " <span class='small'>not resolved</span>")
        )
        k = m["k_star"]["label"]
        lo, hi = m["k_star_ci_lo"]["label"], m["k_star_ci_hi"]["label"]
        kci = "interval: the same" if lo == hi == k else f"interval: {_e(lo)} &hellip; {_e(hi)}"
        rows.append(
            f"<tr class='user'><td class='name'>{_e(r['name'])}</td><td>{rank}</td>"
            f"{_cell(m['accuracy'])}<td class='name'>{_e(k)}<br><span class='ci'>{kci}</span>"
            f"</td><td>{wins} / {losses} / {len(comps) - wins - losses}</td></tr>"
        )
    pan = human["panelist_accuracy"]
    head = (
        "<tr><th class='name'>your model</th><th>rank [95% interval]</th>"
        f"<th>accuracy on the human scale ({_e(human['scope'])})</th><th class='name'>k* "
        "[interval]</th><th>resolved wins / losses / unresolved</th></tr>"
    )
    median = "&ndash;" if pan["median"] is None else f"{pan['median']:.3f}"
    return (
        f"<div class='scroll'><table id='summary'>{head}{''.join(rows)}</table></div>"
        f"<p class='small'>Median LOO panelist accuracy {median} (IQR "
        f"{pan['q25'] or 0:.3f}&ndash;{pan['q75'] or 0:.3f}). Note: {_e(human['note'])}. Ranks: "
        f"{_e(ctx['rank_scope'])} ({_e(ctx['rank_method'])}).</p>"
    )


def _main_table(result: Mapping[str, object], order: list[str]) -> str:
    models = {m["name"]: m for m in result["models"]}
    head = (
        "<tr><th>#</th><th class='name'>model</th><th>role</th><th>n</th>"
        + "".join(f"<th>{SHORT[m]}</th>" for m in METRIC_NAMES)
        + "</tr>"
    )
    rows = []
    for i, n in enumerate(order, 1):
        m = models[n]
        cls = " class='user'" if m.get("role") == "user" else ""
        rows.append(
            f"<tr{cls}><td>{i}</td><td class='name'>{_e(n)}</td><td>{_e(m.get('role', ''))}"
            f"</td><td>{m['n_products']}</td>"
            + "".join(_cell(m["metrics"][k]) for k in METRIC_NAMES)
            + "</tr>"
        )
    return f"<div class='scroll'><table id='main-table'>{head}{''.join(rows)}</table></div>"


def _comparisons(result: Mapping[str, object]) -> str:
    out = []
    comps = result["context"]["comparisons"]
    for title, keep in (("Resolved", True), ("Not resolved", False)):
        sel = [c for c in comps if c["is_resolved"] == keep]
        rows = "".join(
            f"<tr><td class='name'>{_e(c['model_a'])}</td><td class='name'>{_e(c['model_b'])}"
            f"</td><td>{c['diff']:+.3f}<br><span class='ci'>[{c['ci_lo']:+.3f}, "
            f"{c['ci_hi']:+.3f}]</span></td><td>{c['p_holm']:.4f}</td>"
            f"<td class='name'>{_e(c['winner'] or '')}</td></tr>"
            for c in sel
            if c["diff"] is not None and c["p_holm"] is not None
        )
        out.append(
            f"<h3>{title} ({len(sel)})</h3>"
            + (
                "<div class='scroll'><table><tr><th class='name'>your model</th><th class='name'>"
                "other</th><th>difference [95% CI]</th><th>p (Holm)</th><th class='name'>winner"
                f"</th></tr>{rows}</table></div>"
                if sel
                else "<p>none</p>"
            )
        )
    return "".join(out)


def _provenance(result: Mapping[str, object]) -> str:
    files = "".join(
        f"<tr><td class='name'>{_e(f['name'])}</td><td>{_e(f['role'])}</td>"
        f"<td class='name'><code>{_e(f['source_file'])}</code></td>"
        f"<td class='name'><code>{_e(f.get('sha256') or f.get('fit_id') or '')}</code></td></tr>"
        for f in result["context"]["files"]
    )
    ci = result["ci"]
    methods = ", ".join(f"{k}: {v}" for k, v in ci["methods"].items())
    human = result["human_scale"]
    notes = "".join(f"<li>{_e(n)}</li>" for n in result["notes"])
    return (
        "<div class='scroll'><table><tr><th class='name'>model</th><th>role</th><th class='name'>"
        f"file</th><th class='name'>sha256 / fit_id</th></tr>{files}</table></div>"
        f"<p class='small'>Gold: {_e(result['gold'])}; data origin: {_e(result['data_origin'])}; "
        f"intervals ({_e(ci['convention'])}): {_e(methods)}; per category: "
        f"{_e(ci['per_category'])}; comparisons: {_e(ci['comparisons'])}, Holm over "
        f"{_e(result['context']['comparison_holm_over'])}; ranks: "
        f"{_e(result['context']['rank_method'])}; human scale: {_e(human['source'])}, model "
        f"intervals {_e(human['models'][0]['accuracy']['ci_method'] if human['models'] else '')};"
        f" bootstrap {result['bootstrap']['n_boot']} replicates, seed "
        f"{result['bootstrap']['seed']}.</p><ul class='small'>{notes}</ul>"
    )


def render_context_page(result: Mapping[str, object]) -> str:
    """The page's HTML text (see the module docstring)."""
    if "context" not in result or "human_scale" not in result:
        raise WarehouseError("the result has no context section. Fix: run without --alone.")
    order = main_order(result)
    users = result["context"]["user_models"]
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>TasteBench: your model in context</title><style>{CSS}</style></head><body>"
        f"<h1>TasteBench: {_e(', '.join(users))} in context</h1>{_origin(result)}"
        f"<h2>Your model in context</h2>{_summary(result)}"
        f"<h2>Main table</h2><p class='small'>Point and 95% interval; your rows highlighted."
        f"</p>{_main_table(result, order)}"
        f"<h2>Per category</h2><figure><img alt='heat map' src='{figs.heatmap(result, order)}'>"
        f"</figure><h2>Intervals</h2><figure><img alt='CI plot' "
        f"src='{figs.ci_plot(result, order)}'></figure>"
        f"<h2>On the human scale</h2><figure><img alt='group-size curve' "
        f"src='{figs.curve_plot(result['human_scale'], users)}'></figure>"
        f"<h2>Paired comparisons</h2>{_comparisons(result)}"
        f"<h2>Provenance</h2>{_provenance(result)}</body></html>\n"
    )


def write_context_page(result: Mapping[str, object], out: str | Path) -> Path:
    """Write :func:`render_context_page` to ``out`` (parents created); return the path."""
    out = Path(out)
    text = render_context_page(result)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
