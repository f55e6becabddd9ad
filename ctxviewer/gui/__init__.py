"""The desktop GUI (PySide6 and pyqtgraph live here and nowhere else).

May import the whole core (``model``, ``ingest``, ``analysis``, ``jsonish``,
``resources``). The core never imports this package. ``app.run_app`` opens
the window; ``app.build_main_window`` builds it for tests and snapshots.
"""
