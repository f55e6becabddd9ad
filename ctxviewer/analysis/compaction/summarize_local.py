"""The offline summarizer: deterministic, no key, no network.

It extracts what a compaction summary must keep (as Shannon's compressor asks: decisions,
discoveries, open questions, entities): the goals the user stated, the files
and commands the tools touched, errors met, decisions announced by the
assistant and its latest state. Headings are Chinese when the conversation
is mostly CJK text, English otherwise. The text is capped at about
``target_tokens`` (4 characters a token, 1.5 for CJK).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import orjson

from ctxviewer.analysis.compaction.base import Summary
from ctxviewer.fmt import short_text
from ctxviewer.model import TEXT, THINKING, TOOL_RESULT, TOOL_USE, Message

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z]")
_ERROR = re.compile(
    r"\b(error|exception|traceback|failed|failure|not found|denied)\b|错误|失败", re.I
)
_DECISION = re.compile(
    r"\b(I'll|I will|let's|let me|decided|going to|instead|plan)\b|"
    r"决定|改为|我将|我会|方案",
    re.I,
)
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "absolute_path", "url")
_CMD_KEYS = ("command", "cmd", "pattern", "query")

HEADINGS = {
    "en": {
        "title": "Summary of the earlier conversation",
        "goals": "Goals",
        "files": "Files touched",
        "commands": "Commands and searches",
        "errors": "Errors met",
        "decisions": "Decisions",
        "state": "Latest state",
    },
    "zh": {
        "title": "此前对话摘要",
        "goals": "用户目标",
        "files": "涉及的文件",
        "commands": "执行的命令与搜索",
        "errors": "遇到的错误",
        "decisions": "决定",
        "state": "最新状态",
    },
}


def _plain_texts(messages: Sequence[Message], role: str) -> list[str]:
    return [
        b.text
        for m in messages
        if m.role == role
        for b in m.blocks
        if b.kind == TEXT
        and b.tag is None
        and b.text.strip()
        and not b.text.lstrip().startswith(("<", "Result of calling", "Called the "))
    ]


def language(messages: Sequence[Message]) -> str:
    """``zh`` when the user and assistant texts are CJK-dominant, else ``en``."""
    text = "".join(_plain_texts(messages, "user") + _plain_texts(messages, "assistant"))
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    return "zh" if cjk and cjk * 3 >= latin else "en"


def _tool_inputs(messages: Sequence[Message]) -> tuple[list[str], list[str]]:
    files: dict[str, None] = {}
    commands: dict[str, None] = {}
    for m in messages:
        for b in m.blocks:
            if b.kind != TOOL_USE:
                continue
            try:
                data = orjson.loads(b.text) if b.text else {}
            except orjson.JSONDecodeError:
                continue
            if not isinstance(data, dict):
                continue
            for k in _PATH_KEYS:
                if isinstance(data.get(k), str) and data[k]:
                    files.setdefault(data[k])
            for k in _CMD_KEYS:
                if isinstance(data.get(k), str) and data[k]:
                    commands.setdefault(f"{b.name or 'tool'}: {short_text(data[k], 100)}")
    return list(files), list(commands)


def _errors(messages: Sequence[Message]) -> list[str]:
    out: dict[str, None] = {}
    for m in messages:
        for b in m.blocks:
            if b.kind != TOOL_RESULT or not b.text:
                continue
            line = next((x for x in b.text.splitlines() if x.strip()), "")
            if b.is_error or _ERROR.search(line):
                out.setdefault(short_text(line, 140))
    return list(out)


def _decisions(messages: Sequence[Message]) -> list[str]:
    out: dict[str, None] = {}
    for text in _plain_texts(messages, "assistant"):
        for sentence in re.split(r"(?<=[.!?。！？])\s*|\n", text):
            if _DECISION.search(sentence) and len(sentence.strip()) > 8:
                out.setdefault(short_text(sentence, 160))
    return list(out)


def _latest_state(messages: Sequence[Message]) -> str:
    for m in reversed(messages):
        if m.role == "assistant":
            texts = [b.text for b in m.blocks if b.kind == TEXT and b.text.strip()]
            if texts:
                return short_text(texts[-1], 400)
    for m in reversed(messages):
        texts = [b.text for b in m.blocks if b.kind == THINKING and b.text.strip()]
        if m.role == "assistant" and texts:
            return short_text(texts[-1], 300)
    return ""


def title_for(goals: list[str], lang: str) -> str:
    """5-10 words (or about 20 CJK characters) naming the session."""
    if not goals:
        return "对话摘要" if lang == "zh" else "Conversation summary"
    first = " ".join(goals[0].split())
    if lang == "zh":
        return short_text(first, 20)
    words = re.findall(r"[\w./'-]+", first)[:8]
    if len(words) < 5:
        words += ["—", "session", "summary"][: max(0, 5 - len(words))]
    return " ".join(words)


def _cap(lines: list[str], max_chars: int) -> str:
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > max_chars:
            out.append("…")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


class LocalSummarizer:
    """Deterministic extractive summary of a list of messages."""

    name = "local"

    def __init__(self, max_items: int = 8) -> None:
        self.max_items = max_items

    def summarize(
        self, messages: Sequence[Message], target_tokens: int = 400, *, force: bool = False
    ) -> Summary:
        lang = language(messages)
        h = HEADINGS[lang]
        users = _plain_texts(messages, "user")
        goals = users[:3] + [u for u in users[3:][-3:] if u not in users[:3]]
        files, commands = _tool_inputs(messages)
        n = self.max_items
        sections = [
            ("goals", [short_text(g, 200) for g in goals]),
            ("files", files[:n] + ([f"(+{len(files) - n})"] if len(files) > n else [])),
            ("commands", commands[-n:]),
            ("errors", _errors(messages)[-n:]),
            ("decisions", _decisions(messages)[-n:]),
        ]
        lines = [f"## {h['title']}"]
        state = _latest_state(messages)
        for key, items in sections:
            if items:
                lines += ["", f"### {h[key]}", *(f"- {x}" for x in items)]
            if key == "goals" and state:  # before the long lists, so the cap spares it
                lines += ["", f"### {h['state']}", state]
        per_token = 1.5 if lang == "zh" else 4
        text = _cap(lines, max(200, int(target_tokens * per_token)))
        return Summary(text, title_for(goals, lang), "local")
