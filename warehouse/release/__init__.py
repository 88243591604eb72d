"""Public outputs of the warehouse (docs/release.md).

* :mod:`.export`: ``tastebench release OUT_DIR``, the de-identified benchmark;
* :mod:`.verify`: ``tastebench verify DIR``, re-derives every published number from the release
  (and the upstream TasteBench files it references by hash, :mod:`.upstream`);
* :mod:`.competition`: ``tastebench competition OUT_DIR``, the leaderboard export;
  :mod:`.competition_draw` (decoys, codes, sides, split, solution) and :mod:`.leaderboard`
  (audits, ``score_submission``);
* :mod:`.croissant`: Croissant 1.0 metadata; :mod:`.tables`: byte-stable CSV, its Parquet twin
  and the manifest; :mod:`.schema`: what each file contains; :mod:`.gated`: the gated folder;
  :mod:`.derive`: derivations shared by export and verify.

Frames are polars (pyarrow for Parquet); pandas appears only where the metrics library takes or
returns it (``warehouse.metrics``, until it moves to polars), converted at that call. Heavy
dependencies (duckdb, the guards, the metrics) are imported inside functions.
"""

from warehouse.release.gated import GatedStateError
from warehouse.release.tables import ReleaseError

__all__ = ["GatedStateError", "ReleaseError"]
