"""Peak resident memory of the quality gate, step by step (each GX suite, the guards).

Usage::

    python benchmarks/gate_memory.py --db build/tastebench.duckdb \
        --manifest build/dbt/target/manifest.json [--batch-rows 100000] [--out gate.json]

Runs ``run_quality`` (read-only, nothing written) on a built warehouse in this process and, at
every step the runner announces (loading GX, each suite, the de-identification guards), records
the peak resident memory of the step that just ended: Linux ``VmHWM`` from ``/proc/self/status``,
reset between steps through ``/proc/self/clear_refs`` (so each step's peak is its own, not the
running maximum). ``--batch-rows 0`` validates every table whole, as the gate did before
``warehouse.quality.batched``. Prints one line per step and the overall peak; ``--out`` keeps them
as JSON. Linux only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # 5: reset the peak RSS (VmHWM)
        return True
    except OSError:
        return False


def main() -> None:
    from warehouse.config import load_settings
    from warehouse.quality.batched import BATCH_ROWS
    from warehouse.quality.runner import run_quality

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--batch-rows", type=int, default=BATCH_ROWS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    steps: list[dict] = []
    resettable = _reset_peak()
    state = {"step": "start", "t": time.perf_counter()}

    def close_step(next_step: str) -> None:
        now = time.perf_counter()
        step = {
            "step": state["step"],
            "seconds": round(now - state["t"], 2),
            "peak_mb": round(_status_mb("VmHWM"), 1),
            "rss_after_mb": round(_status_mb("VmRSS"), 1),
        }
        steps.append(step)
        print(
            f"{step['step']:<55} {step['seconds']:>7.1f} s  peak {step['peak_mb']:>7.0f} MB  "
            f"after {step['rss_after_mb']:>7.0f} MB",
            flush=True,
        )
        _reset_peak()
        state.update(step=next_step, t=time.perf_counter())

    t0 = time.perf_counter()
    result = run_quality(
        args.db,
        manifest=args.manifest,
        write_table=False,
        settings=load_settings(),
        trigger="benchmark",
        batch_rows=args.batch_rows,
        log=close_step,
    )
    close_step("end")
    batched = {s.suite: s.batches for s in result.suites if s.batches}
    summary = {
        "db": str(args.db),
        "batch_rows": args.batch_rows,
        "success": result.success,
        "seconds": round(time.perf_counter() - t0, 1),
        "peak_mb": max(s["peak_mb"] for s in steps),
        "per_step_peaks": resettable,
        "batched_suites": batched,
        "steps": steps,
    }
    print(
        f"gate {'passed' if result.success else 'FAILED'} in {summary['seconds']} s; peak "
        f"{summary['peak_mb']:.0f} MB (batch rows {args.batch_rows}; batched: {batched or 'none'})"
    )
    if not result.success:
        print(result.failure_message())
    from _results import write_result

    write_result("gate_memory", summary)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
