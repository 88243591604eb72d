"""Where build time goes: read+validate, raw load, `dbt build`, and dbt start-up alone.

Baseline named in the ratio: `dbt debug`-free start-up (`dbt --version` would not parse the
project, so we time `dbt ls` on the same project, which parses but runs nothing). The ratio
`dbt build / dbt ls` shows how much of the build is real work versus dbt's fixed cost.

    python benchmarks/build_raw.py [--nectar PATH]   (default: the hand-written fixture bundle)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from warehouse.config import apply_quiet_env, load_settings  # noqa: E402
from warehouse.pipeline.run import build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nectar", type=Path, default=REPO / "tests" / "fixtures" / "nectar_mini")
    args = parser.parse_args()
    apply_quiet_env()
    work = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    try:
        settings = load_settings(build_dir=work, db_path=work / "bench.duckdb")
        t0 = time.perf_counter()
        result = build(settings, nectar=args.nectar, log=lambda m: None)
        total = time.perf_counter() - t0
        dbt = str(Path(sys.executable).with_name("dbt"))
        t1 = time.perf_counter()
        subprocess.run(
            [
                dbt,
                "ls",
                "--project-dir",
                str(REPO),
                "--profiles-dir",
                str(REPO),
                "--quiet",
                "--target-path",
                str(work / "dbt" / "target"),
                "--log-path",
                str(work / "dbt"),
            ],
            check=True,
            capture_output=True,
            env={**__import__("os").environ, "TASTEBENCH_DUCKDB_PATH": str(result.db_path)},
        )
        startup = time.perf_counter() - t1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t = result.timings
    print(f"bundle: {args.nectar} (data_origin={result.data_origin})")
    print(f"read + validate sources : {t['read_and_validate_s']:7.2f} s")
    print(f"load raw schema         : {t['load_raw_s']:7.2f} s")
    print(f"dbt build (all models)  : {t['dbt_build_s']:7.2f} s")
    print(f"total build             : {total:7.2f} s")
    print(f"dbt start-up alone (ls) : {startup:7.2f} s   [baseline]")
    print(f"ratio dbt build / dbt start-up: {t['dbt_build_s'] / startup:.2f}x")


if __name__ == "__main__":
    from _results import run_and_record

    run_and_record("build_raw", main)
