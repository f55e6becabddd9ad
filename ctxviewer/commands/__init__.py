"""CLI subcommands, one module each: ``HELP``, ``add_arguments(parser)``, ``run(args) -> int``.

May import the core (``model``, ``ingest``, ``analysis``, ``proxy``); never Qt.
"""
