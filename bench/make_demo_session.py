"""Generate ctxviewer's bundled demo session: ``resources/demo-session.jsonl.xz``.

A fictional but plausible recording (docs/recording-format.md) of a developer
working with a coding agent on "shelfwise", a small FastAPI service: add
per-API-key rate limiting, with tests, replay last night's incident log
against it, then open a pull request. Everything in here (system prompt,
tool descriptions, memory files, source code, logs, conversation) was written
for this demo.

What the session contains, so that every view of ctxviewer has something to
show:

- ~50 main requests (Claude Code-like: 3 system blocks, 15 built-in tools, a
  ``Skill`` tool, two MCP servers ``github`` and ``postgres``), growing from
  ~18k to ~150k prompt tokens, then ONE compaction (a summary call, then the
  history replaced by a summary message), then growing again;
- two memory files in a ``<system-reminder>`` of the first user message, a
  skills listing in a mid-conversation ``system`` message, one skill body
  loaded through the Skill tool, system reminders, thinking blocks, one
  image, pytest failures then passes, a git diff, grep output, log reads;
- one ``Task`` sub-agent (an explorer with its own, shorter system prompt and
  a read-only tool set) making 6 requests;
- auxiliary calls: topic/title detection with a Haiku model (no tools) and
  the compaction summary call (no tools).

Usage numbers are computed, not invented: the prompt of every request is
counted with tiktoken cl100k on the JSON of system + tools + messages, times
1.08 (Claude's tokenizer counts a little more), and split into prompt-cache
fields the way Claude Code's usage looks (the previous request's prompt is
read from cache, the new tail is written to it, 1-10 uncached tokens).

Deterministic: a fixed random seed, fixed clock, no network.

    python bench/make_demo_session.py [--out resources/demo-session.jsonl.xz]
"""

from __future__ import annotations

import argparse
import base64
import difflib
import gzip
import hashlib
import io
import json
import lzma
import random
import re
import struct
import sys
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxviewer.analysis.bpe import encoding  # noqa: E402

MODEL = "claude-sonnet-4-5-20250929"
HAIKU = "claude-haiku-4-5-20251001"
CLAUDE_FACTOR = 1.08
CACHE_TTL = 300.0  # seconds: Anthropic's 5-minute prompt cache
START = datetime(2025, 11, 18, 13, 42, 7, 318000, tzinfo=timezone.utc)
HOME = "/home/maya"
REPO = "/home/maya/code/shelfwise"
SESSION_ID = "5b0d7f3e-2c41-4a8e-9d55-7e1f0c93a6b2"
USER_ID = ("user_" + hashlib.sha256(b"maya@shelfwise-demo").hexdigest()
           + "_account__session_" + SESSION_ID)

rng = random.Random(20251118)


# ---------------------------------------------------------------------------
# Token counting
# ---------------------------------------------------------------------------

_ENC = encoding("cl100k_base")
_COUNTS: dict[str, int] = {}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def raw_tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else dumps(obj)
    n = _COUNTS.get(text)
    if n is None:
        n = _COUNTS[text] = len(_ENC.encode_ordinary(text))
    return n


TOOLS_PREAMBLE = 346  # the tool-use instructions Anthropic adds when tools are declared


