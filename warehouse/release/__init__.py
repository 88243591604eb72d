"""Public outputs of the warehouse (docs/release.md).

* :mod:`.export`: ``tastebench release OUT_DIR``, the de-identified benchmark;
* :mod:`.verify`: ``tastebench verify DIR``, re-derives every published number from the release;
* :mod:`.competition`: ``tastebench competition OUT_DIR``, the leaderboard export (products
  interleaved with decoys, hidden solution in the gated folder), ``score_submission`` and
  ``audit_competition``;
* :mod:`.croissant`: Croissant 1.0 metadata; :mod:`.tables`: byte-stable CSV and the manifest;
  :mod:`.schema`: what each file contains; :mod:`.gated`: the gated folder; :mod:`.derive`:
  derivations shared by export and verify.

Heavy dependencies (duckdb, the guards, the metrics) are imported inside functions.
"""

from warehouse.release.gated import GatedStateError
from warehouse.release.tables import ReleaseError

__all__ = ["GatedStateError", "ReleaseError"]
