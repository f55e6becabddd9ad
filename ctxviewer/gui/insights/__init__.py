"""The Insights tab: cost and cache, cache breaks, redundancy, sub-agents, compactions, diff.

``panel.InsightsPanel`` holds one page per part of the core's ``insights``
(``cost``, ``cache``, ``redundancy``, ``subagents``, ``compactions``, ``diff``),
computed by ``runner``; ``model`` and ``table`` are the sortable tables the
pages (and the Findings tab) are made of.
"""
