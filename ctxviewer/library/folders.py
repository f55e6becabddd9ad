"""The folders the user added to the library, kept apart from the index.

The index is a cache: a damaged one is deleted and built again. The folders are the
user's own choice, so they live in a small JSON file beside it (``folders.json``),
written whole to a new file and renamed over the old one (a crash leaves either
list). Each entry: ``{"path": …, "added": …}``; a name that is no UTF-8 is written
with ``\\udcxx`` escapes (the standard ``json`` module's), which read back as the
same name. An index of an earlier version kept them in its ``folders`` table: they
are moved here on the first opening.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

FILE_NAME = "folders.json"


class Folders:
    """The list in ``directory``/folders.json."""

    def __init__(self, directory: Path) -> None:
        self.file = directory / FILE_NAME
        self.problem: str | None = None  # why the list could not be read, once
        self._entries: list[dict[str, str]] | None = None

    def entries(self) -> list[dict[str, str]]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def paths(self) -> list[str]:
        return sorted(e["path"] for e in self.entries())

    def add(self, path: str) -> None:
        if path not in self.paths():
            self._write(
                [*self.entries(), {"path": path, "added": time.strftime("%Y-%m-%dT%H:%M:%S")}]
            )

    def remove(self, path: str) -> bool:
        kept = [e for e in self.entries() if e["path"] != path]
        if len(kept) == len(self.entries()):
            return False
        self._write(kept)
        return True

    def exists(self) -> bool:
        return self.file.exists()

    def take_from_index(self, db_file: Path) -> None:
        """Move the folders an index of an earlier version kept in its table (when this
        file does not exist yet: it is written now, so this is done once). A damaged
        index gives none (said by ``problem``)."""
        if self.exists():
            return
        rows: list[tuple[str, str]] = []
        if db_file.exists():
            try:
                db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)
                try:
                    rows = db.execute("SELECT path, added FROM folders").fetchall()
                finally:
                    db.close()
            except sqlite3.Error as e:
                if "no such table" not in str(e):  # else: an index of this version
                    self.problem = f"the folders the index held could not be read ({e})"
        try:
            self._write([{"path": str(p), "added": str(a)} for p, a in rows])
        except OSError:  # a folder that cannot be written: opening the index says so
            pass

    def _read(self) -> list[dict[str, str]]:
        try:
            value = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as e:
            self.problem = f"{self.file} cannot be read ({e}): add the folders again"
            return []
        if not isinstance(value, list):
            self.problem = f"{self.file} holds no list of folders: add the folders again"
            return []
        return [
            {"path": e["path"], "added": str(e.get("added", ""))}
            for e in value
            if isinstance(e, dict) and isinstance(e.get("path"), str)
        ]

    def _write(self, entries: list[dict[str, str]]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_name(f"{FILE_NAME}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(entries, f, indent=1)  # ASCII: a lone surrogate as \udcxx
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.file)
        finally:
            if tmp.exists():
                tmp.unlink()
        self._entries = entries
