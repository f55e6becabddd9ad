"""View > one action per tab (Ctrl+1 ... Ctrl+4), and the Help menu.

Installed last of the panels, so every tab and every action with a shortcut
exists: "Keyboard shortcuts" (F1) lists them all, read from the window's own
actions, so the list is never out of date; "About ctxviewer" says what the
program is, its version, and where its documentation lives (no network).
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QMenu,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ctxviewer import __version__
from ctxviewer.gui.host import PanelHost
from ctxviewer.gui.widgets.theme import apply_theme

ABOUT = (
    f"<h3>ctxviewer {__version__}</h3>"
    "<p>What fills the context window of an LLM coding agent: Claude Code, Codex, "
    "qwen-code, Gemini CLI, or any client of the Anthropic and OpenAI APIs.</p>"
    "<p>Every number is the agent's own, exact from the API, or labelled as an "
    "estimate with its error.</p>"
    "<p>Documentation: <code>README.md</code> and <code>docs/</code> in the source; "
    "<code>ctxviewer --help</code> on a terminal.</p>"
)


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(action, keys) for every action of ``window`` that has a shortcut, by name."""
    rows: dict[str, list[str]] = {}
    for action in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        name = action.text().replace("&", "").rstrip("…").strip()
        if keys and name:
            known = rows.setdefault(name, [])
            known += [k for k in keys if k not in known]  # two actions, one name: both keys
    return sorted(((n, ", ".join(k)) for n, k in rows.items()), key=lambda r: r[0].lower())


class ShortcutsDialog(QDialog):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (name, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(name))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(460, 520)


class HelpMenu:
    def __init__(self, host: PanelHost) -> None:
        self.host = host
        self.dialog: ShortcutsDialog | None = None
        view = host.menu("&View")
        self.tab_actions: list[QAction] = []
        for i, (title, page) in enumerate(host.tab_pages()):
            if i < 2:  # Breakdown and Timeline have theirs (WindowActions)
                continue
            action = QAction(f"&{title}", host.window())
            action.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            action.triggered.connect(lambda _c=False, w=page: host.show_tab(w))
            host.add_action(action)
            view.addAction(action)
            self.tab_actions.append(action)
        self.theme_actions = self._theme_menu(view)
        help_ = host.menu("&Help")
        self.shortcuts = QAction("&Keyboard shortcuts", host.window())
        self.shortcuts.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
        self.about = QAction("&About ctxviewer", host.window())
        for action in (self.shortcuts, self.about):
            host.add_action(action)
            help_.addAction(action)
        self.shortcuts.triggered.connect(self.show_shortcuts)
        self.about.triggered.connect(self.show_about)

    def _theme_menu(self, view: QMenu) -> dict[str, QAction]:
        """View > Theme: the system's colours, light or dark."""
        menu = view.addMenu("T&heme")
        group = QActionGroup(menu)
        actions = {}
        current = self.host.settings.theme()
        for key, text in (("auto", "&System"), ("light", "&Light"), ("dark", "&Dark")):
            action = QAction(text, menu)
            action.setCheckable(True)
            action.setChecked(key == current)
            group.addAction(action)
            menu.addAction(action)
            action.triggered.connect(lambda _c=False, k=key: self._choose_theme(k))
            actions[key] = action
        return actions

    def _choose_theme(self, theme: str) -> None:
        """Applied at once, and kept for the next start."""
        self.host.settings.set_theme(theme)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)
        names = {"auto": "the system's colours", "light": "light", "dark": "dark"}
        self.host.show_message(f"Theme: {names[theme]}", 5000)

    def show_shortcuts(self) -> ShortcutsDialog:
        if self.dialog is None:
            self.dialog = ShortcutsDialog(self.host.window())
        self.dialog.show()
        self.dialog.activateWindow()
        return self.dialog

    def show_about(self) -> None:
        QMessageBox.about(self.host.window(), "About ctxviewer", ABOUT)


def install(host: PanelHost) -> HelpMenu:
    return HelpMenu(host)
