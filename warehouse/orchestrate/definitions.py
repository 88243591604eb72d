"""Dagster definitions for the warehouse (the optional ``orchestrate`` extra; docs/operations.md).

    dagster dev -m warehouse.orchestrate.definitions      # UI, schedule and sensor
    dagster job execute -m warehouse.orchestrate.definitions -j tastebench_build

* **Assets**: every raw table the build loads (keyed like dagster-dbt keys the dbt source that
  reads it) and every dbt model and seed (the specs dagster-dbt derives from the project's
  manifest with :data:`TRANSLATOR`), all produced by one multi-asset: its op runs
  :func:`warehouse.pipeline.run.build` — the lock, the incremental plan, the raw load, ``dbt build``
  through ``DbtCliResource`` into the separate file, the quality gate and the atomic swap — and
  yields a materialization for each raw table reloaded and each model dbt rebuilt, after the swap
  (what an incremental build did not need to rebuild gets none: its data did not change). No
  asset is external or a stub: every one is materialized by the build.
* **Asset checks**: the quality gate's GX suites (one per guarded model) and de-identification
  guards (one per public table, with the set-level rules that name it), read from the gate's
  results stored in the published file (``reports.rpt_data_quality``) and reported by the build op
  after the swap (the gate runs inside the build), for every checked table, rebuilt or not.
* **Schedule**: ``tastebench_daily`` at 03:00 UTC, an incremental build (nothing to do when
  nothing changed). It and the sensor start stopped (Dagster's default; docs/operations.md says
  how to start them).
* **Sensor**: ``nectar_bundle_sensor`` watches a folder (``TASTEBENCH_WATCH_DIR``) for NECTAR
  bundles; its cursor is the content hash of the newest complete bundle, so a new or changed
  bundle starts one build with that bundle and an unchanged one starts nothing.

Settings come from the environment as for the CLI (:func:`warehouse.config.load_settings`).
"""

import functools
import json
import os
from pathlib import Path

import dagster as dg
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliResource,
    build_dbt_asset_specs,
)

from warehouse.config import REPO_ROOT, Settings, environment, load_settings
from warehouse.pipeline.dbt import child_env, copy_name, dbt_dir, dbt_failure, run_dbt
from warehouse.pipeline.run import build

ENV_WATCH_DIR = "TASTEBENCH_WATCH_DIR"
JOB_NAME = "tastebench_build"
# dbt tests gate the build inside the op; in Dagster they are observations, and the quality
# gate's suites and guards are the asset checks.
TRANSLATOR = DagsterDbtTranslator(settings=DagsterDbtTranslatorSettings(enable_asset_checks=False))


def _manifest_databases(manifest: Path) -> set[str]:
    nodes = json.loads(manifest.read_text(encoding="utf-8"))["nodes"].values()
    return {n["database"] for n in nodes if n.get("database")}


def project_manifest(settings: Settings | None = None) -> Path:
    """The dbt manifest the asset graph is read from: ``<build_dir>/dagster/target/manifest.json``,
    written by ``dbt parse`` when missing, older than a project file or naming another database.

    The parse names its (never created) file as a build names its own
    (:func:`warehouse.pipeline.dbt.copy_name`): dbt reuses the last build's parse, and the
    relations Dagster shows are the warehouse's own (``tastebench.marts.dim_products``)."""
    from dbt.adapters.duckdb.credentials import DuckDBCredentials

    from warehouse.pipeline.state import PROJECT_CONFIG_FILES, PROJECT_DIRS

    settings = settings or load_settings()
    work = settings.build_dir / "dagster"
    manifest = work / "dbt" / "target" / "manifest.json"
    parse_db = copy_name(settings.db_path, work)
    database = DuckDBCredentials.path_derived_database_name(str(settings.db_path))
    sources = [REPO_ROOT / f for f in PROJECT_CONFIG_FILES] + [
        p for d in PROJECT_DIRS for p in (REPO_ROOT / d).rglob("*") if p.is_file()
    ]
    newest = max(p.stat().st_mtime for p in sources)
    if (
        not manifest.exists()
        or manifest.stat().st_mtime < newest
        or _manifest_databases(manifest) != {database}
    ):
        run_dbt(["parse"], settings, parse_db, work)
    return manifest


MANIFEST = project_manifest()


@functools.cache
def _manifest_blob(manifest: Path) -> dict:
    return json.loads(manifest.read_text(encoding="utf-8"))


def raw_source_keys(manifest: Path = MANIFEST) -> dict[str, dg.AssetKey]:
    """raw table -> the asset key dagster-dbt gives its dbt source (``[source, table]``)."""
    blob = _manifest_blob(manifest)
    return {
        (s.get("identifier") or s["name"]): TRANSLATOR.get_asset_spec(blob, uid, None).key
        for uid, s in blob["sources"].items()
        if s.get("schema") == "raw"
    }


