"""Benchmark the molecular library on the full FartDB splits.

Times RDKit featurization, LightGBM and the class-balanced random forest, and prints test
metrics with BCa 95% CIs (10,000 molecule-resampling replicates), the per-class table, the
``Original Labels`` keyword leakage audit and McNemar comparisons. The named baseline ratio is
LightGBM fit time / random-forest fit time.

    .venv/bin/python benchmarks/molecular.py [--n-boot 10000] [--rf-estimators 300] [--json out]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.molecular import (
    LEAKY_COLUMN,
    SMILES_COLUMN,
    bca_classification,
    compare_all,
    featurize,
    keyword_leakage_baseline,
    per_class_metrics,
    train_fingerprint_models,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


def _mirror() -> Path:
    env = os.environ.get("TASTEBENCH_DATA_MIRROR")
    return Path(env).resolve() if env else (REPO_ROOT.parent / "shared" / "data").resolve()


def _fmt(table: pl.DataFrame) -> str:
    return "\n".join(
        f"  {r['metric']:<16} {r['point']:.3f}  [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}]"
        f"  (finite replicates {r['n_boot_finite']})"
        for r in table.iter_rows(named=True)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--rf-estimators", type=int, default=300)
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args()

    splits = {
        s: pl.read_csv(_mirror() / "fartdb" / f"fart_{s}.csv", infer_schema=False)
        for s in ("train", "val", "test")
    }
    all_smiles = pl.concat([df[SMILES_COLUMN] for df in splits.values()]).to_list()
    t0 = time.perf_counter()
    feats = featurize(all_smiles)
    featurize_s = time.perf_counter() - t0
    print(
        f"featurize (canonical SMILES, InChIKey, descriptors, Morgan) {len(all_smiles)} "
        f"molecules: {featurize_s:.1f} s; RDKit changed {int(feats.frame['smiles_differs'].sum())} "
        f"SMILES; rdkit {feats.rdkit_version}"
    )

    t0 = time.perf_counter()
    fits = train_fingerprint_models(
        splits["train"], splits["val"], splits["test"], rf_estimators=args.rf_estimators
    )
    total_s = time.perf_counter() - t0
    lgb, rf = fits["lightgbm"], fits["random_forest"]
    print(
        f"fingerprints {lgb.info['featurize_s']:.1f} s | LightGBM fit+predict {lgb.wall_s:.1f} s "
        f"(best iteration {lgb.info['best_iteration']}) | random forest ({args.rf_estimators} "
        f"trees) fit+predict {rf.wall_s:.1f} s | total {total_s:.1f} s"
    )
    ratio = lgb.wall_s / rf.wall_s
    print(f"baseline ratio LightGBM time / RF time = {ratio:.2f}")

    results: dict[str, object] = {
        "featurize_s": featurize_s,
        "fingerprint_s": lgb.info["featurize_s"],
        "lightgbm_s": lgb.wall_s,
        "random_forest_s": rf.wall_s,
        "lightgbm_over_rf_time": ratio,
        "models": {},
    }
    test = splits["test"]
    for name, fit in fits.items():
        t0 = time.perf_counter()
        table = bca_classification(
            fit.y_true["test"], fit.labels["test"], fit.proba["test"], n_boot=args.n_boot
        )
        per = per_class_metrics(
            fit.y_true["test"], fit.labels["test"], fit.proba["test"], n_boot=args.n_boot
        )
        ci_s = time.perf_counter() - t0
        print(f"\n{name} test (fit_id {fit.fit_id[:12]}; BCa {args.n_boot} in {ci_s:.1f} s)")
        print(_fmt(table))
        cols = ["class", "support", "precision", "recall", "f1", "f1_ci_lo", "f1_ci_hi"]
        print(per[cols].round(3).to_string(index=False))
        results["models"][name] = {
            "fit_id": fit.fit_id,
            "metrics": table.to_dict("records"),
            "per_class": per.to_dict("records"),
        }

    keyword = keyword_leakage_baseline(test[LEAKY_COLUMN])
    audit = bca_classification(test["Canonicalized Taste"], keyword, None, n_boot=args.n_boot)
    refined = keyword_leakage_baseline(test[LEAKY_COLUMN], rules="refined")
    refined_acc = float(np.mean(refined == test["Canonicalized Taste"].to_numpy()))
    print("\nLEAKAGE AUDIT (Original Labels keyword match; never a feature)")
    print(_fmt(audit))
    print(f"  refined keyword rules accuracy {refined_acc:.3f}")
    results["keyword_audit"] = {
        "metrics": audit.to_dict("records"),
        "refined_accuracy": refined_acc,
    }

    pairs = compare_all(
        {"lightgbm": lgb.labels["test"], "random_forest": rf.labels["test"], "keyword": keyword},
        y_true=test["Canonicalized Taste"],
    )
    print("\nMcNemar (Holm across pairs)")
    print(pairs.round(4).to_string(index=False))
    results["mcnemar"] = pairs.to_dict("records")
    from _results import write_result

    write_result("molecular", results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=float))


if __name__ == "__main__":
    main()