def _block_tokens(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return raw_tokens(block["text"]) + 3
    if kind == "thinking":
        return raw_tokens(block["thinking"]) + 3
    if kind == "tool_use":
        return raw_tokens(block["name"]) + raw_tokens(block["input"]) + 8
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return sum(_block_tokens(x) for x in content) + 8
        return raw_tokens(content or "") + 8
    if kind == "image":
        data = base64.b64decode(block["source"]["data"])
        w, h = struct.unpack(">II", data[16:24])
        return max(1, round(w * h / 750))
    return raw_tokens(block)


def _message_tokens(message: dict[str, Any]) -> int:
    content = message["content"]
    if isinstance(content, str):
        return raw_tokens(content) + 4
    return sum(_block_tokens(x) for x in content) + 4


def prompt_tokens(body: dict[str, Any]) -> int:
    """What the API would report for this request's prompt.

    cl100k counts of what the model reads (system text, tool schemas as JSON,
    message contents; ids, signatures and cache markers are not read), plus a
    few tokens of framing per block, times CLAUDE_FACTOR. Images cost
    width * height / 750 tokens, Anthropic's rule.
    """
    raw = sum(raw_tokens(x["text"]) + 3 for x in body.get("system", []))
    if body.get("tools"):
        raw += raw_tokens(body["tools"]) + TOOLS_PREAMBLE
    raw += sum(_message_tokens(m) for m in body["messages"])
    return round(raw * CLAUDE_FACTOR)


def output_tokens(content: list[dict[str, Any]]) -> int:
    raw = 0
    for block in content:
        if block["type"] == "text":
            raw += raw_tokens(block["text"])
        elif block["type"] == "thinking":
            raw += raw_tokens(block["thinking"])
        elif block["type"] == "tool_use":
            raw += raw_tokens(block["input"]) + 12
    return max(1, round(raw * CLAUDE_FACTOR) + 4)


def _ident(prefix: str, seed: str, n: int = 24) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return prefix + "".join(alphabet[b % len(alphabet)] for b in digest[:n])


def iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------
# A tiny PNG (the dashboard screenshot the user pastes)
# ---------------------------------------------------------------------------

def _png(width: int, height: int, pixels: list[bytearray]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def dashboard_png() -> str:
    """A 192x96 'requests per second' panel: dark background, grid, a spike."""
    w, h = 192, 96
    bg, grid, line, warn = (24, 27, 31), (44, 48, 54), (115, 191, 105), (242, 73, 92)
    rows = [bytearray(bg * w) for _ in range(h)]

    def put(x: int, y: int, c: tuple[int, int, int]) -> None:
        if 0 <= x < w and 0 <= y < h:
            rows[y][3 * x:3 * x + 3] = bytes(c)

    for y in range(0, h, 16):
        for x in range(w):
            put(x, y, grid)
    for x in range(0, w, 32):
        for y in range(h):
            put(x, y, grid)
    prev = None
    for x in range(w):
        base = 78 - int(6 * ((x * 7919) % 13) / 13)
        y = base - (62 if 118 <= x <= 146 else 0) + (3 if 118 <= x <= 146 and x % 3 == 0 else 0)
        if prev is not None:
            for yy in range(min(prev, y), max(prev, y) + 1):
                put(x, yy, warn if 118 <= x <= 146 else line)
        put(x, y, warn if 118 <= x <= 146 else line)
        prev = y
    for x in range(w):  # the 429 threshold the user drew in
        if x % 6 < 3:
            put(x, 40, (250, 222, 42))
    return base64.b64encode(_png(w, h, rows)).decode()


# ---------------------------------------------------------------------------
# System prompts
# ---------------------------------------------------------------------------

IDENTITY = "You are Claude Code, Anthropic's command-line coding agent."

SYSTEM_MAIN = """
You are an interactive command-line agent that helps people with software engineering work: fixing bugs, adding features, refactoring, explaining code, reviewing changes and running the project's tooling. Use the instructions below and the tools available to you to help the user.

IMPORTANT: Help with defensive security work only. Refuse to write or improve code that is clearly meant to attack systems, steal credentials or evade detection. Security analysis, detection rules, vulnerability explanations and hardening are fine.
IMPORTANT: Never guess URLs. Only use URLs the user gave you, URLs found in the project, or URLs you are confident are documentation for the tools in use.

If the user asks how to use this CLI, how to give feedback, or how to report a problem, tell them:
- /help shows the available commands and options
- problems and feature requests go to the issue tracker of the CLI's public repository

# Tone and style
Be concise, direct and to the point. Your output is rendered in a terminal with a monospace font and CommonMark markdown, so keep formatting light: short paragraphs, bullet lists where they help, code in fenced blocks with a language tag.
- Match the length of your answer to the complexity of the question. A one-line question gets a one-line answer. Do not add a preamble ("Sure! Here is...") or a recap of what you just did unless the user asks for one.
- Do not use emojis unless the user asks for them.
- Explain a non-trivial shell command before you run it when it changes the user's system or repository, so the user understands what will happen.
- Text you write outside of tool calls is shown to the user. Never use tool calls, code comments or shell `echo` as a way to talk to the user.
- If you cannot or will not help with something, say so in one or two sentences without lecturing, and offer an alternative when there is one.
- Prefer exact numbers and file paths over vague statements. "3 of 14 tests fail in tests/test_ratelimit.py" is better than "some tests fail".

Examples of the expected brevity:
user: what command runs the linters here?
assistant: `uv run ruff check . && uv run mypy app`

user: is the cache module used anywhere?
assistant: [searches for imports of the module]
Yes, in app/routes/search.py and app/auth.py.

# Professional objectivity
Put technical accuracy ahead of agreeing with the user. If an approach the user suggests has a problem, say so plainly and explain the trade-off; if you are not sure, investigate before answering instead of confirming what the user seems to believe. Respectful, honest disagreement is more useful than reassurance.

# Proactiveness
Do what the user asked, including the obvious follow-up steps that are part of doing it well, but do not surprise them:
- When the user asks how to approach something, answer the question first; do not start editing files.
- Do not add features, refactors or "improvements" beyond the request. A bug fix does not need the surrounding code cleaned up.
- Do not write summaries, reports or documentation files unless asked. Tell the user what changed in the final message instead.

# Following the project's conventions
Before you change a file, understand how the surrounding code is written and follow it: naming, formatting, typing, error handling, logging and test style.
- Never assume a library is available. Check the project's dependency files (pyproject.toml, package.json, Cargo.toml, go.mod...) or existing imports before using one.
- When you create a new component, look at an existing one first and copy its structure, framework choices and conventions.
- Follow the security practices of the codebase. Never log, print or commit secrets, tokens or API keys.

# Code style
- Do not add comments that restate what the code does. Comment the why when it is not obvious: a workaround, an invariant, a surprising constraint.
- Keep functions small and names descriptive. Match the existing type-annotation density of the project.
- Do not leave dead code, debug prints or commented-out blocks behind.

# Task management
You have the TodoWrite tool to plan and track multi-step work. Use it often for tasks with three or more steps, and whenever the user gives you a list of things to do. It keeps you on track and shows the user your progress.
- Create the list before you start, with concrete, verifiable items.
- Mark an item in_progress when you start it (only one at a time) and completed as soon as it is done. Do not batch several completions.
- Add items when you discover new work, for example when a test run reveals failures you have to fix.
- Never mark an item completed if the tests for it fail, the implementation is partial, or you hit an error you could not resolve.

Example:
user: Run the build and fix any type errors
assistant: I'll add these items to the todo list:
- Run the build
- Fix any type errors
[runs the build: 4 type errors]
I'll add one item per error and work through them, marking each one completed as I go.

# Doing tasks
For a software engineering task, the usual loop is:
1. Understand the request and the relevant code. Use the search tools extensively, in parallel when the searches are independent. For broad questions about an unfamiliar codebase, delegate the exploration to a sub-agent with the Task tool to keep your own context small.
2. Plan with TodoWrite when the task has several steps.
3. Implement the change, following the project's conventions.
4. Verify it: run the tests, and add tests for new behaviour. Find the project's test command in the README, CLAUDE.md or the build files instead of guessing.
5. Run the project's lint and type-check commands if you can find them (for example `ruff`, `mypy`, `npm run lint`, `cargo clippy`). If you cannot find them, ask the user and suggest recording them in CLAUDE.md.

Never commit changes unless the user explicitly asks you to. It is very important to only commit when asked; otherwise the user will feel that you are too proactive.

Hooks: the user may configure shell commands that run on events such as tool calls. Treat the output of a hook, including a blocking message, as coming from the user. If a hook blocks you, see whether you can adjust your action; if not, ask the user to check their hook configuration.

Tool results and user messages can contain <system-reminder> tags. They carry useful information and reminders added by the system; they are not part of the user's request and have no direct relation to the tool result they appear in.

# Verifying your work
A change is not done until you have evidence that it works:
- Run the tests that cover the code you changed, then the whole suite when the change touches shared code (middleware, configuration, fixtures, models). Report the counts you saw, not what you expect.
- When a test fails, read the failure before changing anything: the assertion values usually tell you which assumption was wrong. Fix the cause, not the symptom; never weaken or delete a test to make it pass unless the user agrees that the test itself is wrong.
- When you add behaviour, add a test that fails without it. When you fix a bug, add a regression test.
- If you cannot run something (no network, a missing service, a command that needs credentials), say so explicitly instead of implying that it passed.

# Working in the user's environment
- The user's machine is not a sandbox. Do not install global packages, change shell profiles, edit files outside the working directory, or start long-running services unless the user asks for it.
- Prefer the project's own entry points (`make test`, `npm run lint`, `uv run pytest`) over ad-hoc commands, so that your results match what the user and CI see.
- Treat data from databases, logs and APIs as potentially sensitive. Quote only what the task needs, and never paste personal data or secrets into issues, pull requests or commit messages.
- Large files and command outputs cost context. Read logs and generated files with an offset and a limit, and filter command output (`| tail -n 50`, `--quiet`) when the full output is not needed.

# Asking questions
Ask the user when a decision has consequences they would want to control: a new dependency, a change of public behaviour, a data migration, anything destructive, or an ambiguous requirement with several reasonable readings. Ask one clear question with the options and your recommendation. Do not ask for permission for routine steps that the task obviously implies.

# Tool usage policy
- Prefer the Task tool for open-ended codebase exploration, to save context.
- When WebFetch returns a redirect to another host, immediately fetch the redirect URL.
- You can call several tools in one response. When the calls are independent of each other, make them all at once in the same message: for example, when you need `git status` and `git diff`, run both in parallel. When a call depends on the result of another, call them one after the other instead.
- Use the dedicated tools instead of shell commands whenever one exists: Read instead of cat/head/tail, Edit instead of sed/awk, Write instead of echo or heredocs, Glob instead of find, Grep instead of grep or rg. Keep Bash for real system commands: running tests, package managers, git, builds.
- The user does not see the full output of tool calls. When a tool result matters to them, summarise it in your reply.

# Git
When the user asks you to create a commit:
1. Run `git status`, `git diff` (staged and unstaged) and `git log -n 5 --oneline` in parallel to see what changed and how commit messages are written in this repository.
2. Stage only the files that belong to the change. Do not commit files that likely contain secrets (.env, credentials.json, private keys) and warn the user if they asked for that.
3. Write a message that explains why the change was made, in the style of the repository, in one or two sentences plus an optional body.
4. If a pre-commit hook changes files, stage them and create the commit again once. Never skip hooks (--no-verify) unless the user asks for it.
- Never update the git config, never force-push to main or master, and never run interactive commands (`git rebase -i`, `git add -i`) since they need input you cannot give.
- Do not push unless the user asks you to.

# Pull requests
Use the GitHub tools (or the `gh` command when they are unavailable) for anything related to GitHub: issues, pull requests, checks, releases. When the user asks you to open a pull request:
1. Check the state of the branch: uncommitted changes, whether it tracks a remote branch and is up to date, and the full list of commits since it diverged from the base branch (`git log` and `git diff base...HEAD`).
2. Draft a title and a description that cover ALL the commits of the branch, not only the latest one: a short summary, then a test plan as a checklist.
3. Create the branch and push it if needed, then open the pull request and give the user its URL.

# Code references
When you refer to a specific function or piece of code, use the `file_path:line_number` pattern so the user can jump to it:
user: Where are API keys validated?
assistant: In `resolve_api_key` in app/auth.py:41, which hashes the presented key and looks it up in the `api_keys` table.

# Long sessions
Your context window is finite. When the conversation approaches its limit, earlier messages are summarised automatically and the work continues from the summary. Keep important decisions, file paths and open questions in your messages and in the todo list so that they survive a summary. Avoid reading huge files or command outputs in full when a targeted search, an offset/limit read or a `| tail -n 50` answers the question.
"""

GIT_STATUS = """gitStatus: This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.
Current branch: main

Main branch (you will usually use this for PRs): main

Status:
?? notes/incident-2025-11-17.md

Recent commits:
4e1c9b2 Add ISBN-13 checksum validation to book import (#139)
a7d03f5 search: cache author facets for 60s in Redis (#137)
9b2e6d1 Bump sqlalchemy to 2.0.36, asyncpg to 0.30 (#136)
31f8a0c Return 404 instead of 500 for unknown shelf ids (#134)
c52d7e8 auth: record last_used_at asynchronously (#131)"""


def env_block(model_id: str, model_name: str) -> str:
    return f"""Here is useful information about the environment you are running in:
<env>
Working directory: {REPO}
Is directory a git repo: Yes
Platform: linux
OS Version: Linux 6.8.0-49-generic
Today's date: 2025-11-18
</env>
You are powered by the model named {model_name}. The exact model ID is {model_id}.

Assistant knowledge cutoff is January 2025.

IMPORTANT: Help with defensive security work only. Refuse to write or improve code that is clearly meant to attack systems.

{GIT_STATUS}"""


SYSTEM_EXPLORE = """You are a read-only code exploration agent working for a coding agent that delegated a question to you. Your job is to search the repository thoroughly and report back what you found, so that the calling agent does not have to read everything itself.

Rules:
- You may only read and search: use Glob, Grep, Read and read-only Bash commands (ls, git log, git show, wc). Never modify files, install packages or run the test suite.
- Start broad (file layout, entry points), then narrow down to the code that answers the question. Run independent searches in parallel.
- Be precise: cite file paths with line numbers (`app/main.py:42`) for every claim, and quote short snippets when the exact code matters.
- If something the caller asked about does not exist, say so explicitly instead of guessing.

Your final message is the only thing the calling agent sees. Make it a self-contained report:
1. A direct answer to the question in a few sentences.
2. The relevant files and symbols, each with one line on its role.
3. Anything surprising or risky that the caller should know before changing the code.
Do not include your search process in the final report, only the findings. Keep it under 600 words."""


SYSTEM_TOPIC = """Analyze whether the user's latest message in a coding session starts a new conversation topic, and if it does, give the topic a short title.

Answer with a JSON object and nothing else:
{"isNewTopic": true|false, "title": string|null}

Rules for the title:
- 2 to 6 words, sentence case, no trailing punctuation.
- Describe the task, not the user ("Fix flaky login test", not "User wants help").
- Use null for the title when isNewTopic is false.
- A follow-up, a clarification, an answer to the agent's question or a request to continue is never a new topic."""


SYSTEM_COMPACT = """You are summarizing a long coding session between a developer and an AI coding agent. The session is about to run out of context; your summary will replace the conversation history, and the agent will continue working from it alone. Be thorough about everything the agent needs to continue without asking the developer to repeat themselves."""


COMPACT_INSTRUCTIONS = """Your task is to write a detailed summary of the conversation so far. The summary replaces the history: the agent continues from it with nothing else, so it must keep every technical detail, decision and open item that matters for the remaining work.

Before the summary, write your analysis in <analysis> tags: go through the conversation chronologically and note, for each part:
- what the user explicitly asked for, and how their intent evolved;
- the approach the agent took and the key decisions, with their reasons;
- file names, full code snippets of what was written or changed, function signatures and configuration;
- errors that happened and how they were fixed, with special attention to feedback from the user;
- what remains to be done.

Then write the summary in <summary> tags, with these sections:
1. Primary Request and Intent: all of the user's explicit requests, in detail.
2. Key Technical Concepts: technologies, frameworks and designs discussed.
3. Files and Code Sections: every file read, created or modified, why it matters, and the important code (full snippets for the most recent changes).
4. Errors and Fixes: each error and how it was resolved; user feedback on it.
5. Problem Solving: problems solved and investigations still running.
6. All User Messages: every message the user wrote that is not a tool result, verbatim or nearly so.
7. Pending Tasks: what the user asked for that is not done yet.
8. Current Work: precisely what was being worked on right before this summary, with file names and code.
9. Optional Next Step: the next step that directly continues the most recent work, quoting the latest request so the agent does not drift. Only include it if it follows from the user's explicit requests.

Do not call any tools. Answer with the analysis and the summary only."""


def system_blocks(kind: str, model_id: str = MODEL, model_name: str = "Sonnet 4.5") -> list[dict[str, Any]]:
    cc = {"type": "ephemeral"}
    if kind == "main":
        return [
            {"type": "text", "text": IDENTITY, "cache_control": cc},
            {"type": "text", "text": SYSTEM_MAIN, "cache_control": cc},
            {"type": "text", "text": env_block(model_id, model_name), "cache_control": cc},
        ]
    if kind == "explore":
        return [
            {"type": "text", "text": IDENTITY, "cache_control": cc},
            {"type": "text", "text": SYSTEM_EXPLORE + "\n\n" + env_block(model_id, model_name),
             "cache_control": cc},
        ]
    if kind == "topic":
        return [{"type": "text", "text": IDENTITY}, {"type": "text", "text": SYSTEM_TOPIC}]
    if kind == "compact":
        return [{"type": "text", "text": SYSTEM_COMPACT}]
    raise ValueError(kind)


# ---------------------------------------------------------------------------
# Tool declarations
# ---------------------------------------------------------------------------

SCHEMA = "http://json-schema.org/draft-07/schema#"


def tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description, "input_schema": {
        "type": "object", "properties": properties, "required": required,
        "additionalProperties": False, "$schema": SCHEMA}}


def s(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **extra}


def n(desc: str, kind: str = "number", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "description": desc, **extra}


def b(desc: str) -> dict[str, Any]:
    return {"type": "boolean", "description": desc}


AGENT_TYPES = """Available agent types for the Task tool:
- general-purpose: General agent for researching complex questions, searching for code and running multi-step tasks. Use it when you are not confident that you will find the right match in the first few tries. (Tools: *)
- Explore: Fast read-only agent for exploring codebases: finding files by pattern, searching code for keywords, answering "how does X work here" questions. Say how thorough it should be: "quick", "medium" or "very thorough". (Tools: Glob, Grep, Read, Bash)
- Plan: Architect agent that designs an implementation plan for a larger change: the steps, the files involved and the trade-offs. It does not write code. (Tools: Glob, Grep, Read, WebFetch)
- code-reviewer: Reviews a diff for correctness, missing tests and security problems before it is committed. Defined in ~/.claude/agents/code-reviewer.md. (Tools: Glob, Grep, Read, Bash)

When several agents can work independently, launch them in a single message with several Task calls so they run concurrently."""

SKILLS = [
    ("python-testing", "Conventions and recipes for writing pytest suites in this user's Python services: fixtures, async tests, fakes for Redis and Postgres, time control, and what a good regression test looks like. Use when writing or fixing Python tests."),
    ("write-pr", "Draft a pull request title and description from the branch's commits and diff, in the team's template (summary, motivation, test plan, rollout notes). Use before opening a PR."),
    ("security-review", "Review pending changes for security problems: authn/authz mistakes, injection, secrets in code or logs, unsafe deserialization, missing rate limits. Produces a findings list with severities."),
    ("alembic-migration", "Create and check an Alembic migration for a SQLAlchemy model change: autogenerate, review the script, test upgrade/downgrade against a scratch database."),
    ("incident-report", "Write a blameless incident report (timeline, impact, root cause, follow-ups) from logs, dashboards and chat notes. Use after an outage or abuse event."),
    ("release-notes", "Turn merged pull requests since the last tag into user-facing release notes grouped by area. Use when preparing a release."),
    ("pdf-extract", "Extract text and tables from PDF files (invoices, specs, papers) into Markdown. Use when the user gives you a PDF."),
]

SKILLS_LISTING = ("The following skills are available for use with the Skill tool:\n\n"
                  + "\n".join(f"- {name}: {desc}" for name, desc in SKILLS))

SYSTEM_MESSAGE_TEXT = AGENT_TYPES + "\n\n" + SKILLS_LISTING


def builtin_tools() -> list[dict[str, Any]]:
    todo_item = {"type": "object", "properties": {
        "content": {"type": "string", "minLength": 1},
        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
        "activeForm": {"type": "string", "minLength": 1}},
        "required": ["content", "status", "activeForm"], "additionalProperties": False}
    return [
        tool("Task", """Launch a sub-agent that works on a task autonomously with its own context window and reports back once.

Each agent type has its own instructions and tool set (see the list of available agent types in the conversation). Choose the agent type that fits the task with the subagent_type parameter.

When to use it:
- Open-ended searches in an unfamiliar codebase ("where and how are requests authenticated?"), where you would otherwise read many files yourself.
- Independent pieces of research that can run in parallel: launch several agents in one message.
- Work whose intermediate steps you do not need to see, only the result.

When NOT to use it:
- To read a specific file you already know the path of: use Read.
- To look for a specific class or function definition: use Grep or Glob, which is faster.
- For tasks that need to change files in several places step by step: do them yourself so the user can follow.

Usage notes:
1. The agent's final message is returned to you as the tool result; the user does not see it. Summarise what matters for the user.
2. Each invocation is stateless: you cannot send follow-up messages to the agent. Write a detailed prompt that says exactly what to find and what to report, including whether the agent may change code.
3. The agent's output should generally be trusted, but verify claims that your next change depends on.
4. If the user asks for agents to run "in parallel", send a single message with several Task calls.""",
             {"description": s("A short (3-5 word) description of the task"),
              "prompt": s("The task for the agent to perform"),
              "subagent_type": s("The type of specialized agent to use for this task")},
             ["description", "prompt", "subagent_type"]),
        tool("Bash", """Executes a bash command in a persistent shell session with an optional timeout, with proper handling and security measures.

Before running a command:
1. Directory check: if the command creates files or directories, first use `ls` to check that the parent directory exists and is the right one.
2. Quoting: always quote paths that contain spaces with double quotes, e.g. `cd "/Users/name/My Documents"`.

Usage notes:
- The command argument is required. The timeout is optional, in milliseconds, up to 600000 (10 minutes); the default is 120000 (2 minutes).
- Write a clear, concise description of what the command does in 5-10 words.
- Output longer than 30000 characters is truncated before it is returned to you.
- Use run_in_background for long-running processes (dev servers, watchers); read their output later with BashOutput. You do not need to append '&'.
- Avoid `find`, `grep`, `cat`, `head`, `tail`, `sed`, `awk` and `echo` for reading, searching or writing files: the Glob, Grep, Read, Edit and Write tools are faster and their results are easier for the user to review.
- Chain dependent commands with `&&`; use `;` only when later commands should run even if earlier ones fail. Do not use newlines to separate commands (newlines inside quoted strings are fine).
- Keep the working directory stable: prefer absolute paths over `cd`. Use `cd` only when the user asks for it.

Committing and pull requests: follow the Git and Pull requests sections of your instructions. Pass commit messages through a heredoc so that their formatting survives, for example:
git commit -m "$(cat <<'EOF'
Short summary line

Longer explanation.
EOF
)"

Never use git commands with the -i flag, never change the git config, and never push or force-push unless the user explicitly asks for it.""",
             {"command": s("The command to execute"),
              "timeout": n("Optional timeout in milliseconds (max 600000)"),
              "description": s("Clear, concise description of what this command does in 5-10 words, in active voice. Examples: 'List files in current directory', 'Run unit tests for the rate limiter'"),
              "run_in_background": b("Set to true to run this command in the background. Use BashOutput to read the output later.")},
             ["command"]),
        tool("Glob", """Fast file pattern matching that works with any codebase size.
- Supports glob patterns like "**/*.py" or "app/**/*.{ts,tsx}".
- Returns matching file paths sorted by modification time, newest first.
- Use it when you need to find files by name or extension.
- For open-ended searches that may need several rounds of globbing and grepping, use the Task tool instead.
- You can call several Glob searches in parallel in one response; it is often useful to do so.""",
             {"pattern": s("The glob pattern to match files against"),
              "path": s("The directory to search in. If not specified, the current working directory is used. Omit this field for the default directory; do not pass \"undefined\" or \"null\".")},
             ["pattern"]),
        tool("Grep", """A powerful search tool built on ripgrep.

Usage:
- ALWAYS use Grep for searching file contents. Never run `grep` or `rg` through the Bash tool: Grep is optimised for the permissions and output handling of this environment.
- Supports full regular expression syntax (e.g. "log.*Error", "def\\s+\\w+"). The syntax is ripgrep's, not grep's: literal braces need escaping (use `interface\\{\\}` to find `interface{}` in Go code).
- Filter files with the glob parameter (e.g. "*.py", "**/*.tsx") or the type parameter (e.g. "py", "js", "rust").
- Output modes: "files_with_matches" shows only file paths (default), "content" shows matching lines (supports -A/-B/-C context and -n line numbers), "count" shows match counts per file.
- Patterns match within single lines by default. For patterns that span lines, like `struct \\{[\\s\\S]*?field`, set multiline: true.
- Use the Task tool for open-ended searches that need several rounds.""",
             {"pattern": s("The regular expression pattern to search for in file contents"),
              "path": s("File or directory to search in. Defaults to the current working directory."),
              "glob": s("Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")"),
              "output_mode": s("Output mode: \"content\" shows matching lines, \"files_with_matches\" shows file paths (default), \"count\" shows match counts.",
                               enum=["content", "files_with_matches", "count"]),
              "-B": n("Number of lines to show before each match. Requires output_mode \"content\"."),
              "-A": n("Number of lines to show after each match. Requires output_mode \"content\"."),
              "-C": n("Number of lines to show before and after each match. Requires output_mode \"content\"."),
              "-n": b("Show line numbers in the output. Requires output_mode \"content\"."),
              "-i": b("Case insensitive search"),
              "type": s("File type to search (rg --type), e.g. py, js, rust, go. More efficient than glob for standard file types."),
              "head_limit": n("Limit the output to the first N lines or entries, like \"| head -N\"."),
              "multiline": b("Enable multiline mode where . matches newlines and patterns can span lines. Default: false.")},
             ["pattern"]),
        tool("Read", """Reads a file from the local filesystem. You can read any file directly with this tool; if the user gives you a path, assume it is valid. Reading a file that does not exist returns an error, which is fine.

Usage:
- file_path must be an absolute path, not a relative one.
- By default it reads up to 2000 lines from the start of the file. For long files you can pass an offset and a limit (useful for logs), but prefer reading the whole file when it is short.
- Lines longer than 2000 characters are truncated.
- Results are returned like `cat -n`: line numbers start at 1.
- It can read images (PNG, JPG...): the image is shown to you, since you are a multimodal model. It can read PDF files page by page and Jupyter notebooks with all their cells and outputs.
- It reads files only, not directories: use `ls` through Bash for those.
- Call it several times in one response to read several files at once; that is usually better than reading them one by one.
- If the file exists but is empty, you get a system reminder instead of the contents.""",
             {"file_path": s("The absolute path to the file to read"),
              "offset": n("The line number to start reading from. Only provide if the file is too large to read at once"),
              "limit": n("The number of lines to read. Only provide if the file is too large to read at once.")},
             ["file_path"]),
        tool("Edit", """Performs an exact string replacement in a file.

Usage:
- You must use Read on the file at least once in this conversation before editing it; editing a file you have not read fails.
- When you copy text from the Read output, keep the exact indentation (tabs and spaces) that follows the line-number prefix. The prefix itself (spaces, line number, tab) is not part of the file: never include it in old_string or new_string.
- Always prefer editing existing files over writing new ones.
- The edit fails if old_string is not unique in the file. Include more surrounding context to make it unique, or use replace_all to change every occurrence.
- replace_all is handy for renaming a variable across a file.
- Do not add emojis to files unless asked.""",
             {"file_path": s("The absolute path to the file to modify"),
              "old_string": s("The text to replace"),
              "new_string": s("The text to replace it with (must be different from old_string)"),
              "replace_all": {"type": "boolean", "default": False,
                              "description": "Replace all occurrences of old_string (default false)"}},
             ["file_path", "old_string", "new_string"]),
        tool("MultiEdit", """Makes several edits to one file in a single operation. Prefer it over several Edit calls when you change several places of the same file.

- Edits are applied in order, each one to the result of the previous one.
- The operation is atomic: if any edit fails, none is applied.
- Each edit follows the rules of the Edit tool (exact match, unique unless replace_all, the file must have been read first).
- Plan the edits so that an earlier edit does not change the text a later one looks for.""",
             {"file_path": s("The absolute path to the file to modify"),
              "edits": {"type": "array", "minItems": 1, "description": "Array of edit operations to perform sequentially on the file",
                        "items": {"type": "object", "properties": {
                            "old_string": s("The text to replace"),
                            "new_string": s("The text to replace it with"),
                            "replace_all": {"type": "boolean", "default": False,
                                            "description": "Replace all occurrences of old_string (default false)."}},
                            "required": ["old_string", "new_string"], "additionalProperties": False}}},
             ["file_path", "edits"]),
        tool("Write", """Writes a file to the local filesystem, replacing it if it exists.

Usage:
- If the file already exists, you must Read it first in this conversation, otherwise the write fails.
- Prefer editing existing files. Never create files that the task does not need, and never create documentation files (*.md, README) unless the user asks for them.
- Do not add emojis to files unless asked.""",
             {"file_path": s("The absolute path to the file to write (must be absolute, not relative)"),
              "content": s("The content to write to the file")},
             ["file_path", "content"]),
        tool("NotebookEdit", """Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb). notebook_path must be absolute. cell_id selects the cell; with edit_mode=insert the new cell goes after it (or at the start when cell_id is omitted); edit_mode=delete removes it.""",
             {"notebook_path": s("The absolute path to the Jupyter notebook file to edit"),
              "cell_id": s("The ID of the cell to edit. When inserting, the new cell is inserted after this cell."),
              "new_source": s("The new source for the cell"),
              "cell_type": s("The type of the cell. Required for edit_mode=insert.", enum=["code", "markdown"]),
              "edit_mode": s("The type of edit to make (replace, insert, delete). Defaults to replace.",
                             enum=["replace", "insert", "delete"])},
             ["notebook_path", "new_source"]),
        tool("WebFetch", """Fetches content from a URL and processes it with a small, fast model.

- Takes a URL and a prompt. The page is fetched, converted from HTML to Markdown, and the prompt is run over it; you get the model's answer, not the raw page.
- Use it to read documentation, specifications and web pages.
- If an MCP tool that fetches web content is available, prefer it: it may have fewer restrictions.
- The URL must be fully formed and valid; HTTP is upgraded to HTTPS.
- The prompt should say exactly what information you want from the page.
- Read-only: it never modifies anything. Results may be summarised when the page is very large.
- Responses are cached for 15 minutes, so repeated fetches of the same URL are fast.
- When the URL redirects to a different host, the tool tells you so and returns the redirect URL; fetch that URL with a new request.""",
             {"url": s("The URL to fetch content from", format="uri"),
              "prompt": s("The prompt to run on the fetched content")},
             ["url", "prompt"]),
        tool("WebSearch", """Searches the web and returns result blocks (title, URL, snippet) to inform your answer with information newer than your training data.

- Use it for current events, recent releases and documentation that may have changed.
- Domain filtering is supported to include or block specific websites.
- Always cite the URLs you relied on in your answer to the user.
- The search runs in the user's region; results may vary by location.""",
             {"query": s("The search query to use", minLength=2),
              "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "Only include search results from these domains"},
              "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "Never include search results from these domains"}},
             ["query"]),
        tool("TodoWrite", """Creates and manages a structured task list for the current session. It helps you track progress, organise complex work, and shows the user that you are being thorough.

When to use it:
1. Complex tasks with three or more distinct steps.
2. Non-trivial work that needs planning.
3. When the user gives you several things to do (numbered or comma-separated).
4. When new requirements appear while you work: add them right away.
5. When you start a task (mark it in_progress) and finish it (mark it completed).

When NOT to use it:
1. A single, straightforward task.
2. Trivial work that takes less than three steps.
3. Purely conversational or informational requests.

Task states:
- pending: not started
- in_progress: being worked on; exactly one task at a time
- completed: finished successfully

Each task has two forms: content, the imperative ("Run the tests"), and activeForm, the present continuous shown while it runs ("Running the tests").

Rules:
- Update the status in real time; mark a task completed immediately after finishing it.
- Only mark a task completed when it is fully done: tests pass, nothing partial, no unresolved errors. If you are blocked, keep it in_progress and add a task for the blocker.
- Remove tasks that are no longer relevant instead of leaving them pending.""",
             {"todos": {"type": "array", "items": todo_item, "description": "The updated todo list"}},
             ["todos"]),
        tool("BashOutput", """Retrieves the new output of a shell started with run_in_background since the last time it was read, with its status (running or exited and the exit code). Use filter to keep only the lines that match a regular expression; lines that do not match are discarded and cannot be read later.""",
             {"bash_id": s("The ID of the background shell to retrieve output from"),
              "filter": s("Optional regular expression to filter the output lines.")},
             ["bash_id"]),
        tool("KillShell", """Kills a background shell started with run_in_background, by its ID. Returns whether it was running. Use it to stop dev servers and watchers you no longer need.""",
             {"shell_id": s("The ID of the background shell to kill")},
             ["shell_id"]),
        tool("ExitPlanMode", """Use this tool when you are in plan mode and have finished writing an implementation plan that you want the user to approve. The plan is shown to the user, who can accept it (you then start implementing) or send feedback.

Only use it for tasks that require writing code; for research or questions about the codebase, just answer. Keep the plan concise: the steps, the files you will touch, how you will verify the result.""",
             {"plan": s("The plan you came up with, that you want to run by the user for approval. Supports markdown. The plan should be pretty concise.")},
             ["plan"]),
    ]


def skill_tool() -> dict[str, Any]:
    return tool("Skill", """Execute a skill within the main conversation.

Skills are folders of instructions, scripts and reference material that give you specialised capabilities for a kind of task. The available skills are listed in the conversation, each with a name and a description of when it applies.

How to use skills:
- When the user's request matches the description of a skill, invoke it BEFORE you start the work, with the skill's name and no other arguments (for example skill: "python-testing").
- The skill's instructions are loaded into the conversation as the tool result, starting with the skill's base directory; follow them. Scripts and files the skill mentions are relative to that directory.
- Only invoke skills that are listed. Do not invoke a skill that is already loaded in the conversation.
- If several skills apply, load them one at a time, the most specific first.""",
                {"skill": s("The skill name (no arguments). E.g., \"python-testing\" or \"write-pr\"")},
                ["skill"])


def mcp_tools() -> list[dict[str, Any]]:
    def m(name: str, desc: str, props: dict[str, Any], req: list[str]) -> dict[str, Any]:
        return {"name": name, "description": desc, "input_schema": {
            "type": "object", "properties": props, "required": req,
            "additionalProperties": False, "$schema": SCHEMA}}

    owner_repo = {"owner": s("Repository owner (user or organization)"),
                  "repo": s("Repository name")}
    return [
        m("mcp__github__get_issue", "Get the details of an issue in a GitHub repository: title, body, state, labels, assignees and comments.",
          {**owner_repo, "issue_number": n("The number of the issue", "integer"),
           "include_comments": {"type": "boolean", "default": True, "description": "Also return the issue's comments"}},
          ["owner", "repo", "issue_number"]),
        m("mcp__github__list_pull_requests", "List pull requests in a GitHub repository, filtered by state, head or base branch, and sorted.",
          {**owner_repo, "state": s("Filter by state", enum=["open", "closed", "all"]),
           "head": s("Filter by head user/org and branch, as user:ref-name"),
           "base": s("Filter by base branch name"),
           "sort": s("What to sort results by", enum=["created", "updated", "popularity", "long-running"]),
           "direction": s("The direction of the sort", enum=["asc", "desc"]),
           "per_page": n("Results per page (max 100)", "integer"), "page": n("Page number of the results", "integer")},
          ["owner", "repo"]),
        m("mcp__github__create_pull_request", "Create a new pull request in a GitHub repository. The head branch must already exist on the remote.",
          {**owner_repo, "title": s("PR title"), "body": s("PR description (markdown)"),
           "head": s("The name of the branch where your changes are implemented"),
           "base": s("The name of the branch you want the changes pulled into"),
           "draft": b("Whether to create the pull request as a draft"),
           "maintainer_can_modify": b("Whether maintainers can modify the pull request")},
          ["owner", "repo", "title", "head", "base"]),
        m("mcp__github__add_issue_comment", "Add a comment to an existing issue or pull request in a GitHub repository.",
          {**owner_repo, "issue_number": n("Issue or pull request number to comment on", "integer"),
           "body": s("Comment content (markdown)")},
          ["owner", "repo", "issue_number", "body"]),
        m("mcp__postgres__query", "Run a read-only SQL query against the configured PostgreSQL database (shelfwise_staging, a nightly anonymised copy of production). Statements run in a READ ONLY transaction with a 10 s timeout; results are returned as JSON rows, at most 500.",
          {"sql": s("The SQL query to run")}, ["sql"]),
        m("mcp__postgres__describe_table", "Describe a table of the configured PostgreSQL database: columns with types, nullability and defaults, indexes, constraints and foreign keys.",
          {"table": s("Table name, optionally schema-qualified (public.books)")}, ["table"]),
    ]


def main_tools() -> list[dict[str, Any]]:
    tools = builtin_tools()
    # Claude Code's order: built-ins, the skill tool next to them, then MCP tools.
    return tools[:12] + [skill_tool()] + tools[12:] + mcp_tools()


def explore_tools() -> list[dict[str, Any]]:
    return [t for t in builtin_tools() if t["name"] in ("Bash", "Glob", "Grep", "Read")]


# ---------------------------------------------------------------------------
# Memory files
# ---------------------------------------------------------------------------

USER_CLAUDE_MD = """# Personal preferences

- I'm Maya, backend engineer. I mostly work in Python (FastAPI, SQLAlchemy, pytest) and some Go.
- Keep answers short. Don't explain things I didn't ask about; I'll ask.
- British spelling in prose and docs, but never rename existing identifiers for that.
- Before changing more than ~3 files, tell me the plan in a few bullets and wait for an OK unless I said "just do it".

## Git
- Never commit or push without me asking. Never amend commits that are already pushed.
- Branch names: `maya/<short-topic>`. Commit messages: imperative mood, <= 72 chars subject, body explains the why.
- I sign my commits; if signing fails, stop and tell me, don't pass `--no-gpg-sign`.

## Python
- Use `uv run ...` for everything (tests, linters, scripts). Never `pip install` into the system Python.
- Type hints on all new functions. `from __future__ import annotations` at the top of new modules.
- Prefer dataclasses or pydantic models over dicts for structured data crossing function boundaries.
- No print debugging left in code. Use the module's `log = logging.getLogger(__name__)`.

## Tests
- Every bug fix gets a regression test that fails without the fix.
- No sleeping in tests. Control time explicitly (inject a clock or use freezegun / time-machine).
"""

PROJECT_CLAUDE_MD = """# Shelfwise API

Backend for the Shelfwise reading-list app and the partner API (book metadata, shelves, search). FastAPI + SQLAlchemy 2 (async, asyncpg) + Redis. Python 3.12, managed with uv.

## Commands
- Install: `uv sync`
- Run locally: `docker compose up -d db redis && uv run uvicorn app.main:app --reload`
- Tests: `uv run pytest -q` (needs nothing running: Redis is faked with fakeredis, Postgres with a per-test SQLite database through the `db` fixture)
- One test file: `uv run pytest tests/test_books.py -q`
- Lint/format: `uv run ruff check . && uv run ruff format --check .`
- Types: `uv run mypy app` (strict for `app/`, not for `tests/`)
- Migrations: `uv run alembic revision --autogenerate -m "..."` then review the script by hand. Never edit a migration that has been merged to main.

## Layout
- `app/main.py` builds the app (`create_app()`), registers middleware and routers.
- `app/auth.py`: API-key authentication. Keys look like `sk_live_<prefix>_<secret>`; only the SHA-256 of the key is stored (`api_keys.key_hash`).
- `app/routes/`: one module per resource (books, shelves, search, imports, admin).
- `app/models.py`: SQLAlchemy models. `app/schemas.py`: pydantic request/response models.
- `app/cache.py`: the shared Redis client (`get_redis()`), also used by search caching.
- `tests/`: pytest, async tests with `pytest-asyncio` in auto mode. Factories in `tests/factories.py`.

## Conventions
- Errors: raise `ApiError(status, code, message)` from `app.errors`; the handler renders `{"error": {"code", "message"}}`. Never return bare dicts for errors.
- All public endpoints live under `/v1`. Health endpoints (`/healthz`, `/readyz`) are unauthenticated and must stay cheap.
- Settings come from env vars through `app.settings.Settings` (prefix `SHELFWISE_`). Add new settings there with a default that is safe for local development.
- Logging is structured (JSON in prod). Log API key *prefixes* only (`sk_live_ab12`), never full keys.
- Don't add dependencies without asking. Already available: fastapi, starlette, sqlalchemy, asyncpg, redis, pydantic-settings, httpx, structlog; dev: pytest, pytest-asyncio, fakeredis, time-machine, ruff, mypy.

## Gotchas
- `BaseHTTPMiddleware` runs before route dependencies: anything a dependency puts on `request.state` is not there yet in middleware.
- The staging DB reachable through the postgres MCP server is an anonymised nightly copy. It's fine to query it; never paste real emails from it into issues.
- CI runs on Python 3.12 and 3.13.
"""

USER_MEMORY_PATH = f"{HOME}/.claude/CLAUDE.md"
PROJECT_MEMORY_PATH = f"{REPO}/CLAUDE.md"


def memory_reminder() -> str:
    return (
        "<system-reminder>\n"
        "As you answer the user's questions, use the following context:\n"
        "# claudeMd\n"
        "Instructions from the user and from the codebase are shown below. Follow them: "
        "they take precedence over your default behaviour.\n\n"
        f"Contents of {USER_MEMORY_PATH} (user's private global instructions for all projects):\n\n"
        f"{USER_CLAUDE_MD}\n"
        f"Contents of {PROJECT_MEMORY_PATH} (project instructions, checked into the codebase):\n\n"
        f"{PROJECT_CLAUDE_MD}\n"
        "# currentDate\n"
        "Today's date is 2025-11-18.\n\n"
        "      IMPORTANT: this context may or may not be relevant to your task. Only use it "
        "when it is relevant to what the user is asking.\n"
        "</system-reminder>\n"
    )


# ---------------------------------------------------------------------------
# The project's files (as read by the agent)
# ---------------------------------------------------------------------------

FILES: dict[str, str] = {}

FILES["pyproject.toml"] = '''[project]
name = "shelfwise-api"
version = "1.14.0"
description = "Backend for the Shelfwise reading-list app and partner API"
requires-python = ">=3.12"
dependencies = [
    "fastapi>=0.115",
    "uvicorn[standard]>=0.32",
    "sqlalchemy[asyncio]>=2.0.36",
    "asyncpg>=0.30",
    "alembic>=1.14",
    "redis>=5.2",
    "pydantic>=2.9",
    "pydantic-settings>=2.6",
    "httpx>=0.27",
    "structlog>=24.4",
]

[dependency-groups]
dev = [
    "pytest>=8.3",
    "pytest-asyncio>=0.24",
    "pytest-cov>=6.0",
    "fakeredis[lua]>=2.26",
    "aiosqlite>=0.20",
    "time-machine>=2.16",
    "ruff>=0.8",
    "mypy>=1.13",
]

[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
testpaths = ["tests"]
filterwarnings = ["error", "ignore::DeprecationWarning:passlib.*"]

[tool.ruff]
line-length = 100
target-version = "py312"

[tool.ruff.lint]
select = ["E", "F", "I", "UP", "B", "SIM", "ASYNC", "RUF"]

[tool.mypy]
strict = true
plugins = ["pydantic.mypy"]
files = ["app"]

[[tool.mypy.overrides]]
module = ["fakeredis.*"]
ignore_missing_imports = true
'''

FILES["app/settings.py"] = '''from __future__ import annotations

from functools import lru_cache

from pydantic import Field, PostgresDsn, RedisDsn
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Configuration from SHELFWISE_* environment variables (see .env.example)."""

    model_config = SettingsConfigDict(env_prefix="SHELFWISE_", env_file=".env", extra="ignore")

    env: str = "dev"
    log_level: str = "INFO"
    log_json: bool = False

    database_url: PostgresDsn = PostgresDsn("postgresql+asyncpg://shelfwise:shelfwise@localhost:5432/shelfwise")
    database_pool_size: int = 10
    redis_url: RedisDsn = RedisDsn("redis://localhost:6379/0")

    cors_origins: list[str] = Field(default_factory=lambda: ["http://localhost:5173"])
    trusted_proxies: list[str] = Field(default_factory=lambda: ["127.0.0.1"])

    api_key_cache_ttl: float = 30.0
    search_cache_ttl: int = 60
    search_max_page_size: int = 50
    import_max_rows: int = 5000


@lru_cache
def get_settings() -> Settings:
    return Settings()
'''

FILES["app/main.py"] = '''from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from app import db
from app.cache import close_redis, get_redis
from app.errors import ApiError, api_error_handler
from app.logging import configure_logging
from app.routes import admin, books, imports, search, shelves
from app.settings import Settings, get_settings

log = logging.getLogger(__name__)


class RequestIdMiddleware(BaseHTTPMiddleware):
    """Propagate X-Request-Id (or create one) and log one line per request."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
        request.state.request_id = request_id
        response = await call_next(request)
        response.headers["X-Request-Id"] = request_id
        return response


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings.log_level, json=settings.log_json)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await db.init_engine(str(settings.database_url), pool_size=settings.database_pool_size)
        await get_redis(str(settings.redis_url)).ping()
        log.info("shelfwise api started", extra={"env": settings.env})
        yield
        await close_redis()
        await db.dispose_engine()

    app = FastAPI(title="Shelfwise API", version="1.14.0", lifespan=lifespan)
    app.state.settings = settings

    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,
        allow_methods=["GET", "POST", "PATCH", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "X-API-Key", "X-Request-Id"],
        expose_headers=["X-Request-Id"],
    )
    app.add_middleware(RequestIdMiddleware)
    app.add_exception_handler(ApiError, api_error_handler)

    for router in (books.router, shelves.router, search.router, imports.router):
        app.include_router(router, prefix="/v1")
    app.include_router(admin.router, prefix="/admin")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> dict[str, str]:
        await db.ping()
        await get_redis().ping()
        return {"status": "ready"}

    return app


app = create_app()
'''

FILES["app/auth.py"] = '''"""API-key authentication.

Keys are `sk_live_<prefix>_<secret>` (or `sk_test_...`). Only the SHA-256 of the
whole key is stored; the 8-character prefix is stored in clear to find keys in
logs and support tickets.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

from fastapi import Depends, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import get_session
from app.errors import ApiError
from app.models import ApiKeyRow

log = logging.getLogger(__name__)

HEADER = "x-api-key"


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: int
    prefix: str
    owner_id: int
    plan: str


_cache: dict[str, tuple[float, ApiKey | None]] = {}


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def key_prefix(raw: str) -> str:
    parts = raw.split("_")
    return "_".join(parts[:3]) if len(parts) >= 4 else raw[:12]


async def lookup_key(session: AsyncSession, raw: str, ttl: float = 30.0) -> ApiKey | None:
    """The active key for `raw`, cached in-process for `ttl` seconds (misses too)."""
    digest = hash_key(raw)
    hit = _cache.get(digest)
    now = time.monotonic()
    if hit is not None and hit[0] > now:
        return hit[1]
    row = await session.scalar(
        select(ApiKeyRow).where(ApiKeyRow.key_hash == digest, ApiKeyRow.revoked_at.is_(None))
    )
    key = ApiKey(row.id, row.key_prefix, row.owner_id, row.plan) if row else None
    _cache[digest] = (now + ttl, key)
    return key


async def resolve_api_key(
    request: Request, session: AsyncSession = Depends(get_session)
) -> ApiKey:
    """FastAPI dependency: the caller's API key, or 401."""
    raw = request.headers.get(HEADER)
    if not raw:
        raise ApiError(401, "missing_api_key", "Send your API key in the X-API-Key header.")
    key = await lookup_key(session, raw, request.app.state.settings.api_key_cache_ttl)
    if key is None:
        log.info("rejected api key", extra={"prefix": key_prefix(raw)})
        raise ApiError(401, "invalid_api_key", "This API key is unknown or revoked.")
    request.state.api_key = key
    return key


def clear_key_cache() -> None:
    _cache.clear()
'''

FILES["app/cache.py"] = '''from __future__ import annotations

from redis.asyncio import Redis

_client: Redis | None = None


def get_redis(url: str | None = None) -> Redis:
    """The process-wide Redis client, created on first use."""
    global _client
    if _client is None:
        if url is None:
            raise RuntimeError("get_redis() called before the app started")
        _client = Redis.from_url(url, decode_responses=True, health_check_interval=30)
    return _client


def set_redis(client: Redis | None) -> None:
    """Replace the client (tests use fakeredis)."""
    global _client
    _client = client


async def close_redis() -> None:
    global _client
    if _client is not None:
        await _client.aclose()
        _client = None
'''

FILES["app/errors.py"] = '''from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


async def api_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(
        status_code=exc.status,
        content={"error": {"code": exc.code, "message": exc.message}},
        headers=exc.headers,
    )
'''

FILES["app/models.py"] = '''from __future__ import annotations

import enum
from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Date,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), nullable=False
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class ReadingStatus(enum.StrEnum):
    WANT_TO_READ = "want_to_read"
    READING = "reading"
    FINISHED = "finished"
    ABANDONED = "abandoned"


class User(TimestampMixin, Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True, nullable=False)
    display_name: Mapped[str] = mapped_column(String(80), nullable=False)
    locale: Mapped[str] = mapped_column(String(16), default="en", nullable=False)
    is_partner: Mapped[bool] = mapped_column(default=False, nullable=False)

    shelves: Mapped[list[Shelf]] = relationship(back_populates="owner", cascade="all, delete-orphan")
    api_keys: Mapped[list[ApiKeyRow]] = relationship(back_populates="owner")


class Plan(Base):
    """Commercial plan of an API key. Limits are per key."""

    __tablename__ = "plans"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    requests_per_minute: Mapped[int] = mapped_column(Integer, nullable=False)
    burst: Mapped[int] = mapped_column(Integer, nullable=False)
    monthly_quota: Mapped[int | None] = mapped_column(BigInteger)
    description: Mapped[str] = mapped_column(Text, default="", nullable=False)

    __table_args__ = (
        CheckConstraint("requests_per_minute > 0", name="plans_rpm_positive"),
        CheckConstraint("burst > 0", name="plans_burst_positive"),
    )


class ApiKeyRow(TimestampMixin, Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    key_prefix: Mapped[str] = mapped_column(String(24), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    plan: Mapped[str] = mapped_column(ForeignKey("plans.name"), default="free", nullable=False)
    label: Mapped[str] = mapped_column(String(80), default="", nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    owner: Mapped[User] = relationship(back_populates="api_keys")

    __table_args__ = (Index("api_keys_owner_idx", "owner_id"),)


class Author(TimestampMixin, Base):
    __tablename__ = "authors"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    sort_name: Mapped[str] = mapped_column(String(200), nullable=False)
    birth_year: Mapped[int | None] = mapped_column(SmallInteger)
    death_year: Mapped[int | None] = mapped_column(SmallInteger)
    openlibrary_id: Mapped[str | None] = mapped_column(String(32), unique=True)

    books: Mapped[list[BookAuthor]] = relationship(back_populates="author")

    __table_args__ = (Index("authors_sort_name_idx", "sort_name"),)


class Publisher(Base):
    __tablename__ = "publishers"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    country: Mapped[str | None] = mapped_column(String(2))


class Book(TimestampMixin, Base):
    __tablename__ = "books"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    isbn13: Mapped[str | None] = mapped_column(String(13), unique=True)
    title: Mapped[str] = mapped_column(String(500), nullable=False)
    subtitle: Mapped[str | None] = mapped_column(String(500))
    language: Mapped[str] = mapped_column(String(8), default="en", nullable=False)
    published_on: Mapped[date | None] = mapped_column(Date)
    page_count: Mapped[int | None] = mapped_column(Integer)
    publisher_id: Mapped[int | None] = mapped_column(ForeignKey("publishers.id"))
    description: Mapped[str | None] = mapped_column(Text)
    cover_url: Mapped[str | None] = mapped_column(String(1000))
    subjects: Mapped[list[str]] = mapped_column(JSONB, default=list, nullable=False)
    search_vector: Mapped[str | None] = mapped_column(TSVECTOR)
    ratings_count: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    ratings_sum: Mapped[int] = mapped_column(Integer, default=0, nullable=False)

    authors: Mapped[list[BookAuthor]] = relationship(
        back_populates="book", order_by="BookAuthor.position", cascade="all, delete-orphan"
    )
    publisher: Mapped[Publisher | None] = relationship()

    __table_args__ = (
        Index("books_search_idx", "search_vector", postgresql_using="gin"),
        Index("books_published_idx", "published_on"),
        CheckConstraint("page_count IS NULL OR page_count > 0", name="books_pages_positive"),
    )

    @property
    def average_rating(self) -> float | None:
        return round(self.ratings_sum / self.ratings_count, 2) if self.ratings_count else None


class BookAuthor(Base):
    __tablename__ = "book_authors"

    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"), primary_key=True)
    position: Mapped[int] = mapped_column(SmallInteger, default=0, nullable=False)
    role: Mapped[str] = mapped_column(String(32), default="author", nullable=False)

    book: Mapped[Book] = relationship(back_populates="authors")
    author: Mapped[Author] = relationship(back_populates="books")


class Shelf(TimestampMixin, Base):
    __tablename__ = "shelves"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    name: Mapped[str] = mapped_column(String(80), nullable=False)
    is_public: Mapped[bool] = mapped_column(default=False, nullable=False)
    position: Mapped[int] = mapped_column(Integer, default=0, nullable=False)

    owner: Mapped[User] = relationship(back_populates="shelves")
    entries: Mapped[list[ShelfEntry]] = relationship(
        back_populates="shelf", cascade="all, delete-orphan", order_by="ShelfEntry.added_at"
    )

    __table_args__ = (UniqueConstraint("owner_id", "name", name="shelves_owner_name_key"),)


class ShelfEntry(Base):
    __tablename__ = "shelf_entries"

    shelf_id: Mapped[int] = mapped_column(ForeignKey("shelves.id", ondelete="CASCADE"), primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id"), primary_key=True)
    status: Mapped[ReadingStatus] = mapped_column(
        Enum(ReadingStatus, name="reading_status"), default=ReadingStatus.WANT_TO_READ, nullable=False
    )
    rating: Mapped[int | None] = mapped_column(SmallInteger)
    note: Mapped[str | None] = mapped_column(Text)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_on: Mapped[date | None] = mapped_column(Date)

    shelf: Mapped[Shelf] = relationship(back_populates="entries")
    book: Mapped[Book] = relationship()

    __table_args__ = (
        CheckConstraint("rating IS NULL OR rating BETWEEN 1 AND 5", name="entries_rating_range"),
    )


class ImportJob(TimestampMixin, Base):
    __tablename__ = "import_jobs"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    source: Mapped[str] = mapped_column(String(32), nullable=False)  # goodreads | storygraph | csv
    status: Mapped[str] = mapped_column(String(16), default="queued", nullable=False)
    rows_total: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    rows_done: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    errors: Mapped[list[dict[str, str]]] = mapped_column(JSONB, default=list, nullable=False)
'''

FILES["app/routes/books.py"] = '''from __future__ import annotations

import base64
import json
from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.auth import ApiKey, resolve_api_key
from app.db import get_session
from app.errors import ApiError
from app.isbn import is_valid_isbn13, normalise_isbn
from app.models import Author, Book, BookAuthor

router = APIRouter(tags=["books"])

MAX_PAGE_SIZE = 100


class AuthorOut(BaseModel):
    id: int
    name: str
    role: str = "author"


class BookOut(BaseModel):
    id: int
    isbn13: str | None
    title: str
    subtitle: str | None = None
    language: str
    published_on: date | None = None
    page_count: int | None = None
    authors: list[AuthorOut]
    subjects: list[str] = []
    average_rating: float | None = None
    cover_url: str | None = None

    @classmethod
    def from_row(cls, book: Book) -> BookOut:
        return cls(
            id=book.id,
            isbn13=book.isbn13,
            title=book.title,
            subtitle=book.subtitle,
            language=book.language,
            published_on=book.published_on,
            page_count=book.page_count,
            authors=[AuthorOut(id=ba.author.id, name=ba.author.name, role=ba.role) for ba in book.authors],
            subjects=book.subjects,
            average_rating=book.average_rating,
            cover_url=book.cover_url,
        )


class BookPage(BaseModel):
    items: list[BookOut]
    next_cursor: str | None = None


class BookIn(BaseModel):
    isbn13: str | None = None
    title: str = Field(min_length=1, max_length=500)
    subtitle: str | None = Field(default=None, max_length=500)
    language: str = Field(default="en", pattern=r"^[a-z]{2,3}(-[A-Z]{2})?$")
    published_on: date | None = None
    page_count: int | None = Field(default=None, gt=0, lt=20000)
    author_ids: list[int] = Field(min_length=1, max_length=20)
    subjects: list[str] = Field(default_factory=list, max_length=30)

    @field_validator("isbn13")
    @classmethod
    def check_isbn(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = normalise_isbn(value)
        if not is_valid_isbn13(value):
            raise ValueError("not a valid ISBN-13")
        return value


class BookPatch(BaseModel):
    title: str | None = Field(default=None, min_length=1, max_length=500)
    subtitle: str | None = None
    page_count: int | None = Field(default=None, gt=0, lt=20000)
    subjects: list[str] | None = None


def _encode_cursor(book_id: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": book_id}).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return int(json.loads(base64.urlsafe_b64decode(padded))["after"])
    except (ValueError, KeyError, TypeError):
        raise ApiError(400, "invalid_cursor", "The cursor is malformed or expired.") from None


def _with_authors(query: Select[tuple[Book]]) -> Select[tuple[Book]]:
    return query.options(selectinload(Book.authors).selectinload(BookAuthor.author))


@router.get("/books", response_model=BookPage)
async def list_books(
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 20,
    cursor: str | None = None,
    language: str | None = None,
    subject: str | None = None,
) -> BookPage:
    query = _with_authors(select(Book)).order_by(Book.id).limit(limit + 1)
    if cursor:
        query = query.where(Book.id > _decode_cursor(cursor))
    if language:
        query = query.where(Book.language == language)
    if subject:
        query = query.where(Book.subjects.contains([subject]))
    rows = list(await session.scalars(query))
    next_cursor = _encode_cursor(rows[limit - 1].id) if len(rows) > limit else None
    return BookPage(items=[BookOut.from_row(b) for b in rows[:limit]], next_cursor=next_cursor)


@router.get("/books/{book_id}", response_model=BookOut)
async def get_book(
    book_id: int,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    book = await session.scalar(_with_authors(select(Book).where(Book.id == book_id)))
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    return BookOut.from_row(book)


@router.get("/books/by-isbn/{isbn}", response_model=BookOut)
async def get_book_by_isbn(
    isbn: str,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    isbn = normalise_isbn(isbn)
    if not is_valid_isbn13(isbn):
        raise ApiError(400, "invalid_isbn", "Not a valid ISBN-13.")
    book = await session.scalar(_with_authors(select(Book).where(Book.isbn13 == isbn)))
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with ISBN {isbn}.")
    return BookOut.from_row(book)


@router.post("/books", response_model=BookOut, status_code=status.HTTP_201_CREATED)
async def create_book(
    payload: BookIn,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    if key.plan not in ("partner", "internal"):
        raise ApiError(403, "plan_forbidden", "Creating books requires a partner key.")
    if payload.isbn13 and await session.scalar(select(Book.id).where(Book.isbn13 == payload.isbn13)):
        raise ApiError(409, "duplicate_isbn", f"A book with ISBN {payload.isbn13} already exists.")
    authors = list(await session.scalars(select(Author).where(Author.id.in_(payload.author_ids))))
    missing = set(payload.author_ids) - {a.id for a in authors}
    if missing:
        raise ApiError(422, "unknown_author", f"Unknown author ids: {sorted(missing)}")
    book = Book(
        isbn13=payload.isbn13,
        title=payload.title,
        subtitle=payload.subtitle,
        language=payload.language,
        published_on=payload.published_on,
        page_count=payload.page_count,
        subjects=payload.subjects,
    )
    by_id = {a.id: a for a in authors}
    book.authors = [BookAuthor(author=by_id[aid], position=i) for i, aid in enumerate(payload.author_ids)]
    session.add(book)
    await session.commit()
    await session.refresh(book, ["authors"])
    return BookOut.from_row(book)


@router.patch("/books/{book_id}", response_model=BookOut)
async def update_book(
    book_id: int,
    payload: BookPatch,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    if key.plan not in ("partner", "internal"):
        raise ApiError(403, "plan_forbidden", "Editing books requires a partner key.")
    book = await session.scalar(_with_authors(select(Book).where(Book.id == book_id)))
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    for field, value in payload.model_dump(exclude_unset=True).items():
        setattr(book, field, value)
    await session.commit()
    return BookOut.from_row(book)


@router.delete("/books/{book_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_book(
    book_id: int,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> Response:
    if key.plan != "internal":
        raise ApiError(403, "plan_forbidden", "Only internal keys can delete books.")
    book = await session.get(Book, book_id)
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    await session.delete(book)
    await session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/books/{book_id}/similar", response_model=list[BookOut])
async def similar_books(
    book_id: int,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    limit: Annotated[int, Query(ge=1, le=20)] = 10,
) -> list[BookOut]:
    book = await session.get(Book, book_id)
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    if not book.subjects:
        return []
    overlap = func.jsonb_array_length(Book.subjects)  # cheap proxy, refined in Python below
    query = (
        _with_authors(select(Book))
        .where(Book.id != book_id, Book.subjects.op("?|")(book.subjects))
        .order_by(overlap.desc(), Book.ratings_count.desc())
        .limit(limit * 3)
    )
    candidates = list(await session.scalars(query))
    wanted = set(book.subjects)
    candidates.sort(key=lambda b: (-len(wanted & set(b.subjects)), -b.ratings_count))
    return [BookOut.from_row(b) for b in candidates[:limit]]
'''

FILES["app/routes/search.py"] = '''"""Full-text search over books and authors, with facet counts.

Search is the most expensive endpoint we have: a ts_rank over the GIN index
plus two facet aggregations. Results are cached in Redis for
`settings.search_cache_ttl` seconds, keyed by the normalised query.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel
from sqlalchemy import func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import ApiKey, resolve_api_key
from app.cache import get_redis
from app.db import get_session
from app.models import Author, Book, BookAuthor
from app.routes.books import BookOut, _with_authors

router = APIRouter(tags=["search"])
log = logging.getLogger(__name__)


class Facet(BaseModel):
    value: str
    count: int


class SearchResult(BaseModel):
    query: str
    total: int
    items: list[BookOut]
    languages: list[Facet]
    subjects: list[Facet]


def _cache_key(q: str, language: str | None, page: int, size: int) -> str:
    raw = json.dumps([q.casefold().strip(), language, page, size])
    return "search:v2:" + hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


@router.get("/search", response_model=SearchResult)
async def search(
    request: Request,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    q: Annotated[str, Query(min_length=2, max_length=200)],
    language: str | None = None,
    page: Annotated[int, Query(ge=1, le=100)] = 1,
    size: Annotated[int, Query(ge=1)] = 20,
) -> SearchResult:
    settings = request.app.state.settings
    size = min(size, settings.search_max_page_size)
    redis = get_redis()
    cache_key = _cache_key(q, language, page, size)
    if cached := await redis.get(cache_key):
        return SearchResult.model_validate_json(cached)

    tsquery = func.websearch_to_tsquery("simple", q)
    rank = func.ts_rank_cd(Book.search_vector, tsquery).label("rank")
    base = select(Book.id).where(Book.search_vector.op("@@")(tsquery))
    if language:
        base = base.where(Book.language == language)

    total = await session.scalar(select(func.count()).select_from(base.subquery())) or 0
    ids_query = (
        select(Book.id, rank)
        .where(Book.id.in_(base))
        .order_by(rank.desc(), Book.ratings_count.desc())
        .offset((page - 1) * size)
        .limit(size)
    )
    ids = [row.id for row in await session.execute(ids_query)]
    books = {b.id: b for b in await session.scalars(_with_authors(select(Book)).where(Book.id.in_(ids)))}

    lang_rows = await session.execute(
        select(Book.language, func.count()).where(Book.id.in_(base)).group_by(Book.language)
        .order_by(func.count().desc()).limit(10)
    )
    subject = func.jsonb_array_elements_text(Book.subjects).table_valued("value").alias("s")
    subject_rows = await session.execute(
        select(literal_column("s.value"), func.count())
        .select_from(Book)
        .join(subject, literal_column("true"))
        .where(Book.id.in_(base))
        .group_by(literal_column("s.value"))
        .order_by(func.count().desc())
        .limit(15)
    )
    result = SearchResult(
        query=q,
        total=total,
        items=[BookOut.from_row(books[i]) for i in ids if i in books],
        languages=[Facet(value=v, count=c) for v, c in lang_rows],
        subjects=[Facet(value=v, count=c) for v, c in subject_rows],
    )
    await redis.set(cache_key, result.model_dump_json(), ex=settings.search_cache_ttl)
    return result


@router.get("/search/authors", response_model=list[Facet])
async def search_authors(
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    q: Annotated[str, Query(min_length=2, max_length=100)],
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> list[Facet]:
    pattern = q.replace("%", "").replace("_", "") + "%"
    rows = await session.execute(
        select(Author.name, func.count(BookAuthor.book_id))
        .join(BookAuthor, BookAuthor.author_id == Author.id, isouter=True)
        .where(Author.sort_name.ilike(pattern) | Author.name.ilike(pattern))
        .group_by(Author.id)
        .order_by(func.count(BookAuthor.book_id).desc())
        .limit(limit)
    )
    return [Facet(value=name, count=count) for name, count in rows]
'''

FILES["app/db.py"] = '''from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

_engine: AsyncEngine | None = None
_factory: async_sessionmaker[AsyncSession] | None = None


async def init_engine(url: str, pool_size: int = 10) -> None:
    global _engine, _factory
    _engine = create_async_engine(url, pool_size=pool_size, pool_pre_ping=True)
    _factory = async_sessionmaker(_engine, expire_on_commit=False)


def set_session_factory(factory: async_sessionmaker[AsyncSession] | None) -> None:
    """Tests install a factory bound to their own engine."""
    global _factory
    _factory = factory


@asynccontextmanager
async def session_scope() -> AsyncIterator[AsyncSession]:
    """A session outside of a request (startup code, middleware, scripts)."""
    if _factory is None:
        raise RuntimeError("database not initialised")
    async with _factory() as session:
        yield session


async def get_session() -> AsyncIterator[AsyncSession]:
    """FastAPI dependency: one session per request."""
    async with session_scope() as session:
        yield session


async def ping() -> None:
    async with session_scope() as session:
        await session.execute(text("SELECT 1"))


async def dispose_engine() -> None:
    global _engine, _factory
    if _engine is not None:
        await _engine.dispose()
    _engine = _factory = None
'''

FILES["tests/conftest.py"] = '''from __future__ import annotations

from collections.abc import AsyncIterator

import fakeredis
import pytest
from httpx import ASGITransport, AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from app import db
from app.auth import clear_key_cache, hash_key
from app.cache import set_redis
from app.main import create_app
from app.models import ApiKeyRow, Base, Plan, User
from app.settings import Settings

PLANS = [
    Plan(name="free", requests_per_minute=60, burst=20, monthly_quota=50_000),
    Plan(name="pro", requests_per_minute=600, burst=100, monthly_quota=2_000_000),
    Plan(name="partner", requests_per_minute=3000, burst=500),
    Plan(name="internal", requests_per_minute=10_000, burst=2000),
]

FREE_KEY = "sk_test_free0001_3b9d1c0c4f7e4a5f"
PRO_KEY = "sk_test_pro00002_5e2a9b7d10c34c1e"
PARTNER_KEY = "sk_test_part0003_8c41d2f07a9e4b66"
INTERNAL_KEY = "sk_test_intl0004_0f6e3a52d8b14c97"


@pytest.fixture
def settings() -> Settings:
    return Settings(
        env="test",
        database_url="postgresql+asyncpg://unused/unused",
        redis_url="redis://unused:6379/0",
        api_key_cache_ttl=0.0,
    )


@pytest.fixture
async def redis() -> AsyncIterator[fakeredis.FakeAsyncRedis]:
    client = fakeredis.FakeAsyncRedis(decode_responses=True)
    set_redis(client)
    yield client
    await client.flushall()
    set_redis(None)


@pytest.fixture
async def session_factory() -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_async_engine("sqlite+aiosqlite:///:memory:")
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    factory = async_sessionmaker(engine, expire_on_commit=False)
    async with factory() as session:
        user = User(id=1, email="dev@example.test", display_name="Dev")
        session.add_all([*PLANS, user])
        for i, (raw, plan) in enumerate(
            [(FREE_KEY, "free"), (PRO_KEY, "pro"), (PARTNER_KEY, "partner"), (INTERNAL_KEY, "internal")],
            start=1,
        ):
            session.add(ApiKeyRow(id=i, key_prefix=raw[:16], key_hash=hash_key(raw), owner_id=1, plan=plan))
        await session.commit()
    db.set_session_factory(factory)
    yield factory
    db.set_session_factory(None)
    await engine.dispose()


@pytest.fixture
async def app(settings: Settings, redis: fakeredis.FakeAsyncRedis, session_factory: object):
    clear_key_cache()
    return create_app(settings)


@pytest.fixture
async def client(app) -> AsyncIterator[AsyncClient]:
    transport = ASGITransport(app=app)
    async with AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


@pytest.fixture
def free_headers() -> dict[str, str]:
    return {"X-API-Key": FREE_KEY}


@pytest.fixture
def pro_headers() -> dict[str, str]:
    return {"X-API-Key": PRO_KEY}


@pytest.fixture
def partner_headers() -> dict[str, str]:
    return {"X-API-Key": PARTNER_KEY}


@pytest.fixture
def internal_headers() -> dict[str, str]:
    return {"X-API-Key": INTERNAL_KEY}
'''

FILES["tests/test_books.py"] = '''from __future__ import annotations

import pytest
from httpx import AsyncClient

from tests.factories import make_author, make_book

pytestmark = pytest.mark.usefixtures("app")


async def test_list_requires_api_key(client: AsyncClient) -> None:
    resp = await client.get("/v1/books")
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "missing_api_key"


async def test_list_rejects_unknown_key(client: AsyncClient) -> None:
    resp = await client.get("/v1/books", headers={"X-API-Key": "sk_test_nope0000_000000"})
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "invalid_api_key"


async def test_list_books_empty(client: AsyncClient, free_headers: dict[str, str]) -> None:
    resp = await client.get("/v1/books", headers=free_headers)
    assert resp.status_code == 200
    assert resp.json() == {"items": [], "next_cursor": None}


async def test_list_books_returns_authors_in_order(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        a1, a2 = make_author(s, "Ursula K. Le Guin"), make_author(s, "Ted Chiang")
        make_book(s, "The Dispossessed", authors=[a1])
        make_book(s, "Anthology", authors=[a2, a1])
        await s.commit()
    resp = await client.get("/v1/books", headers=free_headers)
    items = resp.json()["items"]
    assert [b["title"] for b in items] == ["The Dispossessed", "Anthology"]
    assert [a["name"] for a in items[1]["authors"]] == ["Ted Chiang", "Ursula K. Le Guin"]


async def test_list_books_pagination_walks_all_pages(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "Iain M. Banks")
        for i in range(45):
            make_book(s, f"Culture {i:02d}", authors=[author])
        await s.commit()
    seen: list[str] = []
    cursor = None
    for _ in range(30):
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        resp = await client.get("/v1/books", headers=free_headers, params=params)
        assert resp.status_code == 200
        page = resp.json()
        seen += [b["title"] for b in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 45
    assert seen == sorted(seen)


async def test_list_books_filters_by_language(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "Amélie Nothomb")
        make_book(s, "Stupeur et tremblements", authors=[author], language="fr")
        make_book(s, "Fear and Trembling", authors=[author], language="en")
        await s.commit()
    resp = await client.get("/v1/books", headers=free_headers, params={"language": "fr"})
    assert [b["title"] for b in resp.json()["items"]] == ["Stupeur et tremblements"]


async def test_invalid_cursor_is_400(client: AsyncClient, free_headers: dict[str, str]) -> None:
    resp = await client.get("/v1/books", headers=free_headers, params={"cursor": "not-a-cursor"})
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_cursor"


@pytest.mark.parametrize("limit", [0, 101])
async def test_limit_bounds(client: AsyncClient, free_headers: dict[str, str], limit: int) -> None:
    resp = await client.get("/v1/books", headers=free_headers, params={"limit": limit})
    assert resp.status_code == 422


async def test_get_book_404(client: AsyncClient, free_headers: dict[str, str]) -> None:
    resp = await client.get("/v1/books/999", headers=free_headers)
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "book_not_found"


async def test_get_book_by_isbn_normalises_hyphens(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        make_book(s, "Exhalation", authors=[make_author(s, "Ted Chiang")], isbn13="9781101947883")
        await s.commit()
    resp = await client.get("/v1/books/by-isbn/978-1-101-94788-3", headers=free_headers)
    assert resp.status_code == 200
    assert resp.json()["title"] == "Exhalation"


async def test_get_book_by_isbn_rejects_bad_checksum(
    client: AsyncClient, free_headers: dict[str, str]
) -> None:
    resp = await client.get("/v1/books/by-isbn/9781101947884", headers=free_headers)
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_isbn"


async def test_create_book_needs_partner_plan(
    client: AsyncClient, pro_headers: dict[str, str]
) -> None:
    resp = await client.post("/v1/books", headers=pro_headers, json={"title": "X", "author_ids": [1]})
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "plan_forbidden"


async def test_create_book(
    client: AsyncClient, partner_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "N. K. Jemisin")
        await s.commit()
        author_id = author.id
    resp = await client.post(
        "/v1/books",
        headers=partner_headers,
        json={"title": "The Fifth Season", "isbn13": "978-0-316-22929-6", "author_ids": [author_id],
              "subjects": ["fantasy", "science fiction"]},
    )
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["isbn13"] == "9780316229296"
    assert body["authors"] == [{"id": author_id, "name": "N. K. Jemisin", "role": "author"}]


async def test_create_book_duplicate_isbn_is_409(
    client: AsyncClient, partner_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "Octavia E. Butler")
        make_book(s, "Kindred", authors=[author], isbn13="9780807083697")
        await s.commit()
        author_id = author.id
    resp = await client.post(
        "/v1/books",
        headers=partner_headers,
        json={"title": "Kindred (again)", "isbn13": "9780807083697", "author_ids": [author_id]},
    )
    assert resp.status_code == 409


async def test_create_book_unknown_author_is_422(
    client: AsyncClient, partner_headers: dict[str, str]
) -> None:
    resp = await client.post("/v1/books", headers=partner_headers, json={"title": "Ghost", "author_ids": [404]})
    assert resp.status_code == 422
    assert resp.json()["error"]["code"] == "unknown_author"


async def test_patch_book_partial_update(
    client: AsyncClient, partner_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        book = make_book(s, "Piranesi", authors=[make_author(s, "Susanna Clarke")], page_count=10)
        await s.commit()
        book_id = book.id
    resp = await client.patch(f"/v1/books/{book_id}", headers=partner_headers, json={"page_count": 272})
    assert resp.status_code == 200
    assert resp.json()["page_count"] == 272
    assert resp.json()["title"] == "Piranesi"


async def test_delete_book_internal_only(
    client: AsyncClient, partner_headers: dict[str, str], internal_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        book = make_book(s, "Doomed", authors=[make_author(s, "Anon")])
        await s.commit()
        book_id = book.id
    assert (await client.delete(f"/v1/books/{book_id}", headers=partner_headers)).status_code == 403
    assert (await client.delete(f"/v1/books/{book_id}", headers=internal_headers)).status_code == 204
    assert (await client.get(f"/v1/books/{book_id}", headers=internal_headers)).status_code == 404


async def test_similar_books_ranks_by_subject_overlap(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        a = make_author(s, "Various")
        base = make_book(s, "Base", authors=[a], subjects=["space", "politics", "anarchism"])
        make_book(s, "Two", authors=[a], subjects=["space", "politics"])
        make_book(s, "One", authors=[a], subjects=["space"])
        make_book(s, "None", authors=[a], subjects=["cooking"])
        await s.commit()
        base_id = base.id
    resp = await client.get(f"/v1/books/{base_id}/similar", headers=free_headers)
    assert [b["title"] for b in resp.json()] == ["Two", "One"]
'''


# ---------------------------------------------------------------------------
# Files the agent writes
# ---------------------------------------------------------------------------

RATELIMIT_V1 = '''"""Per-API-key rate limiting: one token bucket per key, stored in Redis.

A bucket holds up to `burst` tokens and refills at `requests_per_minute / 60`
tokens per second; a request takes one token. The check-and-take runs in a
Lua script so that concurrent requests on several pods cannot overdraw it.
Plan limits are read from the `plans` table once, on first use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy import select
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp

from app.cache import get_redis
from app.db import session_scope
from app.models import Plan

log = logging.getLogger(__name__)

# KEYS[1]: bucket. ARGV: capacity, refill rate (tokens/s), now (s), cost.
# Returns {allowed (0/1), whole tokens left, seconds until `cost` tokens are back}.
TOKEN_BUCKET = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) + 1)
local wait = 0
if allowed == 0 then
  wait = (cost - tokens) / rate
end
return {allowed, math.floor(tokens), wait}
"""

EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"})


@dataclass(frozen=True, slots=True)
class Limit:
    requests_per_minute: int
    burst: int

    @property
    def rate(self) -> float:
        return self.requests_per_minute / 60


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    retry_after: float  # seconds


ANONYMOUS = Limit(requests_per_minute=30, burst=10)


class RateLimiter:
    def __init__(
        self,
        redis: Callable[[], Redis] = get_redis,
        limits: dict[str, Limit] | None = None,
        prefix: str = "rl",
    ) -> None:
        self._redis = redis
        self.limits = limits
        self.prefix = prefix

    async def ensure_limits(self) -> dict[str, Limit]:
        if self.limits is None:
            async with session_scope() as session:
                rows = await session.execute(select(Plan.name, Plan.requests_per_minute, Plan.burst))
                self.limits = {name: Limit(rpm, burst) for name, rpm, burst in rows}
            log.info("rate limits loaded", extra={"plans": sorted(self.limits)})
        return self.limits

    async def hit(self, bucket: str, plan: str | None, cost: int = 1) -> Decision:
        limits = await self.ensure_limits()
        limit = (limits.get(plan) or limits.get("free", ANONYMOUS)) if plan else ANONYMOUS
        script = self._redis().register_script(TOKEN_BUCKET)
        try:
            allowed, remaining, wait = await script(
                keys=[f"{self.prefix}:{bucket}"],
                args=[limit.burst, limit.rate, time.time(), cost],
            )
        except RedisError:
            # Fail open: a Redis outage must not become an API outage (issue #142).
            log.warning("rate limiter unavailable, allowing request", exc_info=True)
            return Decision(True, limit.burst, limit.burst, 0.0)
        return Decision(bool(allowed), limit.burst, int(remaining), float(wait))


class RateLimitMiddleware(BaseHTTPMiddleware):
    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        super().__init__(app)
        self.limiter = limiter

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path in EXEMPT_PATHS:
            return await call_next(request)
        api_key = getattr(request.state, "api_key", None)
        if api_key is not None:
            decision = await self.limiter.hit(f"key:{api_key.id}", api_key.plan)
        else:
            host = request.client.host if request.client else "unknown"
            decision = await self.limiter.hit(f"ip:{host}", None)
        if not decision.allowed:
            return JSONResponse(
                status_code=429,
                content={"error": {"code": "rate_limited",
                                   "message": "Too many requests for this API key. Retry later."}},
                headers={
                    "Retry-After": str(decision.retry_after),
                    "RateLimit-Limit": str(decision.limit),
                    "RateLimit-Remaining": "0",
                },
            )
        return await call_next(request)
'''

TEST_RATELIMIT_V1 = '''from __future__ import annotations

import pytest
import time_machine
from httpx import AsyncClient
from redis.exceptions import ConnectionError as RedisConnectionError

from app.ratelimit import Limit, RateLimiter

# Plans from tests/conftest.py: free = 60/min, burst 20; pro = 600/min, burst 100.
FREE_BURST = 20
T0 = 1_763_500_000  # 2025-11-18T21:06:40Z

pytestmark = pytest.mark.usefixtures("app")


async def drain(client: AsyncClient, headers: dict[str, str], n: int) -> list[int]:
    return [(await client.get("/v1/books", headers=headers)).status_code for _ in range(n)]


async def test_burst_is_allowed_then_429(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        codes = await drain(client, free_headers, FREE_BURST + 1)
    assert codes[:FREE_BURST] == [200] * FREE_BURST
    assert codes[-1] == 429


async def test_429_body_and_headers(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        await drain(client, free_headers, FREE_BURST)
        resp = await client.get("/v1/books", headers=free_headers)
    assert resp.status_code == 429
    assert resp.json() == {"error": {"code": "rate_limited",
                                     "message": "Too many requests for this API key. Retry later."}}
    assert resp.headers["RateLimit-Limit"] == "20"
    assert resp.headers["RateLimit-Remaining"] == "0"


async def test_retry_after_is_whole_seconds(client: AsyncClient, free_headers: dict[str, str]) -> None:
    # free refills 1 token/s: 0.25 s after draining the bucket, the next token is 0.75 s away.
    with time_machine.travel(T0, tick=False) as traveller:
        await drain(client, free_headers, FREE_BURST)
        traveller.shift(0.25)
        resp = await client.get("/v1/books", headers=free_headers)
    assert resp.status_code == 429
    assert resp.headers["Retry-After"] == "1"


async def test_headers_present_on_success(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        first = await client.get("/v1/books", headers=free_headers)
        second = await client.get("/v1/books", headers=free_headers)
    assert first.headers["RateLimit-Limit"] == "20"
    assert first.headers["RateLimit-Remaining"] == "19"
    assert second.headers["RateLimit-Remaining"] == "18"
    assert "Retry-After" not in first.headers


async def test_bucket_refills_over_time(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False) as traveller:
        await drain(client, free_headers, FREE_BURST)
        assert (await client.get("/v1/books", headers=free_headers)).status_code == 429
        traveller.shift(5)
        codes = await drain(client, free_headers, 6)
    assert codes == [200] * 5 + [429]


async def test_limits_are_per_key(
    client: AsyncClient, free_headers: dict[str, str], pro_headers: dict[str, str]
) -> None:
    with time_machine.travel(T0, tick=False):
        await drain(client, free_headers, FREE_BURST)
        assert (await client.get("/v1/books", headers=free_headers)).status_code == 429
        assert (await client.get("/v1/books", headers=pro_headers)).status_code == 200


async def test_pro_plan_has_bigger_burst(client: AsyncClient, pro_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        codes = await drain(client, pro_headers, 101)
    assert codes.count(200) == 100
    assert codes[-1] == 429


@pytest.mark.parametrize("path", ["/healthz", "/openapi.json"])
async def test_exempt_paths_are_never_limited(client: AsyncClient, path: str) -> None:
    with time_machine.travel(T0, tick=False):
        codes = [(await client.get(path)).status_code for _ in range(50)]
    assert set(codes) == {200}


async def test_invalid_key_still_401(client: AsyncClient) -> None:
    resp = await client.get("/v1/books", headers={"X-API-Key": "sk_test_nope0000_000000"})
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "invalid_api_key"


async def test_redis_down_fails_open() -> None:
    class DownRedis:
        def register_script(self, script: str):  # type: ignore[no-untyped-def]
            async def run(**kwargs: object) -> None:
                raise RedisConnectionError("connection refused")

            return run

    limiter = RateLimiter(redis=lambda: DownRedis(), limits={"free": Limit(60, 20)})  # type: ignore[arg-type,return-value]
    decision = await limiter.hit("key:1", "free")
    assert decision.allowed
    assert decision.remaining == 20
'''

REPLAY_SCRIPT = '''"""Replay an access log against the rate limiter, offline, and report what it would have rejected.

    uv run python scripts/replay_ratelimit.py logs/access-2025-11-17.log [--plans plans.json]

The log format is the one our ingress writes (see app/logging.py):
    <iso time> <level> access <client ip> <method> <path> <status> <ms>ms key=<prefix> plan=<plan> ua="<user agent>"
Buckets are simulated in memory with the same arithmetic as the Lua script in app/ratelimit.py.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime

from app.ratelimit import ANONYMOUS, Limit

LINE = re.compile(
    r"^(?P<ts>\\S+) \\S+ +access (?P<ip>\\S+) (?P<method>[A-Z]+) (?P<path>\\S+) (?P<status>\\d{3}) "
    r"(?P<ms>\\d+)ms key=(?P<key>\\S+) plan=(?P<plan>\\S+)"
)

DEFAULT_PLANS = {
    "free": Limit(60, 20),
    "pro": Limit(600, 100),
    "partner": Limit(3000, 500),
    "internal": Limit(10_000, 2000),
}


@dataclass
class Bucket:
    tokens: float
    ts: float


def replay(lines: list[str], plans: dict[str, Limit]) -> tuple[Counter[str], Counter[str], dict[str, Counter[str]]]:
    buckets: dict[str, Bucket] = {}
    seen: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    paths: dict[str, Counter[str]] = defaultdict(Counter)
    for line in lines:
        m = LINE.match(line)
        if not m or m["path"] in ("/healthz", "/readyz"):
            continue
        who = m["key"] if m["key"] != "-" else f"ip:{m['ip']}"
        limit = plans.get(m["plan"], ANONYMOUS)
        now = datetime.fromisoformat(m["ts"].replace("Z", "+00:00")).timestamp()
        b = buckets.setdefault(who, Bucket(limit.burst, now))
        b.tokens = min(limit.burst, b.tokens + max(0.0, now - b.ts) * limit.rate)
        b.ts = now
        seen[who] += 1
        if b.tokens >= 1:
            b.tokens -= 1
        else:
            rejected[who] += 1
            paths[who][m["path"].split("?")[0]] += 1
    return seen, rejected, paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--plans", help="JSON file: {plan: [requests_per_minute, burst]}")
    args = parser.parse_args()
    plans = DEFAULT_PLANS
    if args.plans:
        with open(args.plans) as f:
            plans = {name: Limit(*v) for name, v in json.load(f).items()}
    with open(args.log) as f:
        seen, rejected, paths = replay(f.readlines(), plans)
    print(f"{'caller':<24} {'requests':>9} {'rejected':>9} {'share':>7}  top rejected paths")
    for who, total in seen.most_common(15):
        r = rejected[who]
        top = ", ".join(f"{p} ({c})" for p, c in paths[who].most_common(3))
        print(f"{who:<24} {total:>9} {r:>9} {r / total:>7.1%}  {top}")
    print(f"\\n{sum(seen.values())} requests, {sum(rejected.values())} would have been rejected "
          f"({sum(rejected.values()) / max(1, sum(seen.values())):.1%}) across {len(seen)} callers")


if __name__ == "__main__":
    main()
'''


# ---------------------------------------------------------------------------
# Recording machinery
# ---------------------------------------------------------------------------

REQUEST_HEADERS = {
    "accept": "application/json",
    "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,"
                      "fine-grained-tool-streaming-2025-05-14",
    "anthropic-dangerous-direct-browser-access": "true",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
    "user-agent": "claude-cli/2.0.37 (external, cli)",
    "x-api-key": "[redacted]",
    "x-app": "cli",
    "x-stainless-lang": "js",
    "x-stainless-package-version": "0.68.0",
    "x-stainless-runtime": "node",
    "x-stainless-runtime-version": "v22.11.0",
}


class Recording:
    """The lines of the output file, and the wall clock of the session."""

    def __init__(self) -> None:
        self.now = START
        self.lines: list[dict[str, Any]] = [{
            "ctxviewer": 1, "type": "meta", "version": "0.1.0", "started": iso(START),
            "demo": True,
            "note": "Demo session generated by bench/make_demo_session.py: a fictional project, "
                    "written for ctxviewer.",
            "upstreams": {"anthropic": "https://api.anthropic.com"},
        }]
        self.count = 0

    def wait(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def exchange(self, body: dict[str, Any], response: dict[str, Any], usage: dict[str, int],
                 started: datetime, first_byte_ms: float, total_ms: float) -> None:
        self.count += 1
        self.lines.append({
            "ctxviewer": 1, "type": "exchange", "id": f"ex_{self.count:06d}",
            "api": "anthropic", "method": "POST", "path": "/v1/messages",
            "upstream": "https://api.anthropic.com/v1/messages?beta=true",
            "started": iso(started),
            "request": {"headers": REQUEST_HEADERS, "body": body},
            "response": {"status": 200, "headers": {
                "content-type": "text/event-stream; charset=utf-8",
                "request-id": _ident("req_011C", f"req{self.count}", 20),
                "anthropic-organization-id": "0b7c2f4e-8d1a-4c3b-9e6f-5a2d7c1b8e90"},
                "stream": True, "body": response},
            "usage": usage,
            "timing": {"first_byte_ms": round(first_byte_ms, 1), "total_ms": round(total_ms, 1)},
            "error": None,
        })

    def write(self, path: Path) -> int:
        data = b"".join(dumps(line).encode() + b"\n" for line in self.lines)
        if path.suffix == ".xz":  # ~20x smaller: xz's window spans whole requests, gzip's 32 KB does not
            out = lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
        elif path.suffix == ".gz":
            buf = io.BytesIO()
            # mtime=0 and no file name: the same input gives the same bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
                gz.write(data)
            out = buf.getvalue()
        else:
            out = data
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(out)
        return len(out)


class Conversation:
    """One agent conversation (main, sub-agent or side call) and its prompt cache."""

    def __init__(self, rec: Recording, name: str, system: list[dict[str, Any]],
                 tools: list[dict[str, Any]], model: str = MODEL, max_tokens: int = 32000,
                 thinking: int | None = None, cached: bool = True) -> None:
        self.rec = rec
        self.name = name
        self.system = system
        self.tools = tools
        self.model = model
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.cached = cached
        self.messages: list[dict[str, Any]] = []
        self.prev_prompt = 0
        self.prev_time: datetime | None = None
        self.calls = 0
        self.peak = 0

    # -- building the conversation ------------------------------------------------

    def user(self, content: str | list[dict[str, Any]]) -> None:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if self.messages and self.messages[-1]["role"] == "user" \
                and isinstance(self.messages[-1]["content"], list):
            self.messages[-1]["content"].extend(content)  # Claude Code merges consecutive user turns
        else:
            self.messages.append({"role": "user", "content": content})

    def system_message(self, text: str) -> None:
        self.messages.append({"role": "system", "content": text})

    def reset(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.prev_prompt = 0  # the history changed: nothing after the tools is cached
        self.prev_time = None

    # -- one API call ---------------------------------------------------------------

    def body(self) -> dict[str, Any]:
        messages = list(self.messages)
        if self.cached and messages and isinstance(messages[-1]["content"], list):
            last = dict(messages[-1])
            blocks = [dict(x) for x in last["content"]]
            blocks[-1]["cache_control"] = {"type": "ephemeral"}
            last["content"] = blocks
            messages[-1] = last
        body: dict[str, Any] = {"model": self.model, "messages": messages, "system": self.system,
                                "tools": self.tools,
                                "metadata": {"user_id": USER_ID}, "max_tokens": self.max_tokens}
        if self.thinking:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking}
        body["stream"] = True
        return body

    def call(self, content: list[dict[str, Any]], stop_reason: str | None = None) -> dict[str, Any]:
        """Record one request with the current history and ``content`` as the reply."""
        rec = self.rec
        body = self.body()
        prompt = prompt_tokens(body)
        started = rec.now
        warm = (self.cached and self.prev_time is not None
                and (started - self.prev_time).total_seconds() < CACHE_TTL)
        if not self.cached:
            usage = {"input_tokens": prompt, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 0}
        else:
            uncached = rng.choice((1, 3, 4, 5, 6, 7, 8, 10))
            read = min(self.prev_prompt, prompt - uncached) if warm else 0
            usage = {"input_tokens": uncached, "cache_creation_input_tokens": prompt - read - uncached,
                     "cache_read_input_tokens": read}
        out = output_tokens(content)
        usage["output_tokens"] = out
        if stop_reason is None:
            stop_reason = "tool_use" if any(x["type"] == "tool_use" for x in content) else "end_turn"
        # Time to first token grows with the uncached part of the prompt; Sonnet streams
        # ~50-70 tokens/s, Haiku ~150-200.
        fresh = usage["input_tokens"] + usage["cache_creation_input_tokens"]
        if self.model == MODEL:
            first_byte = rng.uniform(2600, 6200) + fresh / 20.0
            per_token = rng.uniform(19, 27)
        else:
            first_byte = rng.uniform(500, 900) + fresh / 60.0
            per_token = rng.uniform(5, 7)
        total = first_byte + out * per_token
        self.calls += 1
        response = {
            "id": _ident("msg_01", f"{self.name}-{self.calls}-{iso(started)}"),
            "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {**{k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                  "cache_read_input_tokens")},
                      "cache_creation": {"ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                                         "ephemeral_1h_input_tokens": 0},
                      "output_tokens": out, "service_tier": "standard"},
        }
        rec.exchange(body, response, usage, started, first_byte, total)
        rec.wait(total / 1000.0)
        self.prev_prompt = prompt
        self.prev_time = started
        self.peak = max(self.peak, prompt)
        self.messages.append({"role": "assistant", "content": content})
        return response


_TOOL_IDS = iter(range(1, 10_000))


def tool_id() -> str:
    return _ident("toolu_01", f"tool-{next(_TOOL_IDS)}", 22)


def thinking(text: str) -> dict[str, Any]:
    sig = base64.b64encode(hashlib.sha512(text.encode()).digest()).decode()
    return {"type": "thinking", "thinking": text, "signature": "ErUBCkYIBxgCKkD" + sig}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


class Call:
    """A tool call and what it returns."""

    def __init__(self, name: str, input: dict[str, Any], result: str | list[dict[str, Any]],
                 is_error: bool = False, seconds: float = 0.3) -> None:
        self.name = name
        self.input = input
        self.result = result
        self.is_error = is_error
        self.seconds = seconds
        self.id = tool_id()

    def use(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}

    def result_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": self.id, "type": "tool_result",
                                 "content": self.result}
        if self.is_error:
            block["is_error"] = True
        return block


def step(conv: Conversation, *, think: str | None = None, say: str | None = None,
         calls: list[Call] = (), after: list[dict[str, Any]] = (),  # type: ignore[assignment]
         run: Any = None) -> dict[str, Any]:
    """One model call: the reply (thinking, text, tool calls), then the tool results.

    ``run`` is called between the reply and the results (to record a sub-agent).
    """
    content: list[dict[str, Any]] = []
    if think:
        content.append(thinking(think))
    if say:
        content.append(text(say))
    content += [c.use() for c in calls]
    response = conv.call(content)
    if calls:
        if run is not None:
            run()
        conv.rec.wait(max(c.seconds for c in calls) + rng.uniform(0.6, 2.2))
        conv.user([c.result_block() for c in calls] + list(after))
    return response


def numbered(content: str, start: int = 1, limit: int | None = None) -> str:
    """A file as the Read tool returns it (cat -n)."""
    lines = content.split("\n")
    if content.endswith("\n"):
        lines = lines[:-1]
    chunk = lines[start - 1:(start - 1 + limit) if limit else None]
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(chunk, start))


def read(path: str, content: str | None = None, offset: int | None = None,
         limit: int | None = None) -> Call:
    content = FILES[path] if content is None else content
    args: dict[str, Any] = {"file_path": f"{REPO}/{path}"}
    if offset is not None:
        args["offset"] = offset
    if limit is not None:
        args["limit"] = limit
    return Call("Read", args, numbered(content, offset or 1, limit), seconds=0.1)


def bash(command: str, description: str, output: str, error: bool = False,
         seconds: float = 1.0, timeout: int | None = None) -> Call:
    args: dict[str, Any] = {"command": command, "description": description}
    if timeout:
        args["timeout"] = timeout
    return Call("Bash", args, output, is_error=error, seconds=seconds)


def edit(path: str, old: str, new: str) -> Call:
    content = FILES[path]
    assert content.count(old) == 1, (path, old[:60])
    FILES[path] = content.replace(old, new)
    start = FILES[path][:FILES[path].index(new)].count("\n") + 1
    first = max(1, start - 3)
    shown = new.count("\n") + 7
    snippet = numbered(FILES[path], first, shown)
    return Call("Edit", {"file_path": f"{REPO}/{path}", "old_string": old, "new_string": new},
                f"Updated {REPO}/{path}. Lines {first}-{first + shown - 1} after the edit:\n{snippet}",
                seconds=0.2)


def write(path: str, content: str) -> Call:
    existed = path in FILES
    FILES[path] = content
    lines = content.count("\n")
    what = "Overwrote" if existed else "Created"
    return Call("Write", {"file_path": f"{REPO}/{path}", "content": content},
                f"{what} {REPO}/{path} ({lines} lines).", seconds=0.1)


def todo(items: list[tuple[str, str, str]]) -> Call:
    todos = [{"content": c, "status": st, "activeForm": a} for c, a, st in items]
    return Call("TodoWrite", {"todos": todos},
                "Todo list updated. Keep working through the items and update their status as "
                "you go; only one item should be in_progress at a time.", seconds=0.05)


# ---------------------------------------------------------------------------
# The incident's access log (generated, deterministic)
# ---------------------------------------------------------------------------

SCRAPER_KEY = "sk_live_9f2c71ab"
SCRAPER_KEY_2 = "sk_live_e07a55c9"
LOG_PATH = "logs/access-2025-11-17.log"

_WORDS = ("dune", "foundation", "hyperion", "neuromancer", "solaris", "ubik", "kindred",
          "piranesi", "circe", "gideon", "lagoon", "binti", "annihilation", "ancillary",
          "exhalation", "blindsight", "accelerando", "embassytown", "perdido", "parable",
          "wool", "silo", "jade city", "the expanse", "murderbot", "red rising", "earthsea",
          "the fifth season", "left hand of darkness", "the dispossessed", "station eleven")
_APP_PATHS = ("/v1/books/{b}", "/v1/books/{b}/similar", "/v1/shelves/{s}", "/v1/shelves/{s}/entries",
              "/v1/search?q={q}", "/v1/books/by-isbn/978{i}", "/v1/shelves", "/v1/imports/{j}")
_CALLERS = [
    # key, plan, ips, requests per second, user agent, paths
    ("sk_live_bff0a1c2", "internal", ("10.0.3.14", "10.0.3.15"), 1.35, "shelfwise-bff/3.8.1", _APP_PATHS),
    ("sk_live_4be81d07", "partner", ("203.0.113.40",), 0.22, "bookshop-sync/1.4 (+https://bookshop.example/bot)",
     ("/v1/books?cursor={c}&limit=100", "/v1/books/by-isbn/978{i}")),
    ("sk_live_c3d9e4f1", "pro", ("192.0.2.77", "192.0.2.78"), 0.31, "ReadMoreApp/5.2 okhttp/4.12.0",
     ("/v1/search?q={q}", "/v1/books/{b}", "/v1/search/authors?q={q}")),
    ("sk_live_71aa0b3e", "pro", ("198.18.4.9",), 0.12, "LitListBot/0.9", ("/v1/books/{b}", "/v1/books/{b}/similar")),
    ("sk_live_2d5f8c60", "free", ("203.0.113.201",), 0.03, "curl/8.5.0", ("/v1/books/{b}", "/v1/search?q={q}")),
    ("sk_live_b81e3f22", "free", ("100.64.12.5",), 0.05, "python-httpx/0.27.2", ("/v1/search?q={q}",)),
    ("sk_live_0c6b9d41", "free", ("192.0.2.150",), 0.02, "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0",
     ("/v1/books/{b}", "/v1/search?q={q}")),
]
SPIKE_START = datetime(2025, 11, 17, 22, 41, 9, tzinfo=timezone.utc)
SPIKE_SWITCH = datetime(2025, 11, 17, 22, 58, 31, tzinfo=timezone.utc)
SPIKE_END = datetime(2025, 11, 17, 23, 16, 44, tzinfo=timezone.utc)


def _path(template: str, r: random.Random) -> str:
    return template.format(b=r.randint(1000, 98000), s=r.randint(10, 9000), j=r.randint(100, 900),
                           q=r.choice(_WORDS).replace(" ", "+"), i=r.randint(1_000_000_000, 1_999_999_999),
                           c=base64.urlsafe_b64encode(f'{{"after":{r.randint(1000, 90000)}}}'.encode())
                           .decode().rstrip("="))


def access_log() -> list[str]:
    """~40k lines from 21:00 to 00:00 UTC, with the scraper from 22:41 to 23:16."""
    r = random.Random(1117)
    start = datetime(2025, 11, 17, 21, 0, 0, tzinfo=timezone.utc)
    end = datetime(2025, 11, 18, 0, 0, 0, tzinfo=timezone.utc)
    events: list[tuple[float, str]] = []
    total = (end - start).total_seconds()

    def load_at(t: float) -> float:  # DB saturation while the scraper runs (ramps up over ~2 min)
        ts = start + timedelta(seconds=t)
        if not (SPIKE_START <= ts <= SPIKE_END):
            return 1.0
        return 1.0 + 59.0 * min(1.0, (ts - SPIKE_START).total_seconds() / 120.0)

    def outcome(ms: int) -> tuple[int, int]:  # the ingress gives up after 5 s
        if ms >= 5000:
            return 504, 5000
        if ms > 2500 and r.random() < 0.35:
            return 503, ms
        return 200, ms

    for key, plan, ips, rps, ua, paths in _CALLERS:
        t = r.uniform(0, 2)
        while t < total:
            path = _path(r.choice(paths), r)
            slow = load_at(t) if "search" in path else (1 + (load_at(t) - 1) * 0.08)
            ms = int(r.lognormvariate(3.4 if "search" in path else 2.6, 0.45) * slow)
            status, ms = outcome(ms)
            if status == 200 and r.random() < 0.01:
                status = r.choice((404, 404, 422))
            events.append((t, f'{r.choice(ips)} GET {path} {status} {ms}ms key={key} plan={plan} ua="{ua}"'))
            t += r.expovariate(rps) if not (key == "sk_live_4be81d07" and 1800 < t < 2100) \
                else r.expovariate(8.0)  # the partner's nightly sync, 21:30
    t = 0.0
    while t < total:  # kubelet probes
        events.append((t, f'10.0.0.2 GET /healthz 200 {r.randint(1, 3)}ms key=- plan=- ua="kube-probe/1.30"'))
        events.append((t + 0.4, f'10.0.0.2 GET /readyz 200 {r.randint(2, 9)}ms key=- plan=- ua="kube-probe/1.30"'))
        t += 10.0
    t = (SPIKE_START - start).total_seconds()
    stop = (SPIKE_END - start).total_seconds()
    switch = (SPIKE_SWITCH - start).total_seconds()
    while t < stop:
        key = SCRAPER_KEY if t < switch else SCRAPER_KEY_2
        ip = r.choice(("198.51.100.23", "198.51.100.24", "198.51.100.25"))
        if r.random() < 0.72:
            path = f"/v1/search?q={r.choice(_WORDS).replace(' ', '+')}&page={r.randint(1, 40)}&size=50"
            ms = int(r.lognormvariate(3.6, 0.5) * load_at(t))
        else:
            path = _path("/v1/books?cursor={c}&limit=100", r)
            ms = int(r.lognormvariate(2.9, 0.4) * (1 + (load_at(t) - 1) * 0.08))
        status, ms = outcome(ms)
        events.append((t, f'{ip} GET {path} {status} {ms}ms key={key} plan=free ua="python-requests/2.32.3"'))
        t += r.expovariate(9.5)
    for _ in range(60):  # unauthenticated probing
        t = r.uniform(0, total)
        events.append((t, f'{r.choice(("45.155.205.17", "185.220.101.4"))} GET '
                          f'{r.choice(("/v1/books", "/.env", "/admin/keys", "/v1/search?q=test"))} 401 2ms '
                          f'key=- plan=- ua="Mozilla/5.0 zgrab/0.x"'))
    events.sort(key=lambda e: e[0])
    out = []
    for t, rest in events:
        ts = start + timedelta(seconds=t)
        level = "WARN " if (" 503 " in rest or " 504 " in rest) else "INFO "
        out.append(f"{iso(ts)} {level} access {rest}")
    return out


LOG = access_log()


def log_calls(lines: list[str]) -> list[tuple[datetime, str, str, str]]:
    out = []
    for line in lines:
        parts = line.split()
        ts = datetime.fromisoformat(parts[0].replace("Z", "+00:00"))
        key = next(p[4:] for p in parts if p.startswith("key="))
        plan = next(p[5:] for p in parts if p.startswith("plan="))
        out.append((ts, parts[3], parts[5], key if key != "-" else f"ip:{parts[3]}", plan))
    return out  # type: ignore[return-value]


PLAN_LIMITS = {"free": (60, 20), "pro": (600, 100), "partner": (3000, 500), "internal": (10_000, 2000)}


def replay_data(costs: dict[str, int] | None = None) -> tuple[dict[str, int], dict[str, int], dict[str, dict[str, int]]]:
    """What scripts/replay_ratelimit.py computes on the log (same arithmetic as the script)."""
    buckets: dict[str, list[float]] = {}
    seen: dict[str, int] = {}
    rejected: dict[str, int] = {}
    paths: dict[str, dict[str, int]] = {}
    for ts, _ip, path, who, plan in log_calls(LOG):  # type: ignore[misc]
        if path in ("/healthz", "/readyz"):
            continue
        rpm, burst = PLAN_LIMITS.get(plan, (30, 10))
        rate = rpm / 60
        now = ts.timestamp()
        b = buckets.setdefault(who, [float(burst), now])
        b[0] = min(burst, b[0] + max(0.0, now - b[1]) * rate)
        b[1] = now
        cost = 1
        if costs:
            cost = next((c for prefix, c in costs.items() if path.startswith(prefix)), 1)
        seen[who] = seen.get(who, 0) + 1
        if b[0] >= cost:
            b[0] -= cost
        else:
            rejected[who] = rejected.get(who, 0) + 1
            p = paths.setdefault(who, {})
            p[path.split("?")[0]] = p.get(path.split("?")[0], 0) + 1
    return seen, rejected, paths


def replay(costs: dict[str, int] | None = None) -> str:
    """The output of scripts/replay_ratelimit.py on the log."""
    seen, rejected, paths = replay_data(costs)
    lines = [f"{'caller':<24} {'requests':>9} {'rejected':>9} {'share':>7}  top rejected paths"]
    for who, total in sorted(seen.items(), key=lambda kv: -kv[1])[:15]:
        r = rejected.get(who, 0)
        top = ", ".join(f"{p} ({c})" for p, c in sorted(paths.get(who, {}).items(),
                                                         key=lambda kv: -kv[1])[:3])
        lines.append(f"{who:<24} {total:>9} {r:>9} {r / total:>7.1%}  {top}".rstrip())
    all_seen, all_rej = sum(seen.values()), sum(rejected.values())
    lines.append(f"\n{all_seen} requests, {all_rej} would have been rejected "
                 f"({all_rej / max(1, all_seen):.1%}) across {len(seen)} callers")
    return "\n".join(lines)


def replay_numbers(costs: dict[str, int] | None = None) -> dict[str, str]:
    """Placeholders for the prose that quotes the replay: @S1@ (scraper key 1) etc."""
    seen, rejected, _ = replay_data(costs)
    out = {"@LINES@": f"{len(LOG):,}"}
    for tag, key in (("S1", SCRAPER_KEY), ("S2", SCRAPER_KEY_2), ("BFF", "sk_live_bff0a1c2"),
                     ("SHOP", "sk_live_4be81d07"), ("RM", "sk_live_c3d9e4f1")):
        out[f"@{tag}@"] = f"{seen[key]:,}"
        out[f"@{tag}R@"] = f"{rejected.get(key, 0):,}"
        out[f"@{tag}P@"] = f"{100 * rejected.get(key, 0) / seen[key]:.1f} %"
    big = {SCRAPER_KEY, SCRAPER_KEY_2, "sk_live_bff0a1c2", "sk_live_4be81d07", "sk_live_c3d9e4f1"}
    out["@REST@"] = f"{sum(v for k, v in seen.items() if k not in big):,}"
    out["@RESTR@"] = f"{sum(v for k, v in rejected.items() if k not in big):,}"
    return out


def fill(template: str, numbers: dict[str, str]) -> str:
    for k, v in numbers.items():
        template = template.replace(k, v)
    assert "@" not in template.replace("@shelfwise", "").replace("@example", ""), template[:80]
    return template


def key_counts() -> str:
    counts: dict[str, int] = {}
    for line in LOG:
        key = next(p for p in line.split() if p.startswith("key="))
        counts[key] = counts.get(key, 0) + 1
    return "\n".join(f"{c:>7} {k}" for k, c in sorted(counts.items(), key=lambda kv: -kv[1]))


def first_line_of(needle: str) -> int:
    return next(i for i, line in enumerate(LOG, 1) if needle in line)


# ---------------------------------------------------------------------------
# pytest output
# ---------------------------------------------------------------------------

def _rule(title: str, char: str = "_", width: int = 80) -> str:
    title = f" {title} "
    left = (width - len(title)) // 2
    return char * left + title + char * (width - left - len(title))


def pytest_failure(path: str, test: str, fixtures: list[str], fail_at: str, errors: list[str],
                   kind: str = "AssertionError") -> str:
    """One failure block of pytest's output, quoting the test's source up to the failing line."""
    source = FILES[path].split("\n")
    name = test.split("[")[0]
    start = next(i for i, line in enumerate(source) if line.lstrip().startswith(f"async def {name}("))
    end = next(i for i in range(start, len(source)) if fail_at in source[i])
    body = []
    for i in range(start, end + 1):
        prefix = ">   " if i == end else "    "
        body.append(prefix + source[i])
    body += ["E       " + e if e else "E" for e in errors]
    return "\n".join([_rule(test), "", *fixtures, "", *body, "",
                      f"{path}:{end + 1}: {kind}"])


def pytest_quiet(marks: str, failures: list[str], summary: list[str], tail: str,
                 seconds: float) -> str:
    """``pytest -q`` output: progress marks in lines of 72, failures, short summary."""
    lines = []
    for i in range(0, len(marks), 72):
        chunk = marks[i:i + 72]
        pct = round(100 * (i + len(chunk)) / len(marks))
        lines.append(chunk.ljust(72) + f" [{pct:>3}%]")
    if failures:
        lines += [_rule("FAILURES", "=")]
        for f in failures:
            lines += [f, ""]
        lines.append(_rule("short test summary info", "="))
        lines += summary
    lines.append(f"{tail} in {seconds:.2f}s")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Tool outputs written for the story
# ---------------------------------------------------------------------------

ISSUE_142 = {
    "number": 142,
    "title": "Scraper took search down on Nov 17: we need per-key rate limiting",
    "state": "open",
    "html_url": "https://github.com/shelfwise/shelfwise-api/issues/142",
    "user": {"login": "dani-ops"},
    "labels": [{"name": "incident"}, {"name": "api"}, {"name": "priority: high"}],
    "assignees": [{"login": "maya-k"}],
    "created_at": "2025-11-18T08:12:44Z",
    "updated_at": "2025-11-18T11:03:19Z",
    "body": """## What happened

On 2025-11-17 from ~22:41 to ~23:17 UTC a single caller sent roughly 9-10 requests/s to the public API, almost all of it `/v1/search` with `size=50` and deep pages, plus cursor walks over `/v1/books?limit=100`. Search latency went from ~30 ms p50 to 2-8 s, Postgres CPU sat at 100 % for 35 minutes, and the BFF (mobile app) started timing out: about 1 % of app requests failed with 503/504, and app searches took seconds.

The caller used a **free** plan key (`sk_live_9f2c71ab...`) and switched to a second key on the same account at 22:58 when we revoked the first one by hand. Traffic stopped by itself at 23:16.

## Why it hurt

We have no rate limiting at all. The `plans` table has `requests_per_minute` / `burst` since the billing work in August, but nothing enforces it. Search is not cached for deep pages (every `page` is a cache miss).

## Ask

- Enforce per-key limits from the plan (token bucket or similar), in Redis so that all API pods share the state.
- Proper `429` with `Retry-After`, and the `RateLimit-*` headers so well-behaved clients can back off.
- Health/readiness endpoints must never be limited.
- Unauthenticated traffic gets a small per-IP limit.

Dashboard: https://grafana.internal.shelfwise.example/d/api-overview?from=1763415000000&to=1763420400000
Incident notes: notes/incident-2025-11-17.md (not merged yet)""",
    "comments": [
        {"user": {"login": "tomasz-b"}, "created_at": "2025-11-18T08:40:02Z",
         "body": "The plan limits are in `plans` (free 60/min burst 20, pro 600/100, partner 3000/500, internal 10000/2000). They change maybe once a year, loading them at startup is fine. Please don't call Postgres per request for this."},
        {"user": {"login": "dani-ops"}, "created_at": "2025-11-18T09:02:51Z",
         "body": "Reminder: the kubelet hits /healthz and /readyz every 10 s on every pod. If those ever return 429 the pods get restarted. Also please fail open if Redis is down, a Redis blip must not become an API outage."},
        {"user": {"login": "maya-k"}, "created_at": "2025-11-18T11:03:19Z",
         "body": "Taking this today. Will also replay the access log from last night against the limiter so we know what it would have done."},
    ],
}

DESCRIBE_API_KEYS = {
    "table": "public.api_keys",
    "columns": [
        {"name": "id", "type": "bigint", "nullable": False, "default": "nextval('api_keys_id_seq'::regclass)"},
        {"name": "key_prefix", "type": "character varying(24)", "nullable": False, "default": None},
        {"name": "key_hash", "type": "character varying(64)", "nullable": False, "default": None},
        {"name": "owner_id", "type": "bigint", "nullable": False, "default": None},
        {"name": "plan", "type": "character varying(32)", "nullable": False, "default": "'free'::character varying"},
        {"name": "label", "type": "character varying(80)", "nullable": False, "default": "''::character varying"},
        {"name": "revoked_at", "type": "timestamp with time zone", "nullable": True, "default": None},
        {"name": "last_used_at", "type": "timestamp with time zone", "nullable": True, "default": None},
        {"name": "created_at", "type": "timestamp with time zone", "nullable": False, "default": "now()"},
        {"name": "updated_at", "type": "timestamp with time zone", "nullable": False, "default": "now()"},
    ],
    "indexes": [
        {"name": "api_keys_pkey", "definition": "CREATE UNIQUE INDEX api_keys_pkey ON public.api_keys USING btree (id)"},
        {"name": "api_keys_key_hash_key", "definition": "CREATE UNIQUE INDEX api_keys_key_hash_key ON public.api_keys USING btree (key_hash)"},
        {"name": "api_keys_owner_idx", "definition": "CREATE INDEX api_keys_owner_idx ON public.api_keys USING btree (owner_id)"},
    ],
    "foreign_keys": [
        {"name": "api_keys_owner_id_fkey", "definition": "FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE CASCADE"},
        {"name": "api_keys_plan_fkey", "definition": "FOREIGN KEY (plan) REFERENCES plans(name)"},
    ],
    "row_estimate": 18734,
}

PLANS_ROWS = {"rows": [
    {"name": "free", "requests_per_minute": 60, "burst": 20, "monthly_quota": 50000, "keys": 17211},
    {"name": "pro", "requests_per_minute": 600, "burst": 100, "monthly_quota": 2000000, "keys": 1402},
    {"name": "partner", "requests_per_minute": 3000, "burst": 500, "monthly_quota": None, "keys": 96},
    {"name": "internal", "requests_per_minute": 10000, "burst": 2000, "monthly_quota": None, "keys": 25},
], "row_count": 4, "duration_ms": 38}

SCRAPER_ROWS = {"rows": [
    {"key_prefix": "sk_live_9f2c71ab", "plan": "free", "label": "test", "owner_id": 48213,
     "owner_created_at": "2025-11-17T22:31:55Z", "key_created_at": "2025-11-17T22:33:10Z",
     "revoked_at": "2025-11-17T22:58:02Z", "other_keys_of_owner": 1},
    {"key_prefix": "sk_live_e07a55c9", "plan": "free", "label": "test2", "owner_id": 48213,
     "owner_created_at": "2025-11-17T22:31:55Z", "key_created_at": "2025-11-17T22:58:24Z",
     "revoked_at": "2025-11-18T07:55:41Z", "other_keys_of_owner": 1},
    {"key_prefix": "sk_live_4be81d07", "plan": "partner", "label": "bookshop prod sync", "owner_id": 1207,
     "owner_created_at": "2023-03-02T10:14:00Z", "key_created_at": "2024-09-16T08:00:12Z",
     "revoked_at": None, "other_keys_of_owner": 3},
    {"key_prefix": "sk_live_c3d9e4f1", "plan": "pro", "label": "readmore android", "owner_id": 3391,
     "owner_created_at": "2024-01-19T16:45:31Z", "key_created_at": "2024-01-19T16:47:02Z",
     "revoked_at": None, "other_keys_of_owner": 1},
], "row_count": 4, "duration_ms": 21}

WEBFETCH_RATELIMIT = """The page is the IETF HTTPAPI working group draft "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers). Summary of what matters for a server implementation:

**Current field names (recent drafts)**
- `RateLimit-Policy`: describes the quota policies, e.g. `"default";q=100;w=60` (quota 100 units per 60-second window). Structured-field list of named policies.
- `RateLimit`: the current state for a policy, e.g. `"default";r=42;t=17` where `r` is the remaining quota units and `t` the seconds until the quota resets or is restored.

**Older drafts (still what most clients and libraries implement)**
- `RateLimit-Limit`: the quota limit for the current window.
- `RateLimit-Remaining`: remaining quota units.
- `RateLimit-Reset`: seconds (delta, not a timestamp) until the quota resets.
These three are what popular client libraries and API gateways emit and read today.

**Retry-After**
- Defined by RFC 9110 (section 10.2.3), not by the draft. In a 429 response it is either an HTTP-date or a non-negative integer number of seconds (`delay-seconds`). Fractional values are not valid; clients may ignore them.
- The draft recommends sending `Retry-After` together with 429 and says servers MAY also send the RateLimit fields on successful responses so clients can throttle themselves before hitting the limit.

**Other notes**
- The draft is explicit that the fields are advisory: clients must not assume the quota is exact, especially with several servers sharing state.
- Quota units need not be requests: a server can charge more units for expensive requests (the draft mentions this as a use of quota units), as long as the policy is documented.
- Servers should not expose information that helps attackers (e.g. per-endpoint internals); a single policy per key is common.
- Status code 429 "Too Many Requests" is defined in RFC 6585 section 4; the response body should explain the condition."""

SKILL_PYTHON_TESTING = f"""Base directory for this skill: {HOME}/.claude/skills/python-testing

# Python testing conventions

These are the conventions for tests in Maya's Python services. Follow them for new tests and when fixing existing ones; match what the project already does when it differs, and say so.

## Structure
- One test module per application module: `app/ratelimit.py` -> `tests/test_ratelimit.py`.
- Test names say the behaviour, not the function: `test_retry_after_is_whole_seconds`, not `test_hit_2`.
- Arrange / act / assert, separated by a blank line when the test is longer than ~6 lines. One behaviour per test; several asserts are fine if they check the same behaviour.
- Prefer `pytest.mark.parametrize` over loops inside a test. Give ids to non-obvious parameters.

## Async
- pytest-asyncio in auto mode: plain `async def test_...`, no decorator.
- Use httpx's `AsyncClient` with `ASGITransport` against the app object; never start a real server.
- Do not create event loops by hand and do not use `asyncio.sleep` to wait for something: await the thing.

## Fakes, not mocks
- Redis: `fakeredis.FakeAsyncRedis` (with the `lua` extra when the code uses scripts). Flush it in the fixture teardown.
- Postgres: the project's `db` / `session_factory` fixtures. Do not mock SQLAlchemy sessions.
- HTTP to third parties: `respx` routes, with `assert_all_called=True`.
- Only use `unittest.mock` for things that cannot be faked (e.g. forcing a `ConnectionError` out of a client); prefer `monkeypatch.setattr` on the narrowest object.

## Time
- Never sleep in tests. Freeze or move time with `time_machine.travel(..., tick=False)` and `traveller.shift(seconds)`.
- Code under test should read time through one function (`time.time()` or an injected clock) so tests can control it. Watch out for `time.monotonic()`: time-machine does not move it unless asked.
- Use fixed, readable timestamps (e.g. `1_763_500_000` = 2025-11-18T21:06:40Z).

## What a good regression test looks like
1. It fails without the fix, for the right reason (check by reverting the fix once).
2. It names the bug's behaviour, and links the issue in a comment if there is one.
3. It is deterministic: no randomness without a seed, no wall clock, no ordering assumptions on sets or dicts from the database.

## Running
- `uv run pytest path/to/test_file.py -q` while iterating; the full suite (`uv run pytest -q`) before saying you are done.
- `-x --lf` to iterate on failures; `-p no:randomly` if the project uses pytest-randomly and you need a stable order to debug.
- Report the final counts to the user (e.g. "131 passed").

## Scripts in this skill
- `scripts/flaky.sh <test id> [runs]`: runs one test N times (default 50) and reports failures; use it before calling a timing-related test fixed.
"""

EXPLORE_REPORT = """## Request pipeline of shelfwise-api

**Short answer:** there is no rate limiting anywhere today. Requests go through two middlewares (CORS, then a request-id middleware) and then straight to the routers; authentication is a per-route FastAPI dependency, not a middleware. Redis is already a shared client (`app/cache.py`) used by search caching, so a Redis-backed limiter fits in without new infrastructure.

**Relevant files**
- `app/main.py:27` `create_app()`: builds the app; middleware registered at `app/main.py:48-55` (`CORSMiddleware`, then `RequestIdMiddleware`, a `BaseHTTPMiddleware`). Routers mounted under `/v1` (`app/main.py:58-59`), admin under `/admin`. `/healthz` and `/readyz` are defined inline at `app/main.py:62-70`, unauthenticated.
- `app/main.py:32-39` lifespan: initialises the DB engine and pings Redis via `get_redis(str(settings.redis_url))`. Good place to load anything needed at startup.
- `app/auth.py:62` `resolve_api_key()`: dependency used by every route in `app/routes/`. Reads `X-API-Key`, calls `lookup_key()` (`app/auth.py:43`), which hashes the key with SHA-256 and caches the result in a module-level dict for `api_key_cache_ttl` seconds (misses cached too). Sets `request.state.api_key` (`app/auth.py:75`) *after* successful lookup.
- `app/auth.py:28` `ApiKey(id, prefix, owner_id, plan)`: frozen dataclass; `plan` is the plan name string.
- `app/cache.py:8` `get_redis()`: process-wide `redis.asyncio.Redis` with `decode_responses=True`; `set_redis()` lets tests inject fakeredis.
- `app/models.py` `Plan` (table `plans`: `name`, `requests_per_minute`, `burst`, `monthly_quota`) and `ApiKeyRow.plan` (FK to `plans.name`). Nothing reads `requests_per_minute` or `burst` today (grep finds them only in models, the migration and tests/conftest.py).
- `app/errors.py` `ApiError(status, code, message, headers)` + handler rendering `{"error": {"code", "message"}}`; it already supports extra headers.
- `tests/conftest.py`: fakeredis fixture (`redis`), SQLite session factory seeded with the four plans and one key per plan (`FREE_KEY`, `PRO_KEY`, `PARTNER_KEY`, `INTERNAL_KEY`); `client` fixture uses `ASGITransport`.

**Things to know before changing it**
1. Because auth is a dependency, `request.state.api_key` is **not** set when a `BaseHTTPMiddleware` runs (middleware runs before route dependencies). A limiting middleware has to resolve the key itself (e.g. call `lookup_key()` with its own session) or the limiting has to be a dependency. CLAUDE.md mentions this gotcha explicitly.
2. `lookup_key()` uses `time.monotonic()` for its cache expiry; tests set `api_key_cache_ttl=0.0`, so every request hits the DB in tests.
3. fakeredis is installed with the `lua` extra (`pyproject.toml`), so `EVAL`/`register_script` work in tests.
4. `RequestIdMiddleware` is added after CORS, so it wraps CORS (Starlette applies middleware in reverse order of `add_middleware`). A new middleware added last would run first, before request ids exist.
5. Git history: `c52d7e8` moved `last_used_at` updates out of the request path for latency reasons; the team cares about per-request DB calls."""


# ---------------------------------------------------------------------------
# The story
# ---------------------------------------------------------------------------

PY_FILES = """app/routes/search.py
app/isbn.py
app/routes/imports.py
tests/test_isbn.py
tests/test_imports.py
app/routes/books.py
app/models.py
app/db.py
app/cache.py
app/auth.py
app/main.py
app/settings.py
app/errors.py
app/logging.py
app/schemas.py
app/routes/shelves.py
app/routes/admin.py
app/routes/__init__.py
app/__init__.py
tests/conftest.py
tests/factories.py
tests/test_books.py
tests/test_search.py
tests/test_shelves.py
tests/test_auth.py
tests/test_admin.py
migrations/env.py
migrations/versions/2024_02_11_0001_initial.py
migrations/versions/2024_05_30_0007_shelves_position.py
migrations/versions/2025_08_21_0012_plans_and_quotas.py
migrations/versions/2025_10_02_0014_import_jobs.py
scripts/seed_dev_db.py
scripts/export_openapi.py"""


def multiedit(path: str, pairs: list[tuple[str, str]]) -> Call:
    content = FILES[path]
    for old, new in pairs:
        assert content.count(old) == 1, (path, old[:60])
        content = content.replace(old, new)
    FILES[path] = content
    return Call("MultiEdit", {"file_path": f"{REPO}/{path}",
                              "edits": [{"old_string": o, "new_string": n_} for o, n_ in pairs]},
                f"Applied {len(pairs)} edits to {REPO}/{path}.", seconds=0.2)


CLIENT = "client = <httpx.AsyncClient object at 0x7f3e2c91d6a0>"
FREE = "free_headers = {'X-API-Key': 'sk_test_free0001_3b9d1c0c4f7e4a5f'}"
PRO = "pro_headers = {'X-API-Key': 'sk_test_pro00002_5e2a9b7d10c34c1e'}"
TR = "tests/test_ratelimit.py"


def pytest_run_1() -> str:
    f = [
        pytest_failure(TR, "test_burst_is_allowed_then_429", [CLIENT, FREE], "assert codes[:FREE_BURST]",
                       ["assert [200, 200, 200, 200, 200, 200, ...] == [200, 200, 200, 200, 200, 200, ...]",
                        "  ", "  At index 10 diff: 429 != 200", "  Use -v to get more diff"]),
        pytest_failure(TR, "test_429_body_and_headers", [CLIENT, FREE], 'assert resp.headers["RateLimit-Limit"]',
                       ["AssertionError: assert '10' == '20'", "  ", "  - 20", "  + 10"]),
        pytest_failure(TR, "test_retry_after_is_whole_seconds", [CLIENT, FREE], 'assert resp.headers["Retry-After"]',
                       ["AssertionError: assert '1.0' == '1'", "  ", "  - 1", "  + 1.0"]),
        pytest_failure(TR, "test_headers_present_on_success", [CLIENT, FREE], 'assert first.headers["RateLimit-Limit"]',
                       ["KeyError: 'RateLimit-Limit'"], kind="KeyError"),
        pytest_failure(TR, "test_bucket_refills_over_time", [CLIENT, FREE], "assert codes == [200] * 5",
                       ["assert [200, 200, 429, 429, 429, 429] == [200, 200, 200, 200, 200, 429]",
                        "  ", "  At index 2 diff: 429 != 200", "  Use -v to get more diff"]),
        pytest_failure(TR, "test_limits_are_per_key", [CLIENT, FREE, PRO], "headers=pro_headers)).status_code == 200",
                       ["assert 429 == 200", " +  where 429 = <Response [429 Too Many Requests]>.status_code"]),
        pytest_failure(TR, "test_pro_plan_has_bigger_burst", [CLIENT, PRO], "assert codes.count(200) == 100",
                       ["assert 10 == 100",
                        " +  where 10 = <built-in method count of list object at 0x7f3e2c7b9e40>(200)",
                        " +    where <built-in method count of list object at 0x7f3e2c7b9e40> = "
                        "[200, 200, 200, 200, 200, 200, ...].count"]),
    ]
    summary = [
        f"FAILED {TR}::test_burst_is_allowed_then_429 - assert [200, 200, 200, 200, 200, 200, ...] == [200, 200, 200, 200, 200, 2...",
        f"FAILED {TR}::test_429_body_and_headers - AssertionError: assert '10' == '20'",
        f"FAILED {TR}::test_retry_after_is_whole_seconds - AssertionError: assert '1.0' == '1'",
        f"FAILED {TR}::test_headers_present_on_success - KeyError: 'RateLimit-Limit'",
        f"FAILED {TR}::test_bucket_refills_over_time - assert [200, 200, 429, 429, 429, 429] == [200, 200, 200, 200, 200, 429]",
        f"FAILED {TR}::test_limits_are_per_key - assert 429 == 200",
        f"FAILED {TR}::test_pro_plan_has_bigger_burst - assert 10 == 100",
    ]
    return pytest_quiet("FFFFFFF....", f, summary, "7 failed, 4 passed", 2.31)


def pytest_run_2() -> str:
    f = [pytest_failure(TR, "test_retry_after_is_whole_seconds", [CLIENT, FREE], 'assert resp.headers["Retry-After"]',
                        ["AssertionError: assert '0' == '1'", "  ", "  - 1", "  + 0"])]
    return pytest_quiet("..F........", f, [f"FAILED {TR}::test_retry_after_is_whole_seconds - AssertionError: assert '0' == '1'"],
                        "1 failed, 10 passed", 1.87)


FULL_MARKS = "." * 9 + "." * 17 + "....F" + "." * 14 + "." * 14 + "." * 12 + "." * 11 + "." * 21 + "." * 26


def pytest_full_1() -> str:
    f = [pytest_failure("tests/test_books.py", "test_list_books_pagination_walks_all_pages",
                        [CLIENT, FREE, "session_factory = async_sessionmaker(class_='AsyncSession', bind=<sqlalchemy.ext.asyncio.engine.AsyncEngine object at 0x7f3e2c8f1d10>, expire_on_commit=False)"],
                        "assert resp.status_code == 200",
                        ["assert 429 == 200", " +  where 429 = <Response [429 Too Many Requests]>.status_code"])]
    return pytest_quiet(FULL_MARKS, f, ["FAILED tests/test_books.py::test_list_books_pagination_walks_all_pages - assert 429 == 200"],
                        "1 failed, 128 passed", 7.84)


def implement(rec: Recording, main: Conversation) -> None:
    """13:49-14:10: write the limiter and its tests, three rounds of failures, green suite."""
    rec.wait(418)  # Maya reads the plan, pulls up the dashboard
    approval = ("Token bucket is fine, go ahead. Here's last night's request-rate panel for context, "
                "the red part is the scraper.")
    main.user([{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                              "data": dashboard_png()}},
               text(approval)])
    topic_call(rec, approval, '{"isNewTopic": false, "title": null}')
    rec.wait(0.8)
    step(main,
         think="The panel shows a spike of roughly 5x the baseline request rate for about 35 minutes, which "
               "matches the issue. Approved. app/ratelimit.py first: Lua script, Limit/Decision dataclasses, "
               "RateLimiter with lazy plan loading through db.session_scope() (need to check app/db.py has "
               "it), and the middleware: key from request.state.api_key, else the client IP.",
         say="Starting with the limiter module.",
         calls=[todo([("Read issue #142 and map the request pipeline", "Reading issue #142", "completed"),
                      ("Propose the design and wait for Maya's OK", "Proposing the design", "completed"),
                      ("Implement token-bucket limiter in app/ratelimit.py", "Implementing the token-bucket limiter", "in_progress"),
                      ("Register middleware and load plan limits at startup", "Registering the middleware", "pending"),
                      ("Write tests/test_ratelimit.py", "Writing rate limiter tests", "pending"),
                      ("Run the full test suite, ruff and mypy", "Running tests and linters", "pending")]),
                write("app/ratelimit.py", RATELIMIT_V1)])
    step(main, say="Now registering it in `create_app()` (inside the request-id middleware, so 429s still get an "
                   "`X-Request-Id`) and adding the setting.",
         calls=[read("app/db.py"),
                multiedit("app/main.py", [
                    ("from app.logging import configure_logging\n",
                     "from app.logging import configure_logging\nfrom app.ratelimit import RateLimiter, RateLimitMiddleware\n"),
                    ("    app.add_middleware(RequestIdMiddleware)\n",
                     "    if settings.rate_limit_enabled:\n"
                     "        # Added before RequestIdMiddleware so that it runs inside it: 429s keep X-Request-Id.\n"
                     "        app.add_middleware(RateLimitMiddleware, limiter=RateLimiter())\n"
                     "    app.add_middleware(RequestIdMiddleware)\n")]),
                edit("app/settings.py", "    api_key_cache_ttl: float = 30.0\n",
                     "    api_key_cache_ttl: float = 30.0\n    rate_limit_enabled: bool = True\n")])
    step(main, say="Now the tests, following the python-testing skill: time-machine for time, fakeredis, no sleeps.",
         calls=[write("tests/test_ratelimit.py", TEST_RATELIMIT_V1)])
    step(main, calls=[bash("uv run pytest tests/test_ratelimit.py -q", "Run rate limiter tests",
                           pytest_run_1(), error=True, seconds=41.5)])  # incl. Maya approving `uv run pytest`
    step(main,
         think="7 failures, but look at the numbers: burst stops at 10, RateLimit-Limit is '10', pro gets 429 "
               "after free is drained, pro burst is 10. 10 is the ANONYMOUS burst. So every request is going to "
               "the per-IP anonymous bucket: request.state.api_key is never set when the middleware runs, "
               "because resolve_api_key is a route dependency and BaseHTTPMiddleware runs before routing. "
               "Exactly the gotcha in CLAUDE.md, and the explorer flagged it too; I missed it.\n\n"
               "Real bugs on top of that:\n1. Headers only on 429: need them on success too.\n2. Retry-After "
               "is str(float) -> '1.0'. RFC 9110 wants an integer: ceil.\n\nFix: resolve the key in the "
               "middleware with lookup_key() and a session from session_scope(); the in-process cache makes "
               "it one query per key per 30 s. Add Decision.headers().",
         say="Most of these failures have one cause: every request lands in the anonymous per-IP bucket (burst 10). "
             "`request.state.api_key` is set by the auth *dependency*, which runs after middleware, so the "
             "middleware never sees it (the gotcha from CLAUDE.md). Two real bugs on top: no headers on "
             "successful responses, and `Retry-After` rendered as a float. Fixing all three.",
         calls=[multiedit("app/ratelimit.py", [
             ("import logging\nimport time\n", "import logging\nimport math\nimport time\n"),
             ("from app.cache import get_redis\n", "from app.auth import HEADER, ApiKey, lookup_key\nfrom app.cache import get_redis\n"),
             ("    retry_after: float  # seconds\n\n\nANONYMOUS",
              "    retry_after: float  # seconds\n\n"
              "    def headers(self) -> dict[str, str]:\n"
              "        headers = {\"RateLimit-Limit\": str(self.limit), \"RateLimit-Remaining\": str(self.remaining)}\n"
              "        if not self.allowed:\n"
              "            # RFC 9110: delay-seconds is a non-negative integer.\n"
              "            headers[\"Retry-After\"] = str(math.ceil(self.retry_after))\n"
              "        return headers\n\n\nANONYMOUS"),
             ("""        api_key = getattr(request.state, "api_key", None)
        if api_key is not None:""", """        # Auth is a route dependency, so request.state.api_key is not set yet here:
        # resolve the key ourselves (lookup_key caches it in-process).
        api_key = await self._api_key(request)
        if api_key is not None:"""),
             ("""                headers={
                    "Retry-After": str(decision.retry_after),
                    "RateLimit-Limit": str(decision.limit),
                    "RateLimit-Remaining": "0",
                },
            )
        return await call_next(request)
""", """                headers=decision.headers(),
            )
        response = await call_next(request)
        response.headers.update(decision.headers())
        return response

    async def _api_key(self, request: Request) -> ApiKey | None:
        raw = request.headers.get(HEADER)
        if not raw:
            return None
        ttl = request.app.state.settings.api_key_cache_ttl
        async with session_scope() as session:
            return await lookup_key(session, raw, ttl)
"""),
         ])])
    step(main, calls=[bash("uv run pytest tests/test_ratelimit.py -q", "Run rate limiter tests",
                           pytest_run_2(), error=True, seconds=3.9)])
    step(main,
         think="Retry-After is '0' now. Free refills 1 token/s; 0.25 s after draining there are 0.25 tokens, "
               "so wait = 0.75 s and ceil gives 1. Unless wait arrives as 0... Redis converts Lua numbers to "
               "integer replies: a float return value is truncated toward zero. 0.75 -> 0. That's also why "
               "run 1 showed '1.0' for what should have been 1.75. Return it as a string from the script "
               "(tostring) and parse with float() in Python, which the code already does.",
         say="`Retry-After: 0`: Redis truncates Lua numbers to integers in script replies, so a 0.75 s wait "
             "comes back as `0`. Returning it as a string from the script:",
         calls=[edit("app/ratelimit.py", "return {allowed, math.floor(tokens), wait}",
                     "-- Lua numbers become integers in Redis replies (0.75 -> 0): return the wait as a string.\n"
                     "return {allowed, math.floor(tokens), tostring(wait)}")])
    step(main, calls=[bash("uv run pytest tests/test_ratelimit.py -q", "Run rate limiter tests",
                           pytest_quiet("...........", [], [], "11 passed", 1.79), seconds=3.6)])
    step(main, say="All 11 pass. Full suite now:",
         calls=[bash("uv run pytest -q", "Run the full test suite", pytest_full_1(), error=True, seconds=9.6)])
    step(main,
         think="The pagination test does 23 requests with the free key (burst 20). Other test modules should "
               "not be affected by the limiter at all; the cleanest fix: the limiter is off in the shared "
               "settings fixture and test_ratelimit.py turns it on by overriding the `settings` fixture.",
         say="The pagination test makes 23 requests with a free key and now hits the limit. The limiter shouldn't "
             "interfere with unrelated tests: I'll disable it in the shared `settings` fixture and enable it "
             "only in `tests/test_ratelimit.py`.",
         calls=[edit("tests/conftest.py", "        api_key_cache_ttl=0.0,\n    )",
                     "        api_key_cache_ttl=0.0,\n        rate_limit_enabled=False,  # on in tests/test_ratelimit.py\n    )"),
                multiedit(TR, [
                    ("from app.ratelimit import Limit, RateLimiter\n",
                     "from app.ratelimit import Limit, RateLimiter\nfrom app.settings import Settings\n"),
                    ('pytestmark = pytest.mark.usefixtures("app")\n',
                     'pytestmark = pytest.mark.usefixtures("app")\n\n\n@pytest.fixture\n'
                     'def settings(settings: Settings) -> Settings:\n'
                     '    """The limiter is off in the shared fixture (tests/conftest.py); on here."""\n'
                     '    return settings.model_copy(update={"rate_limit_enabled": True})\n')])])
    step(main, calls=[bash("uv run pytest -q", "Run the full test suite",
                           pytest_quiet(FULL_MARKS.replace("F", "."), [], [], "129 passed", 7.62), seconds=9.2)])
    step(main, calls=[bash("uv run ruff check . && uv run ruff format --check . && uv run mypy app",
                           "Lint, format check and type check",
                           "All checks passed!\n58 files already formatted\nSuccess: no issues found in 21 source files",
                           seconds=6.4),
                      todo([("Read issue #142 and map the request pipeline", "Reading issue #142", "completed"),
                            ("Propose the design and wait for Maya's OK", "Proposing the design", "completed"),
                            ("Implement token-bucket limiter in app/ratelimit.py", "Implementing the token-bucket limiter", "completed"),
                            ("Register middleware and load plan limits at startup", "Registering the middleware", "completed"),
                            ("Write tests/test_ratelimit.py", "Writing rate limiter tests", "completed"),
                            ("Run the full test suite, ruff and mypy", "Running tests and linters", "completed")])])
    step(main, say="""Rate limiting is in and the suite is green (129 passed, ruff and mypy clean).

**What changed**
- `app/ratelimit.py` (new): Redis token bucket per key (Lua script, atomic across pods), plan limits loaded from `plans` on first use, `RateLimitMiddleware` with exemptions for `/healthz`, `/readyz`, docs. Fails open on Redis errors.
- `app/main.py`: middleware registered inside `RequestIdMiddleware`, behind the new `rate_limit_enabled` setting (`app/settings.py`).
- `tests/test_ratelimit.py` (new, 11 tests); `tests/conftest.py` turns the limiter off for the other test modules.

**Two things worth knowing**
- The middleware resolves the API key itself (auth is a dependency and runs later). Thanks to the key cache that's one DB query per key per 30 s.
- Redis truncates Lua floats in replies, which silently turned `Retry-After` into `0`; the script now returns the wait as a string.

Nothing is committed.""")


