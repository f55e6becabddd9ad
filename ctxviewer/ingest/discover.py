"""Find the session files coding agents keep on this machine (``ctxviewer sessions``; docs/json.md).

``discover_sessions()`` lists them newest first, from where each agent
writes them:

- Claude Code: ``~/.claude/projects/<project>/<session>.jsonl`` (also under
  ``~/.config/claude``, ``$XDG_CONFIG_HOME/claude`` and
  ``$CLAUDE_CONFIG_DIR``), sub-agents in ``<session>/subagents/agent-*.jsonl``;
- Codex CLI: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME``);
- Gemini CLI: ``~/.gemini/tmp/<project hash or name>/chats/session-*.json[l]``
  (``$GEMINI_CLI_HOME/.gemini``);
- qwen-code: ``~/.qwen/projects/<project>/chats/<session>.jsonl``
  (``$QWEN_RUNTIME_DIR``) and, from older builds, ``~/.qwen/tmp/<hash>/chats/``;
- Cline and Roo Code: ``<editor>/User/globalStorage/<extension>/tasks/<id>/
  api_conversation_history.json`` under the editor's settings folder (Linux
  ``~/.config`` or ``$XDG_CONFIG_HOME``, macOS ``~/Library/Application Support``,
  Windows ``%APPDATA%``; VS Code, Insiders, VSCodium, Cursor, Windsurf), and the Cline
  CLI's ``~/.cline/data/tasks/``;
- OpenCode: ``~/.local/share/opencode/opencode.db`` (``$XDG_DATA_HOME``; the same path
  on macOS and Windows) and, from 1.1 and earlier, ``storage/session/<project>/ses_*.json``;
- Aider: ``.aider.chat.history.md`` in each project, looked for in the home folder and
  two levels below it (Aider keeps no list of its projects).

Listing is bounded: the walk looks at a limited number of directory entries
and keeps the newest ``limit`` files; it reads no file contents. Whether
ctxviewer can open a file is checked lazily (``SessionInfo.probe()``) from
its first kilobytes.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ctxviewer.ingest.base import Head, LoadError, open_log
from ctxviewer.ingest.loader import HEAD_BYTES, detect, head_records, recorded_cwd
from ctxviewer.ingest.registry import binary_magic

CLAUDE_CODE = "claude-code"
CODEX = "codex"
GEMINI_CLI = "gemini-cli"
QWEN_CODE = "qwen-code"
CLINE = "cline"
ROO_CODE = "roo-code"
OPENCODE = "opencode"
AIDER = "aider"
AGENTS = (CLAUDE_CODE, CODEX, GEMINI_CLI, QWEN_CODE, CLINE, ROO_CODE, OPENCODE, AIDER)
# VS Code and its forks, whose global storage holds the extensions' task folders
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
EXTENSIONS = {CLINE: "saoudrizwan.claude-dev", ROO_CODE: "rooveterinaryinc.roo-cline"}

ACTIVE_MINUTES = 5.0
MAX_FILES = 2_000  # newest files kept
MAX_ENTRIES = 50_000  # directory entries looked at per call
PROBE_BYTES = 64 * 1024
DOCUMENT_LIMIT = 16 * 1024 * 1024  # a JSON document larger than this is not parsed to check it
_HASH = re.compile(r"[0-9a-f]{32,64}")


@dataclass(frozen=True)
class Root:
    """A folder where one agent keeps session files.

    ``patterns`` are paths relative to ``path`` whose parts are matched with
    ``fnmatch`` level by level (no ``**``: each layout has a fixed depth).
    ``layout`` names how the first folder below ``path`` encodes the project
    (a key of ``PROJECT_NAMES``).
    """

    agent: str
    path: Path
    patterns: tuple[str, ...]
    layout: str = "none"


@dataclass(frozen=True)
class Probe:
    """What the first bytes of a file say: its reader, or why it cannot be opened."""

    reader: str | None
    error: str | None = None
    cwd: str | None = None  # the working directory recorded in the file, when it has one


@dataclass
class SessionInfo:
    """A session file found on this machine."""

    path: str
    agent: str
    project: str | None  # the project folder decoded from the directory name, when possible
    size: int
    mtime: float  # seconds since the epoch
    active: bool  # written in the last few minutes
    subagent: bool = False
    _probe: Probe | None = field(default=None, repr=False, compare=False)

    def probe(self) -> Probe:
        """Read the file's head once and remember whether a reader takes it."""
        if self._probe is None:
            self._probe = probe_file(self.path)
        return self._probe

    @property
    def reader(self) -> str | None:
        return self.probe().reader

    @property
    def openable(self) -> bool:
        return self.probe().reader is not None

    @property
    def error(self) -> str | None:
        return self.probe().error

    @property
    def label(self) -> str:
        """The project for people: the recorded cwd, else the decoded folder name."""
        return self.probe().cwd or self.project or ""

    def as_json(self, probe: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "agent": self.agent,
            "project": self.project,
            "size": self.size,
            "mtime": _iso(self.mtime),
            "active": self.active,
            "subagent": self.subagent,
        }
        if probe:
            p = self.probe()
            out.update(cwd=p.cwd, reader=p.reader, openable=p.reader is not None, error=p.error)
        return out


