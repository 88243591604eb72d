"""The ``tastebench`` command line: the typer app and its commands, one module per group
(docs/architecture.md, "The package"). Each command parses its options, calls the domain library
and prints; heavy imports live inside the commands so ``--help`` is instant."""

from __future__ import annotations

import sys

import typer

from warehouse.cli import build, docs, evaluate, models, quality, query, registry, release, simulate
from warehouse.cli import console as consoles
from warehouse.errors import WarehouseError, resource_error

app = typer.Typer(
    name="tastebench",
    help="TasteBench Warehouse: build, query, evaluate and release the benchmark.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
registry_app = typer.Typer(help="The pinned dataset registry.", no_args_is_help=True)
app.add_typer(registry_app, name="registry")
train_app = typer.Typer(help="Heavy training that runs outside `dbt build`.", no_args_is_help=True)
app.add_typer(train_app, name="train")

# in the order `tastebench --help` lists them
for _command in (
    build.build,
    build.status,
    simulate.simulate,
    query.sql,
    evaluate.evaluate,
    evaluate.report,
    quality.quality,
    release.release,
    release.verify,
    release.competition,
    docs.docs,
    query.snapshot,
):
    app.command()(_command)
registry_app.command("list")(registry.registry_list)
registry_app.command("verify")(registry.registry_verify)
train_app.command("molecular")(models.train_molecular)
train_app.command("food")(models.train_food)


def _fail(message: str, code: int = 2) -> None:
    from rich.markup import escape

    consoles.progress().print(
        f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True
    )
    sys.exit(code)


def main() -> None:
    """Entry point: a user error prints one paragraph (what is wrong, where, the fix) and exits
    2; an unexpected exception prints one paragraph naming it and exits 1, with the traceback only
    when ``TASTEBENCH_DEBUG=1`` (a traceback is for developers, not for someone mistyping)."""
    import os

    from warehouse.config import apply_quiet_env

    apply_quiet_env()
    try:
        app()
    except WarehouseError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted; a build in progress left the published warehouse untouched.", 130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence of the CLI
        if os.environ.get("TASTEBENCH_DEBUG") == "1":
            raise
        if (resource := resource_error(exc)) is not None:
            _fail(str(resource), 1)
        first = str(exc).splitlines()[0] if str(exc) else ""
        _fail(
            f"unexpected {type(exc).__name__}: {first}. This is a bug in tastebench, not in your "
            "input: please report it with the command you ran (TASTEBENCH_DEBUG=1 shows the "
            "traceback).",
            1,
        )
