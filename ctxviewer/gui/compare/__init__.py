"""The Compare tab: every estimator against the API's counts, per request and per category.

``controller.CompareController`` adds the tab (``tab``, ``model``, ``plot``) to
the window and runs the comparison with ``runner`` when the tab is shown.
"""
