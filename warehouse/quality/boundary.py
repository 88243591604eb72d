"""The GX boundary: the pandas copy of a polars frame that GX validates (GX's pandas datasource
demands pandas, and the GX SQL datasource does not work with DuckDB). Used by the runner for a
whole table and by :mod:`warehouse.quality.batched` for each batch of a large one."""

from __future__ import annotations

import pandas as pd
import polars as pl


def gx_batch(frame: pl.DataFrame, masked: set[str] | None = None) -> pd.DataFrame:
    """The pandas batch GX validates (the GX boundary), typed as DuckDB's ``.df()`` types it, so
    the checks see what they saw before: an integer or boolean column with nulls becomes a pandas
    masked column (``Int32``, ``boolean``...), never float or object; everything else is polars'
    ``to_pandas``. ``masked``: columns masked even without a null here (a batch of a table that
    has nulls in them elsewhere, :mod:`warehouse.quality.batched`)."""
    out = frame.to_pandas()
    for name, dtype in frame.schema.items():
        has_null = frame[name].null_count() or name in (masked or ())
        if has_null and (dtype.is_integer() or dtype == pl.Boolean):
            masked = "boolean" if dtype == pl.Boolean else str(dtype)  # Int32 -> pandas Int32
            out[name] = pd.array(frame[name].to_list(), dtype=masked)
    return out
