"""The HTML pages people open, in real headless Chromium (issue #21 §7, STYLE.md convention 10):
the results report and the quality report of a fixture build each load offline with no console
error, every image decodes, nothing overflows a 1,400 px viewport, and a screenshot of each is
written under build/reports/screenshots/. (The in-context evaluate page has its own test in
tests/unit/test_evaluate_context_browser.py.) Skips, saying why, where no browser exists."""

from __future__ import annotations

import pytest

from tests.browser import assert_page_is_sound, open_page, skip_reason
from warehouse.config import REPO_ROOT
from warehouse.evaluate.results_report import write_report
from warehouse.quality.runner import report_paths

SHOTS = REPO_ROOT / "build" / "reports" / "screenshots"
pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))


def test_results_report_in_headless_chromium(fixture_warehouse, tmp_path) -> None:
    page = write_report(fixture_warehouse[1].db_path, tmp_path / "results.html")
    report = open_page(page, SHOTS / "results.png")
    assert_page_is_sound(report)
    assert len(report.images) == 2
    assert (SHOTS / "results.png").stat().st_size > 10_000


def test_quality_report_in_headless_chromium(fixture_warehouse) -> None:
    page = report_paths(fixture_warehouse[1].db_path)[0]  # the build writes it beside the file
    assert page.exists(), page
    report = open_page(page, SHOTS / "quality.png")
    assert_page_is_sound(report)
    assert report.images, "the quality report has its trend figures"
