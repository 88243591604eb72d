"""Operations around the build: what ``tastebench status`` shows (``status``) and the Dagster
definitions of the optional ``orchestrate`` extra (``definitions``; imported only when Dagster is
installed). See docs/operations.md.

This package sits above :mod:`warehouse.pipeline` (the build machinery) and uses it: ``status``
reads the lock and the build record and runs ``dbt source freshness`` through it; ``definitions``
calls the build. The pipeline never imports this package.
"""
