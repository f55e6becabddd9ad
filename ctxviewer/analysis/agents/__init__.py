"""Agent profiles: which agent wrote a log, and the window, compaction policy
and ``/context`` counting rules it lives by (``profiles.toml``, by version).

May import ``ctxviewer.model``, ``ctxviewer.jsonish`` and the rest of
``ctxviewer.analysis``; never ``ingest``, ``commands``, ``proxy`` or ``gui``.
"""
