"""What a fresh process imports before it does any work. Every `tastebench` command and every
Dagster process (the webserver's code server, `dagster schedule start`, …) pays its imports
first: scipy.stats costs a command ~1 s before it checks its input, and executing the GX suite
files costs each load of the Dagster definitions ~3 s. Both stay out of those paths: scipy is
imported by the functions that compute with it, and the definitions read each suite's ``MODEL``
from its source (``warehouse.quality.runner.suite_relations``)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
loaded = {}
import warehouse.cli, warehouse.evaluate.context, warehouse.release.verify
loaded["cli"] = sorted(m for m in sys.modules if m.split(".")[0] in {"scipy", "great_expectations"})
import warehouse.orchestrate.definitions as d
d.check_specs()
loaded["dagster"] = sorted(m for m in sys.modules if m.split(".")[0] == "great_expectations")
print(json.dumps(loaded))
"""


def test_cli_commands_and_dagster_definitions_start_without_the_heavy_libraries() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, check=True
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded == {"cli": [], "dagster": []}
