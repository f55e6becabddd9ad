"""Aider: the chat history it writes in the project (``.aider.chat.history.md``, Markdown)
and, where enabled, the log of what it sent (``--llm-history-file``). The tests that
recognise them; the reader is ``aider.history``, which reads an LLM history file beside
the chat history too."""

from __future__ import annotations

import re

from ctxviewer.ingest.base import Format, Head

CHAT_START = re.compile(r"\A\s*# aider chat started at \d{4}-\d\d-\d\d")
LLM_START = re.compile(r"\A(TO LLM|LLM RESPONSE) \d{4}-\d\d-\d\dT\d\d:\d\d")


def aider_chat(head: Head) -> bool:
    return bool(CHAT_START.match(head.text.lstrip("\ufeff")))


def aider_llm(head: Head) -> bool:
    return bool(LLM_START.match(head.text.lstrip("\ufeff")))


CHAT_HISTORY = Format(
    "aider-chat",
    "Aider chat history",
    "<project>/.aider.chat.history.md (Markdown), with a --llm-history-file beside it when "
    "there is one",
    True,
    aider_chat,
    "ctxviewer.ingest.aider.history",
    own_document=True,
)
LLM_HISTORY = Format(
    "aider-llm-history",
    "Aider LLM history",
    "the file of --llm-history-file: each request's messages as sent (no token counts)",
    True,
    aider_llm,
    "ctxviewer.ingest.aider.history",
    "LLM_READER",
    own_document=True,
)
