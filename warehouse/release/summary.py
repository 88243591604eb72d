"""What `tastebench release`, `verify` and `competition` print about their results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warehouse.release.verify import VerifyError, VerifyReport

if TYPE_CHECKING:
    from warehouse.release.competition import CompetitionResult
    from warehouse.release.export import ReleaseResult


def print_release(console, result: ReleaseResult) -> None:
    """Where the release went, whether its ratings are simulated, and the audits of its codes."""
    console.print(
        f"[green]release written[/green] to {result.out_dir}: {len(result.files)} files "
        f"in {result.elapsed_s:.1f} s (data_origin={result.data_origin})"
    )
    if result.data_origin == "simulation":
        console.print(
            "[yellow]Ratings are SIMULATED: no number derived from them is real.[/yellow]"
        )
    reused = "reused" if result.code_map_reused else "drawn now"
    console.print(f"public codes {reused}; gated folder: {result.gated_dir}")
    for r in result.audits.iter_rows(named=True):
        if r["metric"] == "pairwise_accuracy" and r["policy"] != "random":
            console.print(
                f"audit {r['policy']}: {r['point']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}] "
                "(chance 0.5)"
            )
    console.print(f"Check it: tastebench verify {result.out_dir}")


def print_verified(console, report: VerifyReport) -> None:
    """The verified release in one line; every mismatch in one :class:`VerifyError`."""
    if not report.ok:
        lines = "\n".join(f"  - {p}" for p in report.problems)
        raise VerifyError(
            f"{len(report.problems)} mismatch(es) in {report.root}:\n{lines}\nFix: re-export the "
            "release (tastebench release) or restore the changed files."
        )
    console.print(
        f"[green]release verified[/green]: manifest, Croissant, the DuckDB file and "
        f"{len(report.checked) - 3} "
        f"re-derived tables match ({report.root})"
    )


def print_competition(console, result: CompetitionResult) -> None:
    """Where the competition went, its counts, the audits of its sides, the gated solution."""
    console.print(
        f"[green]competition written[/green] to {result.out_dir}: {result.n_products} products "
        f"({result.n_rated} rated, {result.n_decoys} decoys), {result.n_pairs} pairs, "
        f"{result.n_public_pairs} public / {result.n_private_pairs} private scored"
    )
    for name in ("slot1_wins", "lower_code_wins"):
        a = result.audit[name]
        console.print(
            f"audit {name}: {a['point']:.3f} [{a['ci_lo']:.3f}, {a['ci_hi']:.3f}] (chance 0.5)"
        )
    console.print(f"hidden solution (gated): {result.solution_path}")
