"""Pure analysis functions over ``ctxviewer.model`` objects.

May import: ``ctxviewer.model``, ``ctxviewer.jsonish``, the standard library,
tiktoken (offline) and anthropic. Never Qt.
"""
