"""The self-contained HTML quality report: inline CSS, plots as inline base64 PNG (matplotlib Agg),
no scripts and no external assets, so it opens offline (GX Data Docs fetch CSS/JS from the web).
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

from warehouse.files import atomic_text

if TYPE_CHECKING:
    from warehouse.quality.results import CheckRow, QualityResult

MAX_RUNS_PLOTTED = 30

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;
color:#1d2430;max-width:1200px}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #d0d6de;padding-bottom:.2rem}
table{border-collapse:collapse;width:100%;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #d0d6de;padding:.25rem .45rem;text-align:left;vertical-align:top}
th{background:#f1f4f8}
.passed{color:#116329;font-weight:600}.failed,.error{color:#b31d28;font-weight:700}
.skipped{color:#6a737d}
.badge{display:inline-block;padding:.2rem .6rem;border-radius:.3rem;color:#fff;font-weight:700}
.ok{background:#2da44e}.bad{background:#cf222e}
.banner{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .8rem;margin:.8rem 0}
.muted{color:#6a737d;font-size:.85rem}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:.8rem}
details{margin:.3rem 0}summary{cursor:pointer;font-weight:600}
img{max-width:100%}
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value))


def _anchor(name: str) -> str:
    return "s-" + "".join(ch if ch.isalnum() else "-" for ch in name)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def trend_plots(history: list[dict]) -> list[tuple[str, str]]:
    """(title, base64 PNG) for the pass-rate trend and the suite-by-run heatmap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    runs = history[-MAX_RUNS_PLOTTED:]
    if not runs:
        return []
    labels = [f"{i + 1}\n{r.get('run_at', '')[5:16].replace('T', ' ')}" for i, r in enumerate(runs)]
    x = np.arange(len(runs))
    out = []
    fig, ax = plt.subplots(figsize=(10, 3.2))
    rates = [100 * float(r.get("pass_rate", 0)) for r in runs]
    colors = ["#2da44e" if r.get("success") else "#cf222e" for r in runs]
    ax.plot(x, rates, color="#57606a", lw=1, zorder=1)
    ax.scatter(x, rates, c=colors, zorder=2)
    ax.set_ylim(min(rates + [90]) - 2, 100.5)
    ax.set_ylabel("expectations passed (%)")
    ax.set_xticks(x, labels, fontsize=7)
    ax2 = ax.twinx()
    failed = [r.get("n_failed", 0) for r in runs]
    ax2.bar(x, failed, alpha=0.25, color="#cf222e", width=0.6)
    ax2.set_ylim(0, max([*failed, 1]) * 1.1)  # a count: never a negative axis
    ax2.set_ylabel("failed expectations")
    ax.set_title("Pass rate per run (green: run passed, red: run failed)")
    out.append(("Pass rate across runs", _png(fig)))
    plt.close(fig)

    suites = sorted({s for r in runs for s in r.get("suites", {})})
    if suites:
        grid = np.full((len(suites), len(runs)), np.nan)
        for j, r in enumerate(runs):
            for i, s in enumerate(suites):
                passed, total = (r.get("suites", {}).get(s) or [0, 0])[:2]
                if total:
                    grid[i, j] = passed / total
        fig, ax = plt.subplots(figsize=(10, 0.22 * len(suites) + 1.2))
        from matplotlib.colors import BoundaryNorm, ListedColormap

        cmap = ListedColormap(["#cf222e", "#f0883e", "#2da44e"]).with_extremes(bad="#eeeeee")
        norm = BoundaryNorm([0, 0.5, 0.99999, 1.0001], cmap.N)
        ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap=cmap, norm=norm)
        ax.set_yticks(np.arange(len(suites)), suites, fontsize=7)
        ax.set_xticks(x, [str(i + 1) for i in range(len(runs))], fontsize=7)
        ax.set_xlabel("run")
        ax.set_title(
            "Expectations passed per suite and run (green: all, orange: >= half, red: < half, "
            "grey: not run)"
        )
        out.append(("Suites across runs", _png(fig)))
        plt.close(fig)
    return out


def _example_html(example: str | None) -> str:
    if not example:
        return ""
    try:
        value = json.loads(example)
    except json.JSONDecodeError:
        return f"<pre>{_e(example)}</pre>"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        cols = list(dict.fromkeys(k for v in value for k in v))
        head = "".join(f"<th>{_e(c)}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{_e(str(v.get(c))[:160])}</td>" for c in cols) + "</tr>"
            for v in value
        )
        return f"<table><tr>{head}</tr>{body}</table>"
    return f"<pre>{_e(json.dumps(value, indent=1)[:2000])}</pre>"


def _row_html(r: CheckRow, with_example: bool) -> str:
    what = _e(r.expectation_type) + (
        f"<br><span class='muted'>{_e(r.rule)}</span>" if r.rule else ""
    )
    cells = [
        what,
        _e(r.column_name),
        f"<span class='{r.status}'>{_e(r.status)}</span>",
        _e(r.observed_value)[:1500],
    ]
    if with_example:
        cells.append(_example_html(r.example))
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def render(result: QualityResult, history: list[dict]) -> str:
    """The HTML report: header, failures, trends, suites, public tables, details, timings."""
    parts = [
        *_header(result),
        *_failures(result),
        *_trends(result, history),
        *_suites(result),
        *_public_tables(result),
        *_details(result),
    ]
    timings = ", ".join(f"{k} {v:.1f}" for k, v in result.timings.items())
    parts.append(f"<p class='muted'>timings (s): {_e(timings)}</p></body></html>")
    return "\n".join(parts)


