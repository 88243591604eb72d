"""The JSON contract of ``tastebench evaluate`` (docs/evaluate.md) as a checkable shape."""

from __future__ import annotations

import math
from collections.abc import Mapping

from warehouse.metrics.core import METRIC_NAMES
from warehouse.metrics.intervals import INTERVAL_METRICS
from warehouse.metrics.scoring import CI_CHOICES, POLICY_DESCRIPTIONS

SCHEMA_VERSION = 3
"""3: ``tastebench evaluate`` scores in context by default: the ``context`` section (the context
models and their provenance, the user's comparisons under their own Holm, the rank of each user
model with its interval), the ``human_scale`` section and ``models[].role`` (issue #26); absent
with ``--alone``. 2: every interval names its method (``ci_method``, ``is_degenerate``,
``ci_note``), the result names the convention (``ci``) and comparisons their method (issue
#14); 1: published convention only."""

_INTERVAL = {"point": "num?", "ci_lo": "num?", "ci_hi": "num?"}
_NAMED = {**_INTERVAL, "ci_method": "str", "is_degenerate": "bool", "ci_note": "str"}
_COMPARISON = {
    "model_a": "str",
    "model_b": "str",
    "n_pairs": "int",
    "diff": "num?",
    "ci_lo": "num?",
    "ci_hi": "num?",
    "p_value": "num?",
    "p_holm": "num?",
    "is_resolved": "bool",
    "ci_method": "str",
    "ci_note": "str",
}
"""A row of ``comparisons`` (``--alone`` and in context alike)."""
_SHAPE: dict[str, object] = {
    "schema_version": "int",
    "gold": ("file", "warehouse"),
    "data_origin": "str",
    "ci": {
        "convention": tuple(CI_CHOICES),
        "methods": dict.fromkeys(INTERVAL_METRICS, "str"),
        "per_category": "str",
        "comparisons": "str",
    },
    "bootstrap": {"n_boot": "int", "seed": "int"},
    "models": [
        {
            "name": "str",
            "n_products": "int",
            "n_pairs": "int",
            "coverage": "num",
            "missing_products": [{"category": "str", "product_code": "any"}],
            "metrics": dict.fromkeys(METRIC_NAMES, _NAMED),
            "per_category": {
                "*": {"n_products": "int", "n_pairs": "int", "pairwise_accuracy": _NAMED}
            },
            "slices": {"delta_quintiles": {"delta_of": "str", "bins": "list"}},
        }
    ],
    "comparisons": [_COMPARISON],
    "trivial_policies": [
        {
            "name": tuple(POLICY_DESCRIPTIONS),
            "ci_method": "str",
            "metrics": {"*": {**_INTERVAL, "chance": "num?", "beats_chance": "bool"}},
            "beats_chance": "bool",
            "differs_from_chance": "bool",
            "flagged_metrics": "list",
        }
    ],
    "notes": "list",
}


_KSTAR = {
    "k_star": "int?",
    "k_star_min": "int?",
    "k_star_max": "int?",
    "position": ("below_one_panelist", "on_curve", "above_largest_panel", "unknown"),
    "label": "str",
}
_CONTEXT_SHAPE: dict[str, object] = {
    "context": {
        "user_models": "list",
        "files": [
            {
                "name": "str",
                "role": ("user", "published", "warehouse_fit"),
                "source_file": "str",
                "sha256": "str?",
            }
        ],
        "comparisons": [{**_COMPARISON, "acc_a": "num?", "acc_b": "num?", "winner": "str?"}],
        "ranks": [
            {
                "name": "str",
                "rank": "int?",
                "rank_ci_lo": "int?",
                "rank_ci_hi": "int?",
                "n_models": "int",
                "n_products": "int",
                "is_resolved": "bool",
                "note": "str",
            }
        ],
        "rank_method": "str",
        "notes": "list",
    },
    "human_scale": {
        "scope": ("within_block", "all_pairs"),
        "is_within_block": "bool",
        "data_origin": "str",
        "is_simulated": "bool",
        "note": "str",
        "panelist_accuracy": {"median": "num?", "q25": "num?", "q75": "num?"},
        "curve": [{"k": "int", "median_accuracy": "num?", "q025": "num?", "q975": "num?"}],
        "models": [
            {
                "name": "str",
                "accuracy": {**_INTERVAL, "ci_method": "str"},
                "k_star": _KSTAR,
                "k_star_ci_lo": _KSTAR,
                "k_star_ci_hi": _KSTAR,
            }
        ],
    },
}


def _check(value: object, spec: object, where: str) -> None:
    def fail(msg: str) -> None:
        raise ValueError(f"{where}: {msg}")

    if isinstance(spec, dict):
        if not isinstance(value, dict):
            fail(f"expected an object, got {type(value).__name__}")
        if "*" in spec:
            for k, v in value.items():
                if not isinstance(k, str):
                    fail(f"key {k!r} is not a string")
                _check(v, spec["*"], f"{where}.{k}")
            return
        for k, sub in spec.items():
            if k not in value:
                fail(f"missing key '{k}'")
            _check(value[k], sub, f"{where}.{k}")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            fail(f"expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check(item, spec[0], f"{where}[{i}]")
    elif isinstance(spec, tuple):
        if value not in spec:
            fail(f"{value!r} not one of {spec}")
    elif spec == "any":
        return
    else:
        optional = spec.endswith("?")
        kind = spec.rstrip("?")
        if value is None:
            if not optional:
                fail("null not allowed")
            return
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "num": isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value),
            "str": isinstance(value, str),
            "bool": isinstance(value, bool),
            "list": isinstance(value, list),
        }[kind]
        if not ok:
            fail(f"expected {kind}, got {value!r}")


def check_result_shape(result: Mapping[str, object]) -> None:
    """Raise ``ValueError`` (with the JSON path) unless ``result`` follows the documented
    contract (docs/evaluate.md). Extra keys are allowed; listed keys and their types are not
    optional (``num?`` fields may be null)."""
    _check(result, _SHAPE, "$")
    if "context" in result or "human_scale" in result:  # in-context mode (not --alone)
        _check(result, _CONTEXT_SHAPE, "$")
        roles = {m["name"]: m.get("role") for m in result["models"]}
        for name in result["context"]["user_models"]:
            if roles.get(name) != "user":
                raise ValueError(f"$.models: user model {name!r} missing or not role 'user'")
    names = [m["name"] for m in result["models"]]
    expected = {(a, b) for i, a in enumerate(names) for b in names[i + 1 :]}
    got = {(c["model_a"], c["model_b"]) for c in result["comparisons"]}
    if got != expected:
        raise ValueError(
            f"$.comparisons: expected every model pair {sorted(expected)}, got {sorted(got)}"
        )
