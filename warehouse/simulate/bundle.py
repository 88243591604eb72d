"""``simulate_bundle``: write a complete simulated NECTAR bundle in the official raw layout.

Layout (docs/benchmark.md section 1; Croissant ``croissant/nectar.json``)::

    <out_dir>/nectar_consolidated_sensory_rating.csv
    <out_dir>/nectar_consolidated_ingredients_nutrition.csv
    <out_dir>/nectar_product_labels.csv
    <out_dir>/product_labels_manually_cleaned.csv
    <out_dir>/images/<year>/<category folder>/<product_code>/front.jpg
    <out_dir>/SIMULATION.md               every row is simulated: what, how, parameters
    <out_dir>/simulation_manifest.json    seed, scale, version, parameters, sha256 of each file

The bundle is built in a temporary sibling folder and moved into place at the end, so a failed
run never leaves a half-written bundle; an existing ``out_dir`` is replaced only when it is empty
or a previous simulation (it holds ``simulation_manifest.json``).
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from warehouse.errors import WarehouseError
from warehouse.files import atomic_dir, sha256_file
from warehouse.simulate import schema
from warehouse.simulate.attributes import attribute_columns
from warehouse.simulate.calibration import summarize_frame
from warehouse.simulate.design import Category, build_categories, load_public, stream
from warehouse.simulate.products import Product, build_products, feature_signal
from warehouse.simulate.ratings import (
    DEFAULT_PARAMS,
    NoiseParams,
    SimilarityResult,
    simulate_similarity,
)
from warehouse.simulate.readme import render_readme
from warehouse.simulate.report import SimulationReport

SIMULATION_VERSION = "1.0.0"
MANIFEST_FILE = "simulation_manifest.json"
README_FILE = "SIMULATION.md"
IMAGE_VIEW = "front.jpg"
PLANT_SIGNALS = (None, "nutrition", "text")


class SimulationError(WarehouseError):
    """The simulator could not produce a bundle that meets its guarantees."""


# ------------------------------------------------------------------------------ rating rows


@dataclass
class RatingRows:
    category: np.ndarray  # object
    year: np.ndarray
    respondent: np.ndarray
    code: np.ndarray
    product_index: np.ndarray
    similarity: np.ndarray
    is_reference: np.ndarray


def _rating_rows(
    cats: list[Category],
    sim: SimilarityResult,
    index: dict[tuple[str, int], int],
    products: list[Product],
) -> RatingRows:
    years = {c.name: c.year for c in cats}
    parts = []
    for g in sim.groups:
        n_r, n_k = g.similarity.shape
        codes = np.tile(np.asarray(g.codes, dtype=np.int64), n_r)
        parts.append(
            (
                np.full(n_r * n_k, g.category, dtype=object),
                np.full(n_r * n_k, years[g.category], dtype=np.int64),
                np.repeat(g.respondents, n_k),
                codes,
                np.tile(
                    np.array([index[(g.category, int(c))] for c in g.codes], dtype=np.int64), n_r
                ),
                g.similarity.ravel(),
            )
        )
    cat, year, resp, code, pidx, simv = (np.concatenate(x) for x in zip(*parts, strict=True))
    cat_rank = {name: i for i, name in enumerate(sorted(set(cat.tolist())))}
    order = np.lexsort((code, resp, np.array([cat_rank[c] for c in cat])))
    is_ref = np.array([p.is_reference for p in products], dtype=bool)
    return RatingRows(
        cat[order],
        year[order],
        resp[order],
        code[order],
        pidx[order],
        simv[order],
        is_ref[pidx[order]],
    )


def realized_means(rows: RatingRows, n_products: int) -> np.ndarray:
    """Mean similarity per product index (float sums of integers: exact)."""
    sums = np.bincount(
        rows.product_index, weights=rows.similarity.astype(float), minlength=n_products
    )
    counts = np.bincount(rows.product_index, minlength=n_products)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def check_gold_order(
    cats: list[Category],
    products: list[Product],
    means: np.ndarray,
    designed: dict[tuple[str, int], float] | None,
) -> None:
    """Realized panel means must reproduce the gold exactly: every untied analog pair in the gold
    direction (by more than 1e-10), every gold tie bit-identical. ``designed``: the designed
    order when ``plant_signal`` replaced the public gold (no ties then)."""
    index = {(p.category, p.code): i for i, p in enumerate(products)}
    for cat in cats:
        codes = list(cat.analog_codes)
        m = np.array([means[index[(cat.name, c)]] for c in codes])
        if designed is None:
            g = np.array([cat.gold_rank[c] for c in codes])
        else:
            g = np.array([designed[(cat.name, c)] for c in codes])
        i, j = np.triu_indices(len(codes), k=1)
        gd, md = g[i] - g[j], m[i] - m[j]
        tie = gd == 0
        bad_tie = tie & (m[i] != m[j])
        bad = ~tie & ((np.sign(gd) != np.sign(md)) | (np.abs(md) < 1e-10))
        if bad_tie.any() or bad.any():
            k = int(np.flatnonzero(bad_tie | bad)[0])
            raise SimulationError(
                f"{cat.name}: realized panel means break the gold order for products "
                f"{codes[i[k]]} and {codes[j[k]]} (means {m[i[k]]!r}, {m[j[k]]!r})"
            )


# ------------------------------------------------------------------------------ CSV writing


def _write_csv(path: Path, file_name: str, rows: list[list[object]]) -> None:
    """Rows -> CSV, each cell spelled by its Croissant type (column-wise for speed)."""
    types = [t for _, t in schema.SCHEMA[file_name]]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in types]
    if len(columns) != len(types):
        raise SimulationError(f"{file_name}: {len(columns)} columns, schema has {len(types)}")
    cells = []
    for values, t in zip(columns, types, strict=True):
        fmt = schema.format_value
        memo: dict[object, str] = {}
        out = []
        for v in values:
            key = (type(v), v) if v == v else "nan"  # NaN != NaN: one memo slot
            s = memo.get(key)
            if s is None:
                s = memo[key] = fmt(v, t)
            out.append(s)
        cells.append(out)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(schema.columns(file_name))
        writer.writerows(zip(*cells, strict=True))


def _float_or_none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def _ratings_table(rows: RatingRows, attrs: dict[str, np.ndarray]) -> list[list[object]]:
    n = rows.code.size
    cols: dict[str, list[object]] = {
        "join_key": [
            f"{y}_{c}_{p}" for y, c, p in zip(rows.year, rows.category, rows.code, strict=True)
        ],
        "product_category": rows.category.tolist(),
        "year": rows.year.tolist(),
        "respondent": rows.respondent.tolist(),
        "product_code": rows.code.tolist(),
        "similarity": rows.similarity.astype(float).tolist(),
    }
    for name in schema.columns(schema.RATINGS_FILE):
        if name in cols:
            continue
        values = attrs[name]
        if values.dtype.kind == "f":
            cols[name] = [_float_or_none(v) for v in values]
        else:
            cols[name] = values.tolist()
    names = schema.columns(schema.RATINGS_FILE)
    return [list(r) for r in zip(*(cols[c] for c in names), strict=True)] if n else []


def _products_table(products: list[Product]) -> list[list[object]]:
    out = []
    for p in products:
        out.append(
            [
                p.join_key,
                p.year,
                p.category,
                p.code,
                p.brand,
                p.upc,
                p.ingredient_list,
                p.manually_cleaned,
                p.serving_size_g,
                p.servings_per_container,
                *(p.nutrients[c] for c in schema.NUTRIENT_COLUMNS),
            ]
        )
    return out


def _labels_tables(products: list[Product]) -> tuple[list[list[object]], list[list[object]]]:
    auto, manual = [], []
    for p in products:
        auto.append(
            [
                p.category,
                p.code,
                p.product_type,
                p.has_meat,
                p.has_dairy,
                " | ".join(p.label_items),
                p.is_reference,
            ]
        )
        manual.append(
            [
                p.code,
                p.category,
                p.product_type,
                p.has_meat,
                p.has_dairy,
                " | ".join(p.manual_items),
                p.is_reference,
            ]
        )
    return auto, manual


# ------------------------------------------------------------------------------ the bundle


def check_target(out_dir: Path) -> None:
    """Refuse an output folder that is a file, or a non-empty folder that is not a bundle."""
    if out_dir.exists():
        if not out_dir.is_dir():
            raise SimulationError(
                f"{out_dir} exists and is not a folder. Fix: name a new or empty folder."
            )
        if any(out_dir.iterdir()) and not (out_dir / MANIFEST_FILE).exists():
            raise SimulationError(
                f"{out_dir} is not empty and holds no {MANIFEST_FILE}: refusing to overwrite "
                "something that is not a simulated bundle; pick an empty or new folder"
            )


@dataclass
class _Simulated:
    """Everything a bundle's files are written from."""

    cats: list[Category]
    products: list[Product]
    sim: SimilarityResult
    rows: RatingRows
    attrs: dict[str, np.ndarray]