def _header(result: QualityResult) -> list[str]:
    s = result.summary()
    ok = result.success
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>TasteBench quality report {_e(result.run_id)}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>TasteBench Warehouse: data quality</h1>",
        f"<p><span class='badge {'ok' if ok else 'bad'}'>{'PASSED' if ok else 'FAILED'}</span> "
        f"{s['n_expectations'] - s['n_failed']} of {s['n_expectations']} expectations passed "
        f"in {s['n_suites']} suites ({s['n_failed_suites']} failed, {s['n_skipped']} skipped).</p>",
        "<p class='muted'>",
        f"warehouse {_e(result.db_path)} &middot; data_origin <b>{_e(result.data_origin)}</b> "
        f"&middot; run {_e(result.run_id)} at {_e(result.run_at.isoformat(timespec='seconds'))} "
        f"&middot; trigger {_e(result.trigger)} &middot; {result.seconds:.1f} s",
        "</p>",
    ]
    if result.data_origin == "simulation":
        parts.append(
            "<div class='banner'>NECTAR ratings in this warehouse are <b>simulated</b> "
            "(calibrated to public aggregates): the checks validate the pipeline, and no number "
            "computed from them is a real result.</div>"
        )
    return parts


def _failures(result: QualityResult) -> list[str]:
    failures = result.failures
    parts = [f"<h2>Failures ({len(failures)})</h2>"]
    if failures:
        parts.append(
            "<table><tr><th>suite</th><th>expectation</th><th>column</th><th>status</th>"
            "<th>observed</th><th>example rows / values</th></tr>"
        )
        for r in failures:
            parts.append(
                f"<tr><td><a href='#{_anchor(r.suite)}'>{_e(r.suite)}</a></td>"
                + _row_html(r, True)[4:]
            )
        parts.append("</table>")
    else:
        parts.append("<p class='passed'>No failed expectation and no guard violation.</p>")
    return parts


def _trends(result: QualityResult, history: list[dict]) -> list[str]:
    parts = ["<h2>Trends across runs</h2>"]
    if result.history_path:
        parts.append(
            f"<p class='muted'>history: {_e(result.history_path)} ({len(history)} runs)</p>"
        )
    for title, png in trend_plots(history):
        parts.append(
            f"<h3>{_e(title)}</h3><img alt='{_e(title)}' src='data:image/png;base64,{png}'>"
        )
    return parts


def _suites(result: QualityResult) -> list[str]:
    parts = [
        "<h2>Suites</h2><table><tr><th>suite</th><th>kind</th><th>model</th><th>status</th>"
        "<th>passed</th><th>failed</th><th>skipped</th><th>seconds</th></tr>"
    ]
    for sr in result.suites:
        status = "passed" if sr.success else ("error" if sr.error else "failed")
        parts.append(
            f"<tr><td><a href='#{_anchor(sr.suite)}'>{_e(sr.suite)}</a></td><td>{_e(sr.kind)}</td>"
            f"<td>{_e(sr.model)}</td><td><span class='{status}'>{status}</span></td>"
            f"<td>{sr.count('passed')}</td><td>{sr.count('failed') + sr.count('error')}</td>"
            f"<td>{sr.count('skipped')}</td><td>{sr.seconds:.2f}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _public_tables(result: QualityResult) -> list[str]:
    from warehouse.quality import public_tables as pt

    parts = ["<h2>Public tables</h2><p>Guarded as public (docs/benchmark.md §7):</p><ul>"]
    for t in result.public_tables:
        parts.append(f"<li>{_e(t)}</li>")
    for c in pt.PUBLIC_CANDIDATES:
        parts.append(
            f"<li>{_e(c.name)} <span class='muted'>(candidate: {_e(c.description)})</span></li>"
        )
    parts.append("</ul><p>Gated (never released as stored):</p><ul>")
    for t, why in result.gated_tables.items():
        parts.append(f"<li>{_e(t)} <span class='muted'>{_e(why)}</span></li>")
    parts.append("</ul>")
    return parts


def _details(result: QualityResult) -> list[str]:
    parts = ["<h2>Details</h2>"]
    for sr in result.suites:
        parts.append(
            f"<details id='{_anchor(sr.suite)}' {'open' if not sr.success else ''}>"
            f"<summary>{_e(sr.suite)} ({sr.count('passed')}/{len(sr.rows)} passed)</summary>"
            "<table><tr><th>expectation</th><th>column</th><th>status</th><th>observed</th>"
            "<th>example</th></tr>"
        )
        parts += [_row_html(r, True) for r in sr.rows]
        parts.append("</table></details>")
    return parts


def write_report(result: QualityResult, history: list[dict], path: Path) -> Path:
    return atomic_text(path, render(result, history))
