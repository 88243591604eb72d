"""How the build's cost grows with the size of the NECTAR bundle: time and peak memory per stage at
simulation scales 1, 10 and 100 (about 28k, 0.28M and 2.8M ratings).

Usage::

    python benchmarks/scale.py [--scales 1 10 100] [--results benchmarks/results/scale.json]
                               [--stage-timeout 3600] [--doc benchmarks/results/scale.md]

Every stage runs in a child process of its own, so its peak resident memory is that process's
(``ru_maxrss`` from ``os.wait4``), and its wall time is measured around it:

1. ``simulate``: ``tastebench simulate --scale S`` (seed 42);
2. ``read_validate`` and ``load_raw``: every loader, then the ``raw`` schema of a fresh file
   (one child; the split is timed inside it, the peak is the child's);
3. dbt, one ``dbt build --select`` per layer, in dependency order: ``seeds_staging``,
   ``intermediate``, ``marts.benchmark``, ``marts.human_baseline``, ``marts.metrics``,
   ``marts.molecular`` and ``marts.other`` (any mart folder not named; the food models when they
   land);
4. ``quality_gate``: the GX suites and de-identification guards on the file (big tables in
   row batches, ``warehouse.quality.batched``); its three heaviest steps (a suite or the guards,
   each step's own peak resident memory) are recorded with it.

Each stage's address space is capped (``--max-memory-gb``, default 16 of the machine's 24 GB):
the machine is shared, and a stage that would need more fails with ``MemoryError`` (recorded
with its output) instead of pushing other work out of memory.

The baseline of every ratio is scale 1 measured in the same run; ``exponent`` is
``log(t_S / t_1) / log(S)`` (1 = linear in the bundle size). Results accumulate in ``--results``
(a JSON file keyed by scale, so scale 100 can run on its own, e.g. in the background), and the
table between the ``scale.py`` markers of ``--doc`` is regenerated from all results there.
The molecular stages do not read NECTAR: their fit store is shared across scales (first scale
trains, later scales reuse), as in any build folder that kept its fits.

Data: ``$TASTEBENCH_DATA_MIRROR`` (default ``../shared/data``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from warehouse.config import ENV_DB, apply_quiet_env, load_settings  # noqa: E402
from warehouse.pipeline.dbt import dbt_command  # noqa: E402

DBT_STAGES: list[tuple[str, list[str]]] = [
    ("seeds_staging", ["--select", "resource_type:seed", "staging"]),
    ("intermediate", ["--select", "intermediate"]),
    ("marts.benchmark", ["--select", "marts.benchmark"]),
    ("marts.human_baseline", ["--select", "marts.human_baseline"]),
    ("marts.molecular", ["--select", "marts.molecular"]),
    (  # the feature and ranking marts (the food models): before metrics, which reads them
        "marts.other",
        ["--select", "marts", "--exclude", "marts.benchmark", "marts.human_baseline",
         "marts.metrics", "marts.molecular"],
    ),
    ("marts.metrics", ["--select", "marts.metrics"]),
]  # fmt: skip
BEGIN, END = "<!-- scale.py:begin -->", "<!-- scale.py:end -->"

LOAD_CHILD = """
import json, sys, time
from pathlib import Path
import duckdb
from warehouse.config import load_settings
from warehouse.sources.load import read_all, write_raw
settings = load_settings()
t0 = time.perf_counter()
tables = read_all(settings, Path(sys.argv[1]))
t1 = time.perf_counter()
con = duckdb.connect(sys.argv[2])
counts = write_raw(con, tables)
con.close()
t2 = time.perf_counter()
print(json.dumps({"read_validate_s": t1 - t0, "load_raw_s": t2 - t1,
                  "ratings": counts["nectar_consolidated_sensory_rating"]}))
