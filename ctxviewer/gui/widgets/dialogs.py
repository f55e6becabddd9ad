"""The window's standard dialogs, as plain functions: ``MainWindow`` holds them as
replaceable callables (``ask_open_path``, ``ask_save_path``, ``show_error``,
``confirm``) so that tests can answer them. The dialogs' classes are imported when
one is first shown: the window's first paint does not wait for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

OPEN_FILTER = "Session logs (*.jsonl *.json *.gz *.xz *.log);;All files (*)"


def ask_open_path(parent: QWidget) -> str:
    from ctxviewer.gui.widgets.file_dialog import ask_path

    return ask_path(parent, "Open a session log", "", OPEN_FILTER, save=False)


def ask_save_path(parent: QWidget, title: str, name: str, filter_: str) -> str:
    from ctxviewer.gui.widgets.file_dialog import ask_path

    return ask_path(parent, title, name, filter_, save=True)


def confirm(parent: QWidget, title: str, message: str) -> bool:
    from PySide6.QtWidgets import QMessageBox

    answer = QMessageBox.question(
        parent,
        title,
        message,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def show_error(parent: QWidget, title: str, message: str) -> None:
    from PySide6.QtWidgets import QMessageBox

    QMessageBox.warning(parent, title, message)
