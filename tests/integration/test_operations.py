"""One writer at a time and incremental rebuilds, with real build processes on copies of the
session's fixture warehouse (docs/operations.md).

1. ``contended``: build A (a 2027 batch: new ratings and products) takes the lock and is paused;
   build B refuses naming A; build C waits; A resumes, publishes incrementally; C then finds
   nothing to do. Readers read the published file throughout.
2. ``killed``: build D (back to the original bundle) is SIGKILLed while dbt runs; the last good
   warehouse keeps answering; the next build (the scheduled Dagster job, in-process: the
   materialization test of test_orchestrate.py reads the same run) clears D's stale lock,
   rebuilds incrementally and publishes a warehouse equal, relation by relation, to a full build
   of the same inputs.
3. ``status``: after a build that fails on a bad bundle, `status` shows it, the last success,
   the gate and the sources' freshness.

The three run once, in this order, and are kept between runs while nothing they depend on
changed (the session fixture ``operations``, tests/integration/conftest.py: ``built_once``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.integration.ops_helpers import (
    copy_warehouse,
    hold_paused,
    processes_mentioning,
    read_rating_years,
    run_build_job,
    staging_file,
    start_build,
    wait_for,
)
from warehouse.config import Settings, build_record_path
from warehouse.pipeline.lock import read_holder
from warehouse.pipeline.run import build
from warehouse.pipeline.state import state_dir
from warehouse.quality.snapshot import compare_hashes, relation_hashes
from warehouse.simulate.batch import add_year_batch

pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"


@pytest.fixture(scope="module")
def contended(operations) -> dict:
    return operations["contended"]


@pytest.fixture(scope="module")
def killed(operations) -> dict:
    return operations["killed"]


def _operations(reference: Settings, root: Path) -> dict:
    bundle = root / "nectar2027"
    shutil.copytree(FIXTURE, bundle)
    added = add_year_batch(bundle, 2027)
    assert added["ratings"] > 0 and added["products"] == 2
    contended = _contended(reference, bundle, root)
    killed = _killed(contended["settings"], reference)
    return {"contended": contended, "killed": killed, "status": _status(killed["settings"], root)}


def _ended(proc: subprocess.Popen) -> SimpleNamespace:
    """What the tests read of a finished build process (a Popen does not outlive the run)."""
    return SimpleNamespace(pid=proc.pid, returncode=proc.returncode)


def _contended(reference: Settings, batch_bundle: Path, root: Path) -> dict:
    settings = copy_warehouse(reference, root / "build")
    before = read_rating_years(settings.db_path)
    a = start_build(settings, "--nectar", str(batch_bundle))
    hold_paused(settings, a)
    holder = read_holder(settings.db_path)
    refused = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "build", "--db", str(settings.db_path),
         "--nectar", str(batch_bundle)],
        env={**os.environ, **settings.as_env()},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    waiter_log = root / "waiter.err"
    c = start_build(settings, "--nectar", str(batch_bundle), "--wait", "900", stderr=waiter_log)
    wait_for(lambda: "waiting up to 900 s" in waiter_log.read_text(), "build C to wait")
    during = read_rating_years(settings.db_path)
    c_was_waiting = c.poll() is None
    a.send_signal(signal.SIGCONT)
    a_out, a_err = a.communicate(timeout=1800)
    c_out, _ = c.communicate(timeout=1800)
    return {
        "settings": settings, "a": _ended(a), "a_out": a_out, "a_err": a_err, "holder": holder,
        "refused": refused, "c": _ended(c), "c_out": c_out, "c_err": waiter_log.read_text(),
        "c_was_waiting": c_was_waiting, "before": before, "during": during,
        "after": read_rating_years(settings.db_path),
        "record": json.loads(build_record_path(settings.db_path).read_text()),
    }  # fmt: skip


def test_a_second_build_refuses_naming_the_running_one(contended) -> None:
    refused, holder = contended["refused"], contended["holder"]
    assert refused.returncode == 2
    assert f"another build is running: PID {contended['a'].pid}" in refused.stderr
    assert f"started {holder.started_at}" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_waiting_build_runs_after_the_first_published(contended) -> None:
    assert contended["c_was_waiting"], "build C finished while build A held the lock"
    assert f"PID {contended['a'].pid}" in contended["c_err"]
    assert contended["c"].returncode == 0, contended["c_err"]
    assert "warehouse up to date" in contended["c_out"]


def test_readers_read_the_last_good_file_throughout(contended) -> None:
    assert contended["during"] == contended["before"]
    assert 2027 not in dict(contended["before"])
    assert dict(contended["after"])[2027] > 0, "the first build published the 2027 batch"


def test_the_2027_batch_rebuilds_exactly_the_models_downstream_of_nectar(contended) -> None:
    a, out = contended["a"], contended["a_out"]
    assert a.returncode == 0, contended["a_err"]
    assert "warehouse built (incremental)" in out
    line = next(x for x in out.splitlines() if "rebuilt" in x and "model(s):" in x)
    rebuilt = set(line.split(":", 1)[1].replace(" ", "").split(","))
    manifest = json.loads((state_dir(contended["settings"].db_path) / "manifest.json").read_text())
    todo = [k for k in manifest["sources"] if k.startswith("source.tastebench.nectar.")]
    downstream: set[str] = set()
    while todo:
        for child in manifest["child_map"].get(todo.pop(), []):
            if child not in downstream:
                downstream.add(child)
                todo.append(child)
    expected = {n.split(".")[-1] for n in downstream if n.startswith("model.")}
    assert rebuilt == expected
    # the molecular task does not read NECTAR; the metrics marts do since the warehouse's own
    # fits (scored against the build's panel means) joined fct_oof_predictions
    assert "dim_ml_fits" not in rebuilt and "agg_model_metrics" in rebuilt
    record = contended["record"]  # the last build's record: C, which found nothing to do
    assert record["result"] == "success" and record["rebuilt"]["mode"] == "current"


def _killed(settings: Settings, reference: Settings) -> dict:
    target = str(settings.build_dir / "dbt" / "target")
    d = start_build(settings, "--nectar", str(FIXTURE))
    wait_for(lambda: bool(processes_mentioning(target)), "build D's dbt to run", timeout=600)
    assert staging_file(settings).exists()
    d.send_signal(signal.SIGKILL)
    d.wait(60)
    meanwhile = read_rating_years(settings.db_path)
    wait_for(lambda: not processes_mentioning(target), "build D's dbt to die with it", 60)
    # the next build: the scheduled Dagster job, in-process (test_orchestrate.py reads its run)
    job = run_build_job(settings, FIXTURE)
    mode = json.loads(build_record_path(settings.db_path).read_text())["rebuilt"]["mode"]
    return {"settings": settings, "d": _ended(d), "meanwhile": meanwhile, "messages": job["logs"],
            "mode": mode, "job": job, "reference": reference.db_path}  # fmt: skip


def test_after_a_sigkill_the_last_good_warehouse_answers(killed, contended) -> None:
    assert killed["meanwhile"] == contended["after"]


def test_the_next_build_clears_the_stale_lock_and_publishes(killed) -> None:
    pid = killed["d"].pid
    stale = [m for m in killed["messages"] if m.startswith("cleared a stale build lock")]
    assert stale and f"PID {pid}" in stale[0] and f"process {pid} is gone" in stale[0]
    assert any("unfinished file of an interrupted build" in m for m in killed["messages"])
    assert killed["job"]["success"] and killed["mode"] == "incremental"
    assert 2027 not in dict(read_rating_years(killed["settings"].db_path))


def test_an_incremental_rebuild_equals_a_full_build(killed) -> None:
    """Back to the original bundle incrementally (after a 2027 batch and a killed build): every
    relation and column equals the session's full build of that bundle."""
    diff = compare_hashes(relation_hashes(killed["reference"]), relation_hashes(
        killed["settings"].db_path
    ))  # fmt: skip
    assert diff.equal, (diff.only_before, diff.only_after, diff.changed)


def _status(settings: Settings, root: Path) -> dict:
    """`status` (with freshness) after a build that failed on a bad bundle: what it collected."""
    from warehouse.errors import DataValidationError
    from warehouse.orchestrate.status import collect

    bad = root / "bad"
    shutil.copytree(FIXTURE, bad)
    ratings = bad / "nectar_consolidated_sensory_rating.csv"
    lines = ratings.read_text().splitlines()
    lines[1] = lines[1].replace(",5.0,5.0,", ",5.0,9.0,", 1)  # similarity 9: out of range
    ratings.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataValidationError, match="similarity"):
        build(settings, nectar=bad, log=lambda m: None)
    return collect(settings, freshness=True)


def test_status_shows_a_failed_build_freshness_and_the_gate(operations) -> None:
    info = operations["status"]
    last = info["last_build"]
    assert last["result"] == "failed" and "similarity" in last["error"]
    assert last["last_success"]["rebuilt"]["mode"] == "incremental"
    assert info["running"] is None
    assert info["quality"]["success"] and info["quality"]["counts"]["passed"] > 0
    fresh = {r["source"]: r["status"] for r in info["freshness"]}
    assert fresh.get("reports.rpt_data_quality") == "pass", info["freshness"]
