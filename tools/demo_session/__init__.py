"""The generator of ctxviewer's bundled demo session (run ``tools/make_demo_session.py``).

The texts (system prompts, tool descriptions, memory files, the project's
files, tool results, the longer messages) are files under ``data/``; the code
here only puts them together:

- ``texts``: reading ``data/``;
- ``setting``: who, where and when (model, clock, paths, the random seed);
- ``tokens``: what the API would report for a prompt;
- ``prompts``: system prompts, tool declarations, the memory reminder;
- ``recording``: the output file and one agent conversation with its prompt cache;
- ``calls``: tool calls (Read, Bash, Edit...) and the project's files as they change;
- ``incident``: last night's access log and the replay of the rate limiter on it;
- ``outputs``: pytest and git output, the pasted dashboard picture;
- ``story``, ``implement``, ``replay``, ``finish``: the session, in order.
"""
