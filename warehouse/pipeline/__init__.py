"""The build machinery (docs/architecture.md, the layout rule; docs/operations.md): one writer at a
time (``lock``), fingerprints and the published warehouse's state (``state``), what to rebuild and
why (``plan``), dbt in a child process (``dbt``), the quality gate (``gate``), the atomic swap
(``publish``), the build record (``record``) and :func:`~warehouse.pipeline.run.build`, which runs
them in order (``run``).

``warehouse/orchestrate`` (status, the Dagster definitions) and the CLI use this package; it never
imports them.
"""
