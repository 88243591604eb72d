"""Operations around the build: one writer at a time (``lock``), what changed since the published
warehouse and what to rebuild (``state``), what ``tastebench status`` shows (``status``) and the
Dagster definitions of the optional ``orchestrate`` extra (``definitions``; imported only when
Dagster is installed). See docs/operations.md.

This package sits at the top layer with ``warehouse/build.py``: ``lock`` and ``state`` are used by
the build; ``status`` and ``definitions`` call the build and read the quality gate's results.
"""
