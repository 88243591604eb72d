"""The docs as a product (docs/README.md): a bounded size, every page indexed, and every
``tastebench`` command line the docs show names a real command with real options."""

from __future__ import annotations

import functools
import re
import shlex

import pytest
import typer

from warehouse.cli import app
from warehouse.config import REPO_ROOT

DOCS = REPO_ROOT / "docs"
MAX_WORDS = 20_000
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _doc_command_lines() -> list[tuple[str, str]]:
    """(page, line) for every fenced line that runs ``tastebench``."""
    out = []
    for page in [*PAGES, REPO_ROOT / "README.md"]:
        for block in FENCE.findall(page.read_text(encoding="utf-8")):
            for line in block.splitlines():
                if re.search(r"(^|[\s/])tastebench\s", line):
                    out.append((page.relative_to(REPO_ROOT).as_posix(), line.strip()))
    return out


@functools.cache
def _root():
    return typer.main.get_command(app)


def _resolve(tokens: list[str]):
    """The click command a token list names (groups descended) and the rest of the tokens."""
    command = _root()  # typer's own click: a group has ``commands``
    rest = tokens
    while hasattr(command, "commands") and rest and rest[0] in command.commands:
        command, rest = command.commands[rest[0]], rest[1:]
    return command, rest


def test_docs_stay_under_the_word_budget() -> None:
    words = sum(len(p.read_text(encoding="utf-8").split()) for p in PAGES)
    assert words <= MAX_WORDS, f"docs/ holds {words} words, more than {MAX_WORDS}: cut first"


def test_every_page_is_indexed_in_docs_readme() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    missing = [p.relative_to(DOCS).as_posix() for p in PAGES if p.name != "README.md"]
    missing = [name for name in missing if name not in index]
    assert not missing, f"pages missing from docs/README.md's index: {missing}"


COMMAND_LINES = _doc_command_lines()


def test_the_docs_show_commands() -> None:
    assert len(COMMAND_LINES) >= 20


@pytest.mark.parametrize(
    ("page", "line"), COMMAND_LINES, ids=[f"{p}:{i}" for i, (p, _) in enumerate(COMMAND_LINES)]
)
def test_each_documented_command_and_option_exists(page: str, line: str) -> None:
    text = line.split(" #", 1)[0]
    text = text[[*re.finditer(r"(^|[\s/])tastebench\s", text)][-1].end() :]
    tokens = shlex.split(text.replace("[", " ").replace("]", " ").replace("|", " "))
    tokens = [t for t in tokens if t not in {">", ">>", "2>&1", "..."}]
    command, rest = _resolve(tokens)
    assert not hasattr(command, "commands"), f"{page}: `{line}` names no command"
    known = {opt for param in command.params for opt in [*param.opts, *param.secondary_opts]}
    unknown = [
        t.split("=", 1)[0] for t in rest if t.startswith("-") and t.split("=", 1)[0] not in known
    ]
    unknown = [t for t in unknown if t != "-"]  # `-f -`: stdin
    assert not unknown, f"{page}: `{line}` uses options {command.name} does not have: {unknown}"