def recordings_folder() -> Path:
    """Where the window's recording proxy writes by default: the library reads it as it
    reads the agents' folders."""
    return Path.home() / "ctxviewer-recordings"


def default_roots() -> list[Root]:
    """Where the agents keep their sessions, for this user (HOME from ``Path.home()``)."""
    home = Path.home()
    env = os.environ
    claude = [home / ".claude", home / ".config" / "claude"]
    if env.get("XDG_CONFIG_HOME"):
        claude.append(Path(env["XDG_CONFIG_HOME"]) / "claude")
    if env.get("CLAUDE_CONFIG_DIR"):
        claude.append(Path(env["CLAUDE_CONFIG_DIR"]).expanduser())
    codex = [Path(env["CODEX_HOME"]).expanduser()] if env.get("CODEX_HOME") else []
    codex.append(home / ".codex")
    gemini = (
        [Path(env["GEMINI_CLI_HOME"]).expanduser() / ".gemini"]
        if env.get("GEMINI_CLI_HOME")
        else []
    )
    gemini.append(home / ".gemini")
    qwen = [Path(env["QWEN_RUNTIME_DIR"]).expanduser()] if env.get("QWEN_RUNTIME_DIR") else []
    qwen.append(home / ".qwen")
    chats = ("*/chats/*.json", "*/chats/*.jsonl")
    roots = [
        Root(CLAUDE_CODE, base / "projects", ("*/*.jsonl", "*/*/subagents/*.jsonl"), "dashed")
        for base in claude
    ]
    roots += [
        Root(CODEX, base / "sessions", ("rollout-*.jsonl", "*/*/*/rollout-*.jsonl"))
        for base in codex
    ]
    roots += [Root(GEMINI_CLI, base / "tmp", chats, "hashed") for base in gemini]
    for base in qwen:
        roots.append(Root(QWEN_CODE, base / "projects", ("*/chats/*.jsonl",), "alnum"))
        roots.append(Root(QWEN_CODE, base / "tmp", chats, "hashed"))
    task = ("*/api_conversation_history.json",)
    for editor in editor_folders(home, env):
        for agent, ext in EXTENSIONS.items():
            roots.append(Root(agent, editor / "User" / "globalStorage" / ext / "tasks", task))
    roots.append(Root(CLINE, home / ".cline" / "data" / "tasks", task))
    data = (
        Path(env["XDG_DATA_HOME"]).expanduser()
        if env.get("XDG_DATA_HOME")
        else home / ".local" / "share"
    )
    roots.append(Root(OPENCODE, data / "opencode", ("opencode.db",)))
    roots.append(
        Root(
            OPENCODE, data / "opencode" / "storage" / "session", ("*/ses_*.json", "info/ses_*.json")
        )
    )
    roots.append(
        Root(
            AIDER,
            home,
            (".aider.chat.history.md", "*/.aider.chat.history.md", "*/*/.aider.chat.history.md"),
        )
    )  # last: it walks the home
    return _unique(roots)