def replay_log(rec: Recording, main: Conversation) -> None:
    """14:12-14:40: replay last night's access log against the limiter, then dig into the raw log."""
    rec.wait(912)  # Maya reviews the change in her editor
    ask = ("Nice. Before we ship: how would this have behaved last night? The ingress log of the incident "
           "is in logs/access-2025-11-17.log. Replay it against the limiter offline and tell me which keys "
           "would have been throttled and how much. I especially want to know we wouldn't have hurt the "
           "partners or the app.")
    main.user(ask)
    rec.wait(1.0)
    whole_log = "\n".join(LOG) + "\n"
    step(main, say="Let me look at the log's size and format first.",
         calls=[bash(f"wc -l {LOG_PATH} && head -n 5 {LOG_PATH}", "Log size and format",
                     f"{len(LOG)} {LOG_PATH}\n" + "\n".join(LOG[:5]), seconds=0.2),
                bash(f"awk '{{print $10}}' {LOG_PATH} | sort | uniq -c | sort -rn",
                     "Requests per API key", key_counts(), seconds=0.6)])
    step(main,
         think="47k lines, three hours. A script is the right tool: simulate one bucket per caller with the "
               "same arithmetic as the Lua script, skip health probes, and print per-caller requests, "
               "rejections and the paths rejected. Reuse Limit and ANONYMOUS from app.ratelimit so it stays "
               "in sync. Plans: hardcode the four plans as defaults (same as staging), optional JSON override.",
         say="Writing a small replay script that simulates the buckets with the same arithmetic as the Lua script.",
         calls=[write("scripts/replay_ratelimit.py", REPLAY_SCRIPT)])
    step(main, calls=[bash(f"uv run python scripts/replay_ratelimit.py {LOG_PATH}", "Replay the incident log",
                           replay(), seconds=2.7)])
    scraper_at = first_line_of(SCRAPER_KEY)
    step(main,
         think="Both scraper keys would have been cut to ~11 % of their traffic; nobody else is throttled, "
               "including the partner sync and the BFF. Before I report, I want to see the start of the "
               "spike: is the scraper the only thing going on, do latencies rise right away, does it come "
               "from several IPs?",
         say="The numbers look clean. Let me look at the raw traffic around the start of the spike to be sure.",
         calls=[read(LOG_PATH, whole_log, offset=scraper_at - 40, limit=300)])
    switch_at = first_line_of(SCRAPER_KEY_2)
    step(main,
         think="Three IPs (198.51.100.23-25) in rotation, python-requests, search with size=50 and random "
               "deep pages, cursor walks on /v1/books. Search latency climbs from ~30 ms to several hundred "
               "ms within a minute. Now the key switch at 22:58.",
         calls=[read(LOG_PATH, whole_log, offset=switch_at - 150, limit=300)])
    errors = [f"{i}:{line}" for i, line in enumerate(LOG, 1) if " 503 " in line or " 504 " in line]
    step(main, say="Now the errors: who got the 503/504s?",
         calls=[Call("Grep", {"pattern": " 50[34] ", "path": f"{REPO}/{LOG_PATH}", "output_mode": "content",
                              "-n": True, "head_limit": 250}, "\n".join(errors[:250]), seconds=0.4)])
    bff_pattern = re.compile(r"T22:4[1-9].*key=sk_live_bff0a1c2")
    bff_errors = [f"{i}:{line}" for i, line in enumerate(LOG, 1) if bff_pattern.search(line)][:200]
    step(main,
         think="Most 503/504 lines are the scraper's own searches, but the BFF shows up too. Let me see the "
               "app's traffic during the spike specifically.",
         calls=[Call("Grep", {"pattern": bff_pattern.pattern, "path": f"{REPO}/{LOG_PATH}", "output_mode": "content",
                              "-n": True, "head_limit": 200},
                     "\n".join(bff_errors), seconds=0.4)])
    sync_at = next(i for i, line in enumerate(LOG, 1) if "T21:30:" in line and "sk_live_4be81d07" in line)
    step(main,
         think="The app's requests during the spike got slow (search especially) and some 503s. Maya asked "
               "about the partners explicitly: the bookshop sync runs at 21:30. Let me look at it to "
               "understand its burst shape relative to the partner burst of 500.",
         say="Checking the bookshop partner's sync burst at 21:30, since you asked about partners.",
         calls=[read(LOG_PATH, whole_log, offset=sync_at - 10, limit=300)])
    last = [f"{i}:{line}" for i, line in enumerate(LOG, 1) if SCRAPER_KEY_2 in line][-4:]
    step(main, say="Last checks: when the spike ended, and who owns these keys in staging.",
         calls=[bash(f"grep -n '{SCRAPER_KEY_2}' {LOG_PATH} | tail -n 4", "Last requests of the second scraper key",
                     "\n".join(last), seconds=0.3),
                Call("mcp__postgres__query", {"sql": "SELECT k.key_prefix, k.plan, k.label, k.owner_id, "
                                                     "u.created_at AS owner_created_at, k.created_at AS key_created_at, "
                                                     "k.revoked_at, (SELECT count(*) - 1 FROM api_keys o WHERE o.owner_id = k.owner_id) "
                                                     "AS other_keys_of_owner FROM api_keys k JOIN users u ON u.id = k.owner_id "
                                                     "WHERE k.key_prefix IN ('sk_live_9f2c71ab', 'sk_live_e07a55c9', "
                                                     "'sk_live_4be81d07', 'sk_live_c3d9e4f1') ORDER BY k.created_at DESC"},
                     json.dumps(SCRAPER_ROWS, indent=2), seconds=0.5)])
    step(main, say=fill(REPLAY_REPORT, replay_numbers()))


