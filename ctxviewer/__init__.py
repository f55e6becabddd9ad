"""ctxviewer: inspect the context window of LLM coding agents.

Layers (dependencies point down only): ``gui`` -> ``cli`` -> ``proxy`` ->
``analysis`` -> ``ingest`` -> ``model``. Only ``ctxviewer.gui`` may import
PySide6 or pyqtgraph.
"""

__version__ = "0.1.0"
