"""``tastebench evaluate`` and the results report, the CLI-facing side of scoring.

* :mod:`.files`: prediction files -> checked frames -> the JSON contract (:func:`evaluate_files`);
* :mod:`.contract`: the contract's shape (:func:`check_result_shape`, ``SCHEMA_VERSION``);
* :mod:`.render`: rich tables for the terminal (:func:`render_table`);
* :mod:`.results_report`: the self-contained HTML results page (:func:`write_report`).

The scoring engine itself is :mod:`warehouse.metrics.scoring`.
"""
