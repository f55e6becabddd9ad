"""What the app remembers between runs: recent files, reopen-last, geometry, the
analysis options, the timeline's toggles and the Insights budget.

Stored with ``QSettings`` in INI format under the user scope (tests point
``QSettings.setPath`` at a temporary folder).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings

if TYPE_CHECKING:  # imported when a budget is read: not at start
    from ctxviewer.analysis.insights import Budget


MAX_RECENT = 10


def _true(value: object) -> bool:
    """A flag as INI stores it ("true", "false") or as Qt hands it back."""
    return str(value).lower() in ("true", "1")


def _settings() -> QSettings:
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, "ctxviewer", "ctxviewer"
    )


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
        return _true(self.qsettings.value("reopen_last", "false"))  # off: the library

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

    # -- what the timeline shows, and the budget ----------------------------------------
    def timeline_toggles(self) -> dict[str, bool]:
        """The timeline menu's check marks saved last (key -> on), only those saved."""
        out = {}
        self.qsettings.beginGroup("timeline")
        for key in self.qsettings.childKeys():
            out[key] = _true(self.qsettings.value(key))
        self.qsettings.endGroup()
        return out

    def set_timeline_toggles(self, toggles: dict[str, bool]) -> None:
        for key, on in toggles.items():
            self.qsettings.setValue(f"timeline/{key}", bool(on))

    def budget(self) -> tuple[bool, Budget] | None:
        """(switched on, its values) of the Insights budget saved last, or None."""
        v = self.qsettings.value
        try:
            from ctxviewer.analysis.insights import Budget

            b = Budget(
                float(v("budget/limit")),
                str(v("budget/unit")),
                str(v("budget/scope")),
                float(v("budget/warn")),
                _true(v("budget/hard")),
            )
        except (TypeError, ValueError):  # never saved, or edited into nonsense
            return None
        return _true(v("budget/on")), b

    def set_budget(self, on: bool, b: Budget) -> None:
        for key, value in (
            ("on", bool(on)),
            ("limit", b.limit),
            ("unit", b.unit),
            ("scope", b.scope),
            ("warn", b.warn_fraction),
            ("hard", b.hard),
        ):
            self.qsettings.setValue(f"budget/{key}", value)

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