def editor_folders(home: Path, env: os._Environ[str] | dict[str, str]) -> list[Path]:
    """The settings folders of VS Code and its forks, on Linux, macOS and Windows."""
    bases = [Path(env["XDG_CONFIG_HOME"]).expanduser()] if env.get("XDG_CONFIG_HOME") else []
    bases += [home / ".config", home / "Library" / "Application Support"]
    if env.get("APPDATA"):
        bases.append(Path(env["APPDATA"]))
    bases.append(home / "AppData" / "Roaming")
    return [b / name for b in bases for name in EDITORS]


def discover_sessions(
    now: float | None = None,
    roots: Sequence[Root] | None = None,
    *,
    active_minutes: float = ACTIVE_MINUTES,
    limit: int = MAX_FILES,
) -> list[SessionInfo]:
    """Agent session files on this machine, newest first (see the module docstring).

    ``now`` (seconds since the epoch) decides which are ``active``: written
    within ``active_minutes``. Never raises for unreadable folders or files.
    """
    now = time.time() if now is None else now
    budget = [MAX_ENTRIES]
    found: dict[str, tuple[Root, Path, os.stat_result]] = {}
    for root in default_roots() if roots is None else roots:
        for pattern in root.patterns:
            for path in _walk(root.path, pattern.split("/"), budget):
                try:
                    st = path.stat()
                except OSError:
                    continue
                found.setdefault(str(path), (root, path, st))
    newest = sorted(found.values(), key=lambda f: (-f[2].st_mtime, str(f[1])))[: max(0, limit)]
    names: dict[tuple[str, str], str | None] = {}
    out = []
    for root, path, st in newest:
        rel = path.relative_to(root.path).parts
        key = (root.layout, rel[0])
        if key not in names:
            names[key] = PROJECT_NAMES[root.layout](rel[0]) if len(rel) > 1 else None
        out.append(
            SessionInfo(
                path=str(path),
                agent=root.agent,
                project=names[key],
                size=st.st_size,
                mtime=st.st_mtime,
                active=now - st.st_mtime <= active_minutes * 60,
                subagent=len(rel) > 2 and rel[-2] == "subagents",
            )
        )
    return out


def root_files(root: Root, budget: list[int]) -> Iterator[Path]:
    """Every file under ``root`` matching one of its patterns (``budget``: directory
    entries left to look at, shared between calls; the walk stops at 0)."""
    for pattern in root.patterns:
        yield from _walk(root.path, pattern.split("/"), budget)


def project_name(root: Root, path: Path) -> str | None:
    """The project ``path``'s folder under ``root`` encodes (None when it names none)."""
    rel = path.relative_to(root.path).parts
    return PROJECT_NAMES[root.layout](rel[0]) if len(rel) > 1 else None


def _walk(base: Path, parts: list[str], budget: list[int]) -> Iterator[Path]:
    """Files under ``base`` matching ``parts`` level by level, newest names first."""
    try:
        with os.scandir(base) as it:
            entries = sorted(it, key=lambda e: e.name, reverse=True)
    except OSError:
        return
    head, rest = parts[0], parts[1:]
    for entry in entries:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        if not fnmatch.fnmatchcase(entry.name, head):
            continue
        try:
            if rest and entry.is_dir():
                yield from _walk(Path(entry.path), rest, budget)
            elif not rest and entry.is_file():
                yield Path(entry.path)
        except OSError:
            continue


def _unique(roots: list[Root]) -> list[Root]:
    seen: set[tuple[str, str]] = set()
    out = []
    for root in roots:
        try:
            key = (root.agent, str(root.path.resolve()))
        except OSError:
            key = (root.agent, str(root.path))
        if key not in seen:
            seen.add(key)
            out.append(root)
    return out


# -- project names --------------------------------------------------------------


