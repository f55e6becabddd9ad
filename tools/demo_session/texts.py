"""The demo's texts: the files under ``data/``."""

from __future__ import annotations

import re
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def load(name: str, **values: str) -> str:
    """The text of ``data/<name>``: the file without its final newline, with ``{key}`` replaced by ``values[key]``.

    Only the keys given are replaced, in one pass, so other braces (code, JSON) stay as they are.
    """
    raw = (DATA / name).read_bytes().decode("utf-8")
    if not raw.endswith("\n"):
        raise ValueError(
            f"{DATA / name}: a text file ends with a newline, which is not part of the text"
        )
    body = raw[:-1]
    if values:
        body = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), body)
    return body


def source(name: str) -> str:
    """A file of ``data/`` byte for byte (the project's files, as the agent reads and writes them)."""
    return (DATA / name).read_bytes().decode("utf-8")


def project_files() -> dict[str, str]:
    """The project's files at the start of the session, by path relative to the repository."""
    root = DATA / "project"
    paths = (p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file())
    # no tool's cache (.ruff_cache, __pycache__) is one of the project's files
    return {
        path: source(f"project/{path}")
        for path in paths
        if not any(part.startswith(".") or part == "__pycache__" for part in path.split("/"))
    }
