"""Incremental rebuilds: fingerprint what a build reads and record the published warehouse's
state; :mod:`warehouse.pipeline.plan` compares the two and plans what to rebuild and why
(docs/operations.md).

What is fingerprinted (sha256 throughout):

* **sources** (one per loader): the NECTAR bundle's files (path + content of each; one hash per raw
  table, from its own file and the bundle's origin markers), the registry pins (sha256 in
  ``datasets.toml``) of the public datasets a loader reads plus the mirror it resolves them from,
  the FoodAtlas v4 bundle's files; each with the loader code (``warehouse/sources``).
* **project**: every dbt file (models, Python models, macros, seeds, singular tests), per file.
* **domains**: each ``warehouse.<domain>`` package's code, with the packages it imports
  (transitively) and ``config.py``/``errors.py``: a Python model is rebuilt when the domain whose
  ``marts`` it imports changed.
* **quality**: the GX suites (``expectations/``) and ``warehouse/quality``: the gate re-runs.
* **dmpnn**: the D-MPNN registry (``Settings.dmpnn_dir``), read by :data:`DMPNN_MODELS`.
* **environment**: Python and library versions, ``dbt_project.yml``, ``profiles.yml``, the build
  code and the dbt vars the build passes: any change means a full rebuild.

The state of the published warehouse (``.<db name>.state/`` beside it: ``inputs.json`` and the dbt
``manifest.json`` of the run that produced it) is written only after a successful swap, with the
published file's size and modification time: if the file was replaced by anything else, the next
build is a full one.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path

from warehouse.config import PACKAGE_DIR, REPO_ROOT, Settings
from warehouse.files import atomic_text, atomic_write, sha256_file

STATE_VERSION = 1
# Libraries whose version can change a number or a relation: a change rebuilds everything.
ENV_PACKAGES = (
    "dbt-core", "dbt-duckdb", "duckdb", "polars", "pyarrow", "numpy", "pandas", "scipy",
    "scikit-learn", "lightgbm", "rdkit", "torch", "chemprop", "great-expectations",
)  # fmt: skip
# dbt project files whose change is not a node change (selection would miss it): full rebuild.
PROJECT_CONFIG_FILES = ("dbt_project.yml", "profiles.yml")
PROJECT_DIRS = ("models", "python_models", "macros", "seeds", "data-tests")
# Build code: how raw tables are written and dbt is called (the pipeline modules, the lock aside).
BUILD_CODE = tuple(
    f"warehouse/pipeline/{name}.py"
    for name in ("dbt", "gate", "plan", "publish", "record", "run", "state")
)
# Python models that read the D-MPNN registry (the fits trained by `tastebench train molecular`).
DMPNN_MODELS = ("dim_ml_fits", "fct_compound_embeddings")
# Registry keys per loader (warehouse/sources/load.py READERS); tastebench_nectar_croissant is the
# NECTAR schema, read by the NECTAR loader.
NECTAR_SCHEMA_KEY = "tastebench_nectar_croissant"
SOURCE_KEY_PREFIXES: dict[str, tuple[str, ...]] = {
    "nectar": (NECTAR_SCHEMA_KEY,),
    "fartdb": ("fartdb_",),
    "foodatlas": ("foodatlas_v1_", "foodatlas_kgv2_"),
    "foodatlas_v4": ("foodatlas_v4_",),
    "tastebench_public": ("tastebench_",),
}
NECTAR_MARKERS = ("simulation_manifest.json", "FIXTURE.md")


def _sha(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def files_hash(root: Path, paths: list[Path]) -> str:
    """One hash over ``<relative path>\\t<sha256>`` of ``paths`` (sorted)."""
    lines = sorted(f"{p.relative_to(root).as_posix()}\t{sha256_file(p)}" for p in paths)
    return _sha(*lines)


def _tree(root: Path, suffixes: tuple[str, ...] | None = None) -> list[Path]:
    if not root.exists():
        return []
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and (suffixes is None or p.suffix in suffixes)
    )


# --------------------------------------------------------------------------- sources


def nectar_table_hashes(bundle: Path, schema_pin: str, loader: str) -> dict[str, str]:
    """One hash per NECTAR raw table: its file (images: the images/ tree), the bundle's path and
    origin markers (they set ``data_origin``), the schema pin and the loader code."""
    from warehouse.sources.croissant import NECTAR_FILES

    bundle = Path(bundle).resolve()
    markers = [bundle / m for m in NECTAR_MARKERS if (bundle / m).is_file()]
    common = _sha(str(bundle), files_hash(bundle, markers), schema_pin, loader)
    out = {}
    for name in NECTAR_FILES:
        path = bundle / name
        content = sha256_file(path) if path.is_file() else "missing"
        out[Path(name).stem.replace(" ", "_")] = _sha(common, name, content)
    out["nectar_images"] = _sha(common, "images", files_hash(bundle, _tree(bundle / "images")))
    return out


def source_hashes(settings: Settings, bundle: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(hash per source, hash per NECTAR raw table). A source's hash changes whenever one of its
    raw tables could."""
    from warehouse.sources import registry

    loader = files_hash(REPO_ROOT, _tree(PACKAGE_DIR / "sources", (".py", ".toml")))
    pins = registry.load_registry()
    mirror = str(settings.mirror or "")
    out: dict[str, str] = {}
    for source, prefixes in SOURCE_KEY_PREFIXES.items():
        keys = sorted(k for k in pins if k.startswith(prefixes))
        out[source] = _sha(loader, mirror, *(f"{k}={pins[k].sha256}" for k in keys))
    nectar = nectar_table_hashes(bundle, pins[NECTAR_SCHEMA_KEY].sha256, loader)
    out["nectar"] = _sha(*(f"{k}={v}" for k, v in sorted(nectar.items())))
    v4 = settings.foodatlas_v4
    v4_hash = "absent" if v4 is None else _sha(str(v4), files_hash(v4, _tree(v4)))
    out["foodatlas_v4"] = _sha(out["foodatlas_v4"], v4_hash)
    return out, nectar