def decode_project_dir(name: str, unsafe: str = r"[^A-Za-z0-9-]") -> str:
    """A project folder name back to the working directory it was made from.

    Claude Code names the folder after the cwd with every character outside
    ``[A-Za-z0-9-]`` replaced by ``-`` (qwen-code: outside ``[A-Za-z0-9]``).
    That loses which ``-`` was a ``/``, a ``.``, a space or a real ``-``;
    the directories that exist on this machine tell, walking down from ``/``
    (longest matching entry first, backing up from dead ends). When no
    existing directory matches all of it, every ``-`` becomes ``/``.
    """
    if not name.startswith("-"):
        return name  # e.g. a Windows drive ("C--Users-...") or a name kept as is
    found = _resolve("/", name[1:], re.compile(unsafe), [200])
    return found if found is not None else "/" + name[1:].replace("-", "/")


def _resolve(cur: str, rest: str, sub: re.Pattern[str], budget: list[int]) -> str | None:
    """The existing path under ``cur`` whose encoding is ``rest`` (``budget``: listings)."""
    if not rest:
        return cur
    if budget[0] <= 0:
        return None
    budget[0] -= 1
    matches = []
    for entry in _subdirs(cur):
        coded = sub.sub("-", entry)
        if rest == coded or rest.startswith(coded + "-"):
            matches.append((len(coded), entry))
    for n, entry in sorted(matches, reverse=True):
        found = _resolve(os.path.join(cur, entry), rest[n + 1 :], sub, budget)
        if found is not None:
            return found
    return None


def _subdirs(path: str, cap: int = 5_000) -> list[str]:
    try:
        with os.scandir(path) as it:
            out: list[str] = []
            for entry in it:
                if len(out) >= cap:
                    break
                try:
                    if entry.is_dir():
                        out.append(entry.name)
                except OSError:
                    continue
            return out
    except OSError:
        return []


def _hashed_name(name: str) -> str | None:
    """Gemini CLI's (and old qwen-code's) tmp folders: a hash of the cwd, or a short name."""
    return None if _HASH.fullmatch(name) else name


PROJECT_NAMES: dict[str, Callable[[str], str | None]] = {
    "dashed": decode_project_dir,
    "alnum": lambda name: decode_project_dir(name, r"[^A-Za-z0-9]"),
    "hashed": _hashed_name,
    "none": lambda name: None,
}


# -- the reader check -------------------------------------------------------------


def probe_file(path: str) -> Probe:
    """Which reader takes ``path``, from its first bytes (never raises)."""
    try:
        head = _small_head(path)
        reader = detect(head)
    except LoadError as e:
        return Probe(None, str(e))
    except (OSError, EOFError) as e:
        return Probe(None, f"cannot read {path}: {getattr(e, 'strerror', None) or e}")
    return Probe(reader.name, None, recorded_cwd(head))


def _small_head(path: str) -> Head:
    """Like ``loader.read_head`` but reading less: PROBE_BYTES, more only when no
    line ended in them, and a whole JSON document only up to DOCUMENT_LIMIT."""
    with open_log(path) as f:
        data = f.read(PROBE_BYTES)
        if b"\n" not in data.strip() and len(data) == PROBE_BYTES:
            data += f.read(HEAD_BYTES - PROBE_BYTES)
        whole = not f.read(1)
    if b"\x00" in data[:8192] and not binary_magic(data):
        raise LoadError(f"{path} is a binary file, not a session log")
    head = Head(path=path, text=data.decode("utf-8", errors="replace"))
    lines = data.split(b"\n")
    if not whole:
        lines = lines[:-1]  # the last piece was cut by the read
    head.records = head_records(lines)
    if data.lstrip()[:1] in (b"{", b"[") and not head.records:
        head.document = _document(path, data, whole)
    elif whole and len(head.records) == 1:
        head.document = head.records[0]
    return head


def _document(path: str, data: bytes, whole: bool) -> Any:
    try:
        if whole:
            return orjson.loads(data)
        if os.path.getsize(path) > DOCUMENT_LIMIT:
            return None
        with open_log(path) as f:
            return orjson.loads(f.read())
    except (OSError, EOFError, orjson.JSONDecodeError):
        return None


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