def model_keys(manifest: Path = MANIFEST) -> dict[str, dg.AssetKey]:
    """dbt model or seed name -> the asset key dagster-dbt's translator gives it (the one the
    assets carry: ``['marts', 'dim_products']``)."""
    blob = _manifest_blob(manifest)
    return {
        n["name"]: TRANSLATOR.get_asset_spec(blob, uid, None).key
        for uid, n in blob["nodes"].items()
        if n["resource_type"] in ("model", "seed")
    }


def asset_specs(manifest: Path = MANIFEST) -> list[dg.AssetSpec]:
    """The raw tables and the dbt models and seeds (dagster-dbt's specs), each skippable: an
    incremental build materializes only what it reloaded or rebuilt."""
    raw = [
        dg.AssetSpec(key, group_name="raw", description=f"raw.{table}, loaded by the build")
        for table, key in sorted(raw_source_keys(manifest).items())
    ]
    blob = _manifest_blob(manifest)
    dbt = build_dbt_asset_specs(manifest=blob, dagster_dbt_translator=TRANSLATOR)
    return [s.replace_attributes(skippable=True) for s in [*raw, *dbt]]


class BuildConfig(dg.Config):
    """Run configuration of a build (all optional: the defaults are `tastebench build`'s)."""

    nectar: str = ""  # a NECTAR bundle folder; "" = TASTEBENCH_NECTAR_BUNDLE or the simulation
    full_refresh: bool = False
    wait_s: float = 0.0


# --------------------------------------------------------------------------- asset checks


def _public_models(manifest: Path) -> list[str]:
    from warehouse.quality import governance

    return sorted(governance.public_relations(governance.read_access(manifest)))


def check_key(relation: str, manifest: Path = MANIFEST) -> dg.AssetKey | None:
    """The asset a quality suite or guard validates (``schema.table`` -> a dbt model's key, a raw
    table -> its dbt source's key); None for relations that are not assets (release candidates)."""
    schema, _, table = relation.rpartition(".")
    if schema == "raw":
        return raw_source_keys(manifest).get(table)
    return model_keys(manifest).get(table)


def check_specs(manifest: Path = MANIFEST) -> list[dg.AssetCheckSpec]:
    """One check per GX suite (on the model or raw source it validates) and one
    de-identification check per public table."""
    from warehouse.quality.runner import suite_relations

    specs = []
    for relation in suite_relations():
        key = check_key(relation, manifest)
        if key is not None:
            specs.append(dg.AssetCheckSpec("gx_suite", asset=key))
    for relation in _public_models(manifest):
        key = check_key(relation, manifest)
        if key is not None:
            specs.append(dg.AssetCheckSpec("deidentification_guards", asset=key))
    return specs


def gate_results(db_path: Path) -> dict[tuple[str, str], dict]:
    """(check name, model) -> passed/failed counts from the published ``rpt_data_quality``."""
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:  # closed on leaving
        rows = con.execute(
            "select model, kind, status, column_name, cast(run_at as varchar) "
            "from reports.rpt_data_quality"
        ).fetchall()
    out: dict[tuple[str, str], dict] = {}
    for model, kind, status, column, run_at in rows:
        if kind == "suite":
            targets = [("gx_suite", str(model))]
        elif model == "(public set)":
            tables = {c.rsplit(".", 1)[0] for c in (column or "").split("; ") if "." in c}
            targets = [("deidentification_guards", t) for t in sorted(tables)]
        else:
            targets = [("deidentification_guards", str(model))]
        for key in targets:
            entry = out.setdefault(key, {"passed": 0, "failed": 0, "skipped": 0, "run_at": run_at})
            bucket = "failed" if status in ("failed", "error") else status
            entry[bucket] = entry.get(bucket, 0) + 1
    return out


def gate_check_results(check_keys, db_path: Path):
    """An ``AssetCheckResult`` per check key from the gate's results stored in the published
    file (its row counts by status); a table without a stored result fails its check."""
    by_key: dict[tuple[str, dg.AssetKey], dict] = {}
    for (name, relation), entry in gate_results(db_path).items():
        key = check_key(relation)
        if key is not None:
            by_key[(name, key)] = entry
    for check in sorted(check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name)):
        entry = by_key.get((check.name, check.asset_key))
        if entry is None:
            yield dg.AssetCheckResult(
                check_name=check.name,
                asset_key=check.asset_key,
                passed=False,
                metadata={"note": "the quality gate stored no result for this table"},
            )
            continue
        yield dg.AssetCheckResult(
            check_name=check.name,
            asset_key=check.asset_key,
            passed=entry["failed"] == 0,
            metadata={k: v for k, v in entry.items() if v is not None},
        )


