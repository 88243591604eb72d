"""``python -m warehouse.cli``: the ``tastebench`` command."""

from warehouse.cli import main

main()
