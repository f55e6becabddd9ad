"""ctxviewer's conformance suite: real coding agents, installed from npm at named versions,
run against fake servers on loopback (directly and through ``ctxviewer proxy``); their own
``/context`` or ``/status`` next to ctxviewer's numbers for the same conversation.

``run.py`` is the command (docs/conformance.md); ``cases`` reads what a run captured (also
the test data under tests/data/agents/), ``compare`` builds the side-by-side tables and
``known_off`` says why the rows off today are off: the command and
tests/core/test_conformance.py both use them.
"""
