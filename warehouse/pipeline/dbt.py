"""dbt in a child process: the command line of the build, a run against a file, the failed nodes
of a run (each with its own error line), the manifest and dbt's documentation site."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from warehouse.config import ENV_DB, REPO_ROOT, Settings, apply_quiet_env
from warehouse.errors import ResourceError, WarehouseError, require_warehouse, resource_error
from warehouse.files import atomic_write, sha256_bytes


class BuildError(WarehouseError):
    """dbt failed; the previous warehouse was kept."""


# The dbt child dies with the build (Linux: PR_SET_PDEATHSIG), so a killed build leaves no dbt
# writing on: set in a tiny launcher that then execs dbt (preexec_fn is unsafe with threads).
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "parent = int(sys.argv[1])\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != parent:\n"
    "    sys.exit(137)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


# Variables a dbt child does not inherit: those that start line coverage in every Python child
# of a measured process (a test run's, coverage's subprocess patch). The child runs dbt's code,
# not ours: tracing it doubles its time, for the few lines of warehouse/ that its Python models
# run, which tests/integration/test_python_models.py runs in-process.
NOT_INHERITED = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")


def child_env(settings: Settings, db_path_value: str) -> dict[str, str | None]:
    """What a dbt child's environment changes: ``settings`` (:meth:`Settings.as_env`), the
    profile's file (``db_path_value``) and :data:`NOT_INHERITED` unset (``None``)."""
    return {
        **settings.as_env(),
        ENV_DB: db_path_value,
        **dict.fromkeys(NOT_INHERITED),
    }


def dbt_dir(settings: Settings, work_dir: Path | None = None) -> Path:
    """The folder of dbt's target and logs for a run in ``work_dir`` (default: the build folder)."""
    return (work_dir or settings.build_dir) / "dbt"


def dbt_command(args: list[str], settings: Settings, work_dir: Path | None = None) -> list[str]:
    """The dbt command line for ``args`` (project, profiles, target and log paths of the build)."""
    import sys

    target = dbt_dir(settings, work_dir)
    dbt_exe = Path(sys.executable).with_name("dbt")
    return [
        str(dbt_exe) if dbt_exe.exists() else "dbt",
        *args,
        "--project-dir",
        str(REPO_ROOT),
        "--profiles-dir",
        str(REPO_ROOT),
        "--target-path",
        str(target / "target"),
        "--log-path",
        str(target / "logs"),
    ]


def run_dbt(
    args: list[str], settings: Settings, db_path: Path, work_dir: Path | None = None
) -> None:
    """Run dbt in a child process against ``db_path``; raise BuildError naming failed nodes.

    The child gets ``settings`` as environment variables (:meth:`Settings.as_env`), so the Python
    models resolve the same build folder, fit store and data mirror as the caller; ``work_dir``
    (default: the build folder) holds dbt's target and logs.

    A child process, not dbtRunner: dbt-duckdb caches its DuckDB handle per process, and a cached
    handle on the file we later swap into place would write into the published warehouse.
    """
    if dbt_process(args, settings, db_path, work_dir).returncode != 0:
        raise dbt_failure(args[0], dbt_dir(settings, work_dir), db_path)


def dbt_process(
    args: list[str],
    settings: Settings,
    db_path: Path,
    work_dir: Path | None = None,
    capture: bool = False,
) -> subprocess.CompletedProcess:
    """The finished dbt child of :func:`run_dbt` (its output captured as text when ``capture``),
    whatever its exit status; it starts from the last parse of runs like it (:func:`_parse_seed`)
    and leaves its own parse there."""
    import sys

    apply_quiet_env()
    target = dbt_dir(settings, work_dir)
    cmd = dbt_command(args, settings, work_dir)
    if sys.platform.startswith("linux"):
        cmd = [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *cmd]
    # the profile names the file relative to dbt's working folder, the file's own: dbt re-parses
    # the whole project when the profile's values change, and so only the file's name is in them
    changes = child_env(settings, db_path.name)
    env = {k: v for k, v in {**os.environ, **changes}.items() if v is not None}
    parsed, seed = target / "target" / "partial_parse.msgpack", _parse_seed(settings, db_path, args)
    if not parsed.exists() and seed.exists():
        parsed.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(seed, parsed)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        cmd, env=env, cwd=db_path.parent, check=False, capture_output=capture, text=capture
    )
    data = parsed.read_bytes() if parsed.exists() else None
    if data is not None and (not seed.exists() or seed.read_bytes() != data):
        atomic_write(seed, data)
    return proc