"""

GATE_CHILD = """
import json, sys, time
from pathlib import Path
from warehouse.config import load_settings
from warehouse.quality.runner import run_quality
def hwm():  # peak RSS (MB) since the last reset; reset between the gate's steps
    line = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
    return int(line.split()[1]) / 1024
def reset():
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
state = {"step": "start", "t": time.perf_counter()}
def step(name):
    print("GATE_STEP " + json.dumps({"step": state["step"], "peak_mb": round(hwm()),
          "seconds": round(time.perf_counter() - state["t"], 1)}), flush=True)
    reset()
    state.update(step=name, t=time.perf_counter())
reset()
settings = load_settings()
result = run_quality(Path(sys.argv[1]), manifest=Path(sys.argv[2]), write_table=True,
                     settings=settings, trigger="benchmark", log=step)
step("end")
print("ok" if result.success else result.failure_message())
"""

SIMULATE_CHILD = """
import sys
from pathlib import Path
from warehouse.config import load_settings
from warehouse.simulate import simulate_bundle
from warehouse.sources import registry
public = registry.resolve("tastebench_gold_pairs", load_settings()).parents[2]
r = simulate_bundle(Path(sys.argv[1]), public_dir=public, seed=42, scale=int(sys.argv[2]))
print(r.n_ratings)
"""


def run_child(
    cmd: list[str], env: dict, timeout: float, log_file: Path, max_memory_gb: float = 0
) -> dict:
    """Run ``cmd`` (output to ``log_file``); wall seconds, peak RSS (MB) of the child, exit
    status and the last output lines. ``max_memory_gb`` caps the child's address space (the
    machine is shared: a stage that needs more fails with MemoryError instead of starving
    others)."""
    import resource

    def cap() -> None:  # in the child, before exec (this script is single-threaded)
        if max_memory_gb > 0:
            limit = int(max_memory_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t0 = time.perf_counter()
    with log_file.open("w") as out:
        proc = subprocess.Popen(
            cmd, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, preexec_fn=cap
        )
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.2)
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = log_file.read_text(errors="replace").splitlines()[-15:]
    return {
        "seconds": time.perf_counter() - t0,
        "peak_mb": usage.ru_maxrss / 1024,
        "status": "timeout" if timed_out else ("ok" if proc.returncode == 0 else "failed"),
        "tail": tail,
        # other work on the machine (its 1-minute load average when the stage ended): a shared
        # 2-core machine under load stretches every time
        "load_avg": round(os.getloadavg()[0], 1),
    }


def measure_scale(
    scale: int,
    work: Path,
    fits: Path,
    timeout: float,
    log,
    previous: dict | None = None,
    save=lambda result: None,
    max_memory_gb: float = 0,
    resume: bool = False,
) -> dict:
    """Every stage at ``scale``; ``save(result)`` after each (a long run keeps what it measured).
    ``resume``: keep the stages ``previous`` measured ok and the file they built, run the rest."""
    apply_quiet_env()
    root = work / f"scale{scale}"
    root.mkdir(parents=True, exist_ok=True)
    bundle, db = root / "bundle", root / "tastebench.duckdb"
    settings = load_settings(build_dir=root, db_path=db, fits_dir=fits)
    env = {**os.environ, **settings.as_env(), ENV_DB: str(db), "PYTHONPATH": str(REPO)}
    stages: dict[str, dict] = {}
    result = {"scale": scale, "stages": stages}

    kept = {
        n: st
        for n, st in (previous or {}).get("stages", {}).items()
        if resume and st["status"] == "ok" and db.exists()
    }
    if kept and "ratings" in (previous or {}):
        result["ratings"] = previous["ratings"]

    def step(name: str, cmd: list[str]) -> bool:
        if name in kept:  # measured by the run this one resumes
            stages[name] = kept[name]
            log(f"scale {scale}: {name} kept from the resumed run")
            return True
        log(f"scale {scale}: {name}")
        stages[name] = run_child(cmd, env, timeout, root / f"{name}.log", max_memory_gb)
        s = stages[name]
        log(f"scale {scale}: {name} {s['status']} in {s['seconds']:.1f} s, {s['peak_mb']:.0f} MB")
        save(result)
        return s["status"] == "ok"

    simulate = [sys.executable, "-c", SIMULATE_CHILD, str(bundle), str(scale)]
    if (bundle / "simulation_manifest.json").exists():
        if previous and "simulate" in previous.get("stages", {}):
            stages["simulate"] = previous["stages"]["simulate"]  # the bundle of that run
    elif not step("simulate", simulate):
        return result
    if "read_validate+load_raw" not in kept:
        db.unlink(missing_ok=True)
    if not step("read_validate+load_raw", [sys.executable, "-c", LOAD_CHILD, str(bundle), str(db)]):
        return result
    if "read_validate+load_raw" not in kept:
        split = json.loads(stages["read_validate+load_raw"]["tail"][-1])
        result["ratings"] = split.pop("ratings")
        stages["read_validate+load_raw"].update(split)
    vars_args = ["--vars", json.dumps({"simulation_scale": scale})] if scale > 1 else []
    for name, select in DBT_STAGES:
        # tests run with the stage that builds their last parent (buildable), not with a seed
        indirect = ["--indirect-selection", "buildable"]
        cmd = dbt_command(["build", *select, *indirect, *vars_args], settings, root)
        if not step(name, cmd):
            return result
        if name in kept:
            continue
        run_results = root / "dbt" / "target" / "run_results.json"
        nodes = json.loads(run_results.read_text())["results"]
        top = sorted(nodes, key=lambda r: -r.get("execution_time", 0))[:3]
        stages[name]["top_nodes"] = {
            r["unique_id"].split(".")[-1]: round(r["execution_time"], 2) for r in top
        }
    manifest = root / "dbt" / "target" / "manifest.json"
    if step("quality_gate", [sys.executable, "-c", GATE_CHILD, str(db), str(manifest)]):
        # the gate's heaviest steps (its suites and guards; peak RSS of each step on its own)
        lines = (root / "quality_gate.log").read_text(errors="replace").splitlines()
        steps = [json.loads(x.split(" ", 1)[1]) for x in lines if x.startswith("GATE_STEP ")]
        gate_summary(stages["quality_gate"], steps, lines)
        save(result)
    result["db_mb"] = db.stat().st_size / 1e6
    return result


def gate_summary(stage: dict, steps: list[dict], lines: list[str]) -> None:
    """The gate stage's heaviest steps, its true peak and its verdict. Resetting the peak between
    steps (``clear_refs``) also resets the child's ``ru_maxrss``, so the stage's peak is the
    largest step peak; the verdict is the gate's own (the child exits 0 either way)."""
    top = sorted(steps, key=lambda x: -x["peak_mb"])[:3]
    stage["top_steps"] = {x["step"].removeprefix("validating "): x["peak_mb"] for x in top}
    stage["peak_mb"] = max([stage["peak_mb"], *(x["peak_mb"] for x in steps)])
    after = [x for x in lines if not x.startswith("GATE_STEP ")]
    tail = [x.strip() for x in after[-4:] if x.strip()]
    stage["verdict"] = "passed" if tail[-1:] == ["ok"] else "failed: " + " / ".join(tail)


