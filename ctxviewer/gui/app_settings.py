"""What the app remembers between runs: recent files, reopen-last, geometry.

Stored with ``QSettings`` in INI format under the user scope (tests point
``QSettings.setPath`` at a temporary folder).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 10


def _settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                     "ctxviewer", "ctxviewer")


class AppSettings:
    def __init__(self, settings: QSettings | None = None) -> None:
        self.qsettings = settings if settings is not None else _settings()

    # -- recent files -------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.qsettings.value("recent_files", [])
        if isinstance(value, str):  # INI stores a one-element list as a plain string
            value = [value]
        if not isinstance(value, (list, tuple)):
            return []
        return [str(v) for v in value if v]

    def remove_recent(self, path: str) -> None:
        self.qsettings.setValue("recent_files", [p for p in self.recent_files() if p != path])

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        files = [path] + [p for p in self.recent_files() if p != path]
        self.qsettings.setValue("recent_files", files[:MAX_RECENT])
        self.qsettings.setValue("last_file", path)

    def clear_recent(self) -> None:
        self.qsettings.setValue("recent_files", [])

    def last_file(self) -> str | None:
        value = self.qsettings.value("last_file", "")
        return str(value) if value else None

    # -- reopen the last file at start ---------------------------------------------
    def reopen_last(self) -> bool:
        return str(self.qsettings.value("reopen_last", "true")).lower() in ("true", "1")

    def set_reopen_last(self, on: bool) -> None:
        self.qsettings.setValue("reopen_last", bool(on))

    # -- analysis options and the tab in front ------------------------------------------
    def analysis_options(self) -> dict[str, str]:
        """The estimator, policy and counts chosen last (only those that were saved)."""
        out = {}
        for key in ("estimator", "policy", "counts"):
            value = self.qsettings.value(f"options/{key}", "")
            if value:
                out[key] = str(value)
        return out

    def set_analysis_options(self, estimator: str, policy: str, counts: str) -> None:
        for key, value in (("estimator", estimator), ("policy", policy), ("counts", counts)):
            self.qsettings.setValue(f"options/{key}", value)

    def theme(self) -> str:
        """``auto`` (the system's colours), ``light`` or ``dark``: View > Theme."""
        value = str(self.qsettings.value("theme", "auto") or "auto")
        return value if value in ("auto", "light", "dark") else "auto"

    def set_theme(self, theme: str) -> None:
        self.qsettings.setValue("theme", theme)

    def tab(self) -> str:
        return str(self.qsettings.value("tab", "") or "")

    def set_tab(self, name: str) -> None:
        self.qsettings.setValue("tab", name)

    def startup_file(self) -> str | None:
        """The last file, if reopening is on and it still exists."""
        last = self.last_file()
        return last if self.reopen_last() and last and os.path.isfile(last) else None

    # -- window layout --------------------------------------------------------------
    def state(self, key: str) -> QByteArray | None:
        value = self.qsettings.value(f"layout/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self.qsettings.setValue(f"layout/{key}", value)

    def sync(self) -> None:
        self.qsettings.sync()
