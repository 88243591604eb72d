"""A synthetic later-year batch appended to a NECTAR bundle: what a new yearly report adds.

``add_year_batch`` appends, for every category of the bundle, ``new_products`` new products (a copy
of the category's first analog's ingredient and label rows under a new product code) and a panel
of ``respondents`` new respondents who rate every product of the category in ``year`` (similarity
drawn uniformly from 1..7 with ``seed``; the other columns copied from a rating of that category).
Existing rows are kept byte for byte (the files are read and written as text). Used to exercise
incremental rebuilds (docs/operations.md): with ``benchmark_years`` unchanged, the new year's
ratings and products reach staging and the panel-means' other-year counts, not the benchmark.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from warehouse.simulate.schema import (
    LABELS_CLEAN_FILE,
    LABELS_FILE,
    PRODUCTS_FILE,
    RATINGS_FILE,
)


def _read(path: Path) -> tuple[list[str], list[dict[str, str]], str]:
    text = path.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return list(reader.fieldnames or []), list(reader), text


def _append(path: Path, text: str, columns: list[str], rows: list[dict[str, str]]) -> None:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writerows(rows)
    sep = "" if text.endswith("\n") else "\n"
    path.write_text(text + sep + out.getvalue(), encoding="utf-8", newline="")


def add_year_batch(
    bundle: Path, year: int = 2027, *, new_products: int = 1, respondents: int = 5, seed: int = 42
) -> dict[str, int]:
    """Append the batch to ``bundle`` (in place; pass a copy). Returns what was added."""
    bundle = Path(bundle)
    rng = np.random.default_rng(seed)
    r_cols, ratings, r_text = _read(bundle / RATINGS_FILE)
    p_cols, products, p_text = _read(bundle / PRODUCTS_FILE)
    l_cols, labels, l_text = _read(bundle / LABELS_FILE)
    m_cols, manual, m_text = _read(bundle / LABELS_CLEAN_FILE)
    next_respondent = max(int(r["respondent"]) for r in ratings) + 1
    new_ratings, new_products_rows, new_labels, new_manual = [], [], [], []
    for category in sorted({r["product_category"] for r in ratings}):
        cat_products = [p for p in products if p["Category"] == category]
        cat_labels = {lab["product_code"]: lab for lab in labels if lab["category"] == category}
        analogs = [c for c, lab in cat_labels.items() if lab["is_reference"] == "False"]
        template_code = min(analogs or cat_labels, key=int)
        template = next(p for p in cat_products if p["Product_Code"] == template_code)
        codes = sorted({int(p["Product_Code"]) for p in cat_products})
        added = [codes[-1] + i for i in range(1, new_products + 1)]
        for code in added:
            join_key = f"{year}_{category}_{code}"
            new_products_rows.append(
                {**template, "join_key": join_key, "Year": str(year), "Product_Code": str(code)}
            )
            new_labels.append({**cat_labels[template_code], "product_code": str(code)})
            manual_row = next(
                m
                for m in manual
                if m["category"] == category and m["product_code"] == template_code
            )
            new_manual.append({**manual_row, "product_code": str(code)})
        template_rating = next(r for r in ratings if r["product_category"] == category)
        for _ in range(respondents):
            for code in [*codes, *added]:
                new_ratings.append(
                    {
                        **template_rating,
                        "join_key": f"{year}_{category}_{code}",
                        "year": str(year),
                        "respondent": str(next_respondent),
                        "product_code": str(code),
                        "similarity": f"{float(rng.integers(1, 8))}",
                    }
                )
            next_respondent += 1
    _append(bundle / RATINGS_FILE, r_text, r_cols, new_ratings)
    _append(bundle / PRODUCTS_FILE, p_text, p_cols, new_products_rows)
    _append(bundle / LABELS_FILE, l_text, l_cols, new_labels)
    _append(bundle / LABELS_CLEAN_FILE, m_text, m_cols, new_manual)
    return {"ratings": len(new_ratings), "products": len(new_products_rows)}
