"""End to end: `build` on the NECTAR fixture, then the metrics marts (fct_oof_predictions,
agg_model_metrics, agg_model_metrics_per_category, agg_model_comparisons), the singular test
against the published Table 2, `tastebench evaluate --gold warehouse` and the HTML report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.config import build_record_path, load_settings
from warehouse.evaluate.contract import check_result_shape
from warehouse.evaluate.files import evaluate_files
from warehouse.evaluate.results_report import write_report
from warehouse.metrics.core import TABLE2_METRICS
from warehouse.pipeline.dbt import BuildError, copy_name, run_dbt

pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"
SINGULAR = "assert_agg_model_metrics_reproduces_published_table2"
TABLE2 = TABLE2_METRICS
TOL3 = 0.0005 + 1e-9


@pytest.fixture(scope="module")
def built(fixture_warehouse):
    return fixture_warehouse


def _df(db: Path, sql: str) -> pd.DataFrame:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.sql(sql).df()
    finally:
        con.close()


def test_fct_oof_predictions(built) -> None:
    db = built[1].db_path
    counts = _df(db, "select model_id, count(*) as n from marts.fct_oof_predictions group by 1")
    assert len(counts) == 9 and (counts["n"] == 215).all()
    origin = _df(db, "select distinct data_origin, source from marts.fct_oof_predictions")
    assert origin.to_dict("records") == [
        {"data_origin": "tastebench_public", "source": "tastebench_public"}
    ]


def test_metric_marts_have_nine_models_times_eight_metrics(built) -> None:
    db = built[1].db_path
    m = _df(db, "select * from marts.agg_model_metrics")
    models = m[~m["is_trivial_policy"] & m["is_default_ci"]]
    assert len(models) == 72
    assert models.groupby("model_id")["metric"].nunique().eq(8).all()
    # the published files carry both conventions: 7 interval metrics twice, pooled once
    public = m[~m["is_trivial_policy"] & (m["source"] == "tastebench_public")]
    assert public.groupby("model_id").size().eq(7 + 7 + 1).all()
    pub = public[public["ci_method"] == "published_bca"]
    assert pub.groupby("model_id")["metric"].nunique().eq(7).all()
    assert not pub["is_default_ci"].any()
    assert set(m.loc[m["is_trivial_policy"], "model_id"]) == {
        "policy:random",
        "policy:slot1_wins",
        "policy:lower_code_wins",
    }
    assert (m["scope"] == "all").all()
    for table in ("agg_model_metrics", "agg_model_metrics_per_category", "agg_model_comparisons"):
        origins = _df(db, f"select distinct data_origin from marts.{table}")["data_origin"]
        assert origins.tolist() == ["tastebench_public"], table
    per_cat = _df(db, "select * from marts.agg_model_metrics_per_category")
    assert len(per_cat) == 9 * 24 * 2 and per_cat["is_default_ci"].sum() == 9 * 24
    comps = _df(db, "select * from marts.agg_model_comparisons")
    assert len(comps) == 36 and (comps["ci_method"] == "ustat_t").all()


def test_agg_model_metrics_reproduces_published_table2(built) -> None:
    db = built[1].db_path
    joined = _df(
        db,
        "select m.model_id, m.metric, m.point, p.* from marts.agg_model_metrics m "
        "join seeds.published_table2 p on m.model_id = p.model_file_stem "
        "where not m.is_trivial_policy and m.ci_method = 'published_bca'",
    )
    checked = 0
    for r in joined.to_dict("records"):
        if r["metric"] in TABLE2:
            assert abs(r["point"] - r[r["metric"]]) <= TOL3, (r["model_id"], r["metric"])
            checked += 1
    assert checked == 9 * 6
    nnls = _df(
        db,
        "select ci_lo, ci_hi from marts.agg_model_metrics "
        "where model_id = 'nested_bt_gemini_nnls' and metric = 'pairwise_accuracy' "
        "and ci_method = 'published_bca'",
    ).iloc[0]
    assert abs(nnls["ci_lo"] - 0.654) <= 0.005 and abs(nnls["ci_hi"] - 0.740) <= 0.005


def test_singular_test_ran_and_passed_in_dbt_build(built) -> None:
    settings, _ = built
    results = json.loads((settings.build_dir / "dbt" / "target" / "run_results.json").read_text())
    status = {r["unique_id"].split(".")[-1]: r["status"] for r in results["results"]}
    assert status[SINGULAR] == "pass"
    for model in (
        "fct_oof_predictions",
        "agg_model_metrics",
        "agg_model_metrics_per_category",
        "agg_model_comparisons",
    ):
        assert status[model] == "success"


def test_singular_test_fails_when_a_value_drifts(built, tmp_path) -> None:
    copy = copy_name(built[1].db_path, tmp_path)  # named as a build names it: dbt reuses its parse
    shutil.copy(built[1].db_path, copy)
    con = duckdb.connect(str(copy))
    con.execute(
        "update marts.agg_model_metrics set point = point + 0.001 "
        "where model_id = 'ridge_SNCTI_bench' and metric = 'kendall_tau' "
        "and ci_method = 'published_bca'"
    )
    con.close()
    with pytest.raises(BuildError, match=SINGULAR):
        run_dbt(["test", "--select", SINGULAR], built[0], copy, tmp_path)


def test_marts_agree_with_evaluate(built, public_dir) -> None:
    """The mart and `tastebench evaluate` are the same engine: same points and intervals, under
    each convention (`--ci default` = the is_default_ci rows, `--ci published_bca` = those)."""
    db = built[1].db_path
    conventions = (("default", "is_default_ci"), ("published_bca", "ci_method = 'published_bca'"))
    for ci, where in conventions:
        res = evaluate_files(
            [public_dir / "food_similarity/results/oof_predictions/nested_bt_gemini_nnls.csv"],
            settings=load_settings(),
            n_boot=10000,
            ci=ci,
        )
        mart = _df(
            db,
            "select metric, point, ci_lo, ci_hi, ci_method from marts.agg_model_metrics "
            f"where model_id = 'nested_bt_gemini_nnls' and {where}",
        ).set_index("metric")
        for metric, iv in res["models"][0]["metrics"].items():
            if iv["ci_lo"] is None:
                continue
            assert mart.loc[metric, "ci_method"] == iv["ci_method"]
            assert mart.loc[metric, "point"] == pytest.approx(iv["point"], abs=1e-12)
            assert mart.loc[metric, "ci_lo"] == pytest.approx(iv["ci_lo"], abs=1e-12)
            assert mart.loc[metric, "ci_hi"] == pytest.approx(iv["ci_hi"], abs=1e-12)


def test_cli_evaluate_against_the_warehouse_gold(built, tmp_path) -> None:
    db = built[1].db_path
    preds = pd.DataFrame(
        {
            "category": ["Bacon", "Bacon", "Bacon", "Butter", "Butter"],
            "product_code": [1, 2, 3, 1, 2],
            "predicted_score": [0.9, 0.4, 0.1, 0.3, 0.6],
        }
    )
    path = tmp_path / "fixture_preds.csv"
    preds.to_csv(path, index=False)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app, ["evaluate", str(path), "--db", str(db), "--bootstrap", "200", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    check_result_shape(data)
    assert data["gold"] == "warehouse" and data["data_origin"] == "test_fixture"
    model = data["models"][0]
    assert model["n_products"] == 5 and model["n_pairs"] == 4 and model["coverage"] == 1.0
    assert model["slices"]["clear_vs_ambiguous"] is not None


def test_report_is_self_contained_with_three_figures(built, tmp_path) -> None:
    out = write_report(built[1].db_path, tmp_path / "reports" / "results.html")
    page = out.read_text()
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", page)
    assert "id='main-table'" in page
    assert 'id="heatmap"' in page and 'id="ci-plot"' in page
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', page)) == 2
    assert "public out-of-fold" in page and "is not a real" in page
    assert "published 0.683" in page and "trivial policy: slot1_wins" in page
    assert "pub miss" not in page  # every published value reproduced
    # the default interval in the cell, the published convention marked for comparison
    assert "published BCa [0.653, 0.740]" in page and "for comparison only" in page

    result = CliRunner().invoke(
        app, ["report", "--db", str(built[1].db_path), "--out", str(tmp_path / "cli.html")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cli.html").stat().st_size > 10000


def _run_elsewhere(built, command: str, page: str, root: Path) -> dict:
    """`command --db <a copy in another folder>` run from a third folder: its output, the size
    of the page it wrote beside the copy, and what it left in the working folder."""
    home = root / "elsewhere_wh"
    home.mkdir()
    db = home / "copy.duckdb"
    shutil.copyfile(built[0].db_path, db)
    cwd = root / "cwd"
    cwd.mkdir()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, [command, "--db", str(db)])
    finally:
        os.chdir(here)
    assert result.exit_code == 0, (result.output, result.exception)
    written = home / "reports" / page
    return {
        "db": db, "output": result.output, "written": written,
        "size": written.stat().st_size, "cwd_left": sorted(p.name for p in cwd.iterdir()),
    }  # fmt: skip


def test_report_writes_beside_the_warehouse_it_reads(built, tmp_path) -> None:
    """Run from another folder, `report` writes reports/ beside the file it reads (not ./build/
    of the working directory) and prints that path; `--out` wins."""
    run = _run_elsewhere(built, "report", "results.html", tmp_path)
    assert run["size"] > 10000 and str(run["written"]) in "".join(run["output"].split())
    assert run["cwd_left"] == []
    chosen = tmp_path / "chosen" / "results.html"
    result = CliRunner().invoke(app, ["report", "--db", str(run["db"]), "--out", str(chosen)])
    assert result.exit_code == 0 and chosen.is_file() and str(chosen) in result.output


def test_docs_write_beside_the_warehouse_they_read(fixture_dbt_docs) -> None:
    """`docs`, run by its users' command from another folder (the session's fixture_dbt_docs
    run: a minute of dbt, kept between runs), writes reports/dbt_docs.html beside the file it
    read, prints that path and leaves the working folder empty."""
    page, output, run = fixture_dbt_docs
    assert page == run["db"].parent / "reports" / "dbt_docs.html"
    assert page.stat().st_size > 10000 and str(page) in "".join(output.split())
    assert run["cwd_left"] == []


def test_docs_out_writes_where_it_is_told(built, tmp_path, monkeypatch) -> None:
    """`docs --out` wins over the default place, and documents a copy (named as a build names
    its file), never the published file (dbt here writes a stand-in page: dbt's own run is
    fixture_dbt_docs, above)."""
    import warehouse.pipeline.dbt as dbt_module

    db = built[0].db_path
    before = db.read_bytes()

    def fake_dbt(args, settings, db_path, work_dir=None):
        assert args[:2] == ["docs", "generate"] and db_path != db
        assert db_path == copy_name(db, db_path.parent) and db_path.read_bytes() == before
        target = Path(work_dir) / "dbt" / "target"
        target.mkdir(parents=True)
        (target / "static_index.html").write_text("<html>the dbt page</html>")

    monkeypatch.setattr(dbt_module, "run_dbt", fake_dbt)
    chosen = tmp_path / "chosen" / "dbt_docs.html"
    result = CliRunner().invoke(app, ["docs", "--db", str(db), "--out", str(chosen)])
    assert result.exit_code == 0, (result.output, result.exception)
    assert chosen.read_text() == "<html>the dbt page</html>"
    assert str(chosen) in "".join(result.output.split())
    assert db.read_bytes() == before and not (db.parent / "reports" / "dbt_docs.html").exists()


def test_commands_work_in_a_fresh_shell_after_a_build(built, public_dir, tmp_path) -> None:
    """After a build, `tastebench evaluate` and `tastebench sql` run with no variable exported
    but the build folder (the default one needs none): the data mirror comes from the build's
    record (<db>.last_build.json beside it), not from the environment."""
    settings, _ = built
    record = json.loads(build_record_path(settings.db_path).read_text())
    assert record["settings"]["mirror"] == str(settings.mirror)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TASTEBENCH_") and k not in ("VIRTUAL_ENV",)
    }
    env["TASTEBENCH_BUILD_DIR"] = str(settings.build_dir)
    exe = Path(sys.executable).with_name("tastebench")
    oof = public_dir / "food_similarity/results/oof_predictions/nested_bt_gemini_nnls.csv"
    proc = subprocess.run(
        [str(exe), "evaluate", str(oof), "--bootstrap", "200", "--json", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "nested_bt_gemini_nnls" in proc.stdout and "…" not in proc.stdout  # never cut
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["models"][0]["metrics"]["pairwise_accuracy"]["point"] == pytest.approx(
        0.683, abs=0.0005
    )
    sql = subprocess.run(
        [str(exe), "sql", "select count(*) as n from marts.dim_categories", "--format", "csv"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert sql.returncode == 0 and sql.stdout.splitlines()[1].isdigit(), sql.stderr
