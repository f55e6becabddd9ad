"""The Findings tab: what to cut from the context. May import the core and the
Insights tab's table (``gui.insights``)."""
