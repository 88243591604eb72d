"""Incremental rebuilds: what is fingerprinted, and what a change selects (and why)."""

from __future__ import annotations

import ast
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from warehouse.config import PACKAGE_DIR, REPO_ROOT, load_settings
from warehouse.pipeline import state
from warehouse.pipeline.plan import plan_build
from warehouse.pipeline.state import Fingerprints, State
from warehouse.sources import registry
from warehouse.sources.load import readers

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "nectar_mini"
RATINGS = "nectar_consolidated_sensory_rating"


def _fingerprints(**changes) -> Fingerprints:
    base = Fingerprints(
        sources={s: f"h-{s}" for s in state.SOURCE_KEY_PREFIXES},
        nectar_tables={RATINGS: "r1", "nectar_product_labels": "l1", "nectar_images": "i1"},
        project={"models/a.sql": "a1", "seeds/categories.csv": "c1"},
        domains={d: f"d-{d}" for d in ("human", "metrics", "molecular", "quality")},
        quality="q1",
        dmpnn="absent",
        environment="e1",
    )
    return dataclasses.replace(base, **changes)


@pytest.fixture
def published(tmp_path: Path) -> tuple[Path, State]:
    db = tmp_path / "tastebench.duckdb"
    db.write_bytes(b"published")
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "sources": {
                    f"source.tastebench.nectar.{RATINGS}": {
                        "name": RATINGS, "identifier": RATINGS, "schema": "raw",
                        "source_name": "nectar",
                    },
                    "source.tastebench.fartdb.fartdb_molecules": {
                        "name": "fartdb_molecules", "identifier": "fartdb_molecules",
                        "schema": "raw", "source_name": "fartdb",
                    },
                }
            }
        )
    )  # fmt: skip
    fp = _fingerprints()
    state.write_state(
        db,
        fp,
        {"nectar": [RATINGS, "nectar_images"], "fartdb": ["fartdb_molecules"]},
        manifest,
        {RATINGS: 10},
    )
    previous = state.read_state(db)
    assert previous is not None
    return db, previous


def test_nothing_changed_is_up_to_date(published) -> None:
    db, previous = published
    plan = plan_build(previous, _fingerprints(), db)
    assert plan.mode == "current" and not plan.run_gate and not plan.select


def test_a_changed_ratings_file_reloads_only_its_table(published) -> None:
    db, previous = published
    current = _fingerprints(
        sources={**_fingerprints().sources, "nectar": "h-new"},
        nectar_tables={**_fingerprints().nectar_tables, RATINGS: "r2"},
    )
    plan = plan_build(previous, current, db)
    assert plan.mode == "incremental"
    assert plan.reload_sources == ["nectar"]
    assert plan.rewrite_tables == [RATINGS]
    assert plan.select == [f"source:nectar.{RATINGS}+"]
    assert plan.run_gate
    assert any("source nectar changed" in r for r in plan.reasons)


def test_another_source_rewrites_its_recorded_tables(published) -> None:
    db, previous = published
    current = _fingerprints(sources={**_fingerprints().sources, "fartdb": "h-new"})
    plan = plan_build(previous, current, db)
    assert plan.rewrite_tables == ["fartdb_molecules"]
    assert plan.select == ["source:fartdb.fartdb_molecules+"]


def test_changed_domain_code_selects_the_models_importing_its_marts(published) -> None:
    db, previous = published
    current = _fingerprints(domains={**_fingerprints().domains, "human": "d-new"})
    plan = plan_build(previous, current, db)
    human_models = sorted(m for m, d in state.python_model_domains().items() if d == "human")
    assert human_models, "the human domain has Python models"
    assert plan.select == [f"{m}+" for m in human_models]
    assert plan.reload_sources == [] and plan.rewrite_tables == []


def test_changed_dbt_files_use_state_modified(published) -> None:
    db, previous = published
    current = _fingerprints(project={**_fingerprints().project, "models/a.sql": "a2"})
    plan = plan_build(previous, current, db)
    assert plan.select == ["state:modified+"]
    assert "models/a.sql" in plan.reasons[0]


def test_changed_quality_code_reruns_only_the_gate(published) -> None:
    db, previous = published
    plan = plan_build(previous, _fingerprints(quality="q2"), db)
    assert plan.mode == "incremental" and plan.run_gate and not plan.select