REPLAY_REPORT = """Replaying the 3-hour log (`scripts/replay_ratelimit.py`, same bucket arithmetic as the Lua script):

| caller | plan | requests | would be rejected |
|---|---|---|---|
| `sk_live_e07a55c9` (scraper, 2nd key) | free | @S2@ | @S2R@ (@S2P@) |
| `sk_live_9f2c71ab` (scraper, 1st key) | free | @S1@ | @S1R@ (@S1P@) |
| `sk_live_bff0a1c2` (BFF / mobile app) | internal | @BFF@ | @BFFR@ |
| `sk_live_4be81d07` (bookshop sync) | partner | @SHOP@ | @SHOPR@ |
| `sk_live_c3d9e4f1` (ReadMore) | pro | @RM@ | @RMR@ |
| everyone else | | @REST@ | @RESTR@ |

So the limiter would only have touched the scraper: it would have been held to the free plan's ~1 request/s instead of ~9.5/s. Partners and the app are far below their limits, even the bookshop's sync burst at 21:30 (~8 req/s for 5 minutes against a partner burst of 500 and 50/s refill).

From the raw log and staging:
- Both scraper keys belong to **one account (owner 48213) created at 22:31**, 10 minutes before the spike; the second key was created 22 s after the first was revoked. Three rotating IPs (198.51.100.23-25), `python-requests`. It stopped by itself at 23:16:44.
- ~72 % of its calls were `/v1/search?size=50` with random deep pages (always cache misses); search latency went from ~30 ms to 1-8 s, and 503/504s start within two minutes. The app (BFF) got its share of those: its search calls slowed down just as much.
- Per-key limits alone would not stop a new account from creating keys: worth a follow-up (limit per owner, or on key creation).

One caveat: even at 1 req/s, deep-page searches with `size=50` are expensive. If search is what actually hurt, it may deserve a higher cost than a normal request."""


