"""Data quality: GX suites as code (``expectations/``), de-identification guards and the quality
report (docs/quality.md). Heavy imports (Great Expectations, matplotlib) live in the submodules;
importing this package is cheap."""

from __future__ import annotations

from warehouse.errors import WarehouseError


class QualityError(WarehouseError):
    """A GX suite or a de-identification guard failed."""


__all__ = ["QualityError"]