def _check_arguments(plant_signal: str | None, scale: int) -> int:
    """The validated scale (an int); refuse an unknown ``plant_signal`` or a bad ``scale``."""
    if plant_signal not in PLANT_SIGNALS:
        raise SimulationError(f"plant_signal must be one of {PLANT_SIGNALS}, got {plant_signal!r}")
    if int(scale) != scale or scale < 1:
        raise SimulationError(f"scale must be a positive integer, got {scale!r}")
    return int(scale)


def _simulate(
    public_dir: Path, seed: int, scale: int, plant_signal: str | None, params: NoiseParams
) -> _Simulated:
    """Categories, products and ratings (gold order checked), and the other rating columns."""
    public = load_public(Path(public_dir))
    cats = build_categories(public, seed, scale)
    products = build_products(cats, public, seed)
    index = {(p.category, p.code): i for i, p in enumerate(products)}
    signal = feature_signal(products, plant_signal) if plant_signal else None
    sim = simulate_similarity(cats, public.rating_marginal, seed, params, signal)
    rows = _rating_rows(cats, sim, index, products)
    designed = None
    if signal is not None:
        designed = {k: v for k, v in sim.latent_mean.items() if k in signal}
    check_gold_order(cats, products, realized_means(rows, len(products)), designed)
    attrs = attribute_columns(
        rows.similarity,
        rows.product_index,
        [p.base for p in products],
        [p.subset for p in products],
        [p.brand for p in products],
        stream(seed, "attributes"),
    )
    return _Simulated(cats, products, sim, rows, attrs)


