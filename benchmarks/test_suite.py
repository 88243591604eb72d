"""The whole test suite as `make test` runs it, against the same suite in one process.

Usage::

    python benchmarks/test_suite.py [--workers logical] [--skip-baseline]

The suite as `make test` runs it (``-n <workers>``, ``--dist loadfile`` from pyproject.toml):
first right after `make build` (what CI runs: the fixture builds fill what `make build` did not),
then the baseline, ``pytest -n 0`` (one process, what `make test` ran before pytest-xdist), then
the parallel run again, warm; the ratio compares the two warm runs.
Coverage is left out (no ``--cov``): it is the same work in both and not what is measured.
Prints the wall seconds of each, the ratio baseline / parallel, the ten slowest test files (sum
of their tests' durations) and writes ``benchmarks/results/test_suite.json``. Minutes: run it
on an idle machine (a busy one inflates every number; the load average is recorded).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from _results import run_and_record  # noqa: E402

DURATION = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(\S+?)::")


def _run(workers: str) -> tuple[float, dict[str, float], int]:
    """Wall seconds, seconds per test file and exit status of one suite run."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", workers, "--durations=0"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    per_file: dict[str, float] = defaultdict(float)
    for line in proc.stdout.splitlines():
        if m := DURATION.match(line):
            per_file[m.group(2)] += float(m.group(1))
    return wall, dict(per_file), proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="logical")
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()
    par = f"-n {args.workers}"
    runs = {f"{par}, first": _run(args.workers)}  # after `make build`: what CI runs
    if not args.skip_baseline:
        runs["one process (baseline)"] = _run("0")
    runs[f"{par}, second (warm)"] = _run(args.workers)
    for name, (wall, _, status) in runs.items():
        print(f"{name}: {wall / 60:.1f} min (exit {status})")
    if not args.skip_baseline:  # both warm: the baseline ran after the first parallel run
        ratio = runs["one process (baseline)"][0] / runs[f"{par}, second (warm)"][0]
        print(f"ratio one process / {par} (warm): {ratio:.2f}")
    first = runs[f"{par}, first"]
    for path, seconds in sorted(first[1].items(), key=lambda kv: -kv[1])[:10]:
        print(f"slowest file: {path} {seconds:.0f} s")
    return max(status for _, _, status in runs.values())


if __name__ == "__main__":
    sys.exit(run_and_record("test_suite", main))
