"""Tools > Simulate compaction: the dialog that runs a strategy on one request.

``dialog.CompactionDialog`` (its form in ``params``, its tables in ``model``,
its texts in ``text``) runs ``simulate_compaction`` through ``runner``.
"""
