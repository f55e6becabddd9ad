"""The Timeline tab: prompt tokens per request against the thresholds (pyqtgraph).

``tab.TimelineTab`` is what the window builds; it imports the plot (``plot``, a
host of layers: ``curves``, ``bars``, ``thresholds``, ``marks``, ``whatif``,
``pick``, with ``legend`` and ``toggles``) and shows a placeholder when
pyqtgraph is missing. The plot draws the core's view model
(``analysis.timeline_view.view``); ``geometry`` holds its pixel arithmetic (no Qt),
``style`` the colours and pens other plots share.
"""