COMPACT_SUMMARY = """<analysis>
Chronological review:
1. Maya asked for per-API-key rate limiting for the shelfwise API (issue #142, shelfwise/shelfwise-api): limits from the key's plan, 429 with Retry-After and RateLimit headers, tests; read the ops constraints in the issue comments first.
2. I read the issue (constraints: load plan limits at startup, never limit /healthz and /readyz, fail open if Redis is down, small per-IP limit for unauthenticated calls) and delegated codebase mapping to an Explore agent: auth is a route dependency (`resolve_api_key`, app/auth.py), so `request.state.api_key` is not set in middleware; Redis via `app/cache.py:get_redis()`; fakeredis has the lua extra.
3. Queried staging: plans free 60/min burst 20, pro 600/100, partner 3000/500, internal 10000/2000. Loaded the python-testing skill (time-machine, fakeredis, no sleeps). Checked the IETF RateLimit draft: Retry-After must be integer seconds.
4. Proposed the design (Maya's CLAUDE.md asks for a plan before touching >3 files); she approved the token bucket and shared a dashboard screenshot of the spike.
5. Implemented app/ratelimit.py, registered the middleware, wrote 11 tests. First run: 7 failures, all traffic in the anonymous bucket because the middleware read `request.state.api_key` (the CLAUDE.md gotcha) + headers missing on success + float Retry-After. Fixed by resolving the key in the middleware via `lookup_key()` + `session_scope()`, adding `Decision.headers()`. Second run: Retry-After "0" because Redis truncates Lua numbers in replies; fixed by `tostring(wait)`. Full suite then failed on the pagination test (23 requests with a free key): limiter disabled in the shared `settings` fixture, enabled in tests/test_ratelimit.py. 129 passed, ruff and mypy clean.
6. Maya asked how the limiter would have behaved during the incident. Wrote scripts/replay_ratelimit.py, replayed logs/access-2025-11-17.log (@LINES@ lines), read the raw log around the spike, the key switch, the partner sync and the end, grepped 503/504s, and looked up the keys in staging.
</analysis>

<summary>
1. Primary Request and Intent:
   - Add per-API-key rate limiting to the public API of shelfwise-api (issue #142): limits from the plan of the key (`plans` table), token bucket, 429 responses with `Retry-After` and `RateLimit-*` headers, with tests. Constraints from the issue: load plan limits once (no Postgres per request), never limit `/healthz` / `/readyz`, fail open if Redis is down, small per-IP limit for unauthenticated traffic.
   - Then: replay the incident's access log against the limiter offline and report which keys would have been throttled, making sure partners and the mobile app (BFF) would not have been hurt.
   - Maya's standing rules (CLAUDE.md): never commit or push without being asked; branch names `maya/<topic>`; plan first when touching more than ~3 files; `uv run` for everything; type hints everywhere; no sleeps in tests.

2. Key Technical Concepts:
   - FastAPI / Starlette `BaseHTTPMiddleware`; middleware runs before route dependencies, so the API key must be resolved in the middleware itself.
   - Redis token bucket in a Lua script (`register_script`), atomic across pods; capacity = burst, refill = requests_per_minute / 60 per second.
   - Redis converts Lua numbers to integers in replies: fractional values must be returned with `tostring`.
   - RFC 9110 `Retry-After` = integer seconds; older IETF draft header names `RateLimit-Limit` / `RateLimit-Remaining`.
   - Tests: pytest-asyncio auto mode, httpx `ASGITransport`, fakeredis with Lua, time-machine (`travel(..., tick=False)`, `shift`).

3. Files and Code Sections:
   - `app/ratelimit.py` (new): `TOKEN_BUCKET` Lua script returning `{allowed, math.floor(tokens), tostring(wait)}`; `EXEMPT_PATHS = {"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"}`; `Limit(requests_per_minute, burst)` with `.rate`; `Decision(allowed, limit, remaining, retry_after)` with `headers()` (Retry-After = `math.ceil(retry_after)` only when blocked); `ANONYMOUS = Limit(30, 10)`; `RateLimiter(redis=get_redis, limits=None, prefix="rl")` with `ensure_limits()` (reads `plans` once via `session_scope()`) and `hit(bucket, plan, cost=1)` (unknown plan -> free, fails open on `RedisError`); `RateLimitMiddleware.dispatch()` skips exempt paths, resolves the key with `_api_key()` (`lookup_key(session, raw, ttl)`), buckets `key:<id>` or `ip:<host>`, returns 429 JSON `{"error": {"code": "rate_limited", ...}}` with `decision.headers()`, and sets the headers on successful responses.
   - `app/main.py`: imports `RateLimiter, RateLimitMiddleware`; `if settings.rate_limit_enabled: app.add_middleware(RateLimitMiddleware, limiter=RateLimiter())` placed before `app.add_middleware(RequestIdMiddleware)` so 429s keep `X-Request-Id`.
   - `app/settings.py`: `rate_limit_enabled: bool = True`.
   - `tests/test_ratelimit.py` (new, 11 tests): burst then 429; 429 body and headers; Retry-After whole seconds (0.25 s after draining -> "1"); headers on success (Remaining 19 then 18); refill over time; per-key isolation; pro burst 100; exempt `/healthz` and `/openapi.json`; invalid key still 401; Redis down fails open. Overrides the `settings` fixture to set `rate_limit_enabled=True`.
   - `tests/conftest.py`: `settings` fixture now passes `rate_limit_enabled=False`.
   - `scripts/replay_ratelimit.py` (new): parses the ingress log format (`<ts> <level> access <ip> <method> <path> <status> <ms>ms key=<prefix> plan=<plan> ua="..."`), simulates buckets per caller with `DEFAULT_PLANS` (free 60/20, pro 600/100, partner 3000/500, internal 10000/2000) or `--plans` JSON, skips health probes, prints per-caller requests / rejected / share / top rejected paths.
   - Read but unchanged: `app/auth.py` (`lookup_key`, `resolve_api_key`, `HEADER = "x-api-key"`), `app/db.py` (`session_scope()`), `app/cache.py`, `tests/test_books.py`, `pyproject.toml`.

4. Errors and Fixes:
   - 7 test failures on the first run: the middleware read `request.state.api_key`, which the auth dependency sets only later; every request went to the anonymous IP bucket (burst 10). Fixed by resolving the key in the middleware. Also added the RateLimit headers on successful responses and made Retry-After an integer.
   - `Retry-After: 0` instead of `1`: Redis truncated the Lua float `0.75` to `0`; fixed with `tostring(wait)` in the script.
   - Full suite: `test_list_books_pagination_walks_all_pages` got 429 (23 requests with the free key); fixed by disabling the limiter in the shared test settings and enabling it in tests/test_ratelimit.py only.
   - Current state: 129 passed; `ruff check`, `ruff format --check`, `mypy app` clean.

5. Problem Solving:
   - Replay of logs/access-2025-11-17.log (@LINES@ lines, 21:00-00:00 UTC): only the scraper keys would have been throttled: `sk_live_e07a55c9` @S2R@ of @S2@ (@S2P@), `sk_live_9f2c71ab` @S1R@ of @S1@ (@S1P@). BFF `sk_live_bff0a1c2` (internal, @BFF@ requests), bookshop `sk_live_4be81d07` (partner, @SHOP@, sync burst ~8 req/s at 21:30), ReadMore `sk_live_c3d9e4f1` (pro, @RM@) and all others: 0 rejections.
   - Staging: both scraper keys belong to owner 48213, account created 2025-11-17 22:31; second key created 22 s after the first was revoked (22:58). IPs 198.51.100.23-25, `python-requests/2.32.3`, ~72 % `/v1/search?size=50` with deep pages; 503/504s from ~22:43, also hitting the BFF. Traffic stopped at 23:16:44.
   - Suggested follow-ups (not started): limits per owner or on key creation; a higher cost for search requests.

6. All User Messages:
   - "We got hammered by a scraper last night, see issue #142 (shelfwise/shelfwise-api). Add rate limiting to the public API: per API key, limits from the plan the key is on, proper 429s with Retry-After and the RateLimit headers. With tests. Read the issue first, there are a few constraints from ops in the comments."
   - "Token bucket is fine, go ahead. Here's last night's request-rate panel for context, the red part is the scraper." (with a screenshot of the request-rate panel)
   - "Nice. Before we ship: how would this have behaved last night? The ingress log of the incident is in logs/access-2025-11-17.log. Replay it against the limiter offline and tell me which keys would have been throttled and how much. I especially want to know we wouldn't have hurt the partners or the app."

7. Pending Tasks:
   - None explicitly requested beyond the replay report, which was delivered. Nothing is committed; Maya has not asked for a commit or PR yet.

8. Current Work:
   Just delivered the replay report: the limiter would only have throttled the two scraper keys (~89 % of their requests rejected), no partner or app traffic affected; noted that per-key limits do not stop key rotation on a new account and that search may deserve a higher cost than other requests.

9. Optional Next Step:
   Wait for Maya's answer to the report. If she wants search to cost more, add a per-route cost to `RateLimiter.hit()` / `RateLimitMiddleware` (cost parameter already exists in `hit(bucket, plan, cost=1)`) and extend tests/test_ratelimit.py.
</summary>"""

