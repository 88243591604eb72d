"""Quality on the default build (issue #6 "Must show"): every suite and guard passes, the report
is self-contained, `tastebench quality` leaves the warehouse untouched, and a build whose data
violates a guard exits non-zero and keeps the previous warehouse byte-identical."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from functools import partial
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import warehouse.pipeline.run as build_module
from tests.conftest import built_once
from warehouse.cli import app, main
from warehouse.config import environment
from warehouse.quality import governance

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def built(default_warehouse):
    return default_warehouse


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _history(settings) -> list[dict]:
    path = settings.build_dir / "quality" / "history.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _declare_public(settings, build_dir: Path, model: str = "stg_nectar__products") -> Path:
    """A copy of the build's dbt manifest in which ``model`` is declared public, written where a
    build in ``build_dir`` reads its manifest: the tier comes from the manifest and nowhere
    else."""
    manifest = json.loads(governance.manifest_path(settings.build_dir).read_text())
    manifest["nodes"][f"model.tastebench.{model}"]["config"]["meta"]["data_access"] = "public"
    target = governance.manifest_path(build_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest))
    return target


def test_build_ran_the_gate_and_stored_rpt_data_quality(built) -> None:
    settings, result = built
    assert "quality_s" in result.timings
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        df = con.sql("select * from reports.rpt_data_quality").df()
    finally:
        con.close()
    expected = {
        "suite", "model", "kind", "expectation_type", "column_name", "rule", "success", "status",
        "observed_value", "unexpected_count", "example", "run_at", "data_origin",
    }  # fmt: skip
    assert expected <= set(df.columns)
    assert len(df) > 150 and df["success"].all() and set(df["data_origin"]) == {"simulation"}
    suites = set(df["suite"])
    for model in ("stg_nectar__ratings", "fct_within_category_pairs", "dim_products"):
        assert any(s.endswith(model) for s in suites), model
    guards = df[df["kind"] == "guard"]
    assert set(guards["rule"]) >= {"brand_in_text", "panel_mean_shape", "feature_target_join"}
    history = _history(settings)
    assert history[-1]["trigger"] == "build" and history[-1]["success"]
    assert (settings.build_dir / "reports" / "quality.html").exists()


def _cli_quality(settings, root: Path) -> dict:
    """`tastebench quality` on the default build, its history file the build's own."""
    before = _sha(settings.db_path)
    n_runs = len(_history(settings))
    out = root / "quality.html"
    res = CliRunner().invoke(
        app,
        ["quality", "--db", str(settings.db_path), "--out", str(out),
         "--history", str(settings.build_dir / "quality" / "history.jsonl")],
    )  # fmt: skip
    return {
        "code": res.exit_code, "output": res.output, "untouched": _sha(settings.db_path) == before,
        "html": out.read_text() if out.is_file() else "", "n_runs": n_runs,
        "history": _history(settings),
    }  # fmt: skip


def test_cli_quality_passes_read_only_and_writes_an_offline_report(built, tmp_path_factory) -> None:
    """Run once and kept between runs while nothing it depends on changed (``built_once``); so
    is the failing run below."""
    run = built_once(tmp_path_factory, "cli_quality", partial(_cli_quality, built[0]))
    assert run["code"] == 0, run["output"]
    assert run["untouched"]  # opened read-only, nothing written
    html = run["html"]
    assert "PASSED" in html and "data:image/png;base64," in html
    links = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", html)
    assert links and not [u for u in links if re.match(r"(?i)https?://|//", u)]
    assert "<script" not in html.lower() and "<link" not in html.lower()
    history = run["history"]
    assert len(history) == run["n_runs"] + 1 and history[-1]["trigger"] == "cli"
    assert history[-1]["seconds"] > 0  # how long is benchmarks/gate_memory.py's to say


def _cli_quality_gated(settings, root: Path) -> dict:
    """`tastebench quality` with a staging table declared public in the manifest."""
    _declare_public(settings, root / "build")
    out = root / "quality.html"
    with environment({"TASTEBENCH_BUILD_DIR": str(root / "build")}):
        res = CliRunner().invoke(
            app,
            ["quality", "--db", str(settings.db_path), "--out", str(out),
             "--history", str(root / "history.jsonl")],
        )  # fmt: skip
    return {
        "code": res.exit_code,
        "message": str(res.exception),
        "html": out.read_text() if out.is_file() else "",
    }


def test_cli_quality_fails_when_a_public_table_carries_gated_columns(
    built, tmp_path_factory
) -> None:
    """A staging table declared public in the manifest fails the guards."""
    run = built_once(tmp_path_factory, "cli_quality_gated", partial(_cli_quality_gated, built[0]))
    assert run["code"] != 0
    message = run["message"]
    assert "deidentification.staging.stg_nectar__products" in message
    assert "table staging.stg_nectar__products, column brand: rule forbidden_column_name" in message
    assert "rule brand_in_text" in message
    assert "FAILED" in run["html"]


def test_guard_violation_fails_the_build_and_keeps_the_last_good_warehouse(
    built, tmp_path, monkeypatch, capsys
) -> None:
    """The gate sits between dbt and the swap. dbt is replaced by a copy of the live warehouse
    (dbt itself ran in the module build) and a manifest that declares a table with a brand
    column public: the build must exit non-zero and leave the live file byte-identical."""
    settings, _ = built
    live = tmp_path / "wh" / "tastebench.duckdb"  # a copy of the live warehouse, served from wh/
    live.parent.mkdir()
    shutil.copyfile(settings.db_path, live)
    before = _sha(live)
    build_dir = tmp_path / "build"

    def fake_dbt(args, settings_, db_path, work_dir=None):
        shutil.copyfile(settings.db_path, db_path)
        _declare_public(settings, settings_.build_dir)

    monkeypatch.setattr(build_module, "run_dbt", fake_dbt)
    monkeypatch.setenv("TASTEBENCH_BUILD_DIR", str(build_dir))
    monkeypatch.setattr(
        sys,
        "argv",
        ["tastebench", "build", "--db", str(live), "--mirror", str(settings.mirror),
         "--nectar", str(settings.default_simulation_dir)],
    )  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code != 0
    err = capsys.readouterr().err
    assert "quality gate failed" in err and "stg_nectar__products" in err
    assert "forbidden_column_name" in err
    assert _sha(live) == before
    assert not list(live.parent.glob(".*building*"))
    # the failed build's report and history live beside the warehouse file, not in build_dir
    history = (live.parent / "quality" / "history.jsonl").read_text().splitlines()
    assert json.loads(history[-1])["success"] is False
    assert (live.parent / "reports" / "quality.html").is_file()
    assert not (build_dir / "quality").exists() and not (build_dir / "reports").exists()