def copy_name(db_path: Path, folder: Path) -> Path:
    """Where a dbt run on a copy of ``db_path`` (docs, a parse, a test on a changed copy) puts
    its file in ``folder``: under the build's own staging name. dbt keys its partial-parse file
    on the profile, whose one varying value is that name (dbt runs in the file's folder), so such
    a run reuses the last build's parse (:func:`_parse_seed`) instead of parsing the whole project
    (~10 s); dbt-duckdb derives the database name from it (``tastebench``), so the relations it
    writes in a manifest or the docs name the warehouse's database. ``dbt parse`` opens no
    connection: no file is created."""
    from warehouse.pipeline.publish import staging_path

    return Path(folder) / staging_path(Path(db_path)).name


def _parse_seed(settings: Settings, db_path: Path, args: list[str]) -> Path:
    """Where the fit store keeps dbt's partial-parse file of runs like this one, for build folders
    that have none yet: without it each new folder's first dbt command parses the whole project
    (seconds per command, and the tests make dozens). dbt checks a partial-parse file itself (its
    version, the command's vars, the profile's values, every project file's checksum) and
    re-parses what changed; the profile's one value that varies is the file's name (dbt runs in
    the file's folder), so the key is that name and the vars."""
    given = args[args.index("--vars") + 1] if "--vars" in args else ""
    key = sha256_bytes(f"{db_path.name}\0{given}".encode())[:20]
    return settings.fits_dir / "dbt_parse" / f"{key}.msgpack"


def dbt_failure(command: str, target: Path, db_path: Path) -> WarehouseError:
    """The error of a failed ``dbt <command>``: each failed node with its own error line from
    run_results.json; a :class:`~warehouse.errors.ResourceError` when a node ran out of disk or
    memory."""
    failed = [
        f"{name} ({status}): {message}" if message else f"{name} ({status})"
        for name, status, message in run_results(target, failed=True)
    ]
    detail = f": failed {'; '.join(failed)}" if failed else ""
    log = target / "logs" / "dbt.log"
    resource = resource_error(RuntimeError(detail), db_path) if failed else None
    if resource is not None:
        return ResourceError(f"{resource} dbt {command}{detail}. See {log}")
    return BuildError(f"dbt {command} failed{detail}. The previous warehouse was kept. See {log}")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _error_line(message: object) -> str:
    """The line of a dbt node's message that says what went wrong: its last non-blank line (a
    Python model's message ends with the exception), cut to 300 characters, without colour codes.
    A failed dbt unit test's message is a table of differences (dbt.log has it): its headline."""
    lines = [_ANSI.sub("", line).strip() for line in str(message or "").splitlines()]
    lines = [line for line in lines if line]
    if lines and lines[0].startswith("actual differs from expected"):
        return lines[0].rstrip(":")
    return lines[-1][:300] if lines else ""


def run_results(target: Path, failed: bool = False) -> list[tuple[str, str, str]]:
    """(node name, status, error line) of dbt's last run: failed nodes, or models and seeds that
    ran."""
    import json

    results = target / "target" / "run_results.json"
    if not results.exists():
        return []
    out = []
    for r in json.loads(results.read_text()).get("results", []):
        parts = r["unique_id"].split(".")
        name = parts[2] if parts[0] == "test" else parts[-1]
        if parts[0] == "unit_test":  # dbt's own name for it: <model>::<unit test>
            name = f"{parts[2]}::{parts[-1]}"
        is_failure = r.get("status") in {"error", "fail", "runtime error"}
        ran = parts[0] in {"model", "seed"} and r.get("status") == "success"
        if (failed and is_failure) or (not failed and ran):
            out.append((name, r["status"], _error_line(r.get("message")) if failed else ""))
    return out


def ensure_manifest(settings: Settings) -> Path:
    """The dbt manifest of the build folder's last dbt run (it declares which models are public,
    :mod:`warehouse.quality.governance`); ``dbt parse`` writes one when no build left it."""
    from warehouse.quality.governance import manifest_path

    path = manifest_path(settings.build_dir)
    if not path.exists():
        run_dbt(["parse"], settings, copy_name(settings.db_path, dbt_dir(settings)))
    return path


def write_dbt_docs(settings: Settings, out: Path | None = None) -> Path:
    """dbt's documentation site of the warehouse as one static page (``out``, default
    ``reports/dbt_docs.html`` beside the warehouse file); its path."""
    import shutil
    import tempfile

    from warehouse.config import reports_dir

    require_warehouse(settings.db_path)
    out = (out or reports_dir(settings.db_path) / "dbt_docs.html").resolve()
    with tempfile.TemporaryDirectory(prefix="tb-docs-") as tmp:
        # dbt opens its database for writing: document a copy, never the published file; named
        # as a build names its file (docs show tastebench.…; dbt reuses the build's parse)
        copy = copy_name(settings.db_path, Path(tmp))
        shutil.copyfile(settings.db_path, copy)
        run_dbt(["docs", "generate", "--static"], settings, copy, Path(tmp))
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(tmp) / "dbt" / "target" / "static_index.html", out)
    return out
