"""The two consoles of every command: results on stdout, progress and errors on stderr."""

from __future__ import annotations

import sys

# Width of a console that is not a terminal: wide enough that rich never wraps or cuts a cell of
# piped output (`tastebench evaluate ... | less`); a terminal keeps its own width.
PIPE_WIDTH = 10_000


def results():
    """Results (tables, summaries) on stdout; never cut when piped."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)


def progress():
    """Progress (spinners, timestamped log lines) and errors on stderr, at the terminal's width,
    so piping stdout captures only results."""
    from rich.console import Console

    return Console(stderr=True)
