"""The Timeline tab: prompt tokens per request against the thresholds (pyqtgraph).

``tab.TimelineTab`` is what the window builds; it imports the plot (``plot``,
composed with ``marks``, ``pick`` and ``toggles``) and shows a placeholder when
pyqtgraph is missing. ``data`` turns the core's timeline into numpy arrays
(no Qt), ``style`` holds the colours and pens other plots share.
"""