def stage_rows(results: dict[str, dict]) -> list[str]:
    scales = sorted(int(s) for s in results)
    names: list[str] = []
    for s in scales:
        names += [n for n in results[str(s)]["stages"] if n not in names]
    base = results.get("1", {}).get("stages", {})
    header = ["stage"]
    for s in scales:
        header += [f"s={s} time (s)", f"s={s} peak MB"]
    header += [f"exponent s={s}" for s in scales if s > 1]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    total = dict.fromkeys(scales, 0.0)
    missing: set[int] = set()
    for name in names:
        cells = [name]
        for s in scales:
            st = results[str(s)]["stages"].get(name)
            if st is None:  # the run stopped before this stage
                cells += ["not run", "–"]
                missing.add(s)
                continue
            flag = "" if st["status"] == "ok" else f" ({st['status']})"
            cells += [f"{st['seconds']:.1f}{flag}", f"{st['peak_mb']:.0f}"]
            total[s] += st["seconds"]
        for s in scales:
            if s == 1:
                continue
            st, b = results[str(s)]["stages"].get(name), base.get(name)
            if st and b and st["status"] == "ok" and b["seconds"] > 0:
                cells.append(f"{math.log(st['seconds'] / b['seconds']) / math.log(s):.2f}")
            else:
                cells.append("–")
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["**total**"]
    for s in scales:
        cells += [f"**{total[s]:.1f}**" + (" (so far)" if s in missing else ""), ""]
    cells += ["" for s in scales if s > 1]
    lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_doc(results: dict[str, dict], doc: Path) -> None:
    info = []
    for s in sorted(int(k) for k in results):
        r = results[str(s)]
        size = (
            f"warehouse {r['db_mb']:.0f} MB"
            if "db_mb" in r
            else "warehouse size not measured (the run stopped before its last stage)"
        )
        info.append(
            f"- scale {s}: {r.get('ratings', '?')} ratings, {size}, {r.get('cpus', '?')} CPUs, "
            f"measured {r.get('measured_at', '?')}"
        )
        for name, st in r["stages"].items():
            parts = []
            if st.get("load_avg") is not None:
                parts.append(f"machine load average {st['load_avg']} at its end")
            if st.get("top_nodes"):
                tops = ", ".join(f"{k} {v:.1f} s" for k, v in st["top_nodes"].items())
                parts.append(f"slowest nodes {tops}")
            if st.get("top_steps"):
                tops = ", ".join(f"{k} {v:.0f} MB" for k, v in st["top_steps"].items())
                parts.append(f"heaviest steps (peak of each) {tops}")
            if st.get("verdict"):
                parts.append(f"gate verdict {st['verdict']}")
            if st["status"] != "ok":
                tail = re.sub(r"\x1b\[[0-9;]*m", "", " / ".join(st["tail"][-3:]))
                parts.append(f"{st['status']}: `{tail}`")
            if parts:
                info.append(f"  - {name}: " + "; ".join(parts))
    block = [BEGIN, "", *stage_rows(results), "", *info, "", END]
    text = doc.read_text(encoding="utf-8") if doc.exists() else f"# Scaling\n\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(head + "\n".join(block) + tail, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench" / "scale")
    parser.add_argument(
        "--results", type=Path, default=REPO / "benchmarks" / "results" / "scale.json"
    )
    parser.add_argument("--stage-timeout", type=float, default=3600)
    parser.add_argument("--doc", type=Path, default=REPO / "benchmarks" / "results" / "scale.md")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the stages a stopped run of the same scale measured ok (and its file)",
    )
    parser.add_argument(
        "--max-memory-gb", type=float, default=16, help="address-space cap per stage (0: none)"
    )
    args = parser.parse_args()
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    fits = args.work / "fits"
    for scale in args.scales:
        say = lambda m: print(m, flush=True)  # noqa: E731

        def save(r: dict, scale: int = scale) -> None:
            r["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            r["cpus"] = os.cpu_count()
            results[str(scale)] = r
            args.results.parent.mkdir(parents=True, exist_ok=True)
            args.results.write_text(json.dumps(results, indent=1) + "\n")
            write_doc(results, args.doc)

        r = measure_scale(
            scale,
            args.work,
            fits,
            args.stage_timeout,
            say,
            results.get(str(scale)),
            save,
            args.max_memory_gb,
            args.resume,
        )
        save(r)
    print("\n".join(stage_rows(results)))
    print(f"[baseline: scale 1 of the same run] results in {args.results}; table in {args.doc}")


if __name__ == "__main__":
    main()