def summary_message() -> str:
    return fill(SUMMARY_TEMPLATE, replay_numbers())


SUMMARY_TEMPLATE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
    + COMPACT_SUMMARY.replace("<analysis>\n", "Analysis:\n").replace("\n</analysis>\n\n<summary>\n", "\n\nSummary:\n")
    .replace("\n</summary>", "")
    + "\n\nContinue from where the conversation left off, without asking the user to repeat anything; "
      "the user's latest message follows."
)


def restored(path: str) -> dict[str, Any]:
    return text(f"<system-reminder>\nRe-attached after the conversation was summarised: {REPO}/{path} "
                f"(read or written earlier in this session). Current content:\n{numbered(FILES[path])}\n"
                "</system-reminder>")


def compact(rec: Recording, main: Conversation, next_message: str) -> None:
    """Claude Code's auto-compaction: a summary call, then the history replaced by the summary."""
    rec.wait(3.1)
    summarizer = Conversation(rec, "compact", system_blocks("compact"), [], max_tokens=20000, cached=False)
    summarizer.messages = [dict(m) for m in main.messages]
    summarizer.user(COMPACT_INSTRUCTIONS)
    summarizer.call([text(fill(COMPACT_SUMMARY, replay_numbers()))])
    rec.wait(1.4)
    main.reset([{"role": "user", "content": [text(memory_reminder()), text(summary_message())]}])
    main.system_message(SYSTEM_MESSAGE_TEXT)
    main.user([restored("app/ratelimit.py"), restored("tests/test_ratelimit.py"),
               restored("scripts/replay_ratelimit.py"), text(next_message)])


