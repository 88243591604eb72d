"""Incremental rebuilds against a full build of the default bundle, measured in the same run.

Usage::

    python benchmarks/incremental.py [--fits DIR] [--check-equal]

Baseline: a full build (``full_refresh=True``) of the default simulated bundle into a fresh build
folder. Then, on that folder:

1. a **no-change** rebuild (same inputs): must be at least 5x faster than the full build;
2. a **synthetic 2027 batch** (``warehouse.simulate.batch.add_year_batch``: new ratings of every
   category by new respondents, one new product per category) added to a copy of the bundle: an
   incremental rebuild that reloads the NECTAR tables and rebuilds only the models downstream of
   the NECTAR sources; the list is printed and checked against the dbt graph;
3. with ``--check-equal``: a full build of the 2027 bundle in another folder, and every relation
   of the two warehouses compared (``warehouse.quality.snapshot``).

``--fits``: the fit store to use (default: a fresh one under the work folder, so the full build
trains the fingerprint models; pass ``build/fits`` to reuse a warm one, which makes the full
baseline shorter and the ratio harder to meet).

Data: ``$TASTEBENCH_DATA_MIRROR`` (default ``../shared/data``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from warehouse.config import apply_quiet_env, load_settings  # noqa: E402
from warehouse.pipeline.run import build, default_nectar_bundle  # noqa: E402
from warehouse.pipeline.state import state_dir  # noqa: E402
from warehouse.simulate.batch import add_year_batch  # noqa: E402

TARGET_RATIO = 5.0


def mirror_dir() -> Path:
    env = os.environ.get("TASTEBENCH_DATA_MIRROR")
    return Path(env).resolve() if env else (REPO.parent / "shared" / "data").resolve()


SUMMARY: list[str] = []  # printed again at the end, after dbt's own output


def say(line: str) -> None:
    SUMMARY.append(line)
    print(line, flush=True)


def timed(label: str, fn):
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    say(f"{label:<34}: {seconds:8.2f} s  ({result.mode}; " + "; ".join(result.reasons) + ")")
    return result, seconds


def nectar_downstream(db_path: Path) -> set[str]:
    manifest = json.loads((state_dir(db_path) / "manifest.json").read_text())
    todo = [k for k in manifest["sources"] if k.startswith("source.tastebench.nectar.")]
    seen: set[str] = set()
    while todo:
        for child in manifest["child_map"].get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return {n.split(".")[-1] for n in seen if n.startswith("model.")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=Path, default=None)
    parser.add_argument("--check-equal", action="store_true")
    args = parser.parse_args()
    apply_quiet_env()
    work = Path(tempfile.mkdtemp(prefix="tb-incremental-"))
    quiet = lambda m: None  # noqa: E731
    try:
        settings = load_settings(
            build_dir=work / "build",
            db_path=work / "build" / "tastebench.duckdb",
            mirror=mirror_dir(),
            fits_dir=args.fits or work / "fits",
        )
        bundle = default_nectar_bundle(settings, quiet)
        _, full_s = timed(
            "full build [baseline]",
            lambda: build(settings, nectar=bundle, log=quiet, full_refresh=True),
        )
        nochange, nochange_s = timed(
            "no-change rebuild", lambda: build(settings, nectar=bundle, log=quiet)
        )
        assert nochange.mode == "current", nochange.reasons
        batch = work / "nectar_2027"
        shutil.copytree(bundle, batch)
        added = add_year_batch(batch, 2027)
        say(f"2027 batch: {added['ratings']} ratings, {added['products']} products added")
        inc, inc_s = timed(
            "incremental rebuild (2027 batch)", lambda: build(settings, nectar=batch, log=quiet)
        )
        say(f"reloaded raw tables: {', '.join(inc.reloaded_tables)}")
        say(f"rebuilt {len(inc.rebuilt_models)} models: {', '.join(inc.rebuilt_models)}")
        expected = nectar_downstream(settings.db_path)
        say(
            "rebuilt == models downstream of the NECTAR sources: "
            f"{set(inc.rebuilt_models) == expected} ({len(expected)} in the dbt graph)"
        )
        ratio = full_s / nochange_s
        say(
            f"ratio full / no-change      : {ratio:6.1f}x  (target >= {TARGET_RATIO:g}x: "
            f"{'PASS' if ratio >= TARGET_RATIO else 'FAIL'})"
        )
        say(f"ratio full / 2027 increment : {full_s / inc_s:6.1f}x")
        if args.check_equal:
            from warehouse.quality.snapshot import compare_hashes, relation_hashes

            other = load_settings(
                build_dir=work / "full2027",
                db_path=work / "full2027" / "tastebench.duckdb",
                mirror=settings.mirror,
                fits_dir=settings.fits_dir,
            )
            timed(
                "full build of the 2027 bundle",
                lambda: build(other, nectar=batch, log=quiet, full_refresh=True),
            )
            diff = compare_hashes(relation_hashes(other.db_path), relation_hashes(settings.db_path))
            say(f"incremental == full (every relation, every column): {diff.equal}")
            if not diff.equal:
                print(json.dumps({"changed": diff.changed, "only_full": diff.only_before,
                                  "only_incremental": diff.only_after}, default=list))  # fmt: skip
        print("\n== summary\n" + "\n".join(SUMMARY))
        if ratio < TARGET_RATIO:
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from _results import run_and_record

    run_and_record("incremental", main)
