"""Tool calls as the agent makes them, and the project's files as they change under its edits."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from .recording import Conversation
from .setting import REPO, ident, rng
from .texts import project_files

# The project's files, path -> content: read by Read, changed by Edit, MultiEdit and Write.
FILES: dict[str, str] = project_files()
# The same at the start of the session (``git diff`` compares against it).
ORIGINAL: dict[str, str] = {}

_TOOL_IDS = iter(range(1, 10_000))


def tool_id() -> str:
    return ident("toolu_01", f"tool-{next(_TOOL_IDS)}", 22)


def thinking(text: str) -> dict[str, Any]:
    sig = base64.b64encode(hashlib.sha512(text.encode()).digest()).decode()
    return {"type": "thinking", "thinking": text, "signature": "ErUBCkYIBxgCKkD" + sig}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


class Call:
    """A tool call and what it returns."""

    def __init__(
        self,
        name: str,
        input: dict[str, Any],
        result: str | list[dict[str, Any]],
        is_error: bool = False,
        seconds: float = 0.3,
    ) -> None:
        self.name = name
        self.input = input
        self.result = result
        self.is_error = is_error
        self.seconds = seconds
        self.id = tool_id()

    def use(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}

    def result_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {
            "tool_use_id": self.id,
            "type": "tool_result",
            "content": self.result,
        }
        if self.is_error:
            block["is_error"] = True
        return block


def step(
    conv: Conversation,
    *,
    think: str | None = None,
    say: str | None = None,
    calls: list[Call] = (),
    after: list[dict[str, Any]] = (),  # type: ignore[assignment]
    run: Any = None,
) -> dict[str, Any]:
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
    chunk = lines[start - 1 : (start - 1 + limit) if limit else None]
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(chunk, start))


def read(
    path: str, content: str | None = None, offset: int | None = None, limit: int | None = None
) -> Call:
    content = FILES[path] if content is None else content
    args: dict[str, Any] = {"file_path": f"{REPO}/{path}"}
    if offset is not None:
        args["offset"] = offset
    if limit is not None:
        args["limit"] = limit
    return Call("Read", args, numbered(content, offset or 1, limit), seconds=0.1)


def bash(
    command: str,
    description: str,
    output: str,
    error: bool = False,
    seconds: float = 1.0,
    timeout: int | None = None,
) -> Call:
    args: dict[str, Any] = {"command": command, "description": description}
    if timeout:
        args["timeout"] = timeout
    return Call("Bash", args, output, is_error=error, seconds=seconds)


def edit(path: str, old: str, new: str) -> Call:
    content = FILES[path]
    assert content.count(old) == 1, (path, old[:60])
    FILES[path] = content.replace(old, new)
    start = FILES[path][: FILES[path].index(new)].count("\n") + 1
    first = max(1, start - 3)
    shown = new.count("\n") + 7
    snippet = numbered(FILES[path], first, shown)
    return Call(
        "Edit",
        {"file_path": f"{REPO}/{path}", "old_string": old, "new_string": new},
        f"Updated {REPO}/{path}. Lines {first}-{first + shown - 1} after the edit:\n{snippet}",
        seconds=0.2,
    )


def write(path: str, content: str) -> Call:
    existed = path in FILES
    FILES[path] = content
    lines = content.count("\n")
    what = "Overwrote" if existed else "Created"
    return Call(
        "Write",
        {"file_path": f"{REPO}/{path}", "content": content},
        f"{what} {REPO}/{path} ({lines} lines).",
        seconds=0.1,
    )


def todo(items: list[tuple[str, str, str]]) -> Call:
    todos = [{"content": c, "status": st, "activeForm": a} for c, a, st in items]
    return Call(
        "TodoWrite",
        {"todos": todos},
        "Todo list updated. Keep working through the items and update their status as "
        "you go; only one item should be in_progress at a time.",
        seconds=0.05,
    )


def multiedit(path: str, pairs: list[tuple[str, str]]) -> Call:
    content = FILES[path]
    for old, new in pairs:
        assert content.count(old) == 1, (path, old[:60])
        content = content.replace(old, new)
    FILES[path] = content
    return Call(
        "MultiEdit",
        {
            "file_path": f"{REPO}/{path}",
            "edits": [{"old_string": o, "new_string": n_} for o, n_ in pairs],
        },
        f"Applied {len(pairs)} edits to {REPO}/{path}.",
        seconds=0.2,
    )