def test_a_new_dmpnn_fit_rebuilds_its_readers(published) -> None:
    db, previous = published
    plan = plan_build(previous, _fingerprints(dmpnn="fit-1"), db)
    assert plan.select == [f"{m}+" for m in state.DMPNN_MODELS]


@pytest.mark.parametrize(
    "why",
    ["environment", "full_refresh", "dbt_args", "no_state", "replaced_file", "no_db"],
)
def test_full_rebuilds_say_why(published, why: str) -> None:
    db, previous = published
    current = _fingerprints(environment="e2" if why == "environment" else "e1")
    if why == "replaced_file":
        db.write_bytes(b"something else entirely")
    if why == "no_db":
        db.unlink()
    plan = plan_build(
        None if why == "no_state" else previous,
        current,
        db,
        full_refresh=why == "full_refresh",
        explicit_dbt_args=why == "dbt_args",
    )
    assert plan.mode == "full" and len(plan.reasons) == 1
    assert plan.reload_sources == sorted(current.sources)


def test_dmpnn_models_are_the_marts_that_read_the_registry() -> None:
    tree = ast.parse((PACKAGE_DIR / "molecular" / "marts.py").read_text())
    readers_of_registry = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and "dmpnn_dir" in ast.unparse(node)
        and node.name in state.python_model_domains()
    }
    assert readers_of_registry == set(state.DMPNN_MODELS)


def test_every_loader_and_registry_key_has_a_fingerprint(tmp_path: Path) -> None:
    settings = load_settings(build_dir=tmp_path)
    assert [name for name, _, _ in readers(settings, FIXTURE)] == list(state.SOURCE_KEY_PREFIXES)
    prefixes = tuple(p for ps in state.SOURCE_KEY_PREFIXES.values() for p in ps)
    unclaimed = [k for k in registry.load_registry() if not k.startswith(prefixes)]
    assert not unclaimed, f"registry keys no source fingerprint covers: {unclaimed}"


def test_nectar_table_hashes_follow_their_own_file(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(FIXTURE, bundle)
    before = state.nectar_table_hashes(bundle, "pin", "loader")
    with (bundle / f"{RATINGS}.csv").open("a") as fh:
        fh.write("\n")
    after = state.nectar_table_hashes(bundle, "pin", "loader")
    assert {t for t in before if before[t] != after[t]} == {RATINGS}
    assert state.nectar_table_hashes(bundle, "other pin", "loader")[RATINGS] != after[RATINGS]


def test_domain_hashes_follow_imports_transitively(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "repo"
    pkg = root / "warehouse"
    for name, imports in {"a": "b", "b": "c", "c": None, "d": None}.items():
        (pkg / name).mkdir(parents=True)
        (pkg / name / "__init__.py").write_text(
            f"from warehouse.{imports} import x\n" if imports else "x = 1\n"
        )
    for base in ("config.py", "errors.py", "files.py"):
        (pkg / base).write_text("")
    monkeypatch.setattr(state, "PACKAGE_DIR", pkg)
    monkeypatch.setattr(state, "REPO_ROOT", root)
    before = state.domain_hashes()
    (pkg / "c" / "__init__.py").write_text("x = 2\n")
    after = state.domain_hashes()
    assert {d for d in before if before[d] != after[d]} == {"a", "b", "c"}
    (pkg / "files.py").write_text("# the cache helpers every domain may use\n")
    assert all(state.domain_hashes()[d] != after[d] for d in after)


def test_dbt_vars_carry_the_scale_and_switch_the_food_stage_off() -> None:
    """The build's dbt vars (part of its fingerprint): none for a scale-1 bundle with the food
    stage on; a scaled bundle passes its scale, `--no-food-models` sets the var the ranking marts
    read (``food_models_max_analogs`` = 0) and says so."""
    from warehouse.pipeline.run import _dbt_vars

    logged: list[str] = []
    assert _dbt_vars(1, True, logged.append) == {} and logged == []
    off = _dbt_vars(3, False, logged.append)
    assert off == {"simulation_scale": 3, "food_models_max_analogs": 0}
    assert len(logged) == 1 and "--no-food-models" in logged[0]
    ranking = REPO_ROOT / "python_models" / "marts" / "ranking" / "_ranking__models.yml"
    assert "var('food_models_max_analogs')" in ranking.read_text()
