"""``tastebench evaluate``: prediction files -> checked frames -> the JSON contract of
docs/evaluate.md. Scoring itself is :mod:`warehouse.metrics.scoring`; this module reads files,
matches them to the gold (the public files' ``true_rank`` or the built warehouse's panel means) and
assembles the result.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.config import Settings
from warehouse.errors import DataValidationError, WarehouseError, require_warehouse
from warehouse.evaluate.result import (
    Coverage,
    EvaluationResult,
    ModelResult,
    ScoringOptions,
    per_category_records,
)
from warehouse.metrics.conventions import policies_by_convention, score_conventions
from warehouse.metrics.core import code_series
from warehouse.metrics.scoring import (
    ALPHA,
    CI_CHOICES,
    COMPARE_METHOD,
    compare_pair_tables,
    json_float,
    pair_table,
)
from warehouse.metrics.slices import calibration, clear_slice, delta_slice, welch_clear_pairs
from warehouse.metrics.validate import normalize_code, numeric_column, validate_predictions

GOLD_MODES = ("file", "warehouse")
GOLD_COLUMNS = ("true_rank", "true_score")
REQUIRED_COLUMNS = ("category", "product_code", "predicted_score")


@dataclass
class PredictionFile:
    """One prediction file, read and structurally checked (not yet matched to the gold)."""

    name: str
    path: Path
    frame: pl.DataFrame
    gold_column: str | None
    has_confidence: bool


def load_predictions(path: str | Path, max_rows: int | None = None) -> PredictionFile:
    """Read a prediction CSV (``category, product_code, predicted_score``; extra columns kept).

    Schema: every column is read as text (polars, ``infer_schema=False``); the score, gold and
    confidence columns are parsed as numbers when checked, so a bad cell is reported by line.
    ``max_rows``: read at most that many data rows (:func:`_read_csv`: memory follows
    ``max_rows``, not the file's size; :func:`evaluate_files` passes the number of known products
    + 1, which a valid file cannot exceed).

    The gold column is ``true_rank`` if present, else ``true_score``, else none. Raises
    :class:`DataValidationError` naming the file (and column) when it is no file, cannot be read,
    has no data row or lacks a required column. Values are checked later, against the known
    products (:func:`evaluate_files` via :func:`warehouse.metrics.validate_predictions`).
    """
    path = Path(path)
    if path.is_dir():
        raise DataValidationError(
            str(path), "a directory, not a file", f"give the path of a CSV file (e.g. {path}/x.csv)"
        )
    if not path.is_file():
        raise DataValidationError(str(path), "file not found", "give the path of a CSV file")
    try:
        frame = _read_csv(path, max_rows)
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as exc:
        raise DataValidationError(
            str(path),
            f"not a readable CSV ({' '.join(str(exc).split())})",
            "save the predictions as UTF-8 CSV",
        ) from exc
    if frame.height == 0:
        raise DataValidationError(
            str(path),
            "no data rows (a header only)",
            "add one row per product: category, product_code, predicted_score",
            row=2,
        )
    try:
        frame = frame.rename({c: str(c).strip() for c in frame.columns})
    except pl.exceptions.PolarsError as exc:
        raise DataValidationError(
            str(path),
            f"column names repeat once blanks are stripped ({' '.join(str(exc).split())})",
            "give every column a distinct name",
        ) from exc
    for col in REQUIRED_COLUMNS:
        if col not in frame.columns:
            raise DataValidationError(
                str(path),
                f"missing column '{col}' (has {list(frame.columns)})",
                "prediction files need the columns category, product_code, predicted_score",
                column=col,
            )
    gold_column = next((c for c in GOLD_COLUMNS if c in frame.columns), None)
    return PredictionFile(
        name=path.stem,
        path=path,
        frame=frame,
        gold_column=gold_column,
        has_confidence="confidence" in frame.columns,
    )


def _read_csv(path: Path, max_rows: int | None) -> pl.DataFrame:
    """The CSV as text columns; with ``max_rows``, its first ``max_rows`` data rows only, parsed
    from a prefix of the file (header + ``max_rows`` lines, read in 1 MiB chunks), so a long file
    is never read whole (a polars scan maps the whole file: its memory grew with the file's size).
    A prefix that cuts a quoted field spanning lines is doubled, four times at most; then the
    whole file is read (a file that odd is parsed right rather than fast)."""
    if max_rows is not None:
        lines = max_rows + 1
        for _ in range(5):
            prefix, complete = _prefix_lines(path, lines)
            try:
                frame = pl.read_csv(io.BytesIO(prefix), infer_schema=False)
            except pl.exceptions.PolarsError:
                if complete:
                    raise
                frame = None
            if complete or (frame is not None and frame.height >= max_rows):
                return frame.head(max_rows)
            lines *= 2
    frame = pl.read_csv(path, infer_schema=False)
    return frame if max_rows is None else frame.head(max_rows)


def _prefix_lines(path: Path, lines: int) -> tuple[bytes, bool]:
    """The file's first ``lines`` lines, and whether that is the whole file."""
    prefix = bytearray()
    with open(path, "rb") as fh:
        while prefix.count(b"\n") < lines:
            chunk = fh.read(1 << 20)
            if not chunk:
                return bytes(prefix), True
            prefix += chunk
    cut = -1
    for _ in range(lines):
        cut = prefix.index(b"\n", cut + 1)
    return bytes(prefix[: cut + 1]), False


def check_json_target(path: Path | None, option: str = "--json") -> None:
    """An output file's target (``--json``, ``--html``), checked (its folder made) before any
    scoring work: a file path in a folder that can be written, never a directory."""
    import os

    if path is None:
        return
    path = Path(path)
    example = path / ("evaluation.html" if option == "--html" else "evaluation.json")
    fix = f"Fix: give a file path, e.g. {option} {example}"
    if path.is_dir():
        raise WarehouseError(f"{option} {path} is a directory, not a file. {fix}.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(
            f"{option} {path}: cannot make its folder {path.parent} ({exc.strerror or exc}). "
            "Fix: give a path in a folder you can write to."
        ) from exc
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise WarehouseError(
            f"{option} {path}: not writable. Fix: give a path in a folder you can write to."
        )


@dataclass
class Reference:
    """What predictions are scored against.

    ``known``: ``category, product_code`` (normalized) and, for the warehouse, ``gold``;
    ``gold_pairs``: the gold pair file for the position audit; ``rating_stats``: per-product
    rating mean/var/n (warehouse only) for the Welch slice; ``public_gold``: ``(category,
    code) -> true_rank`` of the public files (file mode), to name the data origin.
    """

    mode: str
    known: pl.DataFrame
    data_origin: str
    gold_pairs: pl.DataFrame | None
    pair_file: str
    rating_stats: pl.DataFrame | None = None
    public_gold: dict = field(default_factory=dict)


def _public_reference(settings) -> Reference:
    from warehouse.sources.public import read_oof_predictions, read_tastebench_file

    oof = read_oof_predictions(settings)[0].frame
    first = oof.select("category", "product_code", "true_rank").unique(
        ["category", "product_code"], keep="first", maintain_order=True
    )
    codes = [normalize_code(c) for c in first["product_code"].to_list()]
    known = pl.DataFrame([first["category"].cast(pl.String), code_series("product_code", codes)])
    pairs_path, pairs = read_tastebench_file("tastebench_gold_pairs", settings)
    public_gold = {
        (str(c), p): float(g)
        for c, p, g in zip(
            first["category"].to_list(), codes, first["true_rank"].to_list(), strict=True
        )
    }
    return Reference(
        mode="file",
        known=known,
        data_origin="tastebench_public",
        gold_pairs=pairs,
        pair_file=str(pairs_path),
        public_gold=public_gold,
    )


def _warehouse_reference(db_path: Path) -> Reference:
    import duckdb

    from warehouse.sources.readonly import connect_read_only

    require_warehouse(db_path, or_else="score against the files' own gold with --gold file")
    con = connect_read_only(db_path)
    try:
        try:
            known = con.sql(
                "select category, product_code, panel_mean as gold, data_origin "
                "from marts.fct_panel_means where is_analog order by category, product_code"
            ).pl()
        except duckdb.CatalogException as exc:
            raise WarehouseError(
                f"{db_path} has no marts.fct_panel_means ({exc}). Fix: rebuild the warehouse."
            ) from exc
        rating_stats = con.sql(
            "select category, product_code, avg(similarity) as mean, "
            "var_samp(similarity) as var, count(similarity) as n "
            "from staging.stg_nectar__ratings "
            "where is_benchmark_category and is_benchmark_year and similarity is not null "
            "group by category, product_code"
        ).pl()
        pairs = con.sql(
            "select pair_id, category, product_code_1, product_code_2, "
            "winner_product_code as higher_rated_product from staging.stg_tastebench__gold_pairs"
        ).pl()
    finally:
        con.close()
    if known.is_empty():
        raise WarehouseError(f"{db_path}: marts.fct_panel_means has no analogs to score against.")
    known = known.with_columns(
        code_series("product_code", [normalize_code(c) for c in known["product_code"].to_list()])
    )
    origins = sorted(known["data_origin"].drop_nulls().unique().to_list())
    return Reference(
        mode="warehouse",
        known=known.select("category", "product_code", "gold"),
        data_origin=origins[0] if len(origins) == 1 else "|".join(origins),
        gold_pairs=pairs,
        pair_file=f"{db_path}: staging.stg_tastebench__gold_pairs",
        rating_stats=rating_stats,
    )


def resolve_gold_mode(gold: str | None, files: Sequence[PredictionFile]) -> str:
    """``gold`` as given, or the default: ``file`` when every file carries a gold column."""
    if gold is None:
        return "file" if all(f.gold_column for f in files) else "warehouse"
    if gold not in GOLD_MODES:
        raise WarehouseError(f"unknown gold {gold!r}. Fix: use --gold file or --gold warehouse.")
    if gold == "file":
        for f in files:
            if f.gold_column is None:
                raise DataValidationError(
                    str(f.path),
                    "--gold file but the file has no gold column",
                    "add true_rank (or true_score), or use --gold warehouse",
                    column="true_rank",
                )
    return gold


def load_reference(mode: str, db_path: Path | None, settings: Settings) -> Reference:
    """The known products and gold for ``mode`` (see :class:`Reference`)."""
    if mode == "file":
        return _public_reference(settings)
    return _warehouse_reference(Path(db_path) if db_path else settings.db_path)


def _scored_frame(f: PredictionFile, ref: Reference) -> tuple[pl.DataFrame, Coverage]:
    """Validate ``f`` against the reference; return the rows to score and the coverage record."""
    cov = validate_predictions(
        f.frame,
        ref.known,
        source=str(f.path),
        gold_column=f.gold_column if ref.mode == "file" else None,
    )
    cats = [str(c) for c in f.frame["category"].to_list()]
    codes = [normalize_code(c) for c in f.frame["product_code"].to_list()]
    if ref.mode == "file":
        gold = numeric_column(f.frame[f.gold_column])[0]
    else:
        by_key = dict(
            zip(
                zip(
                    ref.known["category"].to_list(),
                    ref.known["product_code"].to_list(),
                    strict=True,
                ),
                ref.known["gold"].to_list(),
                strict=True,
            )
        )
        gold = np.array([by_key[(c, p)] for c, p in zip(cats, codes, strict=True)], dtype=float)
    cols = [
        pl.Series("category", cats, dtype=pl.String),
        code_series("product_code", codes),
        pl.Series("pred", numeric_column(f.frame["predicted_score"])[0], dtype=pl.Float64),
        pl.Series("gold", gold, dtype=pl.Float64),
    ]
    if f.has_confidence:
        raw = f.frame["confidence"]
        conf = numeric_column(raw)[0]
        bad = np.flatnonzero(~np.isfinite(conf) | (conf < 0) | (conf > 1))
        if bad.size:
            raise DataValidationError(
                str(f.path),
                f"confidence {raw[int(bad[0])]!r} is not a number in [0, 1]",
                "give every row a confidence between 0 and 1 (or drop the column)",
                row=int(bad[0]) + 2,
                column="confidence",
            )
        cols.append(pl.Series("confidence", conf, dtype=pl.Float64))
    coverage = Coverage(
        n_expected=cov.n_expected,
        n_present=cov.n_present,
        coverage=json_float(cov.coverage),
        missing_products=[{"category": c, "product_code": p} for c, p in cov.missing],
    )
    return pl.DataFrame(cols), coverage


def evaluate_files(
    paths: Sequence[str | Path | PredictionFile],
    gold: str | None = None,
    n_boot: int = 10000,
    seed: int = 42,
    db_path: str | Path | None = None,
    *,
    settings: Settings,
    alpha: float = ALPHA,
    ci: str = "default",
) -> dict[str, object]:
    """Score prediction files; return the JSON contract of docs/evaluate.md.

    ``ci``: ``"default"`` (each metric's default interval method and ``ustat_t`` comparisons,
    docs/statistics.md) or ``"published_bca"`` (the published convention and the pair-bootstrap
    comparisons: the output of schema version 1, bit for bit, plus the method fields).

    ``gold``: ``"file"`` (each file's ``true_rank``/``true_score``; known products = the public
    out-of-fold product set), ``"warehouse"`` (``marts.fct_panel_means`` of the DuckDB file at
    ``db_path``, opened read-only) or None (``file`` when every file has a gold column).
    Products missing from a file are reported as coverage (never dropped silently); the file is
    scored on the products it covers.
    """
    if not paths:
        raise WarehouseError("no prediction files given. Fix: pass one or more CSV paths.")
    opts = _options(ci, n_boot, seed, alpha)
    files, ref = _load_files(paths, gold, db_path, settings)
    models, tables, frames = [], {}, {}
    notes: list[str] = []
    for f in files:
        model, frames[f.name], tables[f.name] = _score_file(f, ref, opts)
        models.append(model)
        cov = model.coverage
        if cov.coverage is not None and cov.coverage < 1:
            notes.append(
                f"{f.name}: covers {cov.n_present} of {cov.n_expected} products "
                f"(coverage {cov.coverage:.3f}); scored on the covered products only"
            )
    comparisons = compare_pair_tables(
        tables,
        n_boot=n_boot,
        seed=seed,
        alpha=alpha,
        sources={f.name: str(f.path) for f in files},
        method=opts.compare_method,
    )
    policies, data_origin = _policies(files, frames, ref, opts)
    if data_origin == "simulation":
        notes.append(
            "gold comes from SIMULATED NECTAR ratings (data_origin = simulation): these numbers "
            "are not real results"
        )
    return EvaluationResult(
        gold=ref.mode,
        data_origin=data_origin,
        settings=opts,
        models=tuple(models),
        comparisons=comparisons,
        trivial_policies=policies,
        notes=tuple(notes),
    ).to_json()


def _options(ci: str, n_boot: int, seed: int, alpha: float) -> ScoringOptions:
    """The checked interval convention (``ci``) with its comparison method and the bootstrap."""
    if ci not in CI_CHOICES:
        raise WarehouseError(f"--ci {ci!r} is not known. Fix: pass one of {', '.join(CI_CHOICES)}.")
    compare_method = "pair_bootstrap" if ci == "published_bca" else COMPARE_METHOD
    return ScoringOptions(ci, compare_method, n_boot=n_boot, seed=seed, alpha=alpha)


def _load_files(
    paths: Sequence[str | Path | PredictionFile],
    gold: str | None,
    db_path: str | Path | None,
    settings,
) -> tuple[list[PredictionFile], Reference]:
    """The files, structure first (header and first row, no scoring work), then at most one row
    more than there are known products (a longer file has an unknown or duplicate row among
    them); and the reference they are scored against."""
    given = [p for p in paths if isinstance(p, PredictionFile)]  # loaded by the caller
    files = [p if isinstance(p, PredictionFile) else load_predictions(p, max_rows=1) for p in paths]
    seen: dict[str, Path] = {}
    for f in files:
        if f.name in seen:
            raise WarehouseError(
                f"{seen[f.name]} and {f.path} share the name '{f.name}' (models are named by "
                "file stem). Fix: rename one of them."
            )
        seen[f.name] = f.path
    mode = resolve_gold_mode(gold, files)
    ref = load_reference(mode, Path(db_path) if db_path else None, settings)
    files = [
        f if any(f is g for g in given) else load_predictions(f.path, max_rows=ref.known.height + 1)
        for f in files
    ]
    return files, ref


def _score_file(
    f: PredictionFile, ref: Reference, opts: ScoringOptions
) -> tuple[ModelResult, pl.DataFrame, pl.DataFrame]:
    """One file scored: its model entry, its scored rows and its :func:`pair_table`."""
    df, coverage = _scored_frame(f, ref)
    (scored,) = score_conventions(
        df["category"],
        df["gold"],
        df["pred"],
        conventions=(opts.convention,),
        n_boot=opts.n_boot,
        seed=opts.seed,
        alpha=opts.alpha,
        per_category=True,
        all_metrics=False,
    )
    score = scored.overall
    pairs = pair_table(df["category"], df["product_code"], df["gold"], df["pred"])
    gold_column = "panel_mean" if ref.mode == "warehouse" else f.gold_column
    slices = _slices(pairs, gold_column, ref)
    calib = None
    if f.has_confidence:
        conf = {
            (c, p): v
            for c, p, v in zip(df["category"], df["product_code"], df["confidence"], strict=True)
        }
        calib = calibration(pairs, conf)
    model = ModelResult(
        name=f.name,
        source_file=str(f.path),
        gold_column=gold_column,
        n_products=score["n_products"],
        n_pairs=score["n_pairs"],
        coverage=coverage,
        metrics=score["metrics"],
        per_category=per_category_records(scored.per_category),
        slices=slices,
        calibration=calib,
    )
    return model, df, pairs


def _slices(pairs: pl.DataFrame, delta_of: str | None, ref: Reference) -> dict[str, object]:
    """``models[].slices``: accuracy by gold-difference quintile and, with the warehouse's
    ratings, on clear vs ambiguous pairs."""
    slices: dict[str, object] = {"delta_quintiles": delta_slice(pairs, delta_of)}
    if ref.rating_stats is not None:
        slices["clear_vs_ambiguous"] = clear_slice(
            pairs, welch_clear_pairs(ref.rating_stats, pairs)
        )
        slices["clear_vs_ambiguous_note"] = (
            "clear = Welch t-test on the two products' 2025/2026 similarity ratings, p < .05"
        )
    else:
        slices["clear_vs_ambiguous"] = None
        slices["clear_vs_ambiguous_note"] = (
            "needs the warehouse's ratings: run with --gold warehouse (a gold file carries "
            "only ranks/scores, no ratings)"
        )
    return slices


def _policies(
    files: Sequence[PredictionFile],
    frames: Mapping[str, pl.DataFrame],
    ref: Reference,
    opts: ScoringOptions,
) -> tuple[list[dict[str, object]], str]:
    """The trivial policies, scored on the warehouse's analogs or the first file's products and
    gold, and the data origin of the gold."""
    if ref.mode == "warehouse":
        pol = ref.known
        pol_cat, pol_code, pol_gold = pol["category"], pol["product_code"], pol["gold"]
        policy_scope = "all analogs of marts.fct_panel_means"
        data_origin = ref.data_origin
    else:
        first = frames[files[0].name]
        pol_cat, pol_code, pol_gold = first["category"], first["product_code"], first["gold"]
        policy_scope = f"the products and gold of {files[0].name}"
        data_origin = "tastebench_public" if _is_public_gold(frames, ref) else "prediction_file"
    ((_, policies),) = policies_by_convention(
        pol_cat,
        pol_code,
        pol_gold,
        ref.gold_pairs,
        conventions=(opts.convention,),
        n_boot=opts.n_boot,
        seed=opts.seed,
        pair_file=ref.pair_file,
    )
    for p in policies:
        if p["name"] != "slot1_wins":
            p["scope"] = policy_scope
    return policies, data_origin


def _is_public_gold(frames: Mapping[str, pl.DataFrame], ref: Reference) -> bool:
    if not ref.public_gold:
        return False
    for df in frames.values():
        for c, p, g in zip(df["category"], df["product_code"], df["gold"], strict=True):
            if ref.public_gold.get((c, p)) != g:
                return False
    return True