def _report(
    out_dir: Path,
    seed: int,
    scale: int,
    plant_signal: str | None,
    params: NoiseParams,
    s: _Simulated,
    calibrate: bool,
) -> SimulationReport:
    """The run's report (its ``files`` are filled once the files are written)."""
    rows, products, blocks = s.rows, s.products, [b for c in s.cats for b in c.blocks]
    calibration = None
    if calibrate:
        calibration = summarize_frame(
            rows.category,
            rows.respondent,
            rows.code,
            rows.similarity.astype(float),
            rows.is_reference,
        )
    return SimulationReport(
        out_dir=out_dir,
        seed=int(seed),
        scale=scale,
        plant_signal=plant_signal,
        version=SIMULATION_VERSION,
        n_categories=len(s.cats),
        n_products=len(products),
        n_analogs=sum(not p.is_reference for p in products),
        n_references=sum(p.is_reference for p in products),
        n_ratings=int(rows.code.size),
        n_respondents=int(np.unique(rows.respondent).size),
        n_published_blocks=sum(not b.is_filler for b in blocks),
        n_filler_groups=sum(b.is_filler for b in blocks),
        n_images=sum(p.image_source is not None for p in products),
        n_branded_ingredient_lists=sum(p.branded_text for p in products),
        parameters=params.as_dict(),
        calibration=calibration,
    )