ORIGINAL: dict[str, str] = {}


def _blob(content: str) -> str:
    data = content.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]


def git_diff(paths: list[str]) -> str:
    """``git diff`` of ``paths`` between ORIGINAL and FILES (new files from /dev/null)."""
    out: list[str] = []
    for path in paths:
        old, new = ORIGINAL.get(path), FILES[path]
        out.append(f"diff --git a/{path} b/{path}")
        if old is None:
            out += ["new file mode 100644", f"index 0000000..{_blob(new)}", "--- /dev/null", f"+++ b/{path}"]
            lines = new.splitlines()
            out.append(f"@@ -0,0 +1,{len(lines)} @@")
            out += ["+" + line for line in lines]
            continue
        out += [f"index {_blob(old)}..{_blob(new)} 100644", f"--- a/{path}", f"+++ b/{path}"]
        diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))
        out += diff[2:]
    return "\n".join(out)


def diff_stat(paths: list[str]) -> str:
    rows = []
    total_add = total_del = 0
    for path in paths:
        old = (ORIGINAL.get(path) or "").splitlines()
        new = FILES[path].splitlines()
        add = dele = 0
        for line in difflib.unified_diff(old, new, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                add += 1
            elif line.startswith("-") and not line.startswith("---"):
                dele += 1
        total_add += add
        total_del += dele
        rows.append((path, add, dele))
    width = max(len(p) for p, _, _ in rows)
    lines = [f" {p.ljust(width)} | {a + d:>3} {'+' * min(a, 40)}{'-' * min(d, 10)}" for p, a, d in rows]
    lines.append(f" {len(rows)} files changed, {total_add} insertions(+), {total_del} deletions(-)")
    return "\n".join(lines)


def line_of(path: str, needle: str) -> int:
    return next(i for i, line in enumerate(FILES[path].split("\n"), 1) if needle in line)


SEARCH_TESTS = '''

async def test_author_search_costs_two_units(client: AsyncClient, free_headers: dict[str, str]) -> None:
    # /v1/search itself needs Postgres full-text functions, which the SQLite test database lacks;
    # the cost table is exercised through /v1/search/authors and route_cost() directly.
    with time_machine.travel(T0, tick=False):
        first = await client.get("/v1/search/authors", headers=free_headers, params={"q": "le guin"})
        codes = [
            (await client.get("/v1/search/authors", headers=free_headers, params={"q": "le guin"})).status_code
            for _ in range(10)
        ]
    assert first.headers["RateLimit-Remaining"] == "18"
    assert codes == [200] * 9 + [429]


@pytest.mark.parametrize(
    ("path", "cost"),
    [("/v1/search", 5), ("/v1/search/authors", 2), ("/v1/books/42", 1), ("/v1/shelves", 1)],
)
def test_route_cost(path: str, cost: int) -> None:
    assert route_cost(path) == cost
'''


def finish(rec: Recording, main: Conversation) -> None:
    """After the compaction: search costs more, a mypy slip, then commit, PR and issue comment."""
    step(main,
         think="Continuing from the summary. Maya wants /v1/search to cost 5 units, /v1/search/authors 2, "
               "everything else 1, as a simple table in ratelimit.py. hit() already takes a cost. I need the "
               "exact route paths: re-read app/routes/search.py since the summary replaced my earlier reads.",
         say="I'll add a small cost table to the limiter. First, the exact search routes:",
         calls=[read("app/routes/search.py")])
    step(main, say="Adding the cost table and passing the cost to the bucket.",
         calls=[multiedit("app/ratelimit.py", [
             ('EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"})\n',
              'EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"})\n\n'
              "# Quota units per request, by path prefix (first match wins). Search runs a ts_rank and two\n"
              "# facet aggregations on every cache miss: it is what took the database down on Nov 17.\n"
              'ROUTE_COSTS = (\n    ("/v1/search/authors", 2),\n    ("/v1/search", 5),\n)\n\n\n'
              "def route_cost(path):\n"
              "    return next((cost for prefix, cost in ROUTE_COSTS if path.startswith(prefix)), 1)\n"),
             ("""        if api_key is not None:
            decision = await self.limiter.hit(f"key:{api_key.id}", api_key.plan)
        else:
            host = request.client.host if request.client else "unknown"
            decision = await self.limiter.hit(f"ip:{host}", None)""",
              """        cost = route_cost(request.url.path)
        if api_key is not None:
            decision = await self.limiter.hit(f"key:{api_key.id}", api_key.plan, cost)
        else:
            host = request.client.host if request.client else "unknown"
            decision = await self.limiter.hit(f"ip:{host}", None, cost)"""),
         ])],
         after=[text("<system-reminder>\nPostToolUse:MultiEdit hook: `uv run ruff format app/ratelimit.py` "
                     "ran after your edit: 1 file left unchanged.\n</system-reminder>")])
    step(main,
         think="Tests: /v1/search uses websearch_to_tsquery and ts_rank_cd, which the SQLite test database "
               "does not have (tests/test_search.py must stub them somewhere). Test the cost through "
               "/v1/search/authors (cost 2, plain ILIKE, works on SQLite) plus a parametrized unit test "
               "of route_cost().",
         calls=[multiedit(TR, [
             ("from app.ratelimit import Limit, RateLimiter\n",
              "from app.ratelimit import Limit, RateLimiter, route_cost\n"),
             ('    assert decision.remaining == 20\n',
              '    assert decision.remaining == 20\n' + SEARCH_TESTS)])])
    step(main, calls=[bash("uv run pytest tests/test_ratelimit.py -q", "Run rate limiter tests",
                           pytest_quiet("." * 16, [], [], "16 passed", 1.94), seconds=3.8)])
    fn = line_of("app/ratelimit.py", "def route_cost(path):")
    use = line_of("app/ratelimit.py", "cost = route_cost(request.url.path)")
    step(main, calls=[bash("uv run ruff check . && uv run ruff format --check . && uv run mypy app",
                           "Lint, format check and type check",
                           "All checks passed!\n60 files already formatted\n"
                           f"app/ratelimit.py:{fn}: error: Function is missing a type annotation  [no-untyped-def]\n"
                           f"app/ratelimit.py:{use}: error: Call to untyped function \"route_cost\" in typed "
                           "context  [no-untyped-call]\nFound 2 errors in 1 file (checked 21 source files)",
                           error=True, seconds=6.8)])
    step(main, say="I left `route_cost` unannotated; fixing.",
         calls=[edit("app/ratelimit.py", "def route_cost(path):\n", "def route_cost(path: str) -> int:\n")])
    step(main, calls=[bash("uv run pytest -q && uv run mypy app", "Full test suite and type check",
                           pytest_quiet(FULL_MARKS.replace("F", ".") + "." * 5, [], [], "134 passed", 7.91)
                           + "\nSuccess: no issues found in 21 source files", seconds=15.2)])
    step(main,
         think="Now the replay with costs. The script should not duplicate the table: import route_cost from "
               "app.ratelimit, like it already does for Limit and ANONYMOUS.",
         say="Now the replay with the costs; the script reuses `route_cost` so it can't drift from the app.",
         calls=[multiedit("scripts/replay_ratelimit.py", [
             ("from app.ratelimit import ANONYMOUS, Limit\n", "from app.ratelimit import ANONYMOUS, Limit, route_cost\n"),
             ("        if b.tokens >= 1:\n            b.tokens -= 1\n",
              "        cost = route_cost(m[\"path\"])\n        if b.tokens >= cost:\n            b.tokens -= cost\n")])])
    costs = {"/v1/search/authors": 2, "/v1/search": 5}
    step(main, calls=[bash(f"uv run python scripts/replay_ratelimit.py {LOG_PATH}", "Replay the incident log with route costs",
                           replay(costs), seconds=2.9)])
    nums = replay_numbers(costs)
    extra = ""
    if nums["@RESTR@"] != "0":
        extra = (f" The only other rejections are {nums['@RESTR@']} requests from small free keys doing "
                 "bursts of searches, which is the point.")
    step(main, say=fill(f"""Done: search now costs 5 quota units, author search 2, everything else 1.

- `app/ratelimit.py`: `ROUTE_COSTS` table + `route_cost()`; the middleware passes the cost to the bucket, so `RateLimit-Remaining` drops by 5 on a search.
- `tests/test_ratelimit.py`: author-search cost test and a parametrized `route_cost()` test (`/v1/search` itself can't run on the SQLite test DB).
- `scripts/replay_ratelimit.py` uses `route_cost()` from the app.

Suite: 134 passed, ruff and mypy clean (mypy caught an annotation I'd forgotten).

Replay with costs: the scraper keys lose @S1P@ and @S2P@ of their requests; BFF, bookshop and ReadMore still see 0 rejections.{extra}""", nums))

    rec.wait(603)  # reviewing the cost change
    pr_ask = ("Great. Commit on a branch, push, and open a PR against main that closes #142. "
              "Also leave a comment on the issue with the replay numbers.")
    main.user(pr_ask)
    topic_call(rec, pr_ask, '{"isNewTopic": false, "title": null}')
    rec.wait(0.7)
    changed = ["app/main.py", "app/settings.py", "tests/conftest.py"]
    new = ["app/ratelimit.py", "scripts/replay_ratelimit.py", "tests/test_ratelimit.py"]
    step(main, calls=[
        bash("git status", "Show working tree status", """On branch main
Your branch is up to date with 'origin/main'.

Changes not staged for commit:
  (use "git add <file>..." to update what will be committed)
  (use "git restore <file>..." to discard changes in working directory)
	modified:   app/main.py
	modified:   app/settings.py
	modified:   tests/conftest.py

Untracked files:
  (use "git add <file>..." to include in what will be committed)
	app/ratelimit.py
	notes/incident-2025-11-17.md
	scripts/replay_ratelimit.py
	tests/test_ratelimit.py

no changes added to commit (use "git add" and/or "git commit -a")""", seconds=0.1),
        bash("git diff --stat", "Show diff summary", diff_stat(changed), seconds=0.1),
        bash("git log --oneline -5", "Show recent commits", GIT_STATUS.split("Recent commits:\n")[1], seconds=0.1)])
    files = sorted(changed + new)
    step(main,
         think="notes/incident-2025-11-17.md was untracked before I started: it's Maya's, not part of this "
               "change. Stage only the six files, review the staged diff, then commit.",
         say="Staging the six files of the change (leaving your `notes/incident-2025-11-17.md` out) and reviewing the staged diff:",
         calls=[bash(f"git add {' '.join(files)} && git diff --cached", "Stage the change and show the staged diff",
                     git_diff(files), seconds=0.3)])
    message = """Add per-API-key rate limiting (#142)

Token bucket per API key in Redis (Lua script, shared by all pods), with
limits from the plans table. Search costs 5 units, author search 2.
429 responses carry Retry-After; RateLimit-Limit and RateLimit-Remaining
are sent on every response. Health and docs endpoints are exempt, and
the limiter fails open when Redis is unavailable.

scripts/replay_ratelimit.py replays an ingress log against the limiter:
on the Nov 17 incident log it rejects ~89% of the scraper's requests and
nothing from partners or the app.

Closes #142"""
    step(main, calls=[bash(
        f"git checkout -b maya/per-key-rate-limits && git commit -m \"$(cat <<'EOF'\n{message}\nEOF\n)\" "
        "&& git push -u origin maya/per-key-rate-limits",
        "Create branch, commit and push",
        "Switched to a new branch 'maya/per-key-rate-limits'\n"
        "ruff.....................................................................Passed\n"
        "ruff-format..............................................................Passed\n"
        "mypy.....................................................................Passed\n"
        "check for added large files..............................................Passed\n"
        "[maya/per-key-rate-limits 7d2e9a4] Add per-API-key rate limiting (#142)\n"
        + diff_stat(files).split("\n")[-1] + "\n"
        " create mode 100644 app/ratelimit.py\n create mode 100644 scripts/replay_ratelimit.py\n"
        " create mode 100644 tests/test_ratelimit.py\n"
        """remote: 
remote: Create a pull request for 'maya/per-key-rate-limits' on GitHub by visiting:
remote:      https://github.com/shelfwise/shelfwise-api/pull/new/maya/per-key-rate-limits
remote: 
To github.com:shelfwise/shelfwise-api.git
 * [new branch]      maya/per-key-rate-limits -> maya/per-key-rate-limits
branch 'maya/per-key-rate-limits' set up to track 'origin/maya/per-key-rate-limits'.""", seconds=11.0)])
    n0 = replay_numbers(costs)
    body = fill("""## Summary
Per-API-key rate limiting for the public API (closes #142).

- Token bucket per key in Redis, atomic via a Lua script, shared by all pods. Capacity = plan `burst`, refill = `requests_per_minute / 60` per second. Plan limits are read from `plans` once per process.
- Quota units per request: `/v1/search` 5, `/v1/search/authors` 2, everything else 1.
- `429` with the standard error body and an integer `Retry-After`; `RateLimit-Limit` / `RateLimit-Remaining` on every response.
- Exempt: `/healthz`, `/readyz`, docs. Unauthenticated requests: per-IP bucket, 30/min, burst 10.
- Fails open (with a warning) when Redis errors.
- `SHELFWISE_RATE_LIMIT_ENABLED` (default `true`) to switch it off.

## Replay of the Nov 17 incident
`scripts/replay_ratelimit.py logs/access-2025-11-17.log` (@LINES@ log lines):

| caller | requests | rejected |
|---|---|---|
| scraper key 1 (`sk_live_9f2c71ab`, free) | @S1@ | @S1R@ (@S1P@) |
| scraper key 2 (`sk_live_e07a55c9`, free) | @S2@ | @S2R@ (@S2P@) |
| BFF / mobile app (internal) | @BFF@ | @BFFR@ |
| bookshop sync (partner) | @SHOP@ | @SHOPR@ |
| ReadMore (pro) | @RM@ | @RMR@ |

## Notes for reviewers
- Auth is a route dependency, so the middleware resolves the key itself with `lookup_key()` (in-process cache: one query per key per 30 s).
- Redis truncates Lua floats in script replies; the wait is returned as a string (see the comment in the script).
- Not covered here: the scraper rotated keys on a fresh account. Limits per owner / on key creation would be a follow-up.

## Test plan
- [x] `uv run pytest -q` (134 passed, 16 in `tests/test_ratelimit.py`)
- [x] `uv run ruff check . && uv run mypy app`
- [ ] Deploy to staging and check `RateLimit-*` headers with a free key
- [ ] Watch the 429 rate per plan on the API dashboard for a day""", n0)
    pr = Call("mcp__github__create_pull_request", {
        "owner": "shelfwise", "repo": "shelfwise-api", "title": "Add per-API-key rate limiting (#142)",
        "body": body, "head": "maya/per-key-rate-limits", "base": "main"},
        json.dumps({"number": 144, "html_url": "https://github.com/shelfwise/shelfwise-api/pull/144",
                    "state": "open", "draft": False, "title": "Add per-API-key rate limiting (#142)",
                    "head": {"ref": "maya/per-key-rate-limits", "sha": "7d2e9a41c0b35f8e62d1a9c4e07b3f5d28a61e90"},
                    "base": {"ref": "main", "sha": "4e1c9b2f7a03d58e1c6b9d20a4f7e3c15b8d6a27"},
                    "created_at": "2025-11-18T15:09:41Z", "mergeable_state": "unknown"}, indent=2),
        seconds=1.4)
    comment = fill("""Rate limiting is up for review in https://github.com/shelfwise/shelfwise-api/pull/144.

Replaying the Nov 17 ingress log (@LINES@ lines) against it, with search costing 5 units:
- scraper keys: @S1R@ of @S1@ (@S1P@) and @S2R@ of @S2@ (@S2P@) requests rejected, i.e. held to about one search every 5 s;
- BFF, bookshop sync and ReadMore: no rejections.

Both scraper keys belong to one account created 10 minutes before the spike (owner 48213). Per-key limits don't stop key rotation on a fresh account; suggest a follow-up for limits per owner or on key creation.""", n0)
    note = Call("mcp__github__add_issue_comment", {
        "owner": "shelfwise", "repo": "shelfwise-api", "issue_number": 142, "body": comment},
        json.dumps({"id": 3541182907, "html_url": "https://github.com/shelfwise/shelfwise-api/issues/142#issuecomment-3541182907",
                    "created_at": "2025-11-18T15:09:58Z", "user": {"login": "maya-k"}}, indent=2), seconds=1.1)
    step(main, say="Pushed. Opening the PR and commenting on the issue.", calls=[pr, note])
    step(main, say="""PR is open: https://github.com/shelfwise/shelfwise-api/pull/144 (branch `maya/per-key-rate-limits`, one commit, closes #142), and the replay numbers are on the issue.

Left out of the commit: `notes/incident-2025-11-17.md` (yours, untracked). Possible follow-up from the incident: limits per account or on key creation, since the scraper rotated keys.""")


def topic_call(rec: Recording, message: str, answer: str) -> None:
    conv = Conversation(rec, "topic", system_blocks("topic", HAIKU, "Haiku 4.5"), [], model=HAIKU,
                        max_tokens=512, cached=False)
    conv.user(message)
    conv.call([text(answer)])


def explore_agent(rec: Recording, prompt: str) -> None:
    """The Task sub-agent: its own system prompt, read-only tools, 6 requests."""
    sub = Conversation(rec, "explore", system_blocks("explore"), explore_tools())
    sub.user(prompt)
    step(sub, say="I'll start with the layout and the recent history of the entry points.", calls=[
        Call("Glob", {"pattern": "**/*.py"}, "\n".join(f"{REPO}/{p}" for p in PY_FILES.split("\n")), seconds=0.1),
        bash("git -C /home/maya/code/shelfwise log --oneline -8 -- app/main.py app/auth.py app/cache.py",
             "Recent history of entry points", """4e1c9b2 Add ISBN-13 checksum validation to book import (#139)
c52d7e8 auth: record last_used_at asynchronously (#131)
8d1f0e4 main: add RequestIdMiddleware and X-Request-Id header (#118)
1b7a9c3 cache: share one Redis client, add set_redis() for tests (#112)
e40d2a6 auth: cache key lookups in-process for 30 s (#104)
77c3e15 Move app construction into create_app() (#97)
0fa2b88 Initial FastAPI skeleton""", seconds=0.2),
    ])
    step(sub, calls=[read("app/main.py"), read("app/auth.py")])
    step(sub, say="Now how Redis is used and whether anything touches the plan limits.", calls=[
        Call("Grep", {"pattern": "get_redis|set_redis|redis\\.", "path": f"{REPO}/app", "output_mode": "content", "-n": True},
             f"""{REPO}/app/cache.py:8:def get_redis(url: str | None = None) -> Redis:
{REPO}/app/cache.py:19:def set_redis(client: Redis | None) -> None:
{REPO}/app/main.py:12:from app.cache import close_redis, get_redis
{REPO}/app/main.py:36:        await get_redis(str(settings.redis_url)).ping()
{REPO}/app/main.py:68:        await get_redis().ping()
{REPO}/app/routes/search.py:19:from app.cache import get_redis
{REPO}/app/routes/search.py:57:    redis = get_redis()
{REPO}/app/routes/search.py:60:        return SearchResult.model_validate_json(cached)
{REPO}/app/routes/search.py:95:    await redis.set(cache_key, result.model_dump_json(), ex=settings.search_cache_ttl)""", seconds=0.2),
        Call("Grep", {"pattern": "requests_per_minute|burst|rate.?limit", "path": REPO, "output_mode": "content", "-n": True, "-i": True},
             f"""{REPO}/app/models.py:55:    requests_per_minute: Mapped[int] = mapped_column(Integer, nullable=False)
{REPO}/app/models.py:56:    burst: Mapped[int] = mapped_column(Integer, nullable=False)
{REPO}/app/models.py:61:        CheckConstraint("requests_per_minute > 0", name="plans_rpm_positive"),
{REPO}/app/models.py:62:        CheckConstraint("burst > 0", name="plans_burst_positive"),
{REPO}/migrations/versions/2025_08_21_0012_plans_and_quotas.py:24:        sa.Column("requests_per_minute", sa.Integer(), nullable=False),
{REPO}/migrations/versions/2025_08_21_0012_plans_and_quotas.py:25:        sa.Column("burst", sa.Integer(), nullable=False),
{REPO}/migrations/versions/2025_08_21_0012_plans_and_quotas.py:41:        {{"name": "free", "requests_per_minute": 60, "burst": 20, "monthly_quota": 50000}},
{REPO}/tests/conftest.py:17:    Plan(name="free", requests_per_minute=60, burst=20, monthly_quota=50_000),
{REPO}/tests/conftest.py:18:    Plan(name="pro", requests_per_minute=600, burst=100, monthly_quota=2_000_000),
{REPO}/tests/conftest.py:19:    Plan(name="partner", requests_per_minute=3000, burst=500),
{REPO}/tests/conftest.py:20:    Plan(name="internal", requests_per_minute=10_000, burst=2000),
{REPO}/notes/incident-2025-11-17.md:3:No rate limiting on the public API; plans.requests_per_minute is not enforced.""", seconds=0.3),
    ])
    step(sub, calls=[read("app/cache.py"), read("app/errors.py"), read("tests/conftest.py", limit=60)])
    step(sub, calls=[bash("grep -n 'lua\\|fakeredis' /home/maya/code/shelfwise/pyproject.toml /home/maya/code/shelfwise/uv.lock | head -5",
                          "Check fakeredis Lua support", f"""{REPO}/pyproject.toml:24:    "fakeredis[lua]>=2.26",
{REPO}/uv.lock:512:name = "fakeredis"
{REPO}/uv.lock:519:    {{ name = "lupa", marker = "extra == 'lua'" }},
{REPO}/uv.lock:1033:name = "lupa\"""", seconds=0.1)])
    step(sub, say=EXPLORE_REPORT)


def build() -> Recording:
    rec = Recording()
    ORIGINAL.clear()
    ORIGINAL.update(FILES)
    main = Conversation(rec, "main", system_blocks("main"), main_tools(), thinking=10000)

    # -- 13:42 the request -----------------------------------------------------------
    first = ("We got hammered by a scraper last night, see issue #142 (shelfwise/shelfwise-api). "
             "Add rate limiting to the public API: per API key, limits from the plan the key is on, "
             "proper 429s with Retry-After and the RateLimit headers. With tests. Read the issue first, "
             "there are a few constraints from ops in the comments.")
    main.user([text(memory_reminder()), text(first)])
    main.system_message(SYSTEM_MESSAGE_TEXT)
    topic_call(rec, first, '{"isNewTopic": true, "title": "Per-key API rate limiting"}')
    rec.wait(1.2)

    explore_prompt = (
        "Map the request pipeline of the FastAPI service in /home/maya/code/shelfwise (medium thoroughness). "
        "I need to add per-API-key rate limiting. Find and report, with file:line references: where the app "
        "is built and middleware registered; how API keys are authenticated and where the key's plan becomes "
        "available on the request; how Redis is accessed (client creation, test fakes, Lua/script support); "
        "whether anything already enforces the plans table's requests_per_minute/burst; how the tests build "
        "the app and seed keys and plans. Read-only: do not modify anything.")
    issue = Call("mcp__github__get_issue", {"owner": "shelfwise", "repo": "shelfwise-api", "issue_number": 142},
                 json.dumps(ISSUE_142, indent=2, ensure_ascii=False), seconds=0.8)
    task = Call("Task", {"description": "Map request pipeline", "prompt": explore_prompt,
                         "subagent_type": "Explore"}, EXPLORE_REPORT, seconds=0.5)
    step(main,
         think="The user wants per-key rate limiting driven by the plan of the key. First: the issue for the "
               "constraints, and a map of the codebase. I can read the issue myself and delegate the "
               "exploration of the request pipeline to an Explore agent in parallel, so my context stays "
               "small.",
         say="I'll read the issue and, in parallel, have an explorer map the request pipeline.",
         calls=[issue, task], run=lambda: explore_agent(rec, explore_prompt))

    step(main,
         think="Constraints from the issue comments:\n- limits from `plans`, loaded at startup (no Postgres "
               "per request);\n- /healthz and /readyz never limited (kubelet restarts pods on 429);\n- fail "
               "open if Redis is down;\n- unauthenticated traffic: small per-IP limit;\n- Retry-After + "
               "RateLimit-* headers.\n\nI should check the plans table in staging to make sure the numbers "
               "match tomasz's comment, and the api_keys schema.",
         say="Constraints are clear. Let me check the actual plan limits in the staging database and set up a plan.",
         calls=[
             Call("mcp__postgres__query", {"sql": "SELECT p.name, p.requests_per_minute, p.burst, p.monthly_quota, "
                                                  "count(k.id) AS keys FROM plans p LEFT JOIN api_keys k ON k.plan = p.name "
                                                  "AND k.revoked_at IS NULL GROUP BY p.name ORDER BY p.requests_per_minute"},
                  json.dumps(PLANS_ROWS, indent=2), seconds=0.4),
             Call("mcp__postgres__describe_table", {"table": "api_keys"}, json.dumps(DESCRIBE_API_KEYS, indent=2), seconds=0.3),
             todo([("Read issue #142 and map the request pipeline", "Reading issue #142 and mapping the request pipeline", "completed"),
                   ("Propose the design and wait for Maya's OK", "Proposing the design", "in_progress"),
                   ("Implement token-bucket limiter in app/ratelimit.py", "Implementing the token-bucket limiter", "pending"),
                   ("Register middleware and load plan limits at startup", "Registering the middleware", "pending"),
                   ("Write tests/test_ratelimit.py", "Writing rate limiter tests", "pending"),
                   ("Run the full test suite, ruff and mypy", "Running tests and linters", "pending")]),
         ])

    step(main, calls=[read("app/settings.py"), read("pyproject.toml")])
    step(main, say="Loading the team's testing conventions before I design the tests.",
         calls=[Call("Skill", {"skill": "python-testing"}, SKILL_PYTHON_TESTING, seconds=0.1)])
    step(main, calls=[read("tests/conftest.py"), read("tests/test_books.py")])
    step(main,
         think="For the headers: the IETF draft changed the field names over time. Let me check what the "
               "current draft says vs what clients use, and whether Retry-After may be fractional.",
         calls=[Call("WebFetch", {"url": "https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
                                  "prompt": "Which header fields does the current draft define, what did older "
                                            "drafts use (RateLimit-Limit/Remaining/Reset), and what are the rules "
                                            "for Retry-After values in 429 responses?"},
                     WEBFETCH_RATELIMIT, seconds=3.1)])
    step(main,
         think="Design:\n- Token bucket per key in Redis, via a Lua script (atomic across pods). Capacity = "
               "burst, refill = rpm/60 per second.\n- Plans read once per process from `plans` into a dict; "
               "lazily on first use rather than in the lifespan, since httpx's ASGITransport does not run "
               "the lifespan in tests. Fallback to `free` for unknown plans.\n- Middleware or dependency? A "
               "dependency would need adding to every router and would not cover unknown routes. Middleware "
               "(BaseHTTPMiddleware), bucket per key id, per client IP when there is no key.\n- Exempt /healthz, /readyz, /docs, /openapi.json.\n- 429 body in "
               "the ApiError format; Retry-After integer seconds; RateLimit-Limit/Remaining/Reset on every "
               "response.\n- Fail open on RedisError.\n\nMaya's CLAUDE.md: tell the plan before touching more "
               "than ~3 files. This touches ratelimit.py (new), main.py, settings.py, tests (new + conftest). "
               "So propose and wait.",
         say="""Here's the plan. It touches 4-5 files, so I'd like your OK first.

**Design**
- `app/ratelimit.py` (new): token bucket per API key in Redis, checked and decremented atomically by a Lua script (shared by all pods). Capacity = plan `burst`, refill = `requests_per_minute / 60` per second.
- Plan limits read from `plans` **once per process** (on first use, per Tomasz's comment), unknown plan -> `free`.
- A middleware applies the limit to everything except `/healthz`, `/readyz`, `/docs`, `/openapi.json`. Unauthenticated requests get a small per-IP bucket (30/min, burst 10).
- `429` with the usual `{"error": {"code": "rate_limited", ...}}` body, `Retry-After` in whole seconds, and `RateLimit-Limit` / `RateLimit-Remaining` on every response (the older draft names, which clients actually read).
- Fail open when Redis errors, with a warning log (Dani's comment).
- New setting `rate_limit_enabled` (default on).

**Tests** (`tests/test_ratelimit.py`): burst then 429, headers on success and on 429, refill over time with time-machine, per-key isolation, bigger pro burst, exempt paths, invalid key still 401, Redis down fails open.

One question: fixed window would be simpler, but a token bucket handles bursts like the mobile app's start-up calls better. OK to go with the token bucket?""")
    implement(rec, main)
    replay_log(rec, main)
    rec.wait(2094)  # Maya discusses the numbers with ops
    compact(rec, main, "Agreed, search is what hurt. Make /v1/search cost 5 units and /v1/search/authors 2, "
                       "everything else 1. Keep it simple, a table in ratelimit.py is fine. Re-run the replay "
                       "with the costs so we see nobody legit gets hurt.")
    finish(rec, main)
    return rec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "resources" / "demo-session.jsonl.xz"))
    args = parser.parse_args()
    rec = build()
    size = rec.write(Path(args.out))
    print(f"wrote {args.out}: {rec.count} exchanges, {size:,} bytes")


if __name__ == "__main__":
    main()