# --------------------------------------------------------------------------- the build


@dg.multi_asset(
    specs=asset_specs(), check_specs=check_specs(), name="tastebench_dbt", can_subset=False
)
def tastebench_dbt_assets(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, config: BuildConfig
):
    """The build: raw load, dbt, quality gate and swap (one unit: it cannot be subset); then the
    gate's results as the asset checks (the gate ran inside the build, on what it published)."""
    settings = load_settings()
    events: list = []

    def dbt_runner(args: list[str], run_settings: Settings, db_path: Path) -> None:
        target = dbt_dir(run_settings) / "target"
        # the environment of the dbt child process that DbtCliResource starts
        with environment(child_env(run_settings, str(db_path))):
            invocation = dbt.cli(
                args,
                manifest=MANIFEST,
                dagster_dbt_translator=TRANSLATOR,
                raise_on_error=False,
                target_path=target,
            )
            for event in invocation.stream_raw_events():
                events.extend(
                    event.to_default_asset_events(
                        manifest=MANIFEST,
                        dagster_dbt_translator=TRANSLATOR,
                        context=context,
                        target_path=target,
                    )
                )
            if not invocation.is_successful():
                raise dbt_failure(args[0], target.parent, db_path)  # each node's error line

    result = build(
        settings,
        nectar=Path(config.nectar) if config.nectar else None,
        log=context.log.info,
        full_refresh=config.full_refresh,
        wait_s=config.wait_s,
        dbt_runner=dbt_runner,
    )
    # materializations only once the swap published them
    raw = raw_source_keys()
    for table in result.reloaded_tables:
        if table in raw:
            yield dg.MaterializeResult(asset_key=raw[table])
    yield from (e for e in events if isinstance(e, dg.Output))
    yield from gate_check_results(context.selected_asset_check_keys, result.db_path)
    context.log.info(
        f"{result.mode} build published {result.db_path}: rebuilt "
        f"{len(result.rebuilt_models)} model(s); " + "; ".join(result.reasons)
    )


# --------------------------------------------------------------------------- jobs, triggers


def dbt_resource() -> DbtCliResource:
    """dbt of this environment (the one beside the running Python, as the CLI's build uses)."""
    import sys

    exe = Path(sys.executable).with_name("dbt")
    return DbtCliResource(
        project_dir=str(REPO_ROOT),
        profiles_dir=str(REPO_ROOT),
        dbt_executable=str(exe) if exe.exists() else "dbt",
    )


build_job = dg.define_asset_job(
    JOB_NAME, selection=dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()
)

daily_schedule = dg.ScheduleDefinition(
    name="tastebench_daily", job=build_job, cron_schedule="0 3 * * *", execution_timezone="UTC"
)


def bundle_candidates(watch_dir: Path) -> list[Path]:
    """Complete NECTAR bundles under ``watch_dir`` (the folder itself or its subfolders): folders
    holding every official bundle file."""
    from warehouse.sources.croissant import NECTAR_FILES

    folders = [watch_dir, *sorted(p for p in watch_dir.iterdir() if p.is_dir())]
    return [f for f in folders if all((f / name).is_file() for name in NECTAR_FILES)]


def bundle_hash(bundle: Path) -> str:
    """Content hash of a bundle (every file, by relative path): the sensor's cursor."""
    from warehouse.pipeline.state import _tree, files_hash

    return files_hash(bundle, _tree(bundle))


@dg.sensor(job=build_job, minimum_interval_seconds=300, name="nectar_bundle_sensor")
def nectar_bundle_sensor(context: dg.SensorEvaluationContext):
    watch = os.environ.get(ENV_WATCH_DIR)
    if not watch or not Path(watch).is_dir():
        return dg.SkipReason(f"{ENV_WATCH_DIR} does not name a folder to watch")
    bundles = bundle_candidates(Path(watch))
    if not bundles:
        return dg.SkipReason(f"no complete NECTAR bundle in {watch}")
    newest = max(bundles, key=lambda b: max(p.stat().st_mtime for p in b.rglob("*")))
    digest = bundle_hash(newest)
    if digest == context.cursor:
        return dg.SkipReason(f"bundle {newest} unchanged (content hash {digest[:12]})")
    context.update_cursor(digest)
    return dg.RunRequest(
        run_key=digest,
        run_config=dg.RunConfig(ops={"tastebench_dbt": BuildConfig(nectar=str(newest))}),
        tags={"nectar_bundle": str(newest), "bundle_sha256": digest},
    )


defs = dg.Definitions(
    assets=[tastebench_dbt_assets],
    jobs=[build_job],
    schedules=[daily_schedule],
    sensors=[nectar_bundle_sensor],
    resources={"dbt": dbt_resource()},
)