def _write_data(tmp: Path, s: _Simulated) -> None:
    """The four CSV files and the photos."""
    _write_csv(tmp / schema.RATINGS_FILE, schema.RATINGS_FILE, _ratings_table(s.rows, s.attrs))
    _write_csv(tmp / schema.PRODUCTS_FILE, schema.PRODUCTS_FILE, _products_table(s.products))
    auto, manual = _labels_tables(s.products)
    _write_csv(tmp / schema.LABELS_FILE, schema.LABELS_FILE, auto)
    _write_csv(tmp / schema.LABELS_CLEAN_FILE, schema.LABELS_CLEAN_FILE, manual)
    folders = {c.name: c.image_folder for c in s.cats}
    for p in s.products:
        if p.image_source is None:
            continue
        dest = tmp / "images" / str(p.year) / folders[p.category] / str(p.code) / IMAGE_VIEW
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p.image_source, dest)


def _manifest(report: SimulationReport) -> str:
    """``simulation_manifest.json``: what generated the bundle, its counts and file hashes."""
    manifest = {
        "data_origin": "simulation",
        "generator": "warehouse.simulate",
        "version": report.version,
        "seed": report.seed,
        "scale": report.scale,
        "plant_signal": report.plant_signal,
        "parameters": report.parameters,
        "counts": {
            "categories": report.n_categories,
            "products": report.n_products,
            "analogs": report.n_analogs,
            "references": report.n_references,
            "ratings": report.n_ratings,
            "respondents": report.n_respondents,
            "published_blocks": report.n_published_blocks,
            "filler_groups": report.n_filler_groups,
            "images": report.n_images,
        },
        "files": report.files,
    }
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def simulate_bundle(
    out_dir: Path,
    public_dir: Path,
    seed: int = 42,
    scale: int = 1,
    plant_signal: str | None = None,
    *,
    params: NoiseParams = DEFAULT_PARAMS,
    calibrate: bool | None = None,
) -> SimulationReport:
    """Write a simulated NECTAR bundle (see module docstring and the generated SIMULATION.md).

    ``public_dir``: the TasteBench public artifacts folder (``../shared/data/tastebench_public``).
    ``scale``: categories (and with them products, blocks, respondents) are copied ``scale`` times;
    copies are named ``<Category>_s<k>``. ``plant_signal``: None (targets follow the public gold),
    ``'nutrition'`` (protein per 100 g) or ``'text'`` (ingredient-list length).
    ``calibrate``: compute the calibration figures into the report and SIMULATION.md (default:
    only at ``scale == 1``). Same arguments -> byte-identical files.
    """
    t0 = time.perf_counter()
    scale = _check_arguments(plant_signal, scale)
    out_dir = Path(out_dir).resolve()
    check_target(out_dir)  # fail before the work, not after it
    s = _simulate(public_dir, seed, scale, plant_signal, params)
    calibrate = scale == 1 if calibrate is None else calibrate
    report = _report(out_dir, seed, scale, plant_signal, params, s, calibrate)
    check_target(out_dir)
    with atomic_dir(out_dir, replace_nonempty=True) as tmp:
        _write_data(tmp, s)
        (tmp / README_FILE).write_text(render_readme(report, s.sim), encoding="utf-8")
        files = sorted(p for p in tmp.rglob("*") if p.is_file())
        report.files = {p.relative_to(tmp).as_posix(): sha256_file(p) for p in files}
        (tmp / MANIFEST_FILE).write_text(_manifest(report), encoding="utf-8")
    report.elapsed_s = time.perf_counter() - t0
    return report
