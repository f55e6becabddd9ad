"""Compare: local estimators scored against the API's counts, per request and per category."""
