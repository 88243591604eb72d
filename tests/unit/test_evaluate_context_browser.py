"""The in-context page in real headless Chromium (issue #26, STYLE.md convention 10): it loads
offline with no console error, every image decodes, nothing overflows a 1,400 px viewport, and
a screenshot is written under build/reports/. Skips, saying why, where no browser exists."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.browser import assert_page_is_sound, open_page, skip_reason
from warehouse.config import REPO_ROOT
from warehouse.evaluate.context import evaluate_in_context
from warehouse.evaluate.context_html import write_context_page

OOF = "food_similarity/results/oof_predictions"


@pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))
def test_in_context_page_in_headless_chromium(tmp_path, public_dir: Path) -> None:
    frame = pd.read_csv(public_dir / OOF / "nested_bt_gemini_nnls.csv")
    rng = np.random.default_rng(5)
    frame["predicted_score"] = frame["true_rank"] + rng.normal(0, 0.3, len(frame))
    frame.to_csv(tmp_path / "a_rather_long_user_model_name_for_the_layout.csv", index=False)
    res = evaluate_in_context(
        [tmp_path / "a_rather_long_user_model_name_for_the_layout.csv"], n_boot=100
    )
    page = write_context_page(res, tmp_path / "context.html")
    shot = REPO_ROOT / "build" / "reports" / "screenshots" / "evaluate_context.png"
    report = open_page(page, shot)
    assert_page_is_sound(report)
    assert len(report.images) == 3 and all(i["width"] > 300 for i in report.images)
    assert shot.stat().st_size > 10_000
