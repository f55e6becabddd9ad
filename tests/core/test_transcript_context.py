"""Context the Codex, Gemini CLI and qwen-code transcripts record besides the conversation:
memory files, skill listings and bodies, injected reminders, developer and base
instructions. Real corpus files where they hold such records, hand-written records
(named after the agents' own types) where the corpus has none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.ingest import load
from ctxviewer.model import MEMORY, SKILL_BODY, SKILL_LISTING, SYSTEM_REMINDER, Block, Request


def _write(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return str(path)


def _blocks(req: Request, tag: str) -> list[Block]:
    return [b for m in req.messages for b in m.blocks if b.tag == tag]


def _category(a: Analysis, index: int, name: str):
    return a.breakdown(index).category(name)


# --- Codex ----------------------------------------------------------------------------


def _item(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {
        "timestamp": "2025-12-10T10:00:01.000Z",
        "type": "response_item",
        "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
    }


def _token_count(total_in: int) -> dict[str, Any]:
    usage = {
        "input_tokens": total_in,
        "cached_input_tokens": 0,
        "output_tokens": 20,
        "reasoning_output_tokens": 0,
        "total_tokens": total_in + 20,
    }
    return {
        "timestamp": "2025-12-10T10:00:02.000Z",
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "last_token_usage": usage,
                "total_token_usage": usage,
                "model_context_window": 258400,
            },
        },
    }


BASE = "You are Codex, a coding agent. Keep answers short."
AGENTS_BODY = "Run the tests with pytest -q before every commit."
LISTING_ENTRY = "- lint: Run the linters. (file: /repo/.codex/skills/lint/SKILL.md)"
SKILLS_DEV = (
    "<skills_instructions>\n## Skills\nA skill is a set of local instructions.\n"
    "### Available skills\n- pdf: Read PDF files. (file: /u/.codex/skills/pdf/SKILL.md)\n"
    "- Discovery: skills are listed above; open SKILL.md to use one.\n"
    "</skills_instructions>"
)


def _codex_rollout(tmp_path: Path, developer_recorded: bool) -> str:
    # codex-rs protocol: RolloutItem::{SessionMeta, TurnContext, ResponseItem, EventMsg};
    # TurnContextItem.{base,user,developer}_instructions (0.5x-0.6x); the AGENTS.md message
    # ("# AGENTS.md instructions for <dir>") with render_skills_section's "## Skills";
    # <skills_instructions> and <permissions instructions> developer blocks; <skill> and
    # <user_shell_command> user messages (instruction_markers.rs).
    agents = (
        f"# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n{AGENTS_BODY}\n\n## Skills\n"
        "These skills are discovered at startup from multiple local sources.\n"
        f"{LISTING_ENTRY}\n</INSTRUCTIONS>"
    )
    records = [
        {
            "timestamp": "2025-12-10T10:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": "s1",
                "timestamp": "2025-12-10T10:00:00.000Z",
                "cwd": "/repo",
                "originator": "codex_cli_rs",
                "cli_version": "0.60.0",
                "source": "cli",
            },
        },
        {
            "timestamp": "2025-12-10T10:00:00.000Z",
            "type": "turn_context",
            "payload": {
                "cwd": "/repo",
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "read-only"},
                "model": "gpt-5.1-codex",
                "summary": "auto",
                "base_instructions": BASE,
                "user_instructions": AGENTS_BODY,
                "developer_instructions": "Answer in French.",
            },
        },
        _item(
            "developer",
            "<permissions instructions>\nFilesystem sandboxing: read-only.\n"
            "</permissions instructions>",
        ),
        _item("developer", SKILLS_DEV),
        *([_item("developer", "Answer in French.")] if developer_recorded else []),
        _item("user", agents),
        _item("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
        _item(
            "user",
            "<user_shell_command>\n<command>ls</command>\n<result>a.py</result>\n"
            "</user_shell_command>",
        ),
        _item(
            "user",
            "<skill>\n<name>pdf</name>\n<path>/u/.codex/skills/pdf/SKILL.md</path>\n"
            "Use pdftotext -layout.\n</skill>",
        ),
        _item("user", "fix the failing test"),
        _token_count(9000),
        _item("assistant", "Fixed."),
        _item("user", "thanks"),
        _token_count(9100),
    ]
    return _write(tmp_path / "rollout.jsonl", records)


def test_codex_injected_context_is_named_and_placed(tmp_path: Path) -> None:
    session = load(_codex_rollout(tmp_path, developer_recorded=False))
    assert session.skipped == []
    req = session.requests[0]
    reminders = {b.name for b in _blocks(req, SYSTEM_REMINDER)}
    assert reminders == {"permissions instructions", "environment_context", "user_shell_command"}
    memory = _blocks(req, MEMORY)  # the file, and the </INSTRUCTIONS> after its listing
    assert {b.name for b in memory} == {"/repo/AGENTS.md"}
    assert AGENTS_BODY in memory[0].text
    assert not any("## Skills" in b.text for b in memory)  # the listing Codex appends
    assert {b.name for b in _blocks(req, SKILL_LISTING)} == {"skills_instructions", "## Skills"}
    assert [b.name for b in _blocks(req, SKILL_BODY)] == ["pdf"]
    # base instructions and the unrecorded developer instructions are the system prompt
    assert req.system[0].text == BASE
    assert [b.name for b in req.system[1:]] == ["developer_instructions"]
    assert not any(b.tag == MEMORY for b in req.system)  # AGENTS.md came as a message

    a = Analysis(session, "qwen")
    skills = _category(a, 0, "skills")
    # the skills' entries, not the "Discovery" rule
    assert sorted(i.name for i in skills.items if i.kind == "skill") == ["lint", "pdf"]
    est = get_estimator("qwen")
    system = _category(a, 0, "system_prompt")
    assert system.tokens == sum(est.block(b) for b in req.system)
    tools = _category(a, 0, "unrecorded_overhead")
    assert tools.label == "Tools (not recorded)"
    inferred = req.usage.prompt_tokens - est.messages(req.messages)
    assert tools.tokens == inferred - system.tokens
    assert _category(a, 0, "memory_files").items[0].name == "/repo/AGENTS.md"


def test_codex_developer_instructions_recorded_as_a_message_count_once(tmp_path: Path) -> None:
    req = load(_codex_rollout(tmp_path, developer_recorded=True)).requests[0]
    assert [b.text for b in req.system] == [BASE]
    dev = [b for b in _blocks(req, SYSTEM_REMINDER) if b.name == "developer instructions"]
    assert [b.text for b in dev] == ["Answer in French."]


def test_codex_turn_instructions_are_memory_when_no_item_carries_them(tmp_path: Path) -> None:
    records = [
        {
            "timestamp": "t",
            "type": "turn_context",
            "payload": {"model": "gpt-5.1-codex", "user_instructions": AGENTS_BODY},
        },
        _item("user", "hi"),
        _token_count(5000),
    ]
    session = load(_write(tmp_path / "r.jsonl", records))
    req = session.requests[0]
    assert [(b.tag, b.name, b.text) for b in req.system] == [(MEMORY, "AGENTS.md", AGENTS_BODY)]
    est = get_estimator("qwen")
    a = Analysis(session, "qwen")
    memory = _category(a, 0, "memory_files")
    unrec = _category(a, 0, "unrecorded_overhead")
    assert memory.tokens == est.count(AGENTS_BODY)
    # the memory lives in the inferred overhead too: it is counted once, as memory
    assert unrec.tokens + memory.tokens == 5000 - est.messages(req.messages)


def test_codex_corpus_environment_context_is_a_named_reminder(corpus: Path) -> None:
    for path in sorted((corpus / "codex").glob("*.jsonl")):
        texts = []
        for line in path.read_text().splitlines():
            p = json.loads(line).get("payload") or {}
            if p.get("type") == "message" and p.get("role") == "user":
                texts += [
                    c["text"]
                    for c in p["content"]
                    if c.get("text", "").startswith("<environment_context>")
                ]
        assert texts, path.name  # both rollouts open with one
        session = load(str(path))
        assert session.skipped == []
        for req in session.requests:
            found = [b for b in _blocks(req, SYSTEM_REMINDER) if b.name == "environment_context"]
            assert [b.text for b in found] == texts[:1]
        a = Analysis(session, "qwen")
        last = a.breakdown(len(session.requests) - 1)
        names = [i.name for m in last.category("messages").items for i in m.items]
        assert any(n.startswith("text: [system_reminder: environment_context]") for n in names)


# --- Gemini CLI -----------------------------------------------------------------------

GEMINI_MEMORY = "Always run the app with uv run."


def test_gemini_session_context_memory_and_activated_skill(tmp_path: Path) -> None:
    # Gemini CLI: getEnvironmentContext's <session_context> (environmentContext.ts) holds
    # the memory between "--- Context from:" markers; activate_skill answers with
    # <activated_skill name="…">; 'info' records are UI notices.
    context = (
        "<session_context>\nThis is the Gemini CLI. We are setting up the context for our "
        f"chat.\nMy operating system is: linux\n\n--- Context from: GEMINI.md ---\n"
        f"{GEMINI_MEMORY}\n--- End of Context from: GEMINI.md ---\n</session_context>"
    )
    skill = '<activated_skill name="pdf">\n  <instructions>\n    Use pdftotext.\n  </instructions>'
    tokens = {"input": 8000, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": 8010}
    records = [
        {
            "sessionId": "g1",
            "projectHash": "h",
            "startTime": "2026-01-01T00:00:00.000Z",
            "lastUpdated": "2026-01-01T00:00:00.000Z",
            "kind": "main",
        },
        {
            "id": "m0",
            "timestamp": "2026-01-01T00:00:00.100Z",
            "type": "user",
            "content": [{"text": context}],
        },
        {
            "id": "i0",
            "timestamp": "2026-01-01T00:00:00.200Z",
            "type": "info",
            "content": "Loaded 1 skill.",
        },
        {
            "id": "m1",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "type": "user",
            "content": [{"text": "read report.pdf"}],
        },
        {
            "id": "m2",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "type": "gemini",
            "content": "",
            "model": "gemini-2.5-pro",
            "tokens": tokens,
            "toolCalls": [
                {
                    "id": "c1",
                    "name": "activate_skill",
                    "args": {"name": "pdf"},
                    "result": [
                        {
                            "functionResponse": {
                                "id": "c1",
                                "name": "activate_skill",
                                "response": {"output": skill},
                            }
                        }
                    ],
                }
            ],
        },
        {
            "id": "m3",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "type": "gemini",
            "content": "Done.",
            "model": "gemini-2.5-pro",
            "tokens": {**tokens, "input": 8100},
        },
    ]
    session = load(_write(tmp_path / "session-x.jsonl", records))
    assert session.skipped == []
    req = session.requests[1]
    (memory,) = _blocks(req, MEMORY)
    assert memory.name == "GEMINI.md" and GEMINI_MEMORY in memory.text
    reminder = _blocks(req, SYSTEM_REMINDER)
    assert {b.name for b in reminder} == {"session_context"}
    assert sorted(b.text for b in reminder + [memory]) == sorted(
        [
            context[: context.index("--- Context")],
            memory.text,
            context[context.index("</session_context>") :],
        ]
    )
    results = [b for m in req.messages for b in m.blocks if b.kind == "tool_result"]
    assert [(b.tag, b.name) for b in results] == [(SKILL_BODY, "activate_skill")]
    a = Analysis(session, "qwen")
    assert [i.name for i in _category(a, 1, "memory_files").items] == ["GEMINI.md"]


def test_gemini_corpus_counts_what_the_model_read(corpus: Path) -> None:
    path = (
        corpus / "gemini-cli" / "Mai0313__VibeCodingTracker__tests_fixtures_sessions_gemini.jsonl"
    )
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    init = next(r for r in raw if r.get("type") == "user")
    assert init["displayContent"] == [{"text": "/init"}]  # what the UI showed
    session = load(str(path))
    assert session.skipped == []  # its 'info' notices are quiet
    first_user = next(m for m in session.requests[0].messages if m.role == "user")
    assert first_user.text == init["content"][0]["text"]  # what the model read
    # the file records no memory, reminder or skill: none is made up
    for req in session.requests:
        assert not any(
            b.tag in (MEMORY, SYSTEM_REMINDER, SKILL_LISTING, SKILL_BODY)
            for m in req.messages
            for b in m.blocks
        )
    assert "GEMINI.md memory" in session.requests[0].notes[0]


# --- qwen-code ------------------------------------------------------------------------


def _qwen(
    uuid: str,
    parent: str | None,
    kind: str,
    parts: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "q1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "type": kind,
        "cwd": "/repo",
        "version": "0.20.0",
        **extra,
    }
    if parts is not None:
        rec["message"] = {"role": "model" if kind == "assistant" else "user", "parts": parts}
    return rec


def _usage(prompt: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": 5, "totalTokenCount": prompt + 5}


def test_qwen_records_the_model_never_saw_leave_the_history(tmp_path: Path) -> None:
    # qwen-code SessionApiHistoryAccumulator.add (session-api-history.ts): system records
    # other than chat_compression add nothing; a slash_command 'result' not sent to the
    # model removes its user input; realtime_message and code_mode_tool_result records are
    # not model history; a 'notification' user record is (a <task-notification> envelope).
    records = [
        _qwen("u1", None, "user", [{"text": "hello"}]),
        _qwen(
            "a1",
            "u1",
            "assistant",
            [{"text": "Hi."}],
            usageMetadata=_usage(7000),
            model="qwen3-coder-plus",
        ),
        _qwen("u2", "a1", "user", [{"text": "/stats"}]),
        _qwen(
            "s2",
            "u2",
            "system",
            subtype="slash_command",
            systemPayload={
                "phase": "result",
                "rawCommand": "/stats",
                "outputHistoryItems": [{"type": "assistant", "text": "42 calls"}],
            },
        ),
        _qwen(
            "n1",
            "s2",
            "user",
            [{"text": "<task-notification>\nbuild finished\n</task-notification>"}],
            subtype="notification",
            provenance="system",
        ),
        _qwen("r1", "n1", "user", [{"text": "spoken aside"}], subtype="realtime_message"),
        _qwen(
            "t1",
            "r1",
            "tool_result",
            [{"functionResponse": {"id": "x", "name": "code", "response": {"output": "1"}}}],
            subtype="code_mode_tool_result",
        ),
        _qwen(
            "u3",
            "t1",
            "user",
            [
                {"text": "<system-reminder>\nPlan mode is on.\n</system-reminder>"},
                {"text": "go on"},
            ],
        ),
        _qwen(
            "a2",
            "u3",
            "assistant",
            [{"text": "OK."}],
            usageMetadata=_usage(7100),
            model="qwen3-coder-plus",
        ),
    ]
    session = load(_write(tmp_path / "chat.jsonl", records))
    assert session.format == "qwen-code" and session.skipped == []
    req = session.requests[1]
    texts = [b.text for m in req.messages for b in m.blocks]
    assert "/stats" not in texts and "spoken aside" not in texts and "1" not in texts
    assert texts[:2] == ["hello", "Hi."] and texts[-1] == "go on"
    assert [b.name for b in _blocks(req, SYSTEM_REMINDER)] == ["notification", None]


def test_qwen_slash_command_sent_to_the_model_stays(tmp_path: Path) -> None:
    records = [
        _qwen("u1", None, "user", [{"text": "/review"}]),
        _qwen(
            "s1",
            "u1",
            "system",
            subtype="slash_command",
            systemPayload={
                "phase": "result",
                "rawCommand": "/review",
                "sentToModel": True,
                "outputHistoryItems": [{"type": "assistant"}],
            },
        ),
        _qwen("a1", "s1", "assistant", [{"text": "Reviewing."}], usageMetadata=_usage(6000)),
    ]
    req = load(_write(tmp_path / "chat.jsonl", records)).requests[0]
    assert [m.text for m in req.messages] == ["/review"]
