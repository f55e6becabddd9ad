"""Aider: the real aider (PyPI aider-chat 0.86.2) against the loopback OpenAI fake, with
--edit-format diff and --llm-history-file (tests/data/agents/README.md), and the shape
of a real chat history rebuilt small."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

from ctxviewer.analysis.agents.sessions import split
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.ingest.aider.history import COUNT_NOTE, parse_count

CAPTURE = Path(__file__).resolve().parents[1] / "data" / "agents" / "aider-0.86.2" / "two-turns"


def _project(tmp_path: Path, with_llm: bool = True) -> Path:
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_bytes(lzma.decompress((CAPTURE / "aider.chat.history.md.xz").read_bytes()))
    if with_llm:
        (tmp_path / ".aider.llm.history").write_bytes(
            lzma.decompress((CAPTURE / "aider.llm.history.xz").read_bytes())
        )
    return chat


def _server_prompts() -> list[int]:
    out = []
    for line in lzma.decompress((CAPTURE / "openai_requests.jsonl.xz").read_bytes()).splitlines():
        r = json.loads(line)
        if r.get("path", "").endswith("/chat/completions") and r["body"].get("stream"):
            chunks = r["response"]["chunks"]
            out.append([c["usage"] for c in chunks if c.get("usage")][-1]["prompt_tokens"])
    return out


def test_one_request_per_tokens_line_labelled_as_aiders_count(tmp_path: Path) -> None:
    chat = _project(tmp_path, with_llm=False)
    session = load(str(chat))
    text = chat.read_text()
    lines = [line for line in text.splitlines() if line.startswith("> Tokens:")]
    assert len(session.requests) == len(lines) == 2
    assert [r.usage.prompt_tokens for r in session.requests] == [2500, 2600]  # "2.5k", "2.6k"
    assert [r.usage.output_tokens for r in session.requests] == [36, 6]
    assert all(COUNT_NOTE in r.notes and not r.complete for r in session.requests)
    # the server counted otherwise: Aider's number is its own
    assert _server_prompts() == [2824, 2848]
    assert session.requests[0].messages[-1].text.startswith("Please change hello.py")
    assert "<<<<<<< SEARCH" in session.requests[0].response.text
    parts = split(session)
    assert len(parts) == 2  # two runs: two sessions


def test_the_llm_history_beside_gives_what_was_sent(tmp_path: Path) -> None:
    session = load(str(_project(tmp_path)))
    first = session.requests[0]
    assert first.complete and first.system  # the system prompt as sent
    assert "SEARCH/REPLACE" in first.system[0].text + "".join(b.text for b in first.system)
    assert any("hello.py" in m.text for m in first.messages)  # the file's contents, sent
    assert [r.usage.prompt_tokens for r in session.requests] == [2500, 2600]
    roles = [m.role for m in session.requests[1].messages]
    assert roles.count("user") >= 2


def test_the_key_tail_is_never_shown(tmp_path: Path, capsys: Any) -> None:
    chat = _project(tmp_path)
    assert "...7a3f" in chat.read_text()  # Aider logged the key's last four characters
    assert main(["report", "--json", "--session", "0", str(chat)]) == 0
    assert main(["report", "--json", "--session", "1", str(chat)]) == 0
    out = capsys.readouterr().out
    assert "7a3f" not in out
    for r in load(str(chat)).requests:
        assert all("7a3f" not in m.text for m in r.messages)


def test_counts_as_aider_prints_them() -> None:
    assert [parse_count(t) for t in ("36", "2.4k", "12k", "1,024")] == [36, 2400, 12000, 1024]


def test_a_real_history_shape(tmp_path: Path) -> None:
    """The shape of published chat histories: cache figures and a cost on the Tokens
    line, a multi-line prompt, tool output between turns, a reply with no Tokens line."""
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text(
        "\n# aider chat started at 2024-08-01 10:00:00\n\n"
        "> Aider v0.48.1  \n> Models: claude-3-5-sonnet-20240620 with diff edit format  \n"
        "> Added app.py to the chat.  \n\n"
        "#### fix the bug  \n#### in app.py  \n\nHere is the fix.\n\n"
        "> Tokens: 12k sent, 3.1k cache write, 8.2k cache hit, 250 received. "
        "Cost: $0.02 message, $0.02 session.  \n> Applied edit to app.py  \n\n"
        "#### thanks  \n\nYou're welcome.\n\n"
        "> Tokens: 13k sent, 20 received. Cost: $0.01 message, $0.03 session.  \n"
    )
    session = load(str(chat))
    assert [r.usage.prompt_tokens for r in session.requests] == [12000, 13000]
    first = session.requests[0]
    assert (first.usage.cache_creation_input_tokens, first.usage.cache_read_input_tokens) == (
        3100,
        8200,
    )
    assert first.messages[-1].text == "fix the bug\nin app.py"
    assert [m.role for m in session.requests[1].messages] == ["user", "assistant", "user"]
    assert first.model == "claude-3-5-sonnet-20240620"


def test_bad_input_is_counted_or_one_line(tmp_path: Path, capsys: Any) -> None:
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_bytes(
        b"# aider chat started at 2024-08-01 10:00:00\n\n#### hi\n\n\xff\xfe broken\n"
        b"> Tokens: lots sent, 3 received.\n\n#### again\n\nok\n\n"
        b"> Tokens: 1.1k sent, 3 received.\n"
    )
    session = load(str(chat))
    assert len(session.requests) == 1 and session.requests[0].usage.prompt_tokens == 1100
    assert [s.line for s in session.skipped] == [6]  # the Tokens line it cannot read, counted
    gone = tmp_path / "gone" / ".aider.chat.history.md"
    assert main(["report", str(gone)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no such file" in err


def test_a_compressed_history_reads_as_the_plain_one(tmp_path: Path) -> None:
    """An xz or gzip copy (shared as every log is) reads as the file itself: it read as
    Aider's, with no request, the markdown not decompressed."""
    import gzip

    plain = load(str(_project(tmp_path, with_llm=False)))
    gz = tmp_path / "shared.md.gz"
    gz.write_bytes(gzip.compress((tmp_path / ".aider.chat.history.md").read_bytes()))
    for copy in (CAPTURE / "aider.chat.history.md.xz", gz):
        session = load(str(copy))
        assert (
            [r.usage.prompt_tokens for r in session.requests]
            == [r.usage.prompt_tokens for r in plain.requests]
            == [2500, 2600]
        )