# --------------------------------------------------------------------------- code


def _warehouse_imports(path: Path) -> set[str]:
    """Top-level ``warehouse`` packages/modules a file imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found |= {n.split(".")[1] for n in names if n.startswith("warehouse.")}
    return found


def domain_hashes() -> dict[str, str]:
    """Code hash of every ``warehouse.<domain>`` package, with what it imports (transitively)."""
    packages = sorted(p.name for p in PACKAGE_DIR.iterdir() if (p / "__init__.py").exists())
    own: dict[str, str] = {}
    deps: dict[str, set[str]] = {}
    for name in packages:
        files = _tree(PACKAGE_DIR / name, (".py", ".toml"))
        own[name] = files_hash(REPO_ROOT, files)
        code = [f for f in files if f.suffix == ".py"]
        deps[name] = set().union(*(_warehouse_imports(f) for f in code)) & set(packages)
    base = files_hash(
        REPO_ROOT, [PACKAGE_DIR / name for name in ("config.py", "errors.py", "files.py")]
    )
    out = {}
    for name in packages:
        seen, todo = {name}, [name]
        while todo:
            for dep in deps[todo.pop()] - seen:
                seen.add(dep)
                todo.append(dep)
        out[name] = _sha(base, *(f"{d}={own[d]}" for d in sorted(seen)))
    return out


def python_model_domains() -> dict[str, str]:
    """dbt Python model name -> the domain whose ``marts`` it imports."""
    out = {}
    for path in _tree(REPO_ROOT / "python_models", (".py",)):
        domains = _warehouse_imports(path)
        if len(domains) == 1:
            out[path.stem] = domains.pop()
    return out


def project_hashes() -> dict[str, str]:
    """Per dbt project file (relative path -> sha256)."""
    paths = [p for d in PROJECT_DIRS for p in _tree(REPO_ROOT / d)]
    return {p.relative_to(REPO_ROOT).as_posix(): sha256_file(p) for p in paths}


def environment_hash(dbt_vars: dict) -> str:
    versions = []
    for name in ENV_PACKAGES:
        try:
            versions.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    config = files_hash(REPO_ROOT, [REPO_ROOT / f for f in (*PROJECT_CONFIG_FILES, *BUILD_CODE)])
    return _sha(sys.version, *versions, config, json.dumps(dbt_vars, sort_keys=True))


# --------------------------------------------------------------------------- fingerprints


@dataclass
class Fingerprints:
    sources: dict[str, str]
    nectar_tables: dict[str, str]
    project: dict[str, str]
    domains: dict[str, str]
    quality: str
    dmpnn: str
    environment: str
    dbt_vars: dict = field(default_factory=dict)


def fingerprint(settings: Settings, bundle: Path, dbt_vars: dict) -> Fingerprints:
    sources, nectar = source_hashes(settings, bundle)
    quality_files = _tree(REPO_ROOT / "expectations", (".py",)) + _tree(
        PACKAGE_DIR / "quality", (".py",)
    )
    dmpnn = settings.dmpnn_dir
    return Fingerprints(
        sources=sources,
        nectar_tables=nectar,
        project=project_hashes(),
        domains=domain_hashes(),
        quality=files_hash(REPO_ROOT, quality_files),
        dmpnn=files_hash(dmpnn, _tree(dmpnn)) if dmpnn.is_dir() else "absent",
        environment=environment_hash(dbt_vars),
        dbt_vars=dict(dbt_vars),
    )


# --------------------------------------------------------------------------- state


def state_dir(db_path: Path) -> Path:
    db_path = Path(db_path)
    return db_path.with_name(f".{db_path.name}.state")


def file_signature(db_path: Path) -> list[int]:
    """Size and modification time of the published file (a replaced file means a full build)."""
    st = Path(db_path).stat()
    return [st.st_size, st.st_mtime_ns]


@dataclass
class State:
    """What the published warehouse was built from."""

    version: int
    fingerprints: Fingerprints
    tables_by_source: dict[str, list[str]]
    raw_counts: dict[str, int]
    db_signature: list[int]

    @property
    def manifest_dir(self) -> Path:  # set by read_state
        return self._dir

    @classmethod
    def from_json(cls, values: dict, where: Path) -> State:
        state = cls(
            version=values["version"],
            fingerprints=Fingerprints(**values["fingerprints"]),
            tables_by_source=values["tables_by_source"],
            raw_counts=values["raw_counts"],
            db_signature=values["db_signature"],
        )
        state._dir = where
        return state


def read_state(db_path: Path) -> State | None:
    folder = state_dir(db_path)
    try:
        values = json.loads((folder / "inputs.json").read_text(encoding="utf-8"))
        if not (folder / "manifest.json").is_file():
            return None
        return State.from_json(values, folder)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_state(
    db_path: Path,
    fp: Fingerprints,
    tables_by_source: dict[str, list[str]],
    manifest: Path,
    raw_counts: dict[str, int],
) -> Path:
    """After a successful swap: the state of the file now published at ``db_path``."""
    folder = state_dir(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    if Path(manifest).resolve() != (folder / "manifest.json").resolve():
        atomic_write(folder / "manifest.json", partial(shutil.copyfile, manifest), mode=0o666)
    values = {
        "version": STATE_VERSION,
        "fingerprints": asdict(fp),
        "tables_by_source": {k: sorted(v) for k, v in sorted(tables_by_source.items())},
        "raw_counts": dict(sorted(raw_counts.items())),
        "db_signature": file_signature(db_path),
    }
    atomic_text(folder / "inputs.json", json.dumps(values, indent=1, sort_keys=True) + "\n")
    return folder
